//! The fenced holder writes: `done`, `release`, `note`. Each ends or checks the caller's own
//! live claim, unexpired on the lease clock, in one conditional statement (ARCHITECTURE.md rules
//! 5, 6 and 7); a refused write first lapses the caller's own expired claim, so the log shows
//! its end before the refusal.

use crate::proto::error::BoardResult;
use crate::proto::{NoteView, TaskView};
use crate::store::db::{get, Backend, Db};
use crate::store::holder_rules;
use crate::store::{
    check_text, ClaimEnd, DoneOutcome, EventKind, Events, Generation, TaskId, MAX_TEXT, OPERATOR,
};

use super::lapse::lapse_expired;
use super::refusals::{explain_force_refusal, explain_write_refusal};
use super::tasks::{insert_note, reopen, task_state, task_view};

pub(in crate::store) fn done<B: Backend>(
    b: &mut B,
    agent: &str,
    task: TaskId,
    generation: Option<Generation>,
    note: Option<&str>,
    now_ms: i64,
) -> BoardResult<(DoneOutcome, Events)> {
    holder_rules::check_note(note)?;
    b.at(now_ms);
    let generation = generation.map(i64::from);
    b.refusable(|db, ev| {
        let done = ClaimEnd::Done;
        let Some(generation) = end_own_claim(db, agent, task.0, generation, done, done.as_str())?
        else {
            let already = db.value::<i64>(
                concat!(
                    "SELECT done_generation FROM tasks WHERE id = $1 AND state = ",
                    crate::sql_state!(done),
                    " AND done_by = $2 AND (CAST($3 AS bigint) IS NULL OR done_generation = $3)"
                ),
                &args![task.0, agent, generation],
            )?;
            return repeat_or_refuse(db, ev, agent, task.0, generation, already, now_ms);
        };
        db.exec(
            concat!(
                "UPDATE tasks SET state = ",
                crate::sql_state!(done),
                ", done_by = $2, done_generation = $3, done_at = board_wall(),
                   updated_at = board_wall()
                 WHERE id = $1 AND state = ",
                crate::sql_state!(claimed)
            ),
            &args![task.0, agent, generation],
        )?;
        if let Some(n) = note {
            insert_note(db, task.0, agent, Some(generation), n)?;
        }
        let said = note.unwrap_or(done.as_str());
        db.emit(
            ev,
            EventKind::Done,
            Some(task.0),
            Some(agent),
            Some(generation),
            said,
        )?;
        Ok(Ok(DoneOutcome {
            task: task_view(db, task, now_ms)?,
            generation: Generation(generation),
            already: false,
        }))
    })
}

pub(in crate::store) fn release<B: Backend>(
    b: &mut B,
    agent: Option<&str>,
    task: TaskId,
    generation: Option<Generation>,
    note: Option<&str>,
    now_ms: i64,
) -> BoardResult<(TaskView, Events)> {
    holder_rules::check_note(note)?;
    b.at(now_ms);
    let generation = generation.map(i64::from);
    b.refusable(|db, ev| {
        let (generation, holder) = match agent {
            Some(agent) => {
                let release = ClaimEnd::Release;
                match end_own_claim(db, agent, task.0, generation, release, "released")? {
                    Some(g) => (g, agent.to_string()),
                    None => return refuse_write(db, ev, agent, task.0, generation),
                }
            }
            None => match force_release(db, task.0, generation)? {
                Some(ended) => ended,
                None => return Ok(Err(explain_force_refusal(db, task.0, generation)?)),
            },
        };
        reopen(db, task.0)?;
        let author = agent.unwrap_or(OPERATOR);
        if let Some(n) = note {
            insert_note(db, task.0, author, Some(generation), n)?;
        }
        let reason = holder_rules::release_reason(agent.is_none(), &holder);
        let release = EventKind::Release;
        db.emit(
            ev,
            release,
            Some(task.0),
            Some(&holder),
            Some(generation),
            &reason,
        )?;
        Ok(Ok(task_view(db, task, now_ms)?))
    })
}

