//! Write transactions of the PostgreSQL store: the write lock and its two modes, the
//! transaction or savepoint around each store step, and the retry of a transaction the server
//! rolled back (see the module docs of `pg`).

use super::{Conn, PgStore};
use crate::proto::error::{BoardError, BoardResult};
use crate::store::Events;

/// The key of the advisory lock every write transaction takes first (see the module docs).
/// "board" in ASCII; any constant shared by all hosts does.
pub(super) const WRITE_LOCK: i64 = 0x0062_6F61_7264;

/// How a write transaction holds [`WRITE_LOCK`] (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum Lock {
    /// Beside other shared writers: a holder's fenced write, decided on its own rows.
    Shared,
    /// Alone: every other write.
    Exclusive,
}

impl Lock {
    /// The statement that takes the lock, and the transaction id (so it is assigned before any
    /// event id is taken: the event frontier relies on it).
    pub(super) fn sql(self) -> String {
        let f = match self {
            Lock::Shared => "pg_advisory_xact_lock_shared",
            Lock::Exclusive => "pg_advisory_xact_lock",
        };
        format!("SELECT {f}({WRITE_LOCK}), pg_current_xact_id()")
    }
}

/// Deadlocks and serialization failures are retried this many times before they are errors.
pub(in crate::store) const RETRIES: usize = 3;

impl PgStore {
    /// Runs `f` in one write transaction (a savepoint inside an open one) that first takes
    /// the write lock in exclusive mode; commits on `Ok`, rolls back on `Err`. Deadlocks and
    /// serialization failures of an outermost transaction are retried.
    pub(super) fn tx<T>(
        &mut self,
        f: impl FnMut(&mut Conn, &mut Events) -> BoardResult<T>,
    ) -> BoardResult<(T, Events)> {
        self.tx_with(Lock::Exclusive, f)
    }

    /// [`PgStore::tx`] holding the write lock in shared mode: for a holder's fenced write,
    /// decided by conditional statements on its own rows (see the module docs).
    pub(super) fn tx_shared<T>(
        &mut self,
        f: impl FnMut(&mut Conn, &mut Events) -> BoardResult<T>,
    ) -> BoardResult<(T, Events)> {
        self.tx_with(Lock::Shared, f)
    }

    fn tx_with<T>(
        &mut self,
        lock: Lock,
        mut f: impl FnMut(&mut Conn, &mut Events) -> BoardResult<T>,
    ) -> BoardResult<(T, Events)> {
        let mut attempt = 0;
        loop {
            let r = self
                .tx_refusable(lock, |c, ev| f(c, ev).map(Ok))
                .and_then(|(out, ev)| out.map(|v| (v, ev)));
            match r {
                Err(e) if self.depth == 0 && attempt < RETRIES && retryable(&e) => attempt += 1,
                other => return other,
            }
        }
    }

    /// Like [`PgStore::tx`] for a call that may be refused after changing something that must
    /// stand (a refused write lapses the caller's expired claim first): `f` returns
    /// `Ok(Err(refusal))` to commit and answer the refusal; its events go to the [`Notify`]
    /// hook. The outer result of the returned pair is the refusal.
    pub(super) fn tx_refusable<T>(
        &mut self,
        lock: Lock,
        f: impl FnOnce(&mut Conn, &mut Events) -> BoardResult<BoardResult<T>>,
    ) -> BoardResult<(BoardResult<T>, Events)> {
        self.ensure_connected()?;
        let depth = self.depth;
        let (begin, commit, rollback) = if depth == 0 {
            (
                format!("BEGIN; {}", lock.sql()),
                "COMMIT".to_string(),
                "ROLLBACK".to_string(),
            )
        } else {
            (
                // Inside an `op_id` scope, which began without the lock: a lock taken in a
                // savepoint is held to the end of the transaction (unless rolled back to).
                format!("SAVEPOINT s{depth}; {}", lock.sql()),
                format!("RELEASE SAVEPOINT s{depth}"),
                format!("ROLLBACK TO SAVEPOINT s{depth}; RELEASE SAVEPOINT s{depth}"),
            )
        };
        if depth == 0 {
            // As a read: on a connection the server dropped, it runs again on a new one.
            if let Err(e) = self.read(|c| c.batch(&begin)) {
                if let Some(c) = self.conn.borrow_mut().as_mut() {
                    // Best effort: BEGIN may have run before the lock failed.
                    let _ = c.batch("ROLLBACK");
                }
                return Err(e);
            }
        }
        let out = {
            let mut guard = self.conn.borrow_mut();
            let Some(c) = guard.as_mut() else {
                return Err(self.unreachable("connection closed"));
            };
            let mut events = Vec::new();
            let begun = if depth == 0 { Ok(()) } else { c.batch(&begin) };
            let r = begun
                .and_then(|()| self.apply_clock(c))
                .and_then(|()| f(c, &mut events));
            match r {
                Ok(out) => c.batch(&commit).map(|()| (out, events)),
                Err(e) => {
                    // Best effort: a lost connection has rolled back already.
                    let _ = c.batch(&rollback);
                    Err(e)
                }
            }
        };
        let (out, events) = out.map_err(|e| self.shown(e))?;
        if let Some(last) = events.last() {
            if depth == 0 {
                self.hwm().wrote(last.id, &last.at);
            } else {
                self.pending_hwm = Some((last.id, last.at.clone()));
            }
        }
        if let (Err(_), Some(n), false) = (&out, &self.notify, events.is_empty()) {
            n(events.clone());
            return Ok((out, Vec::new()));
        }
        Ok((out, events))
    }

    /// Unwraps [`PgStore::tx_refusable`]'s answer the way callers of a refusable write want it:
    /// a holder's fenced write, so the lock is shared.
    pub(super) fn refusable<T>(
        &mut self,
        f: impl FnOnce(&mut Conn, &mut Events) -> BoardResult<BoardResult<T>>,
    ) -> BoardResult<(T, Events)> {
        let (out, ev) = self.tx_refusable(Lock::Shared, f)?;
        out.map(|v| (v, ev))
    }
}

/// A deadlock (two writers upgrading the shared write lock) or a serialization failure: the
/// transaction rolled back and may run again.
pub(in crate::store) fn retryable(e: &BoardError) -> bool {
    matches!(
        e.data.get("sqlstate").and_then(|v| v.as_str()),
        Some("40P01" | "40001")
    )
}
