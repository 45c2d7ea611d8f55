//! The diff a person reviews: `git diff --stat --patch BASE...COMMIT` in the project, fetched by
//! the app loop's worker (never by the view), for the details dialog of a task in review.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::proto::client::Target;
use crate::proto::config::Config;
use crate::proto::error::{BoardError, BoardResult};

/// The most of a diff kept, in bytes: a review dialog is no place for megabytes.
const MAX_DIFF: usize = 512 * 1024;

/// The diff of `commit` against the merge base with `[git] base`, as a JSON string (raw: the
/// view makes each line inert).
///
/// # Errors
/// `internal` naming what failed: no project found, git missing or refusing.
pub fn fetch(target: &Target, commit: &str) -> BoardResult<Value> {
    let paths = target
        .paths
        .as_ref()
        .ok_or_else(|| BoardError::internal("no board.toml found: no repository to diff in"))?;
    let base = Config::load(&paths.config)
        .map(|c| c.git.base)
        .unwrap_or_else(|_| "main".into());
    diff(&paths.root, &base, commit).map(Value::String)
}

fn diff(repo: &Path, base: &str, commit: &str) -> BoardResult<String> {
    let range = format!("{base}...{commit}");
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "diff",
            "--stat",
            "--patch",
            "--no-color",
            "--no-ext-diff",
            &range,
            "--",
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| BoardError::internal(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(BoardError::internal(format!(
            "git diff {range}: {}",
            err.trim()
        )));
    }
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    if text.len() > MAX_DIFF {
        let mut cut = MAX_DIFF;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n… (cut: the rest is in `git diff`)");
    }
    Ok(text)
}