/// An operator ends the live claim on `task` (at `generation` when given): its generation and
/// holder, or None when there was no such claim.
fn force_release(
    db: &mut impl Db,
    task: i64,
    generation: Option<i64>,
) -> BoardResult<Option<(i64, String)>> {
    let ended = db.opt(
        concat!(
            "UPDATE claims SET ended_at = board_wall(), end_kind = ",
            crate::sql_end!(release),
            ", end_reason = 'force-released by operator'
             WHERE task_id = $1 AND ended_at IS NULL
               AND (CAST($2 AS bigint) IS NULL OR generation = $2)
             RETURNING generation, session_id"
        ),
        &args![task, generation],
    )?;
    ended.map(|r| Ok((get(&r, 0)?, get(&r, 1)?))).transpose()
}

pub(in crate::store) fn note<B: Backend>(
    b: &mut B,
    agent: Option<&str>,
    task: TaskId,
    text: &str,
    generation: Option<Generation>,
    now_ms: i64,
) -> BoardResult<(NoteView, Events)> {
    check_text("note", text, MAX_TEXT, false)?;
    b.at(now_ms);
    let generation = generation.map(i64::from);
    b.refusable(|db, ev| {
        let (author, generation) = match agent {
            Some(a) => {
                let held =
                    db.value::<i64>(<B::Db<'_> as Db>::HELD_CLAIM, &args![task.0, a, generation])?;
                match held {
                    Some(g) => (a.to_string(), Some(g)),
                    None => return refuse_write(db, ev, a, task.0, generation),
                }
            }
            None => {
                task_state(db, task.0)?;
                (OPERATOR.to_string(), None)
            }
        };
        let (id, at) = insert_note(db, task.0, &author, generation, text)?;
        db.emit(ev, EventKind::Note, Some(task.0), agent, generation, text)?;
        Ok(Ok(NoteView {
            id,
            task,
            author,
            generation: generation.map(Generation),
            text: text.to_string(),
            at,
        }))
    })
}

/// A `done` that found no live claim of the caller to end: the answer of the `done` it
/// repeats (finished at generation `already`, rule 7), else the refusal ([`refuse_write`]).
pub(in crate::store) fn repeat_or_refuse(
    db: &mut impl Db,
    ev: &mut Events,
    agent: &str,
    task: i64,
    generation: Option<i64>,
    already: Option<i64>,
    now_ms: i64,
) -> BoardResult<BoardResult<DoneOutcome>> {
    match already {
        Some(g) => Ok(Ok(DoneOutcome {
            generation: Generation(g),
            task: task_view(db, TaskId(task), now_ms)?,
            already: true,
        })),
        None => refuse_write(db, ev, agent, task, generation),
    }
}

/// The fenced step of every holder write: ends the caller's own live claim on `task`,
/// unexpired on the lease clock (at `generation` when given), in one conditional UPDATE.
/// None when no such claim exists.
pub(in crate::store) fn end_own_claim(
    db: &mut impl Db,
    agent: &str,
    task: i64,
    generation: Option<i64>,
    kind: ClaimEnd,
    reason: &str,
) -> BoardResult<Option<i64>> {
    db.value(
        concat!(
            "UPDATE claims SET ended_at = board_wall(), end_kind = $4, end_reason = $5, told = true
             WHERE task_id = $1 AND session_id = $2 AND ",
            live_unexpired!("board_now_ms()"),
            " AND (CAST($3 AS bigint) IS NULL OR generation = $3) RETURNING generation"
        ),
        &args![task, agent, generation, kind.as_str(), reason],
    )
}

/// A holder write found no live, unexpired claim of the caller at the given generation: lapse
/// the caller's own expired claim on `task` now (so the log shows its end before the refusal,
/// ARCHITECTURE.md rule 5), then answer why the write is refused. The refusal names the lapse
/// itself, so that claim counts as told.
pub(in crate::store) fn refuse_write<T>(
    db: &mut impl Db,
    ev: &mut Events,
    agent: &str,
    task: i64,
    generation: Option<i64>,
) -> BoardResult<BoardResult<T>> {
    lapse_expired(db, ev, task, Some(agent), true)?;
    Ok(Err(explain_write_refusal(db, agent, task, generation)?))
}
