//! Retries applied once (PostgreSQL; see `store::procs::op_results`): the `op_id` lookup, the
//! operation and its saved answer are one transaction. The scope itself takes no write lock
//! (each store step inside is a savepoint that takes its own, see `PgStore::tx_refusable`), so
//! two racing attempts with one `op_id` (from boards of two hosts, even) can both run the
//! operation; the second to save its answer fails on the primary key, rolls back whatever it
//! did, and runs again: then it finds the first one's answer.

use super::{retryable, PgStore, RETRIES};
use crate::proto::error::{BoardError, BoardResult};
use crate::store::answers::{encode, Answer};
use crate::store::db::ScopeBody;
use crate::store::OUTCOME_UNKNOWN;

impl PgStore {
    /// The `op_id` scope: one transaction around `body`, run again (whole) when the server
    /// rolled it back or a racing attempt saved its answer first.
    pub(super) fn op_scope(
        &mut self,
        op_id: &str,
        body: &mut ScopeBody<'_, Self>,
    ) -> BoardResult<Answer> {
        if self.depth > 0 {
            return Err(BoardError::internal("nested op_id scopes"));
        }
        let mut attempt = 0;
        loop {
            match self.op_attempt(op_id, body) {
                Err(e) if attempt < RETRIES && (retryable(&e) || saved_twice(&e)) => attempt += 1,
                other => return other,
            }
        }
    }

    /// One attempt of [`PgStore::op_scope`]: one transaction.
    fn op_attempt(&mut self, op_id: &str, body: &mut ScopeBody<'_, Self>) -> BoardResult<Answer> {
        self.ensure_connected()?;
        // The transaction id first, before any step takes an event id (see `events`).
        self.read(|c| c.batch("BEGIN; SELECT pg_current_xact_id()"))?;
        self.depth = 1;
        self.pending_hwm = None;
        let out = body(self);
        // Still inside the transaction: a connection lost by now must fail the COMMIT, never
        // be replaced by a new one on which `COMMIT` would answer ok for nothing.
        let committed = match &out {
            // The COMMIT of a write that would stand was sent: if its answer is lost, only the
            // saved answer can tell whether it was applied.
            Ok(a) if encode(a).is_some() => self
                .read(|c| c.batch("COMMIT"))
                .map_err(|e| outcome_unknown(e, op_id)),
            Ok(_) => self.read(|c| c.batch("COMMIT")),
            Err(_) => Ok(()),
        };
        if out.is_err() || committed.is_err() {
            let _ = self.read(|c| c.batch("ROLLBACK"));
        }
        self.depth = 0;
        let pending = self.pending_hwm.take();
        committed?;
        if let (Ok(_), Some((id, at))) = (&out, pending) {
            self.hwm().wrote(id, &at);
        }
        out
    }
}

/// The answer of this `op_id` was saved by a racing attempt first (unique violation on
/// `op_results`).
pub(super) fn saved_twice(e: &BoardError) -> bool {
    e.data.get("sqlstate").and_then(|v| v.as_str()) == Some("23505")
        && e.message.contains("op_results")
}

/// `e` marked [`OUTCOME_UNKNOWN`] when the store went away (`unavailable`) while a write that
/// may have been applied was waiting for its answer; other errors unchanged.
pub(super) fn outcome_unknown(e: BoardError, op_id: &str) -> BoardError {
    if e.kind != crate::proto::error::ErrorKind::Unavailable {
        return e;
    }
    let message = format!(
        "{}; the write (op_id {op_id}) may have been applied: ask again with the same op_id",
        e.message
    );
    let mut out = BoardError::new(e.kind, message);
    out.data = e.data;
    out.with(OUTCOME_UNKNOWN, true)
}
