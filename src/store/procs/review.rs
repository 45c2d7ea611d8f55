//! Review and land, in the store: a holder's `done` that puts its task in review with a commit,
//! and the verdicts that end a review (accepted: done, with where it landed; rejected or
//! conflicting: back to ready with a note). Each verdict is one conditional UPDATE on the task
//! in review at the commit the reviewer saw (ARCHITECTURE.md rule 6).

use crate::proto::error::BoardResult;
use crate::proto::TaskView;
use crate::store::db::{get, word, Backend, Db, Lock};
use crate::store::review_rules::{self, ReviewFacts};
use crate::store::{
    check_text, holder_rules, task_not_found, ClaimEnd, DoneOutcome, EventKind, Events, Generation,
    TaskId, MAX_TEXT,
};

use super::holder_writes::{end_own_claim, repeat_or_refuse};
use super::tasks::{insert_note, task_view};

#[allow(clippy::too_many_arguments)]
pub(in crate::store) fn submit_for_review<B: Backend>(
    b: &mut B,
    agent: &str,
    task: TaskId,
    generation: Option<Generation>,
    commit: &str,
    note: Option<&str>,
    review_required: bool,
    now_ms: i64,
) -> BoardResult<(DoneOutcome, Events)> {
    holder_rules::check_note(note)?;
    review_rules::check_commit(commit)?;
    b.at(now_ms);
    let generation = generation.map(i64::from);
    b.refusable(|db, ev| {
        let done = ClaimEnd::Done;
        let Some(generation) = end_own_claim(db, agent, task.0, generation, done, done.as_str())?
        else {
            let already = already_submitted(db, agent, task.0, generation, commit)?;
            return repeat_or_refuse(db, ev, agent, task.0, generation, already, now_ms);
        };
        // The task's own override comes back from the statement that changes it: it says
        // whether the task waits for a verdict or lands at once.
        let row = db.opt(
            concat!(
                "UPDATE tasks SET state = ",
                crate::sql_state!(review),
                ", done_by = $2, done_generation = $3, done_at = board_wall(),
                   updated_at = board_wall(), commit_sha = $4, landed_sha = NULL
                 WHERE id = $1 AND state = ",
                crate::sql_state!(claimed),
                " RETURNING review"
            ),
            &args![task.0, agent, generation, commit],
        )?;
        let own: Option<bool> = row.as_ref().map(|r| get(r, 0)).transpose()?.flatten();
        if let Some(n) = note {
            insert_note(db, task.0, agent, Some(generation), n)?;
        }
        let (kind, reason) =
            review_rules::finished_with_commit(commit, own.unwrap_or(review_required));
        db.emit(
            ev,
            kind,
            Some(task.0),
            Some(agent),
            Some(generation),
            &reason,
        )?;
        Ok(Ok(DoneOutcome {
            task: task_view(db, task, now_ms)?,
            generation: Generation(generation),
            already: false,
        }))
    })
}

pub(in crate::store) fn review_facts<B: Backend>(b: &B, task: TaskId) -> BoardResult<ReviewFacts> {
    b.read_with(|db| facts_of(db, task.0))
}

#[allow(clippy::too_many_arguments)]
pub(in crate::store) fn accept_review<B: Backend>(
    b: &mut B,
    task: TaskId,
    commit: &str,
    reviewer: Option<&str>,
    landed: Option<&str>,
    note: Option<&str>,
    now_ms: i64,
) -> BoardResult<(TaskView, Events)> {
    holder_rules::check_note(note)?;
    b.at(now_ms);
    b.refusable(|db, ev| {
        let finished = db.opt(
            concat!(
                "UPDATE tasks SET state = ",
                crate::sql_state!(done),
                ", landed_sha = $3, updated_at = board_wall()
                 WHERE id = $1 AND state = ",
                crate::sql_state!(review),
                " AND commit_sha = $2
                   AND (CAST($4 AS text) IS NULL OR done_by IS DISTINCT FROM $4)
                 RETURNING done_generation"
            ),
            &args![task.0, commit, landed, reviewer],
        )?;
        let Some(row) = finished else {
            let facts = facts_of(db, task.0)?;
            return Ok(Err(review_rules::review_refused(
                &facts, commit, reviewer, "accept",
            )));
        };
        let generation: Option<i64> = get(&row, 0)?;
        if let Some(n) = note {
            insert_note(db, task.0, review_rules::author(reviewer), generation, n)?;
        }
        let reason = review_rules::accept_reason(commit, landed);
        db.emit(
            ev,
            EventKind::Accept,
            Some(task.0),
            reviewer,
            generation,
            &reason,
        )?;
        if let Some(l) = landed {
            let reason = format!("commit {commit} landed: base now at {l}");
            db.emit(ev, EventKind::Land, Some(task.0), None, generation, &reason)?;
        }
        Ok(Ok(task_view(db, task, now_ms)?))
    })
}

