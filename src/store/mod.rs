//! The store: every SQL statement of the board, and its transactions.
//!
//! [`Store`] is the surface (`api`), [`SqliteStore`] the embedded backend: one [`SqliteStore`]
//! owns the one write connection of the board process (ARCHITECTURE.md rule 11), so no
//! `SQLITE_BUSY` reaches a client. Every state change runs in one `BEGIN IMMEDIATE` transaction
//! whose deciding step is one conditional statement (`UPDATE … WHERE <condition> RETURNING …`):
//! the store never reads, compares in Rust, then writes (ARCHITECTURE.md rule 6). Each transition appends
//! an event in the same transaction (ARCHITECTURE.md rule 9); the caller broadcasts the returned
//! [`EventView`]s after commit.

use std::path::Path;
use std::time::SystemTime;

#[macro_use]
mod sql;
mod api;
mod claims;
mod events;
mod holder_rules;
mod holder_writes;
mod hosts;
pub mod identity;
mod import;
mod import_rules;
mod lapse;
mod message_rules;
mod messages;
#[cfg(test)]
mod model_tests;
mod op_results;
pub mod pg;
pub(crate) mod refusal;
mod refusals;
mod review;
pub mod review_rules;
mod session_rules;
mod sessions;
mod task_rules;
mod tasks;
mod terminal;
#[cfg(test)]
mod tests;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use rusqlite_migration::{Migrations, M};

use crate::proto::error::{BoardError, BoardResult};
pub use crate::proto::glossary::{
    AgentState, ClaimEnd, EventKind, Generation, ListState, SessionId, TaskId, TaskState,
};
use crate::proto::{EventView, TaskView};

pub use crate::proto::labels::{check_label, MAX_LABEL};
pub use api::Store;

/// `error.data` key of an `unavailable` error whose write may have been applied: the store went
/// away after the write was sent (its commit, or its one statement) and before it answered.
/// Only the write's `op_id` can tell: asking again with it finds the saved answer if it was
/// applied, and applies it now if it was not.
pub const OUTCOME_UNKNOWN: &str = "outcome_unknown";
pub use import::Imported;
pub use messages::{Sent, Unread};
pub use pg::PgStore;
pub use review_rules::ReviewFacts;
pub use task_rules::Reassign;
pub use terminal::LiveClaim;

/// Author name of requests without an agent identity.
pub const OPERATOR: &str = "operator";

/// Longest accepted title, in bytes.
pub const MAX_TITLE: usize = 16 * 1024;
/// Longest accepted body or note, in bytes.
pub const MAX_TEXT: usize = 512 * 1024;

fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(include_str!("../../migrations/0001_init.sql")),
        M::up(include_str!("../../migrations/0002_session_branch.sql")),
        M::up(include_str!("../../migrations/0003_lost_claims.sql")),
        M::up(include_str!("../../migrations/0004_agent_turns.sql")),
        M::up(include_str!("../../migrations/0005_messages_and_tty.sql")),
        M::up(include_str!("../../migrations/0006_questions.sql")),
        M::up(include_str!("../../migrations/0007_session_names.sql")),
        M::up(include_str!("../../migrations/0008_review_and_land.sql")).foreign_key_check(),
        M::up(include_str!(
            "../../migrations/0009_labels_and_assignment.sql"
        )),
    ])
}

/// RFC 3339 UTC wall-clock time with milliseconds, for people.
pub fn now_wall() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// What the board remembers of one agent session for authentication and watching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// Session id.
    pub id: String,
    /// SHA-256 of the token, hex.
    pub token_hash: String,
    /// Boot the session started in.
    pub boot_id: String,
    /// `board run` launcher pid and start time (clock ticks since boot).
    pub launcher: Option<(i32, u64)>,
    /// Agent process pid and start time.
    pub agent: Option<(i32, u64)>,
    /// tmux pane id, pane process pid and start time.
    pub pane: Option<(String, i32, u64)>,
    /// Its CLI's permission prompt (the hooks' `waiting`), until the CLI moves on.
    pub waiting: Option<String>,
    /// The question it asked a person (`board wait`), until answered, withdrawn or ended.
    pub question: Option<String>,
    /// When its agent finished its turn (a hook said so), until its next call.
    pub idle_since: Option<String>,
    /// None while the session is live.
    pub ended_at: Option<String>,
}

/// A live claim as returned by grants and renewals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimInfo {
    /// Task id.
    pub task: i64,
    /// The claim's generation.
    pub generation: i64,
    /// Expiry on the lease clock (ms).
    pub expires_ms: i64,
}

/// Answer of a successful `claim`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimOutcome {
    /// The task after the call.
    pub task: TaskView,
    /// The live claim.
    pub claim: ClaimInfo,
    /// True when the caller already held this live claim: nothing was granted, the generation is
    /// the one it holds (ARCHITECTURE.md rule 1).
    pub already: bool,
}

