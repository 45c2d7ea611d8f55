//! Review and land, in the store: a holder's `done` that puts its task in review with a commit,
//! and the verdicts that end a review (accepted: done, with where it landed; rejected or
//! conflicting: back to ready with a note). Each verdict is one conditional UPDATE on the task
//! in review at the commit the reviewer saw (ARCHITECTURE.md rule 6).

use rusqlite::{params, Connection, OptionalExtension};

use super::holder_rules;
use super::holder_writes::{end_own_claim, refuse_write};
use super::review_rules::{self, ReviewFacts};
use super::tasks::{insert_note, task_view};
use super::*;
use crate::proto::error::BoardResult;
use crate::proto::TaskView;

impl SqliteStore {
    #[allow(clippy::too_many_arguments)]
    pub(in crate::store) fn submit_for_review(
        &mut self,
        agent: &str,
        task: TaskId,
        generation: Option<Generation>,
        commit: &str,
        note: Option<&str>,
        now_ms: i64,
    ) -> BoardResult<(DoneOutcome, Events)> {
        holder_rules::check_note(note)?;
        review_rules::check_commit(commit)?;
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
                if let Some(g) = already_submitted(tx, agent, task, generation, commit)? {
                    return Ok(Ok(DoneOutcome {
                        task: task_view(tx, task.0, now_ms)?,
                        generation: g,
                        already: true,
                    }));
                }
                return refuse_write(tx, ev, agent, task, generation, now_ms);
            };
            let now = now_wall();
            tx.execute(
                concat!(
                    "UPDATE tasks SET state = ",
                    crate::sql_state!(review),
                    ", done_by = ?2, done_generation = ?3, done_at = ?4, updated_at = ?4,
                       commit_sha = ?5, landed_sha = NULL
                     WHERE id = ?1 AND state = ",
                    crate::sql_state!(claimed)
                ),
                params![task, agent, generation, now, commit],
            )?;
            if let Some(n) = note {
                insert_note(tx, task.0, agent, Some(generation.0), n)?;
            }
            let reason = format!("commit {commit} waits for review");
            emit(
                tx,
                ev,
                EventKind::Review,
                Some(task.0),
                Some(agent),
                Some(generation.0),
                &reason,
            )?;
            Ok(Ok(DoneOutcome {
                task: task_view(tx, task.0, now_ms)?,
                generation: generation.0,
                already: false,
            }))
        })
    }

    pub(in crate::store) fn review_facts(&self, task: TaskId) -> BoardResult<ReviewFacts> {
        review_facts(&self.conn, task.0)
    }

    pub(in crate::store) fn accept_review(
        &mut self,
        task: TaskId,
        commit: &str,
        reviewer: Option<&str>,
        landed: Option<&str>,
        note: Option<&str>,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        holder_rules::check_note(note)?;
        self.tx_refusable(|tx, ev| {
            let finished: Option<i64> = tx
                .query_row(
                    concat!(
                        "UPDATE tasks SET state = ",
                        crate::sql_state!(done),
                        ", landed_sha = ?3, updated_at = ?5
                         WHERE id = ?1 AND state = ",
                        crate::sql_state!(review),
                        " AND commit_sha = ?2 AND (?4 IS NULL OR done_by IS NOT ?4)
                         RETURNING done_generation"
                    ),
                    params![task, commit, landed, reviewer, now_wall()],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(generation) = finished else {
                let facts = review_facts(tx, task.0)?;
                return Ok(Err(review_rules::review_refused(
                    &facts, commit, reviewer, "accept",
                )));
            };
            if let Some(n) = note {
                insert_note(
                    tx,
                    task.0,
                    review_rules::author(reviewer),
                    Some(generation),
                    n,
                )?;
            }
            let reason = review_rules::accept_reason(commit, landed);
            emit(
                tx,
                ev,
                EventKind::Accept,
                Some(task.0),
                reviewer,
                Some(generation),
                &reason,
            )?;
            if let Some(l) = landed {
                let reason = format!("commit {commit} landed: base now at {l}");
                emit(
                    tx,
                    ev,
                    EventKind::Land,
                    Some(task.0),
                    None,
                    Some(generation),
                    &reason,
                )?;
            }
            Ok(Ok(task_view(tx, task.0, now_ms)?))
        })
    }

    pub(in crate::store) fn send_back(
        &mut self,
        task: TaskId,
        commit: &str,
        reviewer: Option<&str>,
        note: &str,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        check_text("note", note, MAX_TEXT, false)?;
        self.tx_refusable(|tx, ev| {
            let sent: Option<i64> = tx
                .query_row(
                    concat!(
                        "UPDATE tasks SET state = ",
                        crate::sql_state!(open),
                        ", done_by = NULL, done_at = NULL, commit_sha = NULL, updated_at = ?4
                         WHERE id = ?1 AND state = ",
                        crate::sql_state!(review),
                        " AND commit_sha = ?2 AND (?3 IS NULL OR done_by IS NOT ?3)
                         RETURNING done_generation"
                    ),
                    params![task, commit, reviewer, now_wall()],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(generation) = sent else {
                let facts = review_facts(tx, task.0)?;
                return Ok(Err(review_rules::review_refused(
                    &facts, commit, reviewer, "reject",
                )));
            };
            insert_note(
                tx,
                task.0,
                review_rules::author(reviewer),
                Some(generation),
                note,
            )?;
            let reason = format!("commit {commit} sent back: {note}");
            emit(
                tx,
                ev,
                EventKind::Rejected,
                Some(task.0),
                reviewer,
                Some(generation),
                &reason,
            )?;
            Ok(Ok(task_view(tx, task.0, now_ms)?))
        })
    }
}

/// A repeated `done` into review by the same agent (at `generation`, when given) with the same
/// commit: the generation it finished at.
fn already_submitted(
    tx: &Connection,
    agent: &str,
    task: TaskId,
    generation: Option<Generation>,
    commit: &str,
) -> BoardResult<Option<i64>> {
    Ok(tx
        .query_row(
            concat!(
                "SELECT done_generation FROM tasks WHERE id = ?1 AND state IN (",
                crate::sql_state!(review),
                ", ",
                crate::sql_state!(done),
                ") AND done_by = ?2 AND commit_sha = ?4 AND (?3 IS NULL OR done_generation = ?3)"
            ),
            params![task, agent, generation, commit],
            |r| r.get(0),
        )
        .optional()?)
}

fn review_facts(c: &Connection, task: i64) -> BoardResult<ReviewFacts> {
    c.query_row(
        "SELECT title, state, commit_sha, done_by, done_generation, landed_sha
         FROM tasks WHERE id = ?1",
        [task],
        |r| {
            Ok(ReviewFacts {
                task,
                title: r.get(0)?,
                state: r.get(1)?,
                commit: r.get(2)?,
                done_by: r.get(3)?,
                done_generation: r.get(4)?,
                landed: r.get(5)?,
                finished_generations: Vec::new(),
            })
        },
    )
    .optional()?
    .ok_or_else(|| task_not_found(task))
    .and_then(|mut facts| {
        let mut st = c.prepare_cached(
            "SELECT DISTINCT generation FROM events
             WHERE task_id = ?1 AND kind = 'review' AND generation IS NOT NULL",
        )?;
        facts.finished_generations = st
            .query_map([task], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(facts)
    })
}
