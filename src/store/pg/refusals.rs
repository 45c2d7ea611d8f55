//! Why a claim or a holder write was refused, as the error the caller sees (PostgreSQL; the
//! same reads and words as `store::refusals`). Reads only: they never decide a change.

use super::{col, task_state, Conn};
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::store::TaskState;

/// Why a claim was not granted, as the error the loser sees.
pub(super) fn explain_claim_refusal(
    c: &mut Conn,
    agent: &str,
    task: Option<i64>,
) -> BoardResult<BoardError> {
    let ended: Option<Option<String>> = c
        .opt(
            "SELECT end_reason FROM sessions WHERE id = $1 AND ended_at IS NOT NULL",
            &[&agent],
        )?
        .map(|r| col(&r, 0))
        .transpose()?;
    if let Some(reason) = ended {
        return Ok(BoardError::new(
            ErrorKind::Lapsed,
            format!(
                "agent session {agent} has ended ({})",
                reason.unwrap_or_default()
            ),
        ));
    }
    let Some(id) = task else {
        let remaining: i64 = col(
            &c.one(
                concat!("SELECT COUNT(*) FROM tasks WHERE state IN ", unfinished!()),
                &[],
            )?,
            0,
        )?;
        return Ok(BoardError::new(
            ErrorKind::NoReadyTask,
            if remaining == 0 {
                "no ready task: the backlog is finished".to_string()
            } else {
                format!("no ready task right now ({remaining} unfinished: claimed or waiting on dependencies)")
            },
        )
        .with("remaining", remaining));
    };
    let state = task_state(c, id)?;
    Ok(match state {
        TaskState::Claimed => {
            let r = c.one(
                "SELECT session_id, generation FROM claims WHERE task_id = $1 AND ended_at IS NULL",
                &[&id],
            )?;
            let (holder, generation): (String, i64) = (col(&r, 0)?, col(&r, 1)?);
            BoardError::new(
                ErrorKind::Conflict,
                format!("task {id} is held by {holder}"),
            )
            .with("holder", holder)
            .with("generation", generation)
            .with("task", id)
        }
        TaskState::Open => {
            let waits: Vec<i64> = c
                .rows(
                    concat!(
                        "SELECT d.after_id FROM task_deps d JOIN tasks a ON a.id = d.after_id
                         WHERE d.task_id = $1 AND a.state NOT IN ",
                        finished!(),
                        " ORDER BY d.after_id"
                    ),
                    &[&id],
                )?
                .iter()
                .map(|r| col(r, 0))
                .collect::<BoardResult<_>>()?;
            let list = waits
                .iter()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            BoardError::new(
                ErrorKind::NoReadyTask,
                format!("task {id} is not ready: it waits for task(s) {list}"),
            )
            .with("blocked_by", waits)
            .with("task", id)
        }
        // A finished task is not held by anyone: answering `conflict` (exit 4, "another agent
        // holds it") would send the caller looking for a holder. It is simply not claimable.
        TaskState::Done => {
            let r = c.one("SELECT done_by, done_at FROM tasks WHERE id = $1", &[&id])?;
            let (by, at): (Option<String>, Option<String>) = (col(&r, 0)?, col(&r, 1)?);
            let who = match (&by, &at) {
                (Some(b), Some(a)) => format!(" (finished by {b} at {a})"),
                _ => String::new(),
            };
            BoardError::new(
                ErrorKind::NoReadyTask,
                format!("task {id} is already done{who}: there is nothing to claim"),
            )
            .with("state", TaskState::Done.as_str())
            .with("task", id)
            .with("done_by", by)
        }
        other => BoardError::new(
            ErrorKind::NoReadyTask,
            format!("task {id} is {other}: there is nothing to claim"),
        )
        .with("state", other.as_str())
        .with("task", id),
    })
}