/// What [`Store::claim_next_at_once`] and [`Store::done_at_once`] answer: the request's answer
/// (fresh or as saved under its `op_id`), the events to publish, and what the board adds to
/// every agent's answer.
#[derive(Debug)]
pub struct AtOnce {
    /// The result as the wire carries it, or a saved refusal.
    pub answer: op_results::Answer,
    /// The `grant` or `done` event (none when the answer was a saved one).
    pub events: Events,
    /// The agent has lost claims it was not told of yet ([`Store::take_lost`] has some).
    pub lost_waiting: bool,
    /// The agent's unread messages.
    pub unread: Unread,
}

pub use crate::proto::results::LostClaim;

/// Answer of a successful `done`.
#[derive(Debug, Clone, PartialEq)]
pub struct DoneOutcome {
    /// The task after the call.
    pub task: TaskView,
    /// Generation the task was finished at.
    pub generation: i64,
    /// True when this repeated an earlier `done` of the same agent and generation.
    pub already: bool,
}

/// Events appended by one transaction, to broadcast after commit.
pub type Events = Vec<EventView>;

/// Answer of [`Store::host_beat`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostBeat {
    /// Our previous host session had been ended by another host's sweep (we were declared
    /// dead: stopped, cut off, or too slow): its end reason. A fresh host session was taken.
    pub ended_by_others: Option<String>,
    /// Events the beat appended (a `warn` when the host had been declared dead).
    pub events: Events,
}

/// Called with the events of a transaction that committed but whose call answers an error (a
/// refused write that lapsed the caller's expired claim): nobody else would publish them.
pub type Notify = Box<dyn Fn(Events) + Send>;

/// The embedded backend: the board's SQLite database, one write connection.
pub struct SqliteStore {
    conn: Connection,
    /// True while an `op_id` scope holds the write transaction open (see `op_results`): each
    /// step then runs in a savepoint inside it instead of a transaction of its own.
    in_op: bool,
    notify: Option<Notify>,
    /// The high-water mark of issued generations ([`identity`]); None for a database opened
    /// without it ([`Store::open`], tests and tools).
    mark: Option<std::sync::Arc<std::sync::Mutex<identity::MarkFile>>>,
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

    pub(super) fn set_notify(&mut self, notify: Notify) {
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

    pub(super) fn integrity_check(&self) -> BoardResult<String> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    // ----- meta -------------------------------------------------------------------------------

    pub(super) fn meta(&self, key: &str) -> BoardResult<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    pub(super) fn set_meta(&mut self, key: &str, value: &str) -> BoardResult<()> {
        self.tx(|tx, _| {
            tx.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, value],
            )?;
            Ok(())
        })?;
        Ok(())
    }

    pub(super) fn record(
        &mut self,
        kind: EventKind,
        task: Option<i64>,
        agent: Option<&str>,
        generation: Option<i64>,
        reason: &str,
    ) -> BoardResult<Events> {
        let ((), ev) = self.tx(|tx, ev| {
            emit(tx, ev, kind, task, agent, generation, reason)?;
            Ok(())
        })?;
        Ok(ev)
    }
}

/// Appends one event in `tx` and queues it for broadcast.
pub(super) fn emit(
    tx: &Connection,
    ev: &mut Events,
    kind: EventKind,
    task: Option<i64>,
    agent: Option<&str>,
    generation: Option<i64>,
    reason: &str,
) -> BoardResult<()> {
    let at = now_wall();
    // Keep the log readable: huge agent text lives in notes and tasks, not in every event.
    let reason: String = reason.chars().take(500).collect();
    tx.execute(
        "INSERT INTO events (at, kind, task_id, session_id, generation, reason)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![at, kind, task, agent, generation, reason],
    )?;
    ev.push(EventView {
        id: tx.last_insert_rowid(),
        at,
        kind,
        task,
        agent: agent.map(str::to_string),
        generation,
        reason: Some(reason),
    });
    Ok(())
}

pub(super) fn agent_opt(by: &str) -> Option<&str> {
    (by != OPERATOR).then_some(by)
}

pub(super) fn fmt_ms(ms: i64) -> String {
    humantime::format_duration(std::time::Duration::from_millis(ms.max(0) as u64)).to_string()
}

pub(super) fn check_text(
    what: &str,
    text: &str,
    max: usize,
    may_be_empty: bool,
) -> BoardResult<()> {
    if !may_be_empty && text.trim().is_empty() {
        return Err(BoardError::invalid(format!("{what} must not be empty")));
    }
    if text.len() > max {
        return Err(BoardError::invalid(format!(
            "{what} is {} bytes; the limit is {max} bytes",
            text.len()
        )));
    }
    if text.contains('\0') {
        return Err(BoardError::invalid(format!(
            "{what} must not contain NUL characters"
        )));
    }
    Ok(())
}

pub(super) fn task_not_found(id: i64) -> BoardError {
    BoardError::not_found(format!("no task {id}")).with("task", id)
}

pub(super) fn task_state(tx: &Connection, id: i64) -> BoardResult<TaskState> {
    tx.query_row("SELECT state FROM tasks WHERE id = ?1", [id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| task_not_found(id))
}
