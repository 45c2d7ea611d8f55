//! The embedded backend: the board's SQLite database, one write connection.
//!
//! One [`SqliteStore`] owns the one write connection of the board process (ARCHITECTURE.md rule
//! 11), so no `SQLITE_BUSY` reaches a client. Every state change runs in one `BEGIN IMMEDIATE`
//! transaction (see the store's module docs for the rules both backends keep). The procedures
//! both backends share are `store::procs`, run over this backend's `lite::Lite`; what SQLite
//! spells its own way stays here, one module per concern (`tasks`, `claims`, `lapse`,
//! `sessions`, …).

use crate::store::db::Db;
use std::path::Path;

mod claims;
mod db;
mod events;
mod hosts;
mod identity;
mod lapse;
mod lite;
mod messages;
#[cfg(test)]
mod model_tests;
mod op_results;
mod sessions;
mod tasks;
mod terminal;
mod words;

use rusqlite::{Connection, TransactionBehavior};
use rusqlite_migration::{Migrations, M};

use super::*;
use crate::proto::error::{BoardError, BoardResult};

fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(include_str!("../../../migrations/0001_init.sql")),
        M::up(include_str!("../../../migrations/0002_session_branch.sql")),
        M::up(include_str!("../../../migrations/0003_lost_claims.sql")),
        M::up(include_str!("../../../migrations/0004_agent_turns.sql")),
        M::up(include_str!(
            "../../../migrations/0005_messages_and_tty.sql"
        )),
        M::up(include_str!("../../../migrations/0006_questions.sql")),
        M::up(include_str!("../../../migrations/0007_session_names.sql")),
        M::up(include_str!("../../../migrations/0008_review_and_land.sql")).foreign_key_check(),
        M::up(include_str!(
            "../../../migrations/0009_labels_and_assignment.sql"
        )),
    ])
}

/// The embedded backend: the board's SQLite database, one write connection.
pub struct SqliteStore {
    pub(in crate::store) conn: Connection,
    /// True while an `op_id` scope holds the write transaction open (see `op_results`): each
    /// step then runs in a savepoint inside it instead of a transaction of its own.
    in_op: bool,
    /// The lease-clock time the last shared procedure passed (see `lite::Lite`).
    lease_now: std::cell::Cell<Option<i64>>,
    notify: Option<Notify>,
    /// The high-water mark of issued generations ([`crate::store::identity`]); None for a database opened
    /// without it ([`Store::open`], tests and tools).
    mark: Option<std::sync::Arc<std::sync::Mutex<crate::store::identity::MarkFile>>>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`: WAL, `busy_timeout` 5 s, foreign keys,
    /// then applies pending migrations in order, each in its own transaction.
    pub fn open(path: &Path) -> BoardResult<SqliteStore> {
        #[allow(
            clippy::disallowed_methods,
            reason = "the store is where the database is opened"
        )]
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // NORMAL in WAL mode: a commit survives the board process being killed (it is in the OS
        // page cache); only a power cut can lose the last transactions.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // Off while migrating: a migration that rebuilds a table (SQLite cannot change a CHECK
        // in place) drops the table others refer to; it checks every foreign key before it
        // commits instead.
        conn.pragma_update(None, "foreign_keys", "OFF")?;
        migrations()
            .to_latest(&mut conn)
            .map_err(|e| BoardError::internal(format!("migrating {}: {e}", path.display())))?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(SqliteStore {
            conn,
            in_op: false,
            lease_now: std::cell::Cell::new(None),
            notify: None,
            mark: None,
        })
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction; commits on `Ok`, rolls back on `Err`.
    fn tx<T>(
        &mut self,
        f: impl FnOnce(&Connection, &mut Events) -> BoardResult<T>,
    ) -> BoardResult<(T, Events)> {
        if self.in_op {
            return self.op_step(f);
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut events = Vec::new();
        let out = f(&tx, &mut events)?;
        tx.commit()?;
        Ok((out, events))
    }

    pub(in crate::store) fn set_notify(&mut self, notify: Notify) {
        self.notify = Some(notify);
    }

    /// Like [`SqliteStore::tx`] for a call that may be refused *after* changing something that must
    /// stand (a refused write lapses the caller's expired claim first, ARCHITECTURE.md rule 5): `f`
    /// returns `Ok(Err(refusal))` to commit and answer the refusal; its events go to the
    /// [`Notify`] hook. An outer `Err` rolls back as usual.
    fn tx_refusable<T>(
        &mut self,
        f: impl FnOnce(&Connection, &mut Events) -> BoardResult<BoardResult<T>>,
    ) -> BoardResult<(T, Events)> {
        if self.in_op {
            return self.op_step_refusable(f);
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut events = Vec::new();
        let out = f(&tx, &mut events)?;
        tx.commit()?;
        match out {
            Ok(v) => Ok((v, events)),
            Err(refusal) => {
                if let (Some(n), false) = (&self.notify, events.is_empty()) {
                    n(events);
                }
                Err(refusal)
            }
        }
    }

    pub(in crate::store) fn integrity_check(&self) -> BoardResult<String> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    // ----- meta -------------------------------------------------------------------------------
}
