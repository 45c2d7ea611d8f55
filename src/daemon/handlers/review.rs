//! Review and land: `accept` and `reject` of a task in review, and the land that follows a
//! holder's `done` when review is off and `[git] land` is set.
//!
//! These run outside the write scope of [`super::handle`] on purpose: the land is git work
//! (a merge, a rebase, the compare-and-swap of the base) that must not hold the store's write
//! transaction. The order is: read what to land, land it (base moved by CAS, or untouched), then
//! one conditional store transition on the task still in review at that commit.

use super::table::HandleRead;
use crate::proto::methods::verb;

use super::cx::Cx;
use crate::daemon::land::{self, Landed, Target};
use crate::proto::config::LandMode;
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::methods::{AcceptParams, RejectParams};
use crate::proto::methods::{AcceptResult, TaskResult, TaskView};
use crate::proto::Method;
use crate::store::review_rules::{self, ReviewFacts};
use crate::store::{TaskId, TaskState};

/// Whether every holder's `done` on this board goes through review or the land, whatever a
/// task says (`[review] required`, `[git] land`): then no `done` takes the one-round-trip path
/// of a plain `done`.
pub fn board_needs_commit(cx: &Cx) -> bool {
    let cfg = cx.board.config();
    cfg.review.required || cfg.git.lands()
}

/// Whether the `done` of a task with review override `review` (`add --review` true,
/// `--no-review` false, None: as `[review] required`) goes through review or the land: then
/// it names a commit and the task waits in review (or lands at once when it skips review).
pub fn done_needs_commit(cx: &Cx, review: Option<bool>) -> bool {
    reviewed(cx, review) || cx.board.config().git.lands()
}

/// Whether a task with review override `review` waits for a person's verdict after its
/// `done`: its own override, else `[review] required`.
pub fn reviewed(cx: &Cx, review: Option<bool>) -> bool {
    review.unwrap_or(cx.board.config().review.required)
}

/// `accept`: lands the task's commit on the base branch, then marks it done with where it
/// landed. A conflict sends the task back to ready with the paths in a note (and answers
/// `conflict`); a stale commit is refused (`lapsed`) and the task stays in review.
impl HandleRead for verb::Accept {
    fn handle(cx: &Cx, p: &AcceptParams) -> BoardResult<AcceptResult> {
        let reviewer = cx.caller.agent();
        let _one = land::lock();
        if let Some(done) = already_accepted(cx, p.task)? {
            return Ok(done);
        }
        let facts = in_review(cx, p.task, reviewer, Method::Accept.name())?;
        let (landed, base) = land_or_send_back(cx, &facts)?;
        let commit = facts.commit.as_deref().unwrap_or_default();
        let (task, ev) = cx.store().accept_review(
            p.task,
            commit,
            reviewer,
            landed.as_deref(),
            p.note.as_deref(),
            cx.now,
        )?;
        cx.board.publish(ev);
        Ok(AcceptResult { task, landed, base })
    }
}

/// A repeated `accept` (its answer was lost, the CLI asked again): the task is done with the
/// commit it was in review with; answered as it is, nothing done again.
fn already_accepted(cx: &Cx, task: TaskId) -> BoardResult<Option<AcceptResult>> {
    let facts = cx.store().review_facts(task)?;
    if facts.state != TaskState::Done || facts.commit.is_none() {
        return Ok(None);
    }
    let view = cx.store().task(task, cx.now)?;
    let base = cx.board.config().git.base.clone();
    Ok(Some(AcceptResult {
        task: view,
        landed: facts.landed,
        base,
    }))
}

/// `reject`: the task in review goes back to ready with the note.
impl HandleRead for verb::Reject {
    fn handle(cx: &Cx, p: &RejectParams) -> BoardResult<TaskResult> {
        let reviewer = cx.caller.agent();
        // A land in progress finishes first: a reject never races a base that is moving.
        let _one = land::lock();
        let facts = in_review(cx, p.task, reviewer, Method::Reject.name())?;
        let commit = facts.commit.as_deref().unwrap_or_default();
        let (task, ev) = cx
            .store()
            .send_back(p.task, commit, reviewer, &p.note, cx.now)?;
        cx.board.publish(ev);
        Ok(TaskResult { task })
    }
}

