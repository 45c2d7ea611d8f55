//! The fenced land: brings a task's commit into the base branch (`[git] base`, `land`), git work
//! the board does on the blocking pool, never on the reactor.
//!
//! The result is prepared in a worktree of the board's own (`<data_dir>/land`, detached), and
//! the base moves only by a compare-and-swap (`git update-ref refs/heads/BASE NEW OLD`): a push
//! or another land in between makes the swap fail, and the land prepares again from the new
//! head (at most [`ATTEMPTS`] times) or stops with a message. The base is never rewound: NEW
//! always descends from OLD. Before anything is prepared, every commit in `base..commit` that
//! names the task (`Board-Task: ID`) must carry at least the generation that finished it
//! (`Board-Generation`): a lapsed holder's commits never land, even under the new holder's.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use crate::proto::config::LandMode;
use crate::proto::error::{BoardError, ErrorKind};
use crate::proto::glossary::TaskState;
use crate::proto::sanitize;
use crate::store::ReviewFacts;

/// How many times a land prepares its result before it gives up on a base that keeps moving.
pub const ATTEMPTS: u32 = 3;

/// One land at a time per board process: two accepts never race each other for the base, and a
/// reject waits for a land in progress (see `handlers::review`).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Holds the board's land lock until dropped.
pub fn lock() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where and how to land.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// The repository's main worktree (the board's root).
    pub repo: &'a Path,
    /// The board's data directory: the land worktree lives in it.
    pub data_dir: &'a Path,
    /// The base branch (`main`).
    pub base: &'a str,
    /// How the commit lands.
    pub mode: LandMode,
}

/// What a land did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landed {
    /// The base now contains the commit; its head is this full SHA (the base's head as it was
    /// when the commit was already in it).
    At(String),
    /// The commit does not merge cleanly: the base is untouched; these paths conflict.
    Conflict(Vec<String>),
}

/// Why a land did not happen; the base is untouched in every case.
#[derive(Debug, thiserror::Error)]
pub enum LandError {
    /// A commit of this task made at an older generation than the one that finished it.
    #[error(
        "commit {commit} carries Board-Task: {task} at Board-Generation: {stale}, older than \
         generation {finished} that finished task {task}: a lapsed holder's work never lands on \
         {base}; finish the task again from a branch without it"
    )]
    Stale {
        /// The offending commit (full SHA).
        commit: String,
        /// The task.
        task: i64,
        /// Its generation trailer.
        stale: i64,
        /// The generation that finished the task.
        finished: i64,
        /// The base branch.
        base: String,
    },
    /// A commit in the range belongs to another task that has not landed (in review, ready,
    /// claimed or cancelled): landing this one would bring that work onto the base unreviewed.
    #[error(
        "commit {commit} carries Board-Task: {other}, and task {other} is {state}, not done: \
         landing task {task} would bring its work onto {base} with it; land task {other} \
         first, or finish task {task} from a branch without that commit"
    )]
    OtherTask {
        /// The commit of the other task (full SHA).
        commit: String,
        /// The other task.
        other: i64,
        /// Its state, as people read it ("in review", "ready", …).
        state: String,
        /// The task being landed.
        task: i64,
        /// The base branch.
        base: String,
    },
    /// The base moved during every attempt.
    #[error(
        "{base} moved during each of {ATTEMPTS} attempts to land task {task}; nothing landed \
         and the task is still in review: accept it again"
    )]
    KeptMoving {
        /// The task.
        task: i64,
        /// The base branch.
        base: String,
    },
    /// `ff-only` and the base is not an ancestor of the commit.
    #[error(
        "{base} is not an ancestor of commit {commit}: [git] land = \"ff-only\" cannot land it; \
         rebase the task's branch onto {base} and finish it again, or land with \"merge\""
    )]
    NotFastForward {
        /// The task's commit.
        commit: String,
        /// The base branch.
        base: String,
    },
    /// The base is checked out in a worktree with uncommitted changes.
    #[error(
        "{base} is checked out in {} with uncommitted changes; the board does not move a \
         branch under a person's edits: commit or stash them, then accept again",
        path.display()
    )]
    DirtyCheckout {
        /// The base branch.
        base: String,
        /// The worktree.
        path: PathBuf,
    },
    /// The task has no commit to land.
    #[error("task {0} names no commit to land")]
    NoCommit(i64),
    /// A git command failed.
    #[error("git {what} failed: {message}")]
    Git {
        /// Which step.
        what: String,
        /// git's own words (sanitised, cut).
        message: String,
    },
}

