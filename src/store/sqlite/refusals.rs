//! Why a claim or a holder write was refused, as the error the caller sees: the SQLite reads;
//! the words are `store::refusal`'s, shared with the PostgreSQL store.

use rusqlite::{params, Connection, OptionalExtension};

use super::refusal::{self, ClaimFacts, LastClaim, TaskFacts};
use super::*;
use crate::proto::error::{BoardError, BoardResult};

/// Why a claim was not granted, as the error the loser sees.
pub(in crate::store) fn explain_claim_refusal(
    tx: &Connection,
    agent: &str,
    task: Option<i64>,
) -> BoardResult<BoardError> {
    let ended: Option<Option<String>> = tx
        .query_row(
            "SELECT end_reason FROM sessions WHERE id = ?1 AND ended_at IS NOT NULL",
            [agent],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(reason) = ended {
        return Ok(refusal::session_ended(agent, reason));
    }
    let Some(id) = task else {
        let remaining: i64 = tx.query_row(
            concat!("SELECT COUNT(*) FROM tasks WHERE state IN ", unfinished!()),
            [],
            |r| r.get(0),
        )?;
        return Ok(refusal::none_ready(remaining));
    };
    let facts = match task_state(tx, id)? {
        TaskState::Claimed => {
            let (holder, generation) = tx.query_row(
                "SELECT session_id, generation FROM claims WHERE task_id = ?1 AND ended_at IS NULL",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            ClaimFacts::Held { holder, generation }
        }
        TaskState::Open => {
            let mut st = tx.prepare(concat!(
                "SELECT d.after_id FROM task_deps d JOIN tasks a ON a.id = d.after_id
                     WHERE d.task_id = ?1 AND a.state NOT IN ",
                finished!(),
                " ORDER BY d.after_id"
            ))?;
            let rows = st.query_map([id], |r| r.get(0))?;
            let waits: Vec<i64> = rows.collect::<Result<_, _>>()?;
            let meant_for: Option<String> =
                tx.query_row("SELECT meant_for FROM tasks WHERE id = ?1", [id], |r| {
                    r.get(0)
                })?;
            match meant_for {
                Some(whom) if waits.is_empty() => ClaimFacts::MeantFor(whom),
                _ => ClaimFacts::Waits(waits),
            }
        }
        TaskState::Done => {
            let (by, at) = tx.query_row(
                "SELECT done_by, done_at FROM tasks WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            ClaimFacts::Done { by, at }
        }
        other => ClaimFacts::Other(other),
    };
    Ok(refusal::claim_refused(id, facts))
}

/// The task's state, live claim, current generation and `done_by`, for a refusal.
fn task_facts(tx: &Connection, task: i64) -> BoardResult<TaskFacts> {
    let state = task_state(tx, task)?;
    let live: Option<(String, i64)> = tx
        .query_row(
            "SELECT session_id, generation FROM claims WHERE task_id = ?1 AND ended_at IS NULL",
            [task],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (current, done_by) = tx.query_row(
        "SELECT generation, done_by FROM tasks WHERE id = ?1",
        [task],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(TaskFacts {
        state,
        live,
        current,
        done_by,
    })
}

/// Why a holder write (`done`, `release`, `note`, `check`, `renew`) by `agent` on `task` was
/// refused: says when and why the caller's claim ended and who holds the task now.
pub(in crate::store) fn explain_write_refusal(
    tx: &Connection,
    agent: &str,
    task: i64,
    generation: Option<i64>,
) -> BoardResult<BoardError> {
    let facts = task_facts(tx, task)?;
    let mine: Option<LastClaim> = tx
        .query_row(
            "SELECT generation, ended_at, end_reason FROM claims WHERE task_id = ?1 AND session_id = ?2
             ORDER BY id DESC LIMIT 1",
            params![task, agent],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    Ok(refusal::write_refused(agent, task, generation, facts, mine))
}

/// Why an operator's `release --force [--generation N]` found nothing to end (see
/// `refusal::force_refused`).
pub(in crate::store) fn explain_force_refusal(
    tx: &Connection,
    task: i64,
    generation: Option<i64>,
) -> BoardResult<BoardError> {
    Ok(refusal::force_refused(
        task,
        generation,
        task_facts(tx, task)?,
    ))
}
