//! The fenced holder writes: `done`, `release`, `note` (PostgreSQL; see
//! `store::holder_writes`). Each ends or checks the caller's own live claim, unexpired on the
//! server's clock, in one conditional statement; a refused write first lapses the caller's
//! own expired claim, so the log shows its end before the refusal.

use super::lapse::{lapse_expired, reopen};
use super::refusals::{explain_force_refusal, explain_write_refusal};
use super::tasks::{insert_note, task_view};
use super::{col, emit, task_state, Conn, PgStore};
use crate::proto::error::BoardResult;
use crate::proto::{NoteView, TaskView};
use crate::store::holder_rules;
use crate::store::{
    check_text, ClaimEnd, DoneOutcome, EventKind, Events, Generation, TaskId, MAX_TEXT, OPERATOR,
};

impl PgStore {
    pub(in crate::store) fn done(
        &mut self,
        agent: &str,
        task: TaskId,
        generation: Option<Generation>,
        note: Option<&str>,
        now_ms: i64,
    ) -> BoardResult<(DoneOutcome, Events)> {
        holder_rules::check_note(note)?;
        self.at(now_ms);
        let generation = generation.map(i64::from);
        self.refusable(|c, ev| {
            let ended = end_own_claim(
                c,
                agent,
                task.0,
                generation,
                ClaimEnd::Done,
                ClaimEnd::Done.as_str(),
            )?;
            let Some(generation) = ended else {
                let already = c.opt(
                    concat!(
                        "SELECT done_generation FROM tasks WHERE id = $1 AND state = ",
                        crate::sql_state!(done),
                        " AND done_by = $2 AND ($3::bigint IS NULL OR done_generation = $3)"
                    ),
                    &[&task.0, &agent, &generation],
                )?;
                if let Some(r) = already {
                    return Ok(Ok(DoneOutcome {
                        generation: col(&r, 0)?,
                        task: task_view(c, task.0)?,
                        already: true,
                    }));
                }
                return refuse_write(c, ev, agent, task.0, generation);
            };
            c.exec(
                concat!(
                    "UPDATE tasks SET state = ",
                    crate::sql_state!(done),
                    ", done_by = $2, done_generation = $3, done_at = board_wall(),
                       updated_at = board_wall()
                     WHERE id = $1 AND state = ",
                    crate::sql_state!(claimed)
                ),
                &[&task.0, &agent, &generation],
            )?;
            if let Some(n) = note {
                insert_note(c, task.0, agent, Some(generation), n)?;
            }
            emit(
                c,
                ev,
                EventKind::Done,
                Some(task.0),
                Some(agent),
                Some(generation),
                note.unwrap_or(ClaimEnd::Done.as_str()),
            )?;
            Ok(Ok(DoneOutcome {
                task: task_view(c, task.0)?,
                generation,
                already: false,
            }))
        })
    }

    pub(in crate::store) fn release(
        &mut self,
        agent: Option<&str>,
        task: TaskId,
        generation: Option<Generation>,
        note: Option<&str>,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        holder_rules::check_note(note)?;
        self.at(now_ms);
        let generation = generation.map(i64::from);
        self.refusable(|c, ev| {
            let (generation, holder) = match agent {
                Some(agent) => {
                    match end_own_claim(
                        c,
                        agent,
                        task.0,
                        generation,
                        ClaimEnd::Release,
                        "released",
                    )? {
                        Some(g) => (g, agent.to_string()),
                        None => return refuse_write(c, ev, agent, task.0, generation),
                    }
                }
                None => {
                    let ended = c.opt(
                        concat!(
                            "UPDATE claims SET ended_at = board_wall(), end_kind = ",
                            crate::sql_end!(release),
                            ", end_reason = 'force-released by operator'
                             WHERE task_id = $1 AND ended_at IS NULL
                               AND ($2::bigint IS NULL OR generation = $2)
                             RETURNING generation, session_id"
                        ),
                        &[&task.0, &generation],
                    )?;
                    match ended {
                        Some(r) => (col::<i64>(&r, 0)?, col::<String>(&r, 1)?),
                        None => return Ok(Err(explain_force_refusal(c, task.0, generation)?)),
                    }
                }
            };
            reopen(c, task.0)?;
            let author = agent.unwrap_or(OPERATOR);
            if let Some(n) = note {
                insert_note(c, task.0, author, Some(generation), n)?;
            }
            let reason = holder_rules::release_reason(agent.is_none(), &holder);
            emit(
                c,
                ev,
                EventKind::Release,
                Some(task.0),
                Some(&holder),
                Some(generation),
                &reason,
            )?;
            Ok(Ok(task_view(c, task.0)?))
        })
    }

    pub(in crate::store) fn note(
        &mut self,
        agent: Option<&str>,
        task: TaskId,
        text: &str,
        generation: Option<Generation>,
        now_ms: i64,
    ) -> BoardResult<(NoteView, Events)> {
        check_text("note", text, MAX_TEXT, false)?;
        self.at(now_ms);
        let generation = generation.map(i64::from);
        self.refusable(|c, ev| {
            let (author, generation) = match agent {
                Some(a) => {
                    let held = c.opt(
                        concat!(
                            "SELECT generation FROM claims
                             WHERE task_id = $1 AND session_id = $2 AND ",
                            live_unexpired!("board_now_ms()"),
                            " AND ($3::bigint IS NULL OR generation = $3) FOR UPDATE"
                        ),
                        &[&task.0, &a, &generation],
                    )?;
                    match held {
                        Some(r) => (a.to_string(), Some(col::<i64>(&r, 0)?)),
                        None => return refuse_write(c, ev, a, task.0, generation),
                    }
                }
                None => {
                    task_state(c, task.0)?;
                    (OPERATOR.to_string(), None)
                }
            };
            let (id, at) = insert_note(c, task.0, &author, generation, text)?;
            emit(
                c,
                ev,
                EventKind::Note,
                Some(task.0),
                agent,
                generation,
                text,
            )?;
            Ok(Ok(NoteView {
                id,
                task: task.0,
                author,
                generation,
                text: text.to_string(),
                at,
            }))
        })
    }
}

/// The fenced step of every holder write: ends the caller's own live claim on `task`,
/// unexpired on the server's clock (at `generation` when given), in one conditional UPDATE.
/// None when no such claim exists.
pub(super) fn end_own_claim(
    c: &mut Conn,
    agent: &str,
    task: i64,
    generation: Option<i64>,
    kind: ClaimEnd,
    reason: &str,
) -> BoardResult<Option<i64>> {
    let r = c.opt(
        concat!(
            "UPDATE claims SET ended_at = board_wall(), end_kind = $4, end_reason = $5, told = true
             WHERE task_id = $1 AND session_id = $2 AND ",
            live_unexpired!("board_now_ms()"),
            " AND ($3::bigint IS NULL OR generation = $3) RETURNING generation"
        ),
        &[&task, &agent, &generation, &kind.as_str(), &reason],
    )?;
    r.map(|r| col(&r, 0)).transpose()
}

/// A holder write found no live, unexpired claim of the caller at the given generation: lapse
/// the caller's own expired claim on `task` now, then answer why the write is refused.
pub(super) fn refuse_write<T>(
    c: &mut Conn,
    ev: &mut Events,
    agent: &str,
    task: i64,
    generation: Option<i64>,
) -> BoardResult<BoardResult<T>> {
    lapse_expired(c, ev, task, Some(agent), true)?;
    Ok(Err(explain_write_refusal(c, agent, task, generation)?))
}
