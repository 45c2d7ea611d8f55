//! What `board up` puts into an agent's worktree besides the checkout, and how `board down`
//! tells it from the agent's own work.
//!
//! - `include`: ignored files of the project (`.env`, …) the checkout lacks, copied when the
//!   worktree has none of its own (an agent's edit of its copy is never overwritten);
//! - the agent CLI's settings, written by the functions `board init --agents` uses, so the
//!   worktree holds what the project holds, including the git-ignored
//!   `.claude/settings.local.json` whose MCP approval spares Claude Code its dialog;
//! - a record of those files (path and SHA-256) in the worktree's private git directory
//!   (`.git/worktrees/<slot>/board-files`, removed with the worktree), so `board down` does not
//!   count them as uncommitted work unless the agent changed them;
//! - a mark there once `setup` succeeded (`board-setup-ok`): a restarted agent does not set up
//!   again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::worktree::{git, Worktree};
use crate::agent_tools::profile::Profile;
use crate::proto::error::{BoardError, BoardResult};

const MANIFEST: &str = "board-files";
const SETUP_OK: &str = "board-setup-ok";

/// What [`furnish`] did to one worktree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Furnished {
    /// `include` paths the project does not have (skipped).
    pub missing: Vec<String>,
    /// The setup command still to run before the agent starts (None: none, or it succeeded).
    pub setup: Option<String>,
}

/// The worktree's private git directory (`<common>/worktrees/<slot>`).
fn git_dir(top: &Path) -> BoardResult<PathBuf> {
    git(top, &["rev-parse", "--absolute-git-dir"]).map(PathBuf::from)
}

fn io_error(path: &Path, e: std::io::Error) -> BoardError {
    BoardError::internal(format!("{}: {e}", path.display()))
}

