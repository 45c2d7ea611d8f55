//! A git worktree per agent (`worktree = true` in an `[[agents]]` entry): the slot's agent works
//! in `<data_dir>/worktrees/<slot>` on its own branch `board/<slot>`, so two agents never share an
//! index (no `index.lock` races) and one agent's `git commit -a` cannot sweep up another's edits.
//! The idea is the one of claude-squad and Claude Code's `--worktree`.
//!
//! `board up` creates a missing worktree (from the branch if it exists, else a new branch at the
//! entry's `base`, default the project's `HEAD`) and keeps an existing one, so a restarted agent
//! finds its work; [`super::worktree_files`] furnishes it. `board down` runs the entry's
//! `teardown` and removes the worktrees that hold no uncommitted changes of the agent; the
//! branches stay, to be merged back.
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

/// What [`remove`] did with one worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removed {
    /// Removed (its branch stays); `teardown_failed` says how its teardown failed, if it did.
    Removed {
        /// The failed teardown's exit status and last line of output.
        teardown_failed: Option<String>,
    },
    /// There was none.
    Absent,
    /// Kept: it holds work not committed (these paths, relative to its top), or git refused
    /// (its words, as the only entry).
    Kept(Vec<String>),
}

/// Removes `wt` unless it holds uncommitted work (the files the board put there do not count,
/// see [`super::worktree_files::uncommitted`]); runs its `teardown` first. The branch is kept
/// either way.
pub fn remove(root: &Path, wt: &Worktree) -> BoardResult<Removed> {
    if !wt.path.exists() {
        let _ = git(root, &["worktree", "prune"]);
        return Ok(Removed::Absent);
    }
    let left = super::worktree_files::uncommitted(wt)?;
    if !left.is_empty() {
        return Ok(Removed::Kept(left));
    }
    let teardown_failed = wt
        .teardown
        .as_deref()
        .and_then(|cmd| teardown(&wt.path, cmd));
    let path = wt.path.to_string_lossy().to_string();
    // Clean but for the board's own files and what teardown left: force is safe here.
    match git(root, &["worktree", "remove", "--force", &path]) {
        Ok(_) => Ok(Removed::Removed { teardown_failed }),
        Err(e) if e.kind == crate::proto::error::ErrorKind::Usage => {
            Ok(Removed::Kept(vec![e.message]))
        }
        Err(e) => Err(e),
    }
}

/// Runs `cmd` with `sh -c` in `top`; None when it succeeded, else its status and last line.
fn teardown(top: &Path, cmd: &str) -> Option<String> {
    let out = Command::new("sh")
        .args(["-c", cmd])
        .current_dir(top)
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => None,
        Ok(o) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            Some(format!(
                "{}: {}",
                o.status,
                crate::proto::sanitize::inert(last)
            ))
        }
        Err(e) => Some(format!("cannot run sh: {e}")),
    }
}

/// The number of commits on `wt`'s branch that `base` lacks, with the base's name: `wt.base`,
/// else the branch the project has checked out. None when git cannot tell.
pub fn commits_not_on_base(root: &Path, wt: &Worktree) -> Option<(usize, String)> {
    let base = match &wt.base {
        Some(b) => b.clone(),
        None => git(root, &["symbolic-ref", "--quiet", "--short", "HEAD"])
            .unwrap_or_else(|_| "HEAD".into()),
    };
    let range = format!("{base}..refs/heads/{}", wt.branch);
    let n = git(root, &["rev-list", "--count", &range]).ok()?;
    Some((n.trim().parse().ok()?, base))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(cwd: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(cwd)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    #[test]
    fn a_worktree_is_made_kept_and_removed_only_when_clean() {
        if Command::new("git").arg("--version").output().is_err() {
            eprintln!("skipping: git is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let e = repo_prefix(&root).unwrap_err();
        assert!(e.message.contains("needs a git repository"), "{e}");
        sh(&root, &["init", "-q", "-b", "main"]);
        let e = repo_prefix(&root).unwrap_err();
        assert!(e.message.contains("first commit"), "{e}");
        std::fs::write(root.join("sub/f"), "x").unwrap();
        sh(&root, &["add", "."]);
        sh(&root, &["commit", "-q", "-m", "one"]);

        let board_root = root.join("sub");
        let wt = Worktree::of(&board_root.join(".board"), "a");
        assert_eq!(wt.branch, "board/a");
        let work = ensure(&board_root, &wt).unwrap();
        assert_eq!(work, wt.path.join("sub/"));
        assert!(work.join("f").is_file());
        // Again: kept as it is.
        std::fs::write(work.join("new"), "y").unwrap();
        assert_eq!(ensure(&board_root, &wt).unwrap(), work);
        assert!(work.join("new").is_file());
        // Dirty: kept by remove.
        assert_eq!(
            remove(&board_root, &wt).unwrap(),
            Removed::Kept(vec!["sub/new".into()])
        );
        std::fs::remove_file(work.join("new")).unwrap();
        assert_eq!(
            remove(&board_root, &wt).unwrap(),
            Removed::Removed {
                teardown_failed: None
            }
        );
        assert!(!wt.path.exists());
        assert_eq!(remove(&board_root, &wt).unwrap(), Removed::Absent);
        // The branch stayed; a new worktree checks it out again.
        assert!(ensure(&board_root, &wt).unwrap().join("f").is_file());
    }
}
