//! The backend-independent rules of review: what a commit name must look like, the facts a
//! reviewer and the land read, and the refusals of `accept`/`reject`. Pure: both stores call
//! them with what they read, so SQLite and PostgreSQL answer alike by construction.

use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::store::{EventKind, TaskState, OPERATOR};

/// What the board knows of a task in (or past) review: enough to land it and to refuse a
/// reviewer who may not review it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewFacts {
    /// Task id.
    pub task: i64,
    /// One-line title (untrusted text), for the merge commit's message.
    pub title: String,
    /// The task's state now.
    pub state: TaskState,
    /// The commit its finishing holder named (full SHA), if any.
    pub commit: Option<String>,
    /// The agent session that finished it (its last holder).
    pub done_by: Option<String>,
    /// The generation it was finished at: commits of this task made at an older generation
    /// never land.
    pub done_generation: Option<i64>,
    /// The base branch's head right after its commit landed.
    pub landed: Option<String>,
    /// Every generation at which a holder finished the task (a `review` event, or the `done`
    /// of a task that skipped review): commits made
    /// at these came from a holder who finished its work, not from one whose claim lapsed, and
    /// may land after a reject or a conflict sent the task back.
    pub finished_generations: Vec<i64>,
}

/// Checks a commit name as the wire carries it: a full SHA-1 or SHA-256 object name in lowercase
/// hex (the CLI resolves `--commit REV` to one).
///
/// # Errors
/// `invalid` naming the commit, when it is anything else.
pub(crate) fn check_commit(commit: &str) -> BoardResult<()> {
    let hex = commit
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if hex && (commit.len() == 40 || commit.len() == 64) {
        return Ok(());
    }
    let shown: String = commit.chars().take(80).collect();
    Err(BoardError::invalid(format!(
        "commit {shown:?} names no commit: `board done --commit REV` resolves REV with git \
         in the directory it runs in (a branch, a tag, HEAD~1, a short or full id), and git \
         found none there; over the wire a commit is its full id (40 or 64 lowercase hex digits)"
    )))
}

/// `conflict`: task `task` is in `state`, and only a task in review can be `verb`ed.
pub(crate) fn not_in_review(task: i64, state: TaskState, verb: &str) -> BoardError {
    BoardError::new(
        ErrorKind::Conflict,
        format!(
            "task {task} is {}; only a task in review can be {verb}ed",
            state.phrase()
        ),
    )
    .with("task", task)
    .with("state", state.as_str())
}

/// `unauthorized`: `reviewer` finished task `task` itself; its last holder never reviews it.
pub(crate) fn own_work(task: i64, reviewer: &str) -> BoardError {
    BoardError::unauthorized(format!(
        "task {task} was finished by {reviewer}: its last holder cannot review it; \
         another agent session or a person (an operator) can"
    ))
    .with("task", task)
}

/// `conflict`: the commit under review changed since the reviewer looked (`seen`); nothing was
/// changed.
pub(crate) fn commit_moved(task: i64, seen: &str, now: Option<&str>) -> BoardError {
    BoardError::new(
        ErrorKind::Conflict,
        format!(
            "task {task} is no longer in review at commit {seen} (now {}): look again",
            now.unwrap_or("none")
        ),
    )
    .with("task", task)
}

/// Why a conditional `accept`/`reject` of `task` at `commit` by `reviewer` (None: an operator or
/// the board) changed nothing, from the facts read after it.
pub(crate) fn review_refused(
    facts: &ReviewFacts,
    commit: &str,
    reviewer: Option<&str>,
    verb: &str,
) -> BoardError {
    if facts.state != TaskState::Review {
        return not_in_review(facts.task, facts.state, verb);
    }
    if let (Some(r), Some(d)) = (reviewer, facts.done_by.as_deref()) {
        if r == d {
            return own_work(facts.task, r);
        }
    }
    commit_moved(facts.task, commit, facts.commit.as_deref())
}

/// The event reason of an accept: the commit, and where it landed when it did.
pub(crate) fn accept_reason(commit: &str, landed: Option<&str>) -> String {
    match landed {
        Some(l) => format!("commit {commit} accepted; landed, base now at {l}"),
        None => {
            format!("commit {commit} accepted (the board lands nothing: [git] land = \"none\")")
        }
    }
}

/// The event of a holder's `done` that names `commit`, and its reason: `review` when the task
/// waits for a verdict (`waits`), else `done`: it skips review and the board lands it at once
/// (the `accept` and `land` that follow say where), so the log never shows a wait that was
/// not.
pub(crate) fn finished_with_commit(commit: &str, waits: bool) -> (EventKind, String) {
    match waits {
        true => (
            EventKind::Review,
            format!("commit {commit} waits for review"),
        ),
        false => (
            EventKind::Done,
            format!("commit {commit} skips review: the board lands it"),
        ),
    }
}

/// Who a review verdict is recorded under: the reviewing agent session, else an operator.
pub(crate) fn author(reviewer: Option<&str>) -> &str {
    reviewer.unwrap_or(OPERATOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_is_a_full_lowercase_object_name() {
        assert!(check_commit(&"a".repeat(40)).is_ok());
        assert!(check_commit(&"0f".repeat(32)).is_ok());
        for bad in ["HEAD", "abc123", &"A".repeat(40), &"g".repeat(40), ""] {
            let e = check_commit(bad).unwrap_err();
            assert!(e.message.contains("names no commit"), "{bad}: {e:?}");
        }
    }
}
