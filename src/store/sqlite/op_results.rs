//! Retries applied once: the `op_id` lookup, the operation and its saved answer are one
//! transaction (design, "Wire format").
//!
//! `Store::with_op` (`procs::with_op`) opens one `BEGIN IMMEDIATE` transaction, looks the `(identity, op_id)` pair
//! up in `op_results`, and either returns the saved answer or runs the operation and saves its
//! answer before the single commit. While the scope is open every store step the operation makes
//! (its own `tx`) runs in a savepoint inside that transaction, so a step that fails is rolled back
//! alone, exactly as it would be on its own, and a crash anywhere leaves either nothing or the
//! operation together with its answer. Two racing attempts with one `op_id` are serialized by the
//! write lock of the one writer connection: the second finds the first one's answer.

use rusqlite::Connection;

use super::{Events, SqliteStore};
use crate::proto::error::{BoardError, BoardResult};
use crate::store::answers::Answer;
use crate::store::db::ScopeBody;

impl SqliteStore {
    /// The `op_id` scope: one `BEGIN IMMEDIATE` transaction around `body`.
    pub(super) fn op_scope(&mut self, body: &mut ScopeBody<'_, Self>) -> BoardResult<Answer> {
        if self.in_op {
            return Err(BoardError::internal("nested op_id scopes"));
        }
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        self.in_op = true;
        let out = body(self);
        self.in_op = false;
        let committed = match &out {
            Ok(_) => self.conn.execute_batch("COMMIT").map_err(BoardError::from),
            Err(_) => Ok(()),
        };
        if out.is_err() || committed.is_err() {
            // Best effort: a failed COMMIT may already have rolled back.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        committed?;
        out
    }

    /// One step inside an open op scope: a savepoint that is released on `Ok` and rolled back on
    /// `Err`, the same outcome the step has in a transaction of its own.
    pub(in crate::store) fn op_step<T>(
        &mut self,
        f: impl FnOnce(&Connection, &mut Events) -> BoardResult<T>,
    ) -> BoardResult<(T, Events)> {
        self.op_step_refusable(|c, ev| f(c, ev).map(Ok))
    }

    /// [`SqliteStore::op_step`] for a step that may be refused after changing something that must
    /// stand (see `tx_refusable`): `Ok(Err(refusal))` keeps the step's changes and hands its
    /// events to the notify hook, as outside a scope.
    pub(in crate::store) fn op_step_refusable<T>(
        &mut self,
        f: impl FnOnce(&Connection, &mut Events) -> BoardResult<BoardResult<T>>,
    ) -> BoardResult<(T, Events)> {
        self.conn.execute_batch("SAVEPOINT op_step")?;
        let mut events = Vec::new();
        match f(&self.conn, &mut events) {
            Ok(out) => {
                self.conn.execute_batch("RELEASE op_step")?;
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
            Err(e) => {
                let _ = self
                    .conn
                    .execute_batch("ROLLBACK TO op_step; RELEASE op_step");
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::error::ErrorKind;
    use crate::store::Store;
    use serde_json::{json, Value};

    fn store() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open(&dir.path().join("b.db")).unwrap();
        (dir, s)
    }

    #[test]
    fn a_retry_gets_the_first_answer_and_is_not_applied_again() {
        let (_d, mut s) = store();
        let mut add = |s: &mut dyn Store| -> Answer {
            let (t, _) = s.add_task("once", "", 0, &[], "operator", 0)?;
            Ok(json!({ "task": t.id }))
        };
        let first = s.with_op("operator", "op-1", &mut add).unwrap().unwrap();
        let again = s.with_op("operator", "op-1", &mut add).unwrap().unwrap();
        assert_eq!(first, again);
        assert_eq!(s.list_tasks(None, 0).unwrap().len(), 1);
        // Another identity's op_id is its own.
        s.with_op("claude", "op-1", &mut add).unwrap().unwrap();
        assert_eq!(s.list_tasks(None, 0).unwrap().len(), 2);
    }

    #[test]
    fn a_failed_step_is_rolled_back_alone_and_the_refusal_is_kept() {
        let (_d, mut s) = store();
        let mut op = |s: &mut dyn Store| -> Answer {
            s.add_task("kept", "", 0, &[], "operator", 0)?;
            s.add_task("", "", 0, &[], "operator", 0)?;
            Ok(Value::Null)
        };
        let e = s.with_op("operator", "op-2", &mut op).unwrap().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Invalid);
        let again = s.with_op("operator", "op-2", &mut op).unwrap().unwrap_err();
        assert_eq!(again.message, e.message);
        // The first step of the first attempt stands, once.
        assert_eq!(s.list_tasks(None, 0).unwrap().len(), 1);
    }
}
