//! The fence where the work lands (ARCHITECTURE.md rule 14): git hooks that refuse a commit from an agent
//! that holds no live claim, and mark an agent's commits with `Board-Task:` / `Board-Generation:`
//! trailers.
//!
//! `board init --git-hooks` installs `pre-commit` and `prepare-commit-msg` in the repository's
//! hooks directory (`git rev-parse --git-path hooks`). A hook the repository already had is kept
//! as `NAME.board-chained` and called from ours, with the same arguments, after our check passes.
//! Installing again only refreshes our scripts. The scripts call the board binary by the absolute
//! path it had at install time, falling back to `board` on `PATH`.
//!
//! Outside an agent session (`BOARD_AGENT` unset) the hooks only run the chained hook. Inside
//! one, `pre-commit` runs `board check` and `prepare-commit-msg` runs the hidden
//! `board hook prepare-commit-msg`, which checks again (so `git commit --no-verify` is fenced too)
//! and adds the trailers with `git interpret-trailers`. `BOARD_TASK`, when set, narrows the check
//! to that task; otherwise any live claim of the agent passes (its lowest task id is recorded).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::agent_tools::init::Action;
use crate::proto::client::{self, Client};
use crate::proto::error::BoardError;
use crate::proto::methods::CheckResult;
use crate::proto::methods::{Call, CheckParams, TaskId};

/// The hooks board installs.
pub const HOOKS: &[&str] = &["pre-commit", "prepare-commit-msg"];

/// Suffix of a repository's own hook kept beside ours.
pub const CHAINED_SUFFIX: &str = ".board-chained";

/// Line that marks a hook script as ours.
pub const MARKER: &str = "# board: git hook installed by `board init --git-hooks`";

/// Errors installing hooks.
#[derive(Debug, thiserror::Error)]
pub enum HooksError {
    /// `git` could not be run.
    #[error("cannot run git: {0}")]
    Git(std::io::Error),
    /// The directory is not inside a git repository.
    #[error("not inside a git repository ({0})")]
    NotARepo(String),
    /// A hook file could not be read, renamed or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Both a foreign hook and an earlier chained hook exist: chaining again would lose one.
    #[error(
        "{hook} is not board's hook and {chained} exists too; merge them by hand, then run again"
    )]
    ChainTaken {
        /// The current hook.
        hook: PathBuf,
        /// The chained hook already there.
        chained: PathBuf,
    },
}

/// One installed hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// `pre-commit` or `prepare-commit-msg`.
    pub name: &'static str,
    /// Its path.
    pub path: PathBuf,
    /// What happened to the file.
    pub action: Action,
    /// The repository's earlier hook, now called from ours.
    pub chained: Option<PathBuf>,
}

/// What `install` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The hooks directory.
    pub dir: PathBuf,
    /// Absolute path of the board binary the hooks call.
    pub board: PathBuf,
    /// Each hook.
    pub hooks: Vec<Installed>,
}

impl Report {
    /// The `git_hooks` member of `board init --json`.
    pub fn to_json(&self) -> Value {
        json!({
            "dir": self.dir,
            "board": self.board,
            "hooks": self.hooks.iter().map(|h| json!({
                "name": h.name, "path": h.path, "action": h.action.as_str(), "chained": h.chained,
            })).collect::<Vec<_>>(),
        })
    }
}