impl From<LandError> for BoardError {
    fn from(e: LandError) -> BoardError {
        let kind = match &e {
            LandError::Stale { .. } => ErrorKind::Lapsed,
            LandError::Git { .. } => ErrorKind::Internal,
            _ => ErrorKind::Conflict,
        };
        let out = BoardError::new(kind, e.to_string());
        match e {
            LandError::Stale {
                commit,
                stale,
                finished,
                ..
            } => out
                .with("commit", commit)
                .with("commit_generation", stale)
                .with("generation", finished),
            _ => out,
        }
    }
}

/// Lands the commit of the task `facts` describes on `to.base`: checks every commit of the task
/// in `base..commit` against its finishing generation, prepares the result in the board's
/// worktree, and moves the base by compare-and-swap (again from the new head when it moved, at
/// most [`ATTEMPTS`] times). A checkout of the base in a clean worktree is brought along.
///
/// # Errors
/// [`LandError`]; the base is untouched.
///
/// `state_of(id)` is the state of another task whose `Board-Task` trailer shows up in the range
/// (None for a task the board does not know): only a `done` task's commits may come along.
pub fn land(
    to: &Target,
    facts: &ReviewFacts,
    state_of: &dyn Fn(i64) -> Option<TaskState>,
) -> Result<Landed, LandError> {
    let commit = facts
        .commit
        .as_deref()
        .ok_or(LandError::NoCommit(facts.task))?;
    let checkout = checkout_of(to)?;
    for _ in 0..ATTEMPTS {
        let old = rev_parse(to.repo, &format!("refs/heads/{}", to.base))?;
        check_generations(to, facts, &old, commit, state_of)?;
        if is_ancestor(to.repo, commit, &old)? {
            return Ok(Landed::At(old));
        }
        let new = match prepare(to, facts, &old, commit)? {
            Prepared::Head(new) => new,
            Prepared::Conflict(paths) => return Ok(Landed::Conflict(paths)),
        };
        if swap(to, facts.task, &new, &old)? {
            if let Some(path) = &checkout {
                catch_up(path, &old, &new);
            }
            return Ok(Landed::At(new));
        }
        tracing::info!(
            task = facts.task,
            base = to.base,
            "base moved while landing; again"
        );
    }
    Err(LandError::KeptMoving {
        task: facts.task,
        base: to.base.to_string(),
    })
}

/// A task state as people read it in a sentence ("task 6 is in review").
fn state_words(state: TaskState) -> &'static str {
    match state {
        TaskState::Open => "ready or waiting",
        TaskState::Claimed => "claimed",
        TaskState::Review => "in review",
        TaskState::Done => "done",
        TaskState::Cancelled => "cancelled",
    }
}

/// The prepared result: the new head, or the conflicting paths.
enum Prepared {
    Head(String),
    Conflict(Vec<String>),
}

