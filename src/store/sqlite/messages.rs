//! Messages between agent sessions and operators: the one step SQLite spells its own way (the
//! rest is `store::procs::messages`).

use rusqlite::{params, OptionalExtension};

use crate::proto::error::BoardResult;

/// Ends the open question of live session `agent`; returns it, or None when it had none.
/// SQLite's RETURNING shows the row after the update only: the question is read first, and the
/// UPDATE, conditional on that very question still being open, decides (inside the writer's
/// `BEGIN IMMEDIATE`, nothing can change it between the two).
pub(super) fn end_question(tx: &rusqlite::Connection, agent: &str) -> BoardResult<Option<String>> {
    let asked: Option<String> = tx
        .query_row(
            "SELECT question FROM sessions
             WHERE id = ?1 AND ended_at IS NULL AND question IS NOT NULL",
            [agent],
            |r| r.get(0),
        )
        .optional()?;
    let Some(asked) = asked else {
        return Ok(None);
    };
    let n = tx.execute(
        "UPDATE sessions SET question = NULL
         WHERE id = ?1 AND ended_at IS NULL AND question IS ?2",
        params![agent, asked],
    )?;
    Ok((n == 1).then_some(asked))
}
