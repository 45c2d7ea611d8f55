//! A git worktree per agent (`worktree = true` in an `[[agents]]` entry): the slot's agent works
//! in `<data_dir>/worktrees/<slot>` on its own branch `board/<slot>`, so two agents never share an
//! index (no `index.lock` races) and one agent's `git commit -a` cannot sweep up another's edits.
//! The idea is the one of claude-squad and Claude Code's `--worktree`.
//!
//! `board up` creates a missing worktree (from the branch if it exists, else a new branch at the
//! entry's `base`, default the project's `HEAD`) and keeps an existing one, so a restarted agent
//! finds its work; [`super::worktree_files`] furnishes it and [`super::worktree_removal`] is
//! what `board down` does with it.
//! The commit fence hooks live in the repository's common git directory, so they run in every
//! worktree; the agent's `BOARD_SOCKET`/`BOARD_ROOT` lead them to the board.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::proto::error::{BoardError, BoardResult};

/// Prefix of the agents' branches.
pub const BRANCH_PREFIX: &str = "board/";

/// Where one slot's worktree lives, which branch it has checked out, and its lifecycle options
/// (`base`, `include`, `setup`, `teardown` of its `[[agents]]` entry).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Worktree {
    /// The worktree's top directory: `<data_dir>/worktrees/<slot>`.
    pub path: PathBuf,
    /// `board/<slot>`.
    pub branch: String,
    /// Where a new branch starts (None: the project's `HEAD`).
    pub base: Option<String>,
    /// Paths relative to the project root copied into the worktree when it lacks them.
    pub include: Vec<String>,
    /// Run with `sh -c` in a new worktree before the agent starts.
    pub setup: Option<String>,
    /// Run with `sh -c` in the worktree before `board down` removes it.
    pub teardown: Option<String>,
}

impl Worktree {
    /// The worktree of slot `slot` of the board whose data directory is `data_dir`, with no
    /// lifecycle options.
    pub fn of(data_dir: &Path, slot: &str) -> Worktree {
        Worktree {
            path: data_dir.join("worktrees").join(slot),
            branch: format!("{BRANCH_PREFIX}{slot}"),
            ..Worktree::default()
        }
    }

    /// The worktree of slot `slot` with the lifecycle options of its `[[agents]]` entry.
    pub fn for_entry(
        data_dir: &Path,
        slot: &str,
        entry: &crate::proto::config::AgentEntry,
    ) -> Worktree {
        Worktree {
            base: entry.base.clone(),
            include: entry.include.clone(),
            setup: entry.setup.clone(),
            teardown: entry.teardown.clone(),
            ..Worktree::of(data_dir, slot)
        }
    }
}

/// Runs `git ARGS` in `cwd`; its standard output without the trailing newline.
///
/// Errors: `unavailable` when git cannot run, `usage` with git's words when it fails.
pub(crate) fn git(cwd: &Path, args: &[&str]) -> BoardResult<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            BoardError::unavailable(format!(
                "cannot run git ({e}); `worktree = true` needs git installed"
            ))
        })?;
    if !out.status.success() {
        return Err(BoardError::usage(format!(
            "git {} failed in {}: {}",
            args.join(" "),
            cwd.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// The directory of `root` relative to the top of its git work tree (`""` at the top).
///
/// Errors (`usage`): `root` is not in a git work tree, or the repository has no commit yet.
pub fn repo_prefix(root: &Path) -> BoardResult<String> {
    let prefix = git(root, &["rev-parse", "--show-prefix"]).map_err(|e| {
        BoardError::usage(format!(
            "`worktree = true` needs a git repository at {}: {}",
            root.display(),
            e.message
        ))
    })?;
    git(root, &["rev-parse", "--verify", "--quiet", "HEAD"]).map_err(|_| {
        BoardError::usage(format!(
            "`worktree = true` needs a first commit in the repository of {} (agents' branches start there)",
            root.display()
        ))
    })?;
    Ok(prefix)
}

fn registered(root: &Path, path: &Path) -> BoardResult<bool> {
    let list = git(root, &["worktree", "list", "--porcelain"])?;
    let want = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    Ok(list
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .any(|p| Path::new(p) == want || Path::new(p) == path))
}

/// Makes sure `wt` exists and is checked out; returns the directory the agent starts in (the
/// worktree's copy of `root`'s place in the repository). A new branch starts at `wt.base`
/// (default `HEAD`).
///
/// Errors (`usage`): no repository or no commit, a `base` that names no commit, or git
/// refusing (a branch checked out elsewhere).
pub fn ensure(root: &Path, wt: &Worktree) -> BoardResult<PathBuf> {
    let prefix = repo_prefix(root)?;
    if !(wt.path.is_dir() && registered(root, &wt.path)?) {
        // A worktree directory deleted by hand leaves a stale entry that blocks `add`.
        git(root, &["worktree", "prune"])?;
        let path = wt.path.to_string_lossy().to_string();
        let branch_ref = format!("refs/heads/{}", wt.branch);
        let exists = git(root, &["rev-parse", "--verify", "--quiet", &branch_ref]).is_ok();
        if exists {
            git(root, &["worktree", "add", "--quiet", &path, &wt.branch])?;
        } else {
            let start = start_point(root, wt)?;
            git(
                root,
                &[
                    "worktree", "add", "--quiet", "-b", &wt.branch, &path, &start,
                ],
            )?;
        }
    }
    Ok(wt.path.join(prefix))
}

/// The commit a new agent branch starts at: `wt.base` when it names one, else `HEAD`.
fn start_point(root: &Path, wt: &Worktree) -> BoardResult<String> {
    let Some(base) = &wt.base else {
        return Ok("HEAD".into());
    };
    let commit = format!("{base}^{{commit}}");
    git(root, &["rev-parse", "--verify", "--quiet", &commit]).map_err(|_| {
        BoardError::usage(format!(
            "base = {base:?} of agent branch {} names no branch or commit of the repository at \
             {}; fix `base` in board.toml or create the branch",
            wt.branch,
            root.display()
        ))
    })?;
    Ok(base.clone())
}