/// Refuses when a commit in `old..commit` names this task at a generation older than the one
/// that finished it.
fn check_generations(
    to: &Target,
    facts: &ReviewFacts,
    old: &str,
    commit: &str,
    state_of: &dyn Fn(i64) -> Option<TaskState>,
) -> Result<(), LandError> {
    let finished = facts.done_generation;
    let out = git(
        to.repo,
        &[
            "log",
            "--format=%H%x00%(trailers:key=Board-Task,valueonly,separator=%x2C)%x00%(trailers:key=Board-Generation,valueonly,separator=%x2C)%x1e",
            &format!("{old}..{commit}"),
        ],
        "log",
    )?;
    for record in out.split('\u{1e}') {
        let mut f = record.trim_start_matches('\n').split('\0');
        let (Some(sha), Some(tasks), Some(gens)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let named: Vec<i64> = tasks
            .split(',')
            .filter_map(|t| t.trim().parse::<i64>().ok())
            .collect();
        for &other in named.iter().filter(|t| **t != facts.task) {
            match state_of(other) {
                Some(TaskState::Done) | None => {}
                Some(state) => {
                    return Err(LandError::OtherTask {
                        commit: sha.to_string(),
                        other,
                        state: state_words(state).to_string(),
                        task: facts.task,
                        base: to.base.to_string(),
                    })
                }
            }
        }
        let Some(finished) = finished else {
            continue;
        };
        let mine = named.contains(&facts.task);
        let oldest = gens
            .split(',')
            .filter_map(|g| g.trim().parse::<i64>().ok())
            .min();
        if let (true, Some(g)) = (mine, oldest) {
            if g < finished && !facts.finished_generations.contains(&g) {
                return Err(LandError::Stale {
                    commit: sha.to_string(),
                    task: facts.task,
                    stale: g,
                    finished,
                    base: to.base.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Prepares the new head in the land worktree from `old` and `commit`, as `to.mode` says.
fn prepare(
    to: &Target,
    facts: &ReviewFacts,
    old: &str,
    commit: &str,
) -> Result<Prepared, LandError> {
    match to.mode {
        LandMode::FfOnly | LandMode::None => {
            if is_ancestor(to.repo, old, commit)? {
                Ok(Prepared::Head(commit.to_string()))
            } else {
                Err(LandError::NotFastForward {
                    commit: commit.to_string(),
                    base: to.base.to_string(),
                })
            }
        }
        LandMode::Merge => {
            let wt = land_worktree(to, old)?;
            let message = merge_message(facts, to.base);
            // The merge commit is the board's own: it is its author too.
            let merged = run_as(
                &wt,
                &[
                    "merge",
                    "--no-ff",
                    "--no-verify",
                    "--no-edit",
                    "-m",
                    &message,
                    commit,
                ],
                true,
            )?;
            finish(&wt, merged, "merge")
        }
        LandMode::Rebase => {
            let wt = land_worktree(to, commit)?;
            let rebased = run(&wt, &["rebase", "--no-verify", old])?;
            finish(&wt, rebased, "rebase")
        }
    }
}

/// After a merge or rebase in `wt`: the new head, or the conflicting paths (the step aborted).
fn finish(wt: &Path, out: Output, step: &str) -> Result<Prepared, LandError> {
    if out.status.success() {
        return Ok(Prepared::Head(rev_parse(wt, "HEAD")?));
    }
    let paths: Vec<String> = git(wt, &["diff", "--name-only", "--diff-filter=U"], "diff")?
        .lines()
        .map(sanitize::one_line)
        .collect();
    // Leave the worktree clean for the next land either way.
    let _ = run(wt, &[step, "--abort"]);
    if paths.is_empty() {
        return Err(failed(step, &out));
    }
    Ok(Prepared::Conflict(paths))
}

/// The merge commit's message: the task, its title (one inert line) and the trailers of the
/// generation that finished it.
fn merge_message(facts: &ReviewFacts, base: &str) -> String {
    let title: String = sanitize::one_line(&facts.title).chars().take(200).collect();
    let mut m = format!(
        "Land task {} on {base}: {title}\n\nBoard-Task: {}",
        facts.task, facts.task
    );
    if let Some(g) = facts.done_generation {
        m.push_str(&format!("\nBoard-Generation: {g}"));
    }
    m
}

/// The board's own worktree, detached at `at` and clean (created on first use).
fn land_worktree(to: &Target, at: &str) -> Result<PathBuf, LandError> {
    let wt = to.data_dir.join("land");
    let usable =
        wt.join(".git").exists() && run(&wt, &["rev-parse", "--git-dir"])?.status.success();
    if !usable {
        let _ = std::fs::remove_dir_all(&wt);
        let _ = run(to.repo, &["worktree", "prune"]);
        let path = wt.to_string_lossy().into_owned();
        git(
            to.repo,
            &["worktree", "add", "--detach", "--force", &path, at],
            "worktree add",
        )?;
        return Ok(wt);
    }
    let _ = run(&wt, &["merge", "--abort"]);
    let _ = run(&wt, &["rebase", "--abort"]);
    git(&wt, &["checkout", "--detach", "--force", at], "checkout")?;
    git(&wt, &["clean", "-fdxq"], "clean")?;
    Ok(wt)
}

/// Removes the board's land worktree (`<data_dir>/land`) and its registration in the
/// repository at `repo`, for a board that stops: `git worktree list` no longer shows it. Waits
/// for a land in progress. Best effort: a board that crashed leaves it, and the next land
/// makes it usable again (`land_worktree`).
pub fn remove_land_worktree(repo: &Path, data_dir: &Path) {
    let _one = lock();
    let wt = data_dir.join("land");
    if !wt.exists() {
        return;
    }
    let path = wt.to_string_lossy().into_owned();
    if let Err(e) = git(
        repo,
        &["worktree", "remove", "--force", &path],
        "worktree remove",
    ) {
        tracing::warn!(error = %e, "could not remove the land worktree; deleting it");
        let _ = std::fs::remove_dir_all(&wt);
    }
    let _ = run(repo, &["worktree", "prune"]);
}

/// The compare-and-swap: true when the base moved from `old` to `new`, false when it was no
/// longer at `old`.
fn swap(to: &Target, task: i64, new: &str, old: &str) -> Result<bool, LandError> {
    let reference = format!("refs/heads/{}", to.base);
    let message = format!("board: land task {task}");
    let out = run(
        to.repo,
        &["update-ref", "-m", &message, &reference, new, old],
    )?;
    if out.status.success() {
        return Ok(true);
    }
    if rev_parse(to.repo, &reference)? != old {
        return Ok(false);
    }
    Err(failed("update-ref", &out))
}

/// The worktree that has the base checked out, if any; refuses when it has uncommitted changes
/// to tracked files.
fn checkout_of(to: &Target) -> Result<Option<PathBuf>, LandError> {
    let list = git(
        to.repo,
        &["worktree", "list", "--porcelain"],
        "worktree list",
    )?;
    let wanted = format!("branch refs/heads/{}", to.base);
    let mut path = None;
    for line in list.lines() {
        if let Some(p) = line.strip_prefix("worktree ") {
            path = Some(PathBuf::from(p));
        } else if line == wanted {
            let Some(p) = path.take() else { continue };
            let status = git(
                &p,
                &["status", "--porcelain", "--untracked-files=no"],
                "status",
            )?;
            if !status.trim().is_empty() {
                return Err(LandError::DirtyCheckout {
                    base: to.base.to_string(),
                    path: p,
                });
            }
            return Ok(Some(p));
        }
    }
    Ok(None)
}

/// Brings a clean checkout of the base from `old` to `new` (index and files), as a fast-forward
/// would. A failure is logged: the branch has moved; `git status` there then shows the
/// difference, and `git reset --keep HEAD` catches up.
fn catch_up(path: &Path, old: &str, new: &str) {
    match run(path, &["read-tree", "-m", "-u", old, new]) {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            tracing::warn!(path = %path.display(), err = %String::from_utf8_lossy(&o.stderr), "the base's checkout did not catch up")
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), %e, "the base's checkout did not catch up")
        }
    }
}

fn is_ancestor(repo: &Path, a: &str, b: &str) -> Result<bool, LandError> {
    let out = run(repo, &["merge-base", "--is-ancestor", a, b])?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(failed("merge-base", &out)),
    }
}

fn rev_parse(repo: &Path, rev: &str) -> Result<String, LandError> {
    let spec = format!("{rev}^{{commit}}");
    Ok(git(
        repo,
        &["rev-parse", "--verify", "--quiet", &spec],
        "rev-parse",
    )
    .map_err(|_| LandError::Git {
        what: "rev-parse".into(),
        message: format!("{} does not name a commit", sanitize::one_line(rev)),
    })?
    .trim()
    .to_string())
}

/// The commit branch `branch` points at in the repository at `repo`, if it exists.
pub fn head_of(repo: &Path, branch: &str) -> Option<String> {
    rev_parse(repo, &format!("refs/heads/{branch}")).ok()
}

/// Whether `commit` is already on `branch` (an ancestor of its head, or the head itself);
/// false when either is unknown.
pub fn on_branch(repo: &Path, commit: &str, branch: &str) -> bool {
    head_of(repo, branch).is_some_and(|head| is_ancestor(repo, commit, &head).unwrap_or(false))
}

/// Whether `commit` names a commit in the repository at `repo`.
pub fn commit_exists(repo: &Path, commit: &str) -> bool {
    rev_parse(repo, commit).is_ok()
}

/// Runs git in `dir` and answers its stdout; a failure is [`LandError::Git`] naming `what`.
fn git(dir: &Path, args: &[&str], what: &str) -> Result<String, LandError> {
    let out = run(dir, args)?;
    if !out.status.success() {
        return Err(failed(what, &out));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn run(dir: &Path, args: &[&str]) -> Result<Output, LandError> {
    run_as(dir, args, false)
}

/// Runs git in `dir` with the board as committer (and as author when `author`: a rebase keeps
/// each commit's own author).
fn run_as(dir: &Path, args: &[&str], author: bool) -> Result<Output, LandError> {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .env("GIT_COMMITTER_NAME", "board")
        .env("GIT_COMMITTER_EMAIL", "board@localhost");
    if author {
        cmd.env("GIT_AUTHOR_NAME", "board")
            .env("GIT_AUTHOR_EMAIL", "board@localhost");
    }
    cmd.output().map_err(|e| LandError::Git {
        what: args.first().copied().unwrap_or("").to_string(),
        message: format!("cannot run git: {e}"),
    })
}

fn failed(what: &str, out: &Output) -> LandError {
    let text = String::from_utf8_lossy(&out.stderr);
    LandError::Git {
        what: what.to_string(),
        message: sanitize::one_line(text.trim()).chars().take(400).collect(),
    }
}
