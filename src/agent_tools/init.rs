//! `board init --agents` and `board init --mcp`: tell the project's agents about the board.
//!
//! `--agents` writes the board protocol ([`crate::agent_tools::profile::INSTRUCTIONS`]) into the
//! instruction file of every profile (`AGENTS.md`, `CLAUDE.md`, `CONVENTIONS.md`) between
//! [`BEGIN`] and [`END`] marker lines, and each CLI's own settings
//! ([`crate::agent_tools::cli_files`]). Only the text between the markers is ever replaced; a
//! file without markers gets the block appended; running it again changes nothing. `--mcp` adds
//! the `board` server to `.mcp.json`, keeping every other server and key.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

/// Marker line opening the board's block in an instruction file.
pub const BEGIN: &str = "<!-- board:begin -->";
/// Marker line closing the board's block.
pub const END: &str = "<!-- board:end -->";

/// The MCP config file `--mcp` writes, relative to the project root.
pub const MCP_FILE: &str = ".mcp.json";

/// Errors writing the agents' files. Nothing is written when a file cannot be understood.
#[derive(Debug, thiserror::Error)]
pub enum AgentsInitError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The markers are unbalanced, so the board's block cannot be found safely.
    #[error("{path}: {problem}; fix the `{BEGIN}` / `{END}` lines by hand and run again")]
    Markers {
        /// The file.
        path: PathBuf,
        /// What is wrong with the markers.
        problem: String,
    },
    /// `.mcp.json` exists but is not a JSON object with an object `mcpServers`.
    #[error("{path} is not a valid MCP config ({problem}); fix it or move it away and run again")]
    McpConfig {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A CLI's settings file cannot take the board's settings without losing the user's.
    #[error("{path}: {problem}; nothing was written, fix it by hand and run again")]
    Settings {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The file did not exist.
    Created,
    /// The file changed.
    Updated,
    /// The file already had the right content.
    Unchanged,
}

impl Action {
    /// `created`, `updated` or `unchanged`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Created => "created",
            Action::Updated => "updated",
            Action::Unchanged => "unchanged",
        }
    }
}

/// The marked block for `instructions` (no trailing newline).
pub fn block(instructions: &str) -> String {
    format!("{BEGIN}\n{}\n{END}", instructions.trim_end_matches('\n'))
}

/// `existing` with the board's block set to `instructions`: the text between the markers is
/// replaced (markers included), or the block is appended after a blank line. Errors: a begin
/// marker without an end after it, or more than one block (the message says which).
pub fn with_block(existing: &str, instructions: &str) -> Result<String, String> {
    with_marked_block(existing, instructions, (BEGIN, END), false)
}

/// [`with_block`] with other marker lines (`# board:begin` in TOML and YAML), and the block put
/// first instead of last when new (`at_top`: TOML keys before any table header).
pub fn with_marked_block(
    existing: &str,
    content: &str,
    (begin, end): (&str, &str),
    at_top: bool,
) -> Result<String, String> {
    let new_block = format!("{begin}\n{}\n{end}", content.trim_end_matches('\n'));
    let begins = existing.matches(begin).count();
    let ends = existing.matches(end).count();
    match (begins, ends) {
        (0, 0) if at_top => Ok(if existing.is_empty() {
            format!("{new_block}\n")
        } else {
            format!("{new_block}\n\n{existing}")
        }),
        (0, 0) => {
            let mut out = existing.to_string();
            if !out.is_empty() {
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push('\n');
            }
            out.push_str(&new_block);
            out.push('\n');
            Ok(out)
        }
        (1, 1) => {
            let start = existing.find(begin).unwrap_or_default();
            let end_at = existing.find(end).unwrap_or_default();
            if end_at < start {
                return Err(format!("`{end}` comes before `{begin}`"));
            }
            let stop = end_at + end.len();
            Ok(format!(
                "{}{new_block}{}",
                &existing[..start],
                &existing[stop..]
            ))
        }
        (b, e) => Err(format!(
            "found {b} `{begin}` and {e} `{end}` line(s); expected one of each"
        )),
    }
}

/// The file at `path`, or None when it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<String>, AgentsInitError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(AgentsInitError::Io {
            path: path.into(),
            source,
        }),
    }
}