/// After a holder's `done` put `task` in review while it skips review (`--no-review`, or
/// `[review] required` off and no `--review`): the board accepts it itself and lands it. The
/// task after that, or the refusal (the task then stays in review, or went back to ready on a
/// conflict).
pub fn land_after_done(cx: &Cx, task: &TaskView) -> BoardResult<TaskView> {
    if task.state != TaskState::Review || reviewed(cx, task.review) {
        return Ok(task.clone());
    }
    let _one = land::lock();
    let facts = in_review(cx, task.id, None, Method::Accept.name())?;
    let (landed, _) =
        land_or_send_back(cx, &facts).inspect_err(|e| left_in_review(cx, &facts, e))?;
    let commit = facts.commit.as_deref().unwrap_or_default();
    let (view, ev) =
        cx.store()
            .accept_review(task.id, commit, None, landed.as_deref(), None, cx.now)?;
    cx.board.publish(ev);
    Ok(view)
}

/// The land after a `done` failed (`e`) and the task, which skipped review, stays in review:
/// the log says it waits for a person now (its `done` said it would land).
fn left_in_review(cx: &Cx, facts: &ReviewFacts, e: &BoardError) {
    let commit = facts.commit.as_deref().unwrap_or_default();
    match cx
        .store()
        .left_in_review(TaskId(facts.task), commit, &e.message, cx.now)
    {
        Ok(ev) => cx.board.publish(ev),
        Err(err) => {
            let error = err.message;
            tracing::warn!(task = facts.task, %error, "could not log the wait for review");
        }
    }
}

/// What the board knows of `task`, refused unless it is in review and `reviewer` is not its
/// last holder (checked again by the store's conditional transition).
fn in_review(
    cx: &Cx,
    task: TaskId,
    reviewer: Option<&str>,
    verb: &str,
) -> BoardResult<ReviewFacts> {
    let facts = cx.store().review_facts(task)?;
    if facts.state != TaskState::Review {
        return Err(review_rules::not_in_review(task.0, facts.state, verb));
    }
    if let (Some(r), Some(d)) = (reviewer, facts.done_by.as_deref()) {
        if r == d {
            return Err(review_rules::own_work(task.0, r));
        }
    }
    Ok(facts)
}

/// Lands the commit of a task in review as `[git]` says: (where the base is now, the base). On
/// a conflict the task goes back to ready with the paths in a note, and the answer is
/// `conflict`; the base is untouched.
fn land_or_send_back(cx: &Cx, facts: &ReviewFacts) -> BoardResult<(Option<String>, String)> {
    let (base, mode) = {
        let cfg = cx.board.config();
        (cfg.git.base.clone(), cfg.git.land)
    };
    if mode == LandMode::None {
        return Ok((None, base));
    }
    let paths = cx.board.paths();
    let target = Target {
        repo: &paths.root,
        data_dir: &paths.data_dir,
        base: &base,
        mode,
    };
    let state_of = |other: i64| cx.store().review_facts(TaskId(other)).ok().map(|f| f.state);
    match land::land(&target, facts, &state_of)? {
        Landed::At(head) => Ok((Some(head), base)),
        Landed::Conflict(conflicts) => Err(send_back_conflict(cx, facts, &base, &conflicts)),
    }
}

/// The land conflicted: the task goes back to ready with a note naming the paths; answers the
/// `conflict` that says so.
fn send_back_conflict(
    cx: &Cx,
    facts: &ReviewFacts,
    base: &str,
    conflicts: &[String],
) -> BoardError {
    let commit = facts.commit.as_deref().unwrap_or_default();
    let paths = conflicts.join(", ");
    let note = format!(
        "landing commit {commit} on {base} conflicts in: {paths}. {base} is unchanged; \
         bring {base} into the branch, resolve, commit and finish again"
    );
    let sent = cx
        .store()
        .send_back(TaskId(facts.task), commit, None, &note, cx.now);
    let told = match sent {
        Ok((_, ev)) => {
            cx.board.publish(ev);
            format!(
                "task {} does not land on {base}: conflicts in {paths}; {base} is unchanged and \
                 the task is back to ready with a note",
                facts.task
            )
        }
        Err(e) => format!(
            "task {} does not land on {base}: conflicts in {paths}; {base} is unchanged ({})",
            facts.task, e.message
        ),
    };
    BoardError::new(ErrorKind::Conflict, told)
        .with("task", facts.task)
        .with("paths", conflicts.to_vec())
}