/// Why a holder write (`done`, `release`, `note`, `check`, `renew`) by `agent` on `task` was
/// refused: says when and why the caller's claim ended and who holds the task now.
pub(super) fn explain_write_refusal(
    c: &mut Conn,
    agent: &str,
    task: i64,
    generation: Option<i64>,
) -> BoardResult<BoardError> {
    let state = task_state(c, task)?;
    let live: Option<(String, i64, i64)> = c
        .opt(
            "SELECT session_id, generation, expires_ms FROM claims WHERE task_id = $1 AND ended_at IS NULL",
            &[&task],
        )?
        .map(|r| Ok::<_, BoardError>((col(&r, 0)?, col(&r, 1)?, col(&r, 2)?)))
        .transpose()?;
    let mine: Option<(i64, Option<String>, Option<String>)> = c
        .opt(
            "SELECT generation, ended_at, end_reason FROM claims WHERE task_id = $1 AND session_id = $2
             ORDER BY id DESC LIMIT 1",
            &[&task, &agent],
        )?
        .map(|r| Ok::<_, BoardError>((col(&r, 0)?, col(&r, 1)?, col(&r, 2)?)))
        .transpose()?;
    let now_held = match &live {
        Some((h, g, _)) if h != agent => format!("task {task} is now held by {h} (generation {g})"),
        Some((_, g, _)) => format!("task {task} is at generation {g}"),
        None => match state {
            TaskState::Done => {
                let by: Option<String> = col(
                    &c.one("SELECT done_by FROM tasks WHERE id = $1", &[&task])?,
                    0,
                )?;
                format!(
                    "task {task} is done (by {})",
                    by.unwrap_or_else(|| "?".into())
                )
            }
            s => format!("task {task} is {s}"),
        },
    };
    let mut err = match (&live, &mine) {
        // The caller holds the live claim, so the generation it gave is stale, or the claim's
        // expiry passed and the sweep has not run yet.
        (Some((h, g, _)), _) if h == agent => {
            let msg = match generation {
                Some(given) if given != *g => {
                    format!("generation {given} is stale: {now_held}")
                }
                _ => format!("your claim on task {task} (generation {g}) has expired"),
            };
            BoardError::new(ErrorKind::Lapsed, msg)
        }
        (_, Some((g, Some(ended_at), reason))) => BoardError::new(
            ErrorKind::Lapsed,
            format!(
                "your claim on task {task} (generation {g}) ended at {ended_at}: {}; {now_held}",
                reason.clone().unwrap_or_else(|| "ended".into())
            ),
        )
        .with("ended_at", ended_at.clone())
        .with("end_reason", reason.clone()),
        (Some((h, g, _)), _) => {
            BoardError::new(ErrorKind::Conflict, format!("task {task} is held by {h}"))
                .with("holder", h.clone())
                .with("generation", *g)
        }
        (None, _) => BoardError::new(
            ErrorKind::Lapsed,
            format!("you hold no claim on task {task}; {now_held}"),
        ),
    };
    // Every refusal says where the task stands now: its current generation (the fencing token
    // a successor holds) and its live holder (null when none).
    let current: i64 = col(
        &c.one("SELECT generation FROM tasks WHERE id = $1", &[&task])?,
        0,
    )?;
    err = err
        .with("task", task)
        .with("state", state.as_str())
        .with("generation", current)
        .with(
            "holder",
            live.map(|(h, _, _)| serde_json::Value::from(h))
                .unwrap_or(serde_json::Value::Null),
        );
    if let Some(given) = generation {
        err = err.with("given_generation", given);
    }
    Ok(err)
}

/// Why an operator's `release --force [--generation N]` found nothing to end: the task is not
/// claimed (`conflict`), or its live claim is at another generation than N (`lapsed`: the
/// operator acted on a stale view; nothing changed).
pub(super) fn explain_force_refusal(
    c: &mut Conn,
    task: i64,
    generation: Option<i64>,
) -> BoardResult<BoardError> {
    let state = task_state(c, task)?;
    let live: Option<(String, i64)> = c
        .opt(
            "SELECT session_id, generation FROM claims WHERE task_id = $1 AND ended_at IS NULL",
            &[&task],
        )?
        .map(|r| Ok::<_, BoardError>((col(&r, 0)?, col(&r, 1)?)))
        .transpose()?;
    let current: i64 = col(
        &c.one("SELECT generation FROM tasks WHERE id = $1", &[&task])?,
        0,
    )?;
    let err = match (live, generation) {
        (Some((holder, g)), Some(given)) => BoardError::new(
            ErrorKind::Lapsed,
            format!(
                "generation {given} is not current: task {task} is held by {holder} at \
                 generation {g}; nothing was released"
            ),
        )
        .with("holder", holder)
        .with("given_generation", given),
        _ => BoardError::new(
            ErrorKind::Conflict,
            format!("task {task} is {state}, not claimed: nothing to release"),
        )
        .with("holder", serde_json::Value::Null),
    };
    Ok(err
        .with("task", task)
        .with("state", state.as_str())
        .with("generation", current))
}