/// Writes `new` to `path` unless it equals `old` (atomically: beside, then renamed; parent
/// directories created), keeping the file's permissions.
pub fn write_if_changed(
    path: &Path,
    old: Option<&str>,
    new: &str,
) -> Result<Action, AgentsInitError> {
    let action = match old {
        None => Action::Created,
        Some(o) if o == new => return Ok(Action::Unchanged),
        Some(_) => Action::Updated,
    };
    // Write beside and rename, so an interrupted write never leaves half a file.
    let tmp = path.with_extension("board-tmp");
    let io = |source| AgentsInitError::Io {
        path: path.into(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    std::fs::write(&tmp, new).map_err(io)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(action)
}

/// Writes the instruction block into each of `files` (paths relative to `root`). All files are
/// checked before any is written. Returns each file's path and what happened.
pub fn write_instructions(
    root: &Path,
    files: &[String],
    instructions: &str,
) -> Result<Vec<(PathBuf, Action)>, AgentsInitError> {
    let mut planned = Vec::new();
    for name in files {
        let path = root.join(name);
        let old = read_optional(&path)?;
        let new = with_block(old.as_deref().unwrap_or(""), instructions).map_err(|problem| {
            AgentsInitError::Markers {
                path: path.clone(),
                problem,
            }
        })?;
        planned.push((path, old, new));
    }
    planned
        .into_iter()
        .map(|(path, old, new)| {
            let action = write_if_changed(&path, old.as_deref(), &new)?;
            Ok((path, action))
        })
        .collect()
}

/// The `.mcp.json` entry for the board server; `command` is the board binary (an absolute path:
/// an agent CLI may not have board's directory on its PATH).
pub fn mcp_entry(command: &str) -> Value {
    json!({ "command": command, "args": ["mcp"] })
}

/// `existing` `.mcp.json` text (None: no file) with `mcpServers.board` set to [`mcp_entry`];
/// every other key and server is kept. Errors: text that is not a JSON object, or whose
/// `mcpServers` is not an object.
pub fn with_mcp_server(existing: Option<&str>, command: &str) -> Result<String, String> {
    let mut doc = match existing.map(str::trim) {
        None | Some("") => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err("the top level is not an object".into()),
            Err(e) => return Err(e.to_string()),
        },
    };
    let servers = doc
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err("`mcpServers` is not an object".into());
    };
    servers.insert("board".into(), mcp_entry(command));
    let text = serde_json::to_string_pretty(&Value::Object(doc))
        .map_err(|e| format!("cannot encode: {e}"))?;
    Ok(format!("{text}\n"))
}

/// Adds the board server (`command`: the board binary) to `root/.mcp.json`. A file that already
/// has the same `board` entry is left byte for byte as it is.
pub fn write_mcp(root: &Path, command: &str) -> Result<(PathBuf, Action), AgentsInitError> {
    let path = root.join(MCP_FILE);
    let old = read_optional(&path)?;
    if let Some(text) = &old {
        let same = serde_json::from_str::<Value>(text)
            .ok()
            .is_some_and(|v| v["mcpServers"]["board"] == mcp_entry(command));
        if same {
            return Ok((path, Action::Unchanged));
        }
    }
    let new =
        with_mcp_server(old.as_deref(), command).map_err(|problem| AgentsInitError::McpConfig {
            path: path.clone(),
            problem,
        })?;
    let action = write_if_changed(&path, old.as_deref(), &new)?;
    Ok((path, action))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_appended_once_and_replaced_in_place() {
        let user = "# My project\n\nBe nice.";
        let once = with_block(user, "v1").unwrap();
        assert_eq!(once, format!("{user}\n\n{BEGIN}\nv1\n{END}\n"));
        assert_eq!(with_block(&once, "v1").unwrap(), once);
        let edited = format!("{once}\nMore user text.\n");
        let v2 = with_block(&edited, "v2\n").unwrap();
        assert_eq!(
            v2,
            format!("{user}\n\n{BEGIN}\nv2\n{END}\n\nMore user text.\n")
        );
    }

    #[test]
    fn unbalanced_markers_are_refused() {
        assert!(with_block(&format!("{BEGIN}\nhalf"), "x").is_err());
        assert!(with_block(&format!("{END}\n{BEGIN}\n"), "x").is_err());
    }

    #[test]
    fn other_mcp_servers_are_kept() {
        let old = r#"{"mcpServers":{"other":{"command":"x"}},"extra":1}"#;
        let v: Value = serde_json::from_str(&with_mcp_server(Some(old), "/b").unwrap()).unwrap();
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(v["mcpServers"]["board"], mcp_entry("/b"));
        assert_eq!(v["extra"], 1);
        assert!(with_mcp_server(Some("[1]"), "/b").is_err());
        assert!(with_mcp_server(Some(r#"{"mcpServers":3}"#), "/b").is_err());
    }
}
