//! Retries applied once: the `op_id` lookup, the operation and its saved answer are one
//! transaction (ARCHITECTURE.md, Wire). The transaction around them is each backend's
//! ([`Backend::op_scope`]).

use crate::proto::error::BoardResult;
use crate::store::answers::{decode, encode, Answer};
use crate::store::db::{Backend, Db};
use crate::store::Store;

pub(in crate::store) fn with_op<B: Backend + Store>(
    b: &mut B,
    identity: &str,
    op_id: &str,
    op: &mut dyn FnMut(&mut dyn Store) -> Answer,
) -> BoardResult<Answer> {
    b.op_scope(op_id, &mut |b: &mut B| op_body(b, identity, op_id, op))
}

/// Inside the scope: the saved answer of `(identity, op_id)`, or the operation's, saved.
fn op_body<B: Backend + Store>(
    b: &mut B,
    identity: &str,
    op_id: &str,
    op: &mut dyn FnMut(&mut dyn Store) -> Answer,
) -> BoardResult<Answer> {
    let saved = b.read_with(|db| {
        db.value::<String>(
            "SELECT response FROM op_results WHERE identity = $1 AND op_id = $2",
            &args![identity, op_id],
        )
    })?;
    if let Some(saved) = saved {
        return Ok(decode(&saved));
    }
    let answer = op(b);
    if let Some(saved) = encode(&answer) {
        // Inside the scope's transaction: a read of the backend runs in it.
        b.read_with(|db| {
            db.exec(
                "INSERT INTO op_results (identity, op_id, response, at)
                 VALUES ($1, $2, $3, board_wall())",
                &args![identity, op_id, &saved],
            )
        })?;
    }
    Ok(answer)
}
