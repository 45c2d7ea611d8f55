//! The words of a refused claim, holder write or forced release, built from the facts a
//! backend read inside its transaction. Pure: no reads, no writes, so the SQLite and the
//! PostgreSQL store refuse with the same `BoardError` (kind, message, fields) by construction.

use crate::proto::error::{BoardError, ErrorKind};
use crate::store::TaskState;

/// The caller's newest claim on a task: `(generation, ended_at, end_reason)`, `ended_at` and
/// `end_reason` as stored (RFC 3339 text, glossary end word); `ended_at` is `None` while live.
pub(crate) type LastClaim = (i64, Option<String>, Option<String>);

/// Where a task stands, read for a refused claim on it.
pub(crate) enum ClaimFacts {
    /// The task is claimed: its live claim's holder (agent session id) and generation.
    Held { holder: String, generation: i64 },
    /// The task is open but waits on these unfinished tasks (ascending ids).
    Waits(Vec<i64>),
    /// The task is done: who finished it and when (RFC 3339), as stored.
    Done {
        by: Option<String>,
        at: Option<String>,
    },
    /// The task is ready but meant for another agent name or role (`add --for`).
    MeantFor(String),
    /// Any other state (nothing to claim).
    Other(TaskState),
}

/// `task 7 is now held by b (generation 2)`: how every refusal names a task's current holder.
pub(crate) fn now_held_by(task: i64, holder: &str, generation: i64) -> String {
    format!("task {task} is now held by {holder} (generation {generation})")
}

/// `task 7 is done (by b)`, `task 7 is open`: where an unclaimed task stands, for a refusal.
pub(crate) fn unclaimed_stands(task: i64, state: TaskState, done_by: Option<&str>) -> String {
    match state {
        TaskState::Done => format!("task {task} is done (by {})", done_by.unwrap_or("?")),
        s => format!("task {task} is {}", s.phrase()),
    }
}

/// `lapsed`: the claiming agent session has ended, with its stored end reason.
pub(crate) fn session_ended(agent: &str, reason: Option<String>) -> BoardError {
    BoardError::new(
        ErrorKind::Lapsed,
        format!(
            "agent session {agent} has ended ({})",
            reason.unwrap_or_default()
        ),
    )
}

/// `no_ready_task` for a claim of "the next ready task": `remaining` counts unfinished tasks.
pub(crate) fn none_ready(remaining: i64) -> BoardError {
    BoardError::new(
        ErrorKind::NoReadyTask,
        if remaining == 0 {
            "no ready task: the backlog is finished".to_string()
        } else {
            format!(
                "no ready task for you right now ({remaining} unfinished: claimed, waiting on \
                 dependencies, or meant for another agent or role; `board list` shows which)"
            )
        },
    )
    .with("remaining", remaining)
}

