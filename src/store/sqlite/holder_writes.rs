//! The fenced holder writes: `done`, `release`, `note`. Each ends or checks the caller's own live,
//! unexpired claim in one conditional statement (ARCHITECTURE.md rules 5, 6 and 7); a refused write first
//! lapses the caller's own expired claim, so the log shows its end before the refusal.

use rusqlite::{params, Connection, OptionalExtension};

use super::holder_rules;
use super::lapse::{lapse_expired, reopen};
use super::refusals::{explain_force_refusal, explain_write_refusal};
use super::tasks::{insert_note, task_view};
use super::*;
use crate::proto::error::BoardResult;
use crate::proto::{NoteView, TaskView};

impl SqliteStore {
    pub(in crate::store) fn done(
        &mut self,
        agent: &str,
        task: TaskId,
        generation: Option<Generation>,
        note: Option<&str>,
        now_ms: i64,
    ) -> BoardResult<(DoneOutcome, Events)> {
        holder_rules::check_note(note)?;
        self.tx_refusable(|tx, ev| {
            let ended = end_own_claim(
                tx,
                agent,
                task,
                generation,
                now_ms,
                ClaimEnd::Done,
                ClaimEnd::Done.as_str(),
            )?;
            let Some(generation) = ended else {
                let already: Option<Generation> = tx
                    .query_row(
                        concat!(
                            "SELECT done_generation FROM tasks WHERE id = ?1 AND state = ",
                            crate::sql_state!(done),
                            " AND done_by = ?2 AND (?3 IS NULL OR done_generation = ?3)"
                        ),
                        params![task, agent, generation],
                        |r| r.get(0),
                    )
                    .optional()?;
                if let Some(g) = already {
                    return Ok(Ok(DoneOutcome {
                        task: task_view(tx, task.0, now_ms)?,
                        generation: g.0,
                        already: true,
                    }));
                }
                return refuse_write(tx, ev, agent, task, generation, now_ms);
            };
            let now = now_wall();
            tx.execute(
                concat!(
                    "UPDATE tasks SET state = ",
                    crate::sql_state!(done),
                    ", done_by = ?2, done_generation = ?3, done_at = ?4, updated_at = ?4
                     WHERE id = ?1 AND state = ",
                    crate::sql_state!(claimed)
                ),
                params![task, agent, generation, now],
            )?;
            if let Some(n) = note {
                insert_note(tx, task.0, agent, Some(generation.0), n)?;
            }
            emit(
                tx,
                ev,
                EventKind::Done,
                Some(task.0),
                Some(agent),
                Some(generation.0),
                note.unwrap_or(ClaimEnd::Done.as_str()),
            )?;
            Ok(Ok(DoneOutcome {
                task: task_view(tx, task.0, now_ms)?,
                generation: generation.0,
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
        self.tx_refusable(|tx, ev| {
            let (generation, holder) = match agent {
                Some(agent) => {
                    match end_own_claim(
                        tx,
                        agent,
                        task,
                        generation,
                        now_ms,
                        ClaimEnd::Release,
                        "released",
                    )? {
                        Some(g) => (g, agent.to_string()),
                        None => return refuse_write(tx, ev, agent, task, generation, now_ms),
                    }
                }
                None => {
                    let ended: Option<(Generation, String)> = tx
                        .query_row(
                            concat!(
                                "UPDATE claims SET ended_at = ?2, end_kind = ",
                                crate::sql_end!(release),
                                ", end_reason = 'force-released by operator'
                                 WHERE task_id = ?1 AND ended_at IS NULL
                                   AND (?3 IS NULL OR generation = ?3)
                                 RETURNING generation, session_id"
                            ),
                            params![task, now_wall(), generation],
                            |r| Ok((r.get(0)?, r.get(1)?)),
                        )
                        .optional()?;
                    match ended {
                        Some(x) => x,
                        None => {
                            return Ok(Err(explain_force_refusal(
                                tx,
                                task.0,
                                generation.map(i64::from),
                            )?))
                        }
                    }
                }
            };
            reopen(tx, task.0)?;
            let author = agent.unwrap_or(OPERATOR);
            if let Some(n) = note {
                insert_note(tx, task.0, author, Some(generation.0), n)?;
            }
            let reason = holder_rules::release_reason(agent.is_none(), &holder);
            emit(
                tx,
                ev,
                EventKind::Release,
                Some(task.0),
                Some(&holder),
                Some(generation.0),
                &reason,
            )?;
            Ok(Ok(task_view(tx, task.0, now_ms)?))
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
        self.tx_refusable(|tx, ev| {
            let (author, generation) = match agent {
                Some(a) => {
                    let generation: Option<Generation> = tx
                        .query_row(
                            concat!(
                                "UPDATE claims SET expires_ms = expires_ms
                                 WHERE task_id = ?1 AND session_id = ?2 AND ",
                                live_unexpired!("?3"),
                                " AND (?4 IS NULL OR generation = ?4) RETURNING generation"
                            ),
                            params![task, a, now_ms, generation],
                            |r| r.get(0),
                        )
                        .optional()?;
                    match generation {
                        Some(g) => (a.to_string(), Some(g.0)),
                        None => return refuse_write(tx, ev, a, task, generation, now_ms),
                    }
                }
                None => {
                    task_state(tx, task.0)?;
                    (OPERATOR.to_string(), None)
                }
            };
            let id = insert_note(tx, task.0, &author, generation, text)?;
            emit(
                tx,
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
                at: now_wall(),
            }))
        })
    }
}

/// The fenced step of every holder write: ends the caller's own live, unexpired claim on `task`
/// (at `generation` when given) in one conditional UPDATE. None when no such claim exists.
pub(in crate::store) fn end_own_claim(
    tx: &Connection,
    agent: &str,
    task: TaskId,
    generation: Option<Generation>,
    now_ms: i64,
    kind: ClaimEnd,
    reason: &str,
) -> BoardResult<Option<Generation>> {
    Ok(tx
        .query_row(
            concat!(
                "UPDATE claims SET ended_at = ?5, end_kind = ?6, end_reason = ?7, told = 1
                 WHERE task_id = ?1 AND session_id = ?2 AND ",
                live_unexpired!("?3"),
                " AND (?4 IS NULL OR generation = ?4) RETURNING generation"
            ),
            params![task, agent, now_ms, generation, now_wall(), kind, reason],
            |r| r.get(0),
        )
        .optional()?)
}

/// A holder write found no live, unexpired claim of the caller at the given generation: lapse
/// the caller's own expired claim on `task` now (so the log shows its end before the refusal,
/// ARCHITECTURE.md rule 5), then answer why the write is refused. The refusal names the lapse itself,
/// so that claim counts as told.
pub(in crate::store) fn refuse_write<T>(
    tx: &Connection,
    ev: &mut Events,
    agent: &str,
    task: TaskId,
    generation: Option<Generation>,
    now_ms: i64,
) -> BoardResult<BoardResult<T>> {
    lapse_expired(tx, ev, task.0, Some(agent), now_ms, true)?;
    Ok(Err(explain_write_refusal(
        tx,
        agent,
        task.0,
        generation.map(i64::from),
    )?))
}
