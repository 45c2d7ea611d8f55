//! Review and land, in the PostgreSQL store (see `store::review`): a holder's `done` into
//! review with a commit, and the verdicts that end a review, each one conditional UPDATE on the
//! task in review at the commit the reviewer saw.

use super::holder_writes::{end_own_claim, refuse_write};
use super::tasks::{insert_note, task_view};
use super::{col, emit, word, Conn, PgStore};
use crate::proto::error::BoardResult;
use crate::proto::TaskView;
use crate::store::review_rules::{self, ReviewFacts};
use crate::store::{
    check_text, holder_rules, task_not_found, ClaimEnd, DoneOutcome, EventKind, Events, Generation,
    TaskId, MAX_TEXT,
};

impl PgStore {
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
                if let Some(g) = already_submitted(c, agent, task.0, generation, commit)? {
                    return Ok(Ok(DoneOutcome {
                        task: task_view(c, task.0)?,
                        generation: g,
                        already: true,
                    }));
                }
                return refuse_write(c, ev, agent, task.0, generation);
            };
            c.exec(
                concat!(
                    "UPDATE tasks SET state = ",
                    crate::sql_state!(review),
                    ", done_by = $2, done_generation = $3, done_at = board_wall(),
                       updated_at = board_wall(), commit_sha = $4, landed_sha = NULL
                     WHERE id = $1 AND state = ",
                    crate::sql_state!(claimed)
                ),
                &[&task.0, &agent, &generation, &commit],
            )?;
            if let Some(n) = note {
                insert_note(c, task.0, agent, Some(generation), n)?;
            }
            let reason = format!("commit {commit} waits for review");
            emit(
                c,
                ev,
                EventKind::Review,
                Some(task.0),
                Some(agent),
                Some(generation),
                &reason,
            )?;
            Ok(Ok(DoneOutcome {
                task: task_view(c, task.0)?,
                generation,
                already: false,
            }))
        })
    }

    pub(in crate::store) fn review_facts(&self, task: TaskId) -> BoardResult<ReviewFacts> {
        self.read(|c| review_facts(c, task.0))
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
        self.at(now_ms);
        self.refusable(|c, ev| {
            let finished = c.opt(
                concat!(
                    "UPDATE tasks SET state = ",
                    crate::sql_state!(done),
                    ", landed_sha = $3, updated_at = board_wall()
                     WHERE id = $1 AND state = ",
                    crate::sql_state!(review),
                    " AND commit_sha = $2
                       AND ($4::text IS NULL OR done_by IS DISTINCT FROM $4)
                     RETURNING done_generation"
                ),
                &[&task.0, &commit, &landed, &reviewer],
            )?;
            let Some(row) = finished else {
                let facts = review_facts(c, task.0)?;
                return Ok(Err(review_rules::review_refused(
                    &facts, commit, reviewer, "accept",
                )));
            };
            let generation: Option<i64> = col(&row, 0)?;
            if let Some(n) = note {
                insert_note(c, task.0, review_rules::author(reviewer), generation, n)?;
            }
            let reason = review_rules::accept_reason(commit, landed);
            emit(
                c,
                ev,
                EventKind::Accept,
                Some(task.0),
                reviewer,
                generation,
                &reason,
            )?;
            if let Some(l) = landed {
                let reason = format!("commit {commit} landed: base now at {l}");
                emit(
                    c,
                    ev,
                    EventKind::Land,
                    Some(task.0),
                    None,
                    generation,
                    &reason,
                )?;
            }
            Ok(Ok(task_view(c, task.0)?))
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
        self.at(now_ms);
        self.refusable(|c, ev| {
            let sent = c.opt(
                concat!(
                    "UPDATE tasks SET state = ",
                    crate::sql_state!(open),
                    ", done_by = NULL, done_at = NULL, commit_sha = NULL,
                       updated_at = board_wall()
                     WHERE id = $1 AND state = ",
                    crate::sql_state!(review),
                    " AND commit_sha = $2
                       AND ($3::text IS NULL OR done_by IS DISTINCT FROM $3)
                     RETURNING done_generation"
                ),
                &[&task.0, &commit, &reviewer],
            )?;
            let Some(row) = sent else {
                let facts = review_facts(c, task.0)?;
                return Ok(Err(review_rules::review_refused(
                    &facts, commit, reviewer, "reject",
                )));
            };
            let generation: Option<i64> = col(&row, 0)?;
            insert_note(c, task.0, review_rules::author(reviewer), generation, note)?;
            let reason = format!("commit {commit} sent back: {note}");
            emit(
                c,
                ev,
                EventKind::Rejected,
                Some(task.0),
                reviewer,
                generation,
                &reason,
            )?;
            Ok(Ok(task_view(c, task.0)?))
        })
    }
}

/// A repeated `done` into review by the same agent (at `generation`, when given) with the same
/// commit: the generation it finished at.
fn already_submitted(
    c: &mut Conn,
    agent: &str,
    task: i64,
    generation: Option<i64>,
    commit: &str,
) -> BoardResult<Option<i64>> {
    let r = c.opt(
        concat!(
            "SELECT done_generation FROM tasks WHERE id = $1 AND state IN (",
            crate::sql_state!(review),
            ", ",
            crate::sql_state!(done),
            ") AND done_by = $2 AND commit_sha = $4
               AND ($3::bigint IS NULL OR done_generation = $3)"
        ),
        &[&task, &agent, &generation, &commit],
    )?;
    r.map(|r| col(&r, 0)).transpose()
}

fn review_facts(c: &mut Conn, task: i64) -> BoardResult<ReviewFacts> {
    let Some(r) = c.opt(
        "SELECT title, state, commit_sha, done_by, done_generation, landed_sha
         FROM tasks WHERE id = $1",
        &[&task],
    )?
    else {
        return Err(task_not_found(task));
    };
    Ok(ReviewFacts {
        task,
        title: col(&r, 0)?,
        state: word(&r, 1)?,
        commit: col(&r, 2)?,
        done_by: col(&r, 3)?,
        done_generation: col(&r, 4)?,
        landed: col(&r, 5)?,
        finished_generations: c
            .rows(
                "SELECT DISTINCT generation FROM events
                 WHERE task_id = $1 AND kind = 'review' AND generation IS NOT NULL",
                &[&task],
            )?
            .iter()
            .map(|r| col(r, 0))
            .collect::<BoardResult<_>>()?,
    })
}