/// Why a claim of task `id` was not granted, from what the backend read about it.
pub(crate) fn claim_refused(id: i64, facts: ClaimFacts) -> BoardError {
    match facts {
        ClaimFacts::Held { holder, generation } => BoardError::new(
            ErrorKind::Conflict,
            format!("task {id} is held by {holder}"),
        )
        .with("holder", holder)
        .with("generation", generation)
        .with("task", id),
        ClaimFacts::Waits(waits) => {
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
        ClaimFacts::Done { by, at } => {
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
        ClaimFacts::MeantFor(whom) => BoardError::new(
            ErrorKind::NoReadyTask,
            format!(
                "task {id} is for {whom}: only the agent named so or with that role can claim it"
            ),
        )
        .with("for", whom)
        .with("task", id),
        ClaimFacts::Other(other) => BoardError::new(
            ErrorKind::NoReadyTask,
            format!("task {id} is {other}: there is nothing to claim"),
        )
        .with("state", other.as_str())
        .with("task", id),
    }
}

/// Where a task stands, read for a refused holder write or forced release on it.
pub(crate) struct TaskFacts {
    /// The task's state.
    pub state: TaskState,
    /// The live claim: holder (agent session id) and generation; `None` when unclaimed.
    pub live: Option<(String, i64)>,
    /// The task's current generation (the fencing token a successor holds).
    pub current: i64,
    /// Who finished the task, as stored (`None` unless done).
    pub done_by: Option<String>,
}

/// Why a holder write (`done`, `release`, `note`, `check`, `renew`) by `agent` on `task` with
/// the `given` generation was refused: says when and why the caller's claim (`mine`, its
/// newest on the task) ended and who holds the task now.
pub(crate) fn write_refused(
    agent: &str,
    task: i64,
    given: Option<i64>,
    facts: TaskFacts,
    mine: Option<LastClaim>,
) -> BoardError {
    let TaskFacts {
        state,
        live,
        current,
        done_by,
    } = facts;
    let now_held = match &live {
        Some((h, g)) if h != agent => now_held_by(task, h, *g),
        Some((_, g)) => format!("task {task} is at generation {g}"),
        None => unclaimed_stands(task, state, done_by.as_deref()),
    };
    let mut err = match (&live, mine) {
        // The caller holds the live claim, so the generation it gave is stale, or the claim's
        // expiry passed and the sweep has not run yet.
        (Some((h, g)), _) if h == agent => {
            let msg = match given {
                // A generation above the task's was never granted: it does not match, it is
                // not old.
                Some(given) if given > *g => {
                    format!("generation {given} does not match: {now_held}")
                }
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
        .with("ended_at", ended_at)
        .with("end_reason", reason),
        (Some((h, g)), _) => {
            BoardError::new(ErrorKind::Conflict, format!("task {task} is held by {h}"))
                .with("holder", h.clone())
                .with("generation", *g)
        }
        (None, _) => BoardError::new(
            ErrorKind::Lapsed,
            format!("you hold no claim on task {task}; {now_held}"),
        ),
    };
    // Every refusal says where the task stands now: its current generation and its live
    // holder (null when none).
    err = err
        .with("task", task)
        .with("state", state.as_str())
        .with("generation", current)
        .with(
            "holder",
            live.map(|(h, _)| serde_json::Value::from(h))
                .unwrap_or(serde_json::Value::Null),
        );
    if let Some(given) = given {
        err = err.with("given_generation", given);
    }
    err
}

/// Why an operator's `release --force [--generation N]` (`given` = N) found nothing to end:
/// the task is not claimed (`conflict`), or its live claim is at another generation than N
/// (`lapsed`: the operator acted on a stale view; nothing changed).
pub(crate) fn force_refused(task: i64, given: Option<i64>, facts: TaskFacts) -> BoardError {
    let TaskFacts {
        state,
        live,
        current,
        ..
    } = facts;
    let err = match (live, given) {
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
            format!(
                "task {task} is {}, not claimed: nothing to release",
                state.phrase()
            ),
        )
        .with("holder", serde_json::Value::Null),
    };
    err.with("task", task)
        .with("state", state.as_str())
        .with("generation", current)
}

/// `lapsed` for a renewal by `agent` that found no live claim because it lost `lost` (claims
/// ended without its asking, not yet told): names each task and how its claim ended.
pub(crate) fn lost_claims(agent: &str, lost: &[crate::store::LostClaim]) -> BoardError {
    let list = lost
        .iter()
        .map(|l| format!("task {} ({})", l.task, l.end))
        .collect::<Vec<_>>()
        .join(", ");
    BoardError::new(
        ErrorKind::Lapsed,
        format!("agent session {agent} holds no live claim; it lost {list}"),
    )
    .with("lost", serde_json::to_value(lost).unwrap_or_default())
}

/// `lapsed` for a `check` by `agent` naming no task, when it holds no live claim.
pub(crate) fn holds_no_claim(agent: &str) -> BoardError {
    BoardError::new(
        ErrorKind::Lapsed,
        format!("agent session {agent} holds no live claim"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(live: Option<(&str, i64)>, state: TaskState) -> TaskFacts {
        TaskFacts {
            state,
            live: live.map(|(h, g)| (h.to_string(), g)),
            current: live.map_or(3, |(_, g)| g),
            done_by: None,
        }
    }

    #[test]
    fn a_stale_generation_of_the_live_holder_is_lapsed_and_names_both_generations() {
        let e = write_refused(
            "a",
            7,
            Some(1),
            facts(Some(("a", 2)), TaskState::Claimed),
            None,
        );
        assert_eq!(e.kind, ErrorKind::Lapsed);
        assert_eq!(
            e.message,
            "generation 1 is stale: task 7 is at generation 2"
        );
        assert_eq!(e.data["given_generation"], 1);
        assert_eq!(e.data["generation"], 2);
        assert_eq!(e.data["holder"], "a");
    }

    #[test]
    fn a_generation_from_the_future_does_not_match_and_is_not_called_stale() {
        let e = write_refused(
            "a",
            7,
            Some(9),
            facts(Some(("a", 1)), TaskState::Claimed),
            None,
        );
        assert_eq!(e.kind, ErrorKind::Lapsed);
        assert_eq!(
            e.message,
            "generation 9 does not match: task 7 is at generation 1"
        );
    }

    #[test]
    fn an_ended_claim_says_when_and_why_and_who_holds_the_task_now() {
        let mine = Some((1, Some("t0".to_string()), Some("expel".to_string())));
        let e = write_refused(
            "a",
            7,
            None,
            facts(Some(("b", 2)), TaskState::Claimed),
            mine,
        );
        assert_eq!(e.kind, ErrorKind::Lapsed);
        assert_eq!(
            e.message,
            "your claim on task 7 (generation 1) ended at t0: expel; \
             task 7 is now held by b (generation 2)"
        );
        assert_eq!(e.data["end_reason"], "expel");
        assert_eq!(e.data["holder"], "b");
    }

    #[test]
    fn a_write_without_any_claim_on_a_done_task_names_who_finished_it() {
        let mut f = facts(None, TaskState::Done);
        f.done_by = Some("b".into());
        let e = write_refused("a", 7, None, f, None);
        assert_eq!(
            e.message,
            "you hold no claim on task 7; task 7 is done (by b)"
        );
        assert_eq!(e.data["holder"], serde_json::Value::Null);
    }

    #[test]
    fn a_forced_release_at_another_generation_is_lapsed_and_an_unclaimed_one_a_conflict() {
        let e = force_refused(7, Some(1), facts(Some(("b", 2)), TaskState::Claimed));
        assert_eq!(e.kind, ErrorKind::Lapsed);
        assert_eq!(e.data["holder"], "b");
        let e = force_refused(7, None, facts(None, TaskState::Open));
        assert_eq!(e.kind, ErrorKind::Conflict);
        assert_eq!(e.message, "task 7 is open, not claimed: nothing to release");
    }
}
