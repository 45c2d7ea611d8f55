//! What `board down` does with an agent's worktree: runs the entry's `teardown` and removes the
//! worktree unless it holds uncommitted work of the agent (the files `board up` put there do not
//! count, see [`super::worktree_files::uncommitted`]); the branch `board/<slot>` stays, to be
//! merged back, and [`commits_not_on_base`] says how far it is ahead.

use std::path::Path;
use std::process::{Command, Stdio};

use super::worktree::{git, Worktree};
use super::worktree_files::uncommitted;
use crate::proto::error::BoardResult;

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
/// see [`uncommitted`]); runs its `teardown` first. The branch is kept
/// either way.
pub fn remove(root: &Path, wt: &Worktree) -> BoardResult<Removed> {
    if !wt.path.exists() {
        let _ = git(root, &["worktree", "prune"]);
        return Ok(Removed::Absent);
    }
    let left = uncommitted(wt)?;
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
    use crate::agent_tools::team::worktree::{ensure, repo_prefix};
    use crate::agent_tools::team::worktree_files::tests::sh;

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