pub(in crate::store) fn send_back<B: Backend>(
    b: &mut B,
    task: TaskId,
    commit: &str,
    reviewer: Option<&str>,
    note: &str,
    now_ms: i64,
) -> BoardResult<(TaskView, Events)> {
    check_text("note", note, MAX_TEXT, false)?;
    b.at(now_ms);
    b.refusable(|db, ev| {
        let sent = db.opt(
            concat!(
                "UPDATE tasks SET state = ",
                crate::sql_state!(open),
                ", done_by = NULL, done_at = NULL, commit_sha = NULL,
                   updated_at = board_wall()
                 WHERE id = $1 AND state = ",
                crate::sql_state!(review),
                " AND commit_sha = $2
                   AND (CAST($3 AS text) IS NULL OR done_by IS DISTINCT FROM $3)
                 RETURNING done_generation"
            ),
            &args![task.0, commit, reviewer],
        )?;
        let Some(row) = sent else {
            let facts = facts_of(db, task.0)?;
            return Ok(Err(review_rules::review_refused(
                &facts, commit, reviewer, "reject",
            )));
        };
        let generation: Option<i64> = get(&row, 0)?;
        insert_note(db, task.0, review_rules::author(reviewer), generation, note)?;
        let reason = format!("commit {commit} sent back: {note}");
        db.emit(
            ev,
            EventKind::Rejected,
            Some(task.0),
            reviewer,
            generation,
            &reason,
        )?;
        Ok(Ok(task_view(db, task, now_ms)?))
    })
}

pub(in crate::store) fn left_in_review<B: Backend>(
    b: &mut B,
    task: TaskId,
    commit: &str,
    why: &str,
    now_ms: i64,
) -> BoardResult<Events> {
    b.at(now_ms);
    let (_, ev) = b.write(Lock::Shared, |db, ev| {
        // Touches the task only while it is in review at that commit: a conflict that sent it
        // back, or a verdict in between, leaves nothing to say.
        let waits = db.opt(
            concat!(
                "UPDATE tasks SET updated_at = board_wall() WHERE id = $1 AND state = ",
                crate::sql_state!(review),
                " AND commit_sha = $2 RETURNING done_by, done_generation"
            ),
            &args![task.0, commit],
        )?;
        let Some(row) = waits else {
            return Ok(());
        };
        let (by, generation): (Option<String>, Option<i64>) = (get(&row, 0)?, get(&row, 1)?);
        let reason = format!("commit {commit} did not land ({why}): it waits for review");
        db.emit(
            ev,
            EventKind::Review,
            Some(task.0),
            by.as_deref(),
            generation,
            &reason,
        )
    })?;
    Ok(ev)
}

/// A repeated `done` into review by the same agent (at `generation`, when given) with the same
/// commit: the generation it finished at.
fn already_submitted(
    db: &mut impl Db,
    agent: &str,
    task: i64,
    generation: Option<i64>,
    commit: &str,
) -> BoardResult<Option<i64>> {
    db.value(
        concat!(
            "SELECT done_generation FROM tasks WHERE id = $1 AND state IN (",
            crate::sql_state!(review),
            ", ",
            crate::sql_state!(done),
            ") AND done_by = $2 AND commit_sha = $4
               AND (CAST($3 AS bigint) IS NULL OR done_generation = $3)"
        ),
        &args![task, agent, generation, commit],
    )
}

/// What a verdict on `task` is checked against. Errors: `not_found`.
fn facts_of(db: &mut impl Db, task: i64) -> BoardResult<ReviewFacts> {
    let Some(r) = db.opt(
        "SELECT title, state, commit_sha, done_by, done_generation, landed_sha
         FROM tasks WHERE id = $1",
        &args![task],
    )?
    else {
        return Err(task_not_found(task));
    };
    Ok(ReviewFacts {
        task,
        title: get(&r, 0)?,
        state: word(&r, 1)?,
        commit: get(&r, 2)?,
        done_by: get(&r, 3)?,
        done_generation: get(&r, 4)?,
        landed: get(&r, 5)?,
        finished_generations: db.column(
            "SELECT DISTINCT generation FROM events
             WHERE task_id = $1 AND kind IN ('review', 'done') AND generation IS NOT NULL",
            &args![task],
        )?,
    })
}
