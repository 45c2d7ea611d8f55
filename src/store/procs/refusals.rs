//! Why a claim or a holder write was refused, as the error the caller sees: the reads; the
//! words are `store::refusal`'s. Reads only: they never decide a change.

use super::tasks::task_state;
use crate::proto::error::{BoardError, BoardResult};
use crate::store::db::{get, Db};
use crate::store::refusal::{self, ClaimFacts, LastClaim, TaskFacts};
use crate::store::TaskState;

/// Why a claim was not granted, as the error the loser sees.
pub(in crate::store) fn explain_claim_refusal(
    c: &mut impl Db,
    agent: &str,
    task: Option<i64>,
) -> BoardResult<BoardError> {
    let ended: Option<Option<String>> = c.value(
        "SELECT end_reason FROM sessions WHERE id = $1 AND ended_at IS NOT NULL",
        &args![agent],
    )?;
    if let Some(reason) = ended {
        return Ok(refusal::session_ended(agent, reason));
    }
    let Some(id) = task else {
        let remaining: Option<i64> = c.value(
            concat!("SELECT COUNT(*) FROM tasks WHERE state IN ", unfinished!()),
            &[],
        )?;
        let remaining = remaining.unwrap_or(0);
        return Ok(refusal::none_ready(remaining));
    };
    let facts = match task_state(c, id)? {
        TaskState::Claimed => {
            let r = c.one(
                "SELECT session_id, generation FROM claims WHERE task_id = $1 AND ended_at IS NULL",
                &args![id],
            )?;
            ClaimFacts::Held {
                holder: get(&r, 0)?,
                generation: get(&r, 1)?,
            }
        }
        TaskState::Open => {
            let waits: Vec<i64> = c.column(
                concat!(
                    "SELECT d.after_id FROM task_deps d JOIN tasks a ON a.id = d.after_id
                     WHERE d.task_id = $1 AND a.state NOT IN ",
                    finished!(),
                    " ORDER BY d.after_id"
                ),
                &args![id],
            )?;
            let r = c.one("SELECT meant_for FROM tasks WHERE id = $1", &args![id])?;
            match get::<Option<String>>(&r, 0)? {
                Some(whom) if waits.is_empty() => ClaimFacts::MeantFor(whom),
                _ => ClaimFacts::Waits(waits),
            }
        }
        TaskState::Done => {
            let r = c.one(
                "SELECT done_by, done_at FROM tasks WHERE id = $1",
                &args![id],
            )?;
            ClaimFacts::Done {
                by: get(&r, 0)?,
                at: get(&r, 1)?,
            }
        }
        other => ClaimFacts::Other(other),
    };
    Ok(refusal::claim_refused(id, facts))
}

/// The task's state, live claim, current generation and `done_by`, for a refusal.
fn task_facts(c: &mut impl Db, task: i64) -> BoardResult<TaskFacts> {
    let state = task_state(c, task)?;
    let live: Option<(String, i64)> = c
        .opt(
            "SELECT session_id, generation FROM claims WHERE task_id = $1 AND ended_at IS NULL",
            &args![task],
        )?
        .map(|r| Ok::<_, BoardError>((get(&r, 0)?, get(&r, 1)?)))
        .transpose()?;
    let r = c.one(
        "SELECT generation, done_by FROM tasks WHERE id = $1",
        &args![task],
    )?;
    Ok(TaskFacts {
        state,
        live,
        current: get(&r, 0)?,
        done_by: get(&r, 1)?,
    })
}

/// Why a holder write (`done`, `release`, `note`, `check`, `renew`) by `agent` on `task` was
/// refused: says when and why the caller's claim ended and who holds the task now.
pub(in crate::store) fn explain_write_refusal(
    c: &mut impl Db,
    agent: &str,
    task: i64,
    generation: Option<i64>,
) -> BoardResult<BoardError> {
    let facts = task_facts(c, task)?;
    let mine: Option<LastClaim> = c
        .opt(
            "SELECT generation, ended_at, end_reason FROM claims WHERE task_id = $1 AND session_id = $2
             ORDER BY id DESC LIMIT 1",
            &args![task, agent],
        )?
        .map(|r| Ok::<_, BoardError>((get(&r, 0)?, get(&r, 1)?, get(&r, 2)?)))
        .transpose()?;
    Ok(refusal::write_refused(agent, task, generation, facts, mine))
}

/// Why an operator's `release --force [--generation N]` found nothing to end (see
/// `refusal::force_refused`).
pub(in crate::store) fn explain_force_refusal(
    c: &mut impl Db,
    task: i64,
    generation: Option<i64>,
) -> BoardResult<BoardError> {
    let facts = task_facts(c, task)?;
    Ok(refusal::force_refused(task, generation, facts))
}