fn sha256(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(
        Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

fn read_manifest(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(dir.join(MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Copies `from` to `to` (a directory with everything in it; symbolic links as links), creating
/// parents. Returns the files made.
fn copy_tree(from: &Path, to: &Path, made: &mut Vec<PathBuf>) -> BoardResult<()> {
    let meta = std::fs::symlink_metadata(from).map_err(|e| io_error(from, e))?;
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    }
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(from).map_err(|e| io_error(from, e))?;
        std::os::unix::fs::symlink(&target, to).map_err(|e| io_error(to, e))?;
    } else if meta.is_dir() {
        std::fs::create_dir_all(to).map_err(|e| io_error(to, e))?;
        for entry in std::fs::read_dir(from).map_err(|e| io_error(from, e))? {
            let entry = entry.map_err(|e| io_error(from, e))?;
            copy_tree(&entry.path(), &to.join(entry.file_name()), made)?;
        }
        return Ok(());
    } else {
        std::fs::copy(from, to).map_err(|e| io_error(to, e))?;
    }
    made.push(to.to_path_buf());
    Ok(())
}

/// Copies each `include` path of `wt` from `root` into `workdir` unless `workdir` has it;
/// returns the files made and the paths the project lacks.
fn copy_includes(
    root: &Path,
    workdir: &Path,
    wt: &Worktree,
) -> BoardResult<(Vec<PathBuf>, Vec<String>)> {
    let (mut made, mut missing) = (Vec::new(), Vec::new());
    for rel in &wt.include {
        let (from, to) = (root.join(rel), workdir.join(rel));
        if std::fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        if std::fs::symlink_metadata(&from).is_err() {
            missing.push(rel.clone());
            continue;
        }
        copy_tree(&from, &to, &mut made)?;
    }
    Ok((made, missing))
}

/// Writes what `board init --agents` writes for `profile`'s CLI (its settings and its
/// instructions file) into `workdir`; returns the files created or changed.
fn write_cli_files(
    workdir: &Path,
    profile: &Profile,
    board_bin: &Path,
) -> BoardResult<Vec<PathBuf>> {
    use crate::agent_tools::init::{self, Action};
    let usage = |e: init::AgentsInitError| {
        BoardError::usage(format!(
            "writing the agent's settings into its worktree: {e}"
        ))
    };
    let mut made = Vec::new();
    if let Some(file) = &profile.instructions_file {
        let written = init::write_instructions(
            workdir,
            std::slice::from_ref(file),
            crate::agent_tools::profile::INSTRUCTIONS,
        )
        .map_err(usage)?;
        made.extend(
            written
                .into_iter()
                .filter(|(_, a)| *a != Action::Unchanged)
                .map(|(p, _)| p),
        );
    }
    let written =
        crate::agent_tools::cli_files::configure(workdir, board_bin, std::slice::from_ref(profile))
            .map_err(usage)?;
    made.extend(
        written
            .into_iter()
            .filter(|w| w.action != Action::Unchanged)
            .map(|w| w.path),
    );
    Ok(made)
}

/// Furnishes the worktree `wt` (checked out, the agent starting in `workdir`): copies the
/// `include` files it lacks from `root`, writes the agent CLI's settings for `profile`, records
/// the files the board made, and says whether `setup` is still to run.
///
/// Errors: `usage` when a settings file of the worktree cannot take the board's settings,
/// `internal` on I/O failures.
pub fn furnish(
    root: &Path,
    wt: &Worktree,
    workdir: &Path,
    profile: &Profile,
    board_bin: &Path,
) -> BoardResult<Furnished> {
    let (mut made, missing) = copy_includes(root, workdir, wt)?;
    made.extend(write_cli_files(workdir, profile, board_bin)?);
    let dir = git_dir(&wt.path)?;
    let mut manifest = read_manifest(&dir);
    for path in &made {
        let rel = path.strip_prefix(&wt.path).unwrap_or(path);
        if let Some(hash) = sha256(path) {
            manifest.insert(rel.to_string_lossy().into_owned(), hash);
        }
    }
    let text =
        serde_json::to_string_pretty(&manifest).map_err(|e| BoardError::internal(e.to_string()))?;
    let file = dir.join(MANIFEST);
    std::fs::write(&file, text).map_err(|e| io_error(&file, e))?;
    let setup = wt.setup.clone().filter(|_| !dir.join(SETUP_OK).exists());
    Ok(Furnished { missing, setup })
}

/// Marks the worktree holding `workdir` as set up (its `setup` succeeded), so a restarted agent
/// starts without setting up again.
///
/// Errors: `workdir` is in no git worktree, or the mark cannot be written.
pub fn mark_set_up(workdir: &Path) -> BoardResult<()> {
    let file = git_dir(workdir)?.join(SETUP_OK);
    std::fs::write(&file, "").map_err(|e| io_error(&file, e))
}

/// The paths (relative to the worktree's top) of `wt` with uncommitted changes or untracked,
/// leaving out the files the board put there and nobody changed since.
///
/// Errors: git failing.
pub fn uncommitted(wt: &Worktree) -> BoardResult<Vec<String>> {
    let manifest = read_manifest(&git_dir(&wt.path)?);
    let status = git(
        &wt.path,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules=none",
        ],
    )?;
    let mut out = Vec::new();
    let mut fields = status.split('\0').filter(|f| !f.is_empty());
    while let Some(entry) = fields.next() {
        let (xy, path) = entry.split_at(entry.len().min(3));
        if xy.starts_with('R') || xy.starts_with('C') {
            // The rename's source follows as a field of its own.
            fields.next();
        }
        let ours = manifest
            .get(path)
            .is_some_and(|h| sha256(&wt.path.join(path)).as_ref() == Some(h));
        if !ours {
            out.push(path.to_string());
        }
    }
    Ok(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::process::Command;

    /// Runs `git ARGS` in `cwd` with no user or system configuration and a fixed author;
    /// panics when git fails. Shared by the team's worktree tests.
    pub(in crate::agent_tools::team) fn sh(cwd: &Path, args: &[&str]) {
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
    fn the_boards_own_files_are_not_uncommitted_work() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join("config")).unwrap();
        std::fs::write(
            root.join(".gitignore"),
            ".env\nconfig/local.toml\n.board/\n",
        )
        .unwrap();
        sh(&root, &["init", "-q", "-b", "main"]);
        sh(&root, &["add", "."]);
        sh(&root, &["commit", "-q", "-m", "one"]);
        std::fs::write(root.join(".env"), "KEY=1\n").unwrap();
        std::fs::write(root.join("config/local.toml"), "x = 1\n").unwrap();
        let entry: crate::proto::config::AgentEntry = toml::from_str(
            "name = \"c\"\nprofile = \"claude\"\nworktree = true\n\
             include = [\".env\", \"config/local.toml\", \"absent.txt\"]\nsetup = \"true\"\n",
        )
        .unwrap();
        let wt = Worktree::for_entry(&root.join(".board"), "c", &entry);
        let workdir = super::super::worktree::ensure(&root, &wt).unwrap();
        let profile = Profile::load(&root, "claude").unwrap();
        let bin = Path::new("/usr/local/bin/board");
        let f = furnish(&root, &wt, &workdir, &profile, bin).unwrap();
        assert_eq!(f.missing, ["absent.txt"]);
        assert_eq!(f.setup.as_deref(), Some("true"));
        assert_eq!(
            std::fs::read_to_string(workdir.join(".env")).unwrap(),
            "KEY=1\n"
        );
        let local = std::fs::read_to_string(workdir.join(".claude/settings.local.json")).unwrap();
        assert!(local.contains("enabledMcpjsonServers"), "{local}");
        assert_eq!(uncommitted(&wt).unwrap(), Vec::<String>::new());

        // The agent's own edits count, including an edit of a file the board wrote.
        std::fs::write(workdir.join("work.rs"), "fn main() {}\n").unwrap();
        std::fs::write(workdir.join(".mcp.json"), "{}\n").unwrap();
        let mut left = uncommitted(&wt).unwrap();
        left.sort();
        assert_eq!(left, [".mcp.json", "work.rs"]);

        // Furnished again: nothing overwritten, the setup mark spares a second setup.
        std::fs::write(workdir.join(".env"), "KEY=2\n").unwrap();
        mark_set_up(&workdir).unwrap();
        let again = furnish(&root, &wt, &workdir, &profile, bin).unwrap();
        assert_eq!(again.setup, None);
        assert_eq!(
            std::fs::read_to_string(workdir.join(".env")).unwrap(),
            "KEY=2\n"
        );
    }
}