/// The hooks directory of the repository containing `cwd` (honours `core.hooksPath`).
pub fn hooks_dir(cwd: &Path) -> Result<PathBuf, HooksError> {
    let out = Command::new("git")
        .args(["rev-parse", "--git-path", "hooks"])
        .current_dir(cwd)
        .output()
        .map_err(HooksError::Git)?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(HooksError::NotARepo(msg));
    }
    let rel = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok(cwd.join(rel))
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The script of hook `name` calling the board binary at `board`.
pub fn script(name: &str, board: &Path) -> String {
    let bin = sh_quote(&board.to_string_lossy());
    let check = match name {
        "pre-commit" => format!(
            r#"if [ -n "$BOARD_AGENT" ]; then
    "$board_bin" check ${{BOARD_TASK:+"$BOARD_TASK"}} > /dev/null || {{
        status=$?
        echo "board: commit refused: agent session $BOARD_AGENT holds no live claim{task} (board check exited $status)." >&2
        echo "board: your work may now belong to another agent; do not commit it. Run 'board claim' or ask the human." >&2
        exit $status
    }}
fi"#,
            task = "${BOARD_TASK:+ on task $BOARD_TASK}"
        ),
        _ => r#"if [ -n "$BOARD_AGENT" ]; then
    "$board_bin" hook prepare-commit-msg "$@" || exit $?
fi"#
        .to_string(),
    };
    format!(
        r#"#!/bin/sh
{MARKER}
# Inside an agent session (BOARD_AGENT set): refuse the commit unless the agent holds a live
# claim, and add Board-Task / Board-Generation trailers. Outside one: do nothing.
# The repository's earlier {name} hook, if any, is kept as {name}{CHAINED_SUFFIX} and runs after.
board_bin={bin}
if [ ! -x "$board_bin" ]; then
    board_bin=board
fi
{check}
chained="$(dirname "$0")/{name}{CHAINED_SUFFIX}"
if [ -x "$chained" ]; then
    exec "$chained" "$@"
fi
exit 0
"#
    )
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> HooksError + '_ {
    move |source| HooksError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Installs (or refreshes) both hooks for the repository containing `cwd`, calling `board`.
pub fn install(cwd: &Path, board: &Path) -> Result<Report, HooksError> {
    let dir = hooks_dir(cwd)?;
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let dir = dir.canonicalize().map_err(io_err(&dir))?;
    let mut hooks = Vec::new();
    for name in HOOKS {
        let path = dir.join(name);
        let chained = dir.join(format!("{name}{CHAINED_SUFFIX}"));
        let text = script(name, board);
        let old = match std::fs::read(&path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err(&path)(e)),
        };
        let ours = old
            .as_deref()
            .is_some_and(|b| String::from_utf8_lossy(b).contains(MARKER));
        let action = match old {
            Some(_) if !ours => {
                if chained.exists() {
                    return Err(HooksError::ChainTaken {
                        hook: path,
                        chained,
                    });
                }
                std::fs::rename(&path, &chained).map_err(io_err(&path))?;
                Action::Created
            }
            Some(b) if b == text.as_bytes() => Action::Unchanged,
            Some(_) => Action::Updated,
            None => Action::Created,
        };
        if action != Action::Unchanged {
            std::fs::write(&path, &text).map_err(io_err(&path))?;
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(io_err(&path))?;
        hooks.push(Installed {
            name,
            path,
            action,
            chained: chained.exists().then_some(chained),
        });
    }
    Ok(Report {
        dir,
        board: board.to_path_buf(),
        hooks,
    })
}

/// Asks the board whether this agent holds a live claim (on `BOARD_TASK` when set): the
/// `check` result, or the refusal.
fn check() -> Result<CheckResult, BoardError> {
    let task = std::env::var("BOARD_TASK")
        .ok()
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            t.trim()
                .parse::<TaskId>()
                .map_err(|_| BoardError::usage(format!("BOARD_TASK={t:?} is not a task id")))
        })
        .transpose()?;
    let target = client::target()?;
    let mut c = Client::connect(&target, true)?;
    c.ask::<CheckResult>(Call::Check(CheckParams {
        task,
        generation: None,
    }))
    .map(|a| a.result)
}

fn refuse(e: &BoardError) -> i32 {
    let agent = std::env::var("BOARD_AGENT").unwrap_or_default();
    eprintln!("board: {}", crate::proto::sanitize::inert(&e.message));
    eprintln!(
        "board: commit refused: agent session {} holds no live claim ({}).",
        crate::proto::sanitize::inert(&agent),
        e.kind.as_str()
    );
    eprintln!(
        "board: your work may now belong to another agent; do not commit it. Run 'board claim' or ask the human."
    );
    e.kind.exit_code()
}

/// `board hook prepare-commit-msg FILE [SOURCE [SHA]]` (called by the installed hook inside an
/// agent session): refuses (non-zero) without a live claim, else adds `Board-Task: N` and
/// `Board-Generation: G` to the message in FILE. Returns the exit code.
pub fn prepare_commit_msg(args: &[String]) -> i32 {
    let Some(file) = args.first() else {
        eprintln!("board hook prepare-commit-msg: the message file argument is missing");
        return 2;
    };
    let claim = match check() {
        Ok(v) => v,
        Err(e) => return refuse(&e),
    };
    let (task, generation) = (claim.task, claim.generation);
    let out = Command::new("git")
        .args(["interpret-trailers", "--in-place", "--if-exists", "replace"])
        .arg("--trailer")
        .arg(format!("Board-Task: {task}"))
        .arg("--trailer")
        .arg(format!("Board-Generation: {generation}"))
        .arg(file)
        .output();
    match out {
        Ok(o) if o.status.success() => 0,
        Ok(o) => {
            eprintln!(
                "board: git interpret-trailers failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            1
        }
        Err(e) => {
            eprintln!("board: cannot run git interpret-trailers: {e}");
            1
        }
    }
}

/// `board hook NAME ARGS…`: the work of hook NAME. Returns the exit code.
pub fn run(name: &str, args: &[String]) -> i32 {
    match name {
        "prepare-commit-msg" => prepare_commit_msg(args),
        "pre-commit" => match check() {
            Ok(_) => 0,
            Err(e) => refuse(&e),
        },
        other => {
            eprintln!("board hook: unknown hook {other:?} (pre-commit, prepare-commit-msg)");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_for_sh() {
        assert_eq!(sh_quote("/a b/it's"), r"'/a b/it'\''s'");
        let s = script("pre-commit", Path::new("/x y/board"));
        assert!(s.starts_with("#!/bin/sh\n"));
        assert!(s.contains("board_bin='/x y/board'"));
        assert!(s.contains("pre-commit.board-chained"));
        assert!(s.contains(MARKER));
    }
}
