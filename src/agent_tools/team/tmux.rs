//! The tmux calls of the team: one `tmux` process per call, on the server the environment names
//! (`TMUX_TMPDIR`, or the default). `TMUX` is removed so a call made from inside a pane talks to
//! the same server by its socket path without tmux thinking it is nested.

use std::process::{Command, Stdio};

use crate::proto::error::{BoardError, BoardResult};

/// Runs `tmux ARGS…` and returns its trimmed stdout.
///
/// Errors: `unavailable` when tmux cannot be run (not installed), `internal` with tmux's own
/// message when it fails.
pub fn run(args: &[&str]) -> BoardResult<String> {
    let out = Command::new("tmux")
        .args(args)
        .env_remove("TMUX")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            BoardError::unavailable(format!(
                "cannot run tmux ({e}); install tmux to use `board up`"
            ))
        })?;
    if !out.status.success() {
        return Err(BoardError::internal(format!(
            "tmux {} failed: {}",
            args.first().copied().unwrap_or(""),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Longest text typed into a pane, in characters.
const MAX_TYPED: usize = 4096;

/// Text made safe to type into a terminal: control characters (C0, DEL, C1) and bidi
/// overrides dropped, line breaks and tabs become spaces, at most 4,096 characters (`MAX_TYPED`).
pub fn pane_text(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .filter(|c| {
            !c.is_control() && !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .take(MAX_TYPED)
        .collect();
    cleaned.trim().to_string()
}

/// Types `text` into tmux pane `pane`, then presses Enter: what the TUI does with an answer
/// and the board with a line for an agent idle at its prompt. `server` is the tmux server's
/// socket (`tmux -S`); None talks to the server the environment names (the TUI runs in it).
/// Errors: tmux's own message.
pub fn type_into_pane(
    server: Option<&std::path::Path>,
    pane: &str,
    text: &str,
) -> Result<(), String> {
    let run = |args: &[&str]| -> Result<(), String> {
        let mut cmd = Command::new("tmux");
        if let Some(socket) = server {
            cmd.arg("-S").arg(socket).env_remove("TMUX");
        }
        let out = cmd
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run tmux: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    };
    run(&["send-keys", "-t", pane, "-l", "--", text])?;
    run(&["send-keys", "-t", pane, "Enter"])
}

/// Whether tmux session `name` exists (exact match).
pub fn has_session(name: &str) -> bool {
    Command::new("tmux")
        .args(["has-session", "-t", &format!("={name}")])
        .env_remove("TMUX")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Quotes `s` for the `sh -c` line tmux runs a pane's command with.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// One pane of a session, as `list-panes` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pane {
    /// `%N`.
    pub id: String,
    /// Pid of the pane's first process.
    pub pid: i64,
    /// Name of the pane's window (`board`, `agents`).
    pub window: String,
    /// The team slot the pane runs (`@board_slot`), empty for other panes.
    pub slot: String,
    /// `@board_state` as the pane's launcher last set it (`running`, `ended`), or empty.
    pub state: String,
    /// tmux considers the pane's process gone (only with `remain-on-exit`).
    pub dead: bool,
    /// `@board_started_with`: the start-time options its agent started with (JSON, see
    /// `started_with` of the team), or empty.
    pub started_with: String,
}

/// Every pane of session `session`, in window order.
pub fn panes(session: &str) -> BoardResult<Vec<Pane>> {
    let out = run(&[
        "list-panes",
        "-s",
        "-t",
        &format!("={session}"),
        "-F",
        "#{pane_id}\t#{pane_pid}\t#{pane_dead}\t#{window_name}\t#{@board_slot}\t#{@board_state}\t#{@board_started_with}",
    ])?;
    Ok(out.lines().filter_map(parse_pane).collect())
}

fn parse_pane(line: &str) -> Option<Pane> {
    let mut f = line.split('\t');
    Some(Pane {
        id: f.next()?.to_string(),
        pid: f.next()?.parse().ok()?,
        dead: f.next()? == "1",
        window: f.next()?.to_string(),
        slot: f.next().unwrap_or("").to_string(),
        state: f.next().unwrap_or("").to_string(),
        started_with: f.next().unwrap_or("").to_string(),
    })
}

/// Sets the pane-level user option `@name` of `pane` (tmux ≥ 3.0).
pub fn set_pane_option(pane: &str, name: &str, value: &str) -> BoardResult<()> {
    run(&["set-option", "-p", "-t", pane, name, value]).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_carries_no_control_sequences() {
        assert_eq!(
            pane_text("yes\u{1b}[2J\nplease\u{7}\u{9b}1m \u{202e}x"),
            "yes[2J please1m x"
        );
        assert_eq!(pane_text(&"a".repeat(10_000)).len(), MAX_TYPED);
    }

    #[test]
    fn list_panes_lines_parse() {
        let p = parse_pane("%3\t1234\t0\tagents\tclaude\tended").unwrap();
        assert_eq!(
            (p.id.as_str(), p.pid, p.dead, p.window.as_str()),
            ("%3", 1234, false, "agents")
        );
        assert_eq!((p.slot.as_str(), p.state.as_str()), ("claude", "ended"));
        let tui = parse_pane("%0\t99\t0\tboard\t\t").unwrap();
        assert!(tui.slot.is_empty() && tui.state.is_empty());
        assert!(parse_pane("garbage").is_none());
    }

    #[test]
    fn quoting_keeps_words_whole() {
        assert_eq!(shell_quote("claude"), "claude");
        assert_eq!(shell_quote("it's a b"), r"'it'\''s a b'");
        assert_eq!(shell_quote(""), "''");
    }
}
