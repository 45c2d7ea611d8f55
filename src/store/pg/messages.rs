//! Messages between agent sessions and operators: the one step PostgreSQL spells its own way
//! (the rest is `store::procs::messages`).

use super::{col, Conn};
use crate::proto::error::BoardResult;

/// Ends the open question of live session `agent` by one conditional UPDATE; returns it, or
/// None when it had none. (The joined row is the one before the update: it is the question.)
pub(super) fn end_question(c: &mut Conn, agent: &str) -> BoardResult<Option<String>> {
    c.opt(
        "UPDATE sessions s SET question = NULL
         FROM (SELECT question AS asked FROM sessions WHERE id = $1) AS old
         WHERE s.id = $1 AND s.ended_at IS NULL AND s.question IS NOT NULL
         RETURNING old.asked",
        &[&agent],
    )?
    .map(|r| col(&r, 0))
    .transpose()
}
