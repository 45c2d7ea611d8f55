//! Retries applied once (PostgreSQL; see `store::op_results`): the `op_id` lookup, the
//! operation and its saved answer are one transaction. The scope itself takes no write lock
//! (each store step inside is a savepoint that takes its own, see `PgStore::tx_refusable`), so
//! two racing attempts with one `op_id` (from boards of two hosts, even) can both run the
//! operation; the second to save its answer fails on the primary key, rolls back whatever it
//! did, and runs again: then it finds the first one's answer.

use super::{col, retryable, Conn, PgStore, RETRIES};
use crate::proto::error::{BoardError, BoardResult};
use crate::store::answers::{decode, encode, Answer};
use crate::store::{Store, OUTCOME_UNKNOWN};

impl PgStore {
    pub(in crate::store) fn with_op(
        &mut self,
        identity: &str,
        op_id: &str,
        op: &mut dyn FnMut(&mut dyn Store) -> Answer,
    ) -> BoardResult<Answer> {
        if self.depth > 0 {
            return Err(BoardError::internal("nested op_id scopes"));
        }
        let mut attempt = 0;
        loop {
            match self.op_scope(identity, op_id, op) {
                Err(e) if attempt < RETRIES && (retryable(&e) || saved_twice(&e)) => attempt += 1,
                other => return other,
            }
        }
    }

    /// One attempt of [`PgStore::with_op`]: one transaction.
    fn op_scope(
        &mut self,
        identity: &str,
        op_id: &str,
        op: &mut dyn FnMut(&mut dyn Store) -> Answer,
    ) -> BoardResult<Answer> {
        self.ensure_connected()?;
        // The transaction id first, before any step takes an event id (see `events`).
        self.read(|c| c.batch("BEGIN; SELECT pg_current_xact_id()"))?;
        self.depth = 1;
        self.pending_hwm = None;
        let out = self.op_body(identity, op_id, op);
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

    fn op_body(
        &mut self,
        identity: &str,
        op_id: &str,
        op: &mut dyn FnMut(&mut dyn Store) -> Answer,
    ) -> BoardResult<Answer> {
        if let Some(saved) = self.read(|c| lookup(c, identity, op_id))? {
            return Ok(decode(&saved));
        }
        let answer = op(self);
        if let Some(saved) = encode(&answer) {
            self.read(|c| {
                c.exec(
                    "INSERT INTO op_results (identity, op_id, response, at)
                     VALUES ($1, $2, $3, board_wall())",
                    &[&identity, &op_id, &saved],
                )
            })?;
        }
        Ok(answer)
    }
}

fn lookup(c: &mut Conn, identity: &str, op_id: &str) -> BoardResult<Option<String>> {
    c.opt(
        "SELECT response FROM op_results WHERE identity = $1 AND op_id = $2",
        &[&identity, &op_id],
    )?
    .map(|r| col(&r, 0))
    .transpose()
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
