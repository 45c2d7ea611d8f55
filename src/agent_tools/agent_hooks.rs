//! `board hook <cli> <event>`: the command that agent CLIs' own hooks run (installed by
//! `board init --agents`), telling the board what the agent is doing.
//!
//! Each CLI sends a documented JSON payload on stdin (Claude Code: code.claude.com/docs hooks
//! reference; Codex: developers.openai.com/codex/hooks; Gemini CLI: geminicli.com/docs/hooks),
//! or, for Codex's `notify` program, as its last argument. The event becomes one `activity`
//! call: `renew` (a prompt was submitted, a tool ran, the session started), `waiting` with the
//! CLI's own message (a permission prompt: design rule 12), or `idle` (the turn finished).
//!
//! A hook must never block or fail its CLI: this command prints nothing, always exits 0, never
//! starts a board, and bounds every step (stdin, connect, answer) by a short deadline.

use std::io::{IsTerminal, Read};
use std::time::Duration;

use serde_json::{json, Value};

use super::profile::CliKind;
use crate::proto::client::{self, Client};

/// The longest the hook waits for its payload on stdin.
const STDIN_DEADLINE: Duration = Duration::from_millis(300);
/// The longest the hook waits for the board's answer once connected.
const ANSWER_DEADLINE: Duration = Duration::from_millis(500);
/// Largest payload read (a PostToolUse payload carries the tool's output; only a few fields
/// are needed).
const MAX_PAYLOAD: u64 = 4 << 20;
/// Longest message passed on to the board, in characters.
const MAX_MESSAGE: usize = 400;

/// What one hook event tells the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// The agent is working: renew its claims (`activity` kind `renew`).
    Renew,
    /// The agent waits for a human; the CLI's message (kind `waiting`).
    Waiting(String),
    /// The agent finished its turn (kind `idle`).
    Idle(String),
    /// An event the board has nothing to learn from.
    Nothing,
}

/// The events `board init --agents` installs for `cli`, as (event, what it reports).
pub fn installed_events(cli: CliKind) -> &'static [&'static str] {
    match cli {
        CliKind::Claude => &[
            "SessionStart",
            "UserPromptSubmit",
            "PostToolUse",
            "Notification",
            "PermissionRequest",
            "Stop",
        ],
        CliKind::Codex => &[
            "SessionStart",
            "UserPromptSubmit",
            "PostToolUse",
            "PermissionRequest",
            "Stop",
        ],
        CliKind::Gemini => &[
            "SessionStart",
            "BeforeAgent",
            "AfterTool",
            "Notification",
            "AfterAgent",
        ],
        CliKind::Aider => &["notify"],
        CliKind::Shell => &["prompt"],
    }
}

fn text(v: &Value) -> Option<String> {
    let s = v.as_str()?.trim();
    (!s.is_empty()).then(|| {
        let mut out: String = s.chars().take(MAX_MESSAGE).collect();
        if s.chars().count() > MAX_MESSAGE {
            out.push('…');
        }
        out
    })
}

/// "permission to use TOOL: what it wants to do", from a PermissionRequest payload.
fn permission_message(cli: &str, p: &Value) -> String {
    let tool = text(&p["tool_name"]).unwrap_or_else(|| "a tool".into());
    let input = &p["tool_input"];
    let what = text(&input["description"])
        .or_else(|| text(&input["command"]))
        .or_else(|| text(&input["file_path"]));
    match what {
        Some(w) => format!("{cli} asks permission to use {tool}: {w}"),
        None => format!("{cli} asks permission to use {tool}"),
    }
}

/// What `event` of `cli` with `payload` tells the board (pure: the mapping is tested alone).
pub fn report_of(cli: CliKind, event: &str, payload: &Value) -> Report {
    let message = text(&payload["message"]);
    match (cli, event) {
        (CliKind::Claude, "SessionStart" | "UserPromptSubmit" | "PreToolUse" | "PostToolUse")
        | (CliKind::Codex, "SessionStart" | "UserPromptSubmit" | "PreToolUse" | "PostToolUse")
        | (CliKind::Gemini, "SessionStart" | "BeforeAgent" | "BeforeTool" | "AfterTool")
        | (CliKind::Shell, "prompt") => Report::Renew,
        // Claude's "waiting for your input" after 60 s at its prompt is a finished turn, not
        // a question; its other notifications (permission, dialogs) need the human.
        (CliKind::Claude, "Notification")
            if payload["notification_type"].as_str() == Some("idle_prompt") =>
        {
            Report::Idle(message.unwrap_or_else(|| "Claude Code waits for a prompt".into()))
        }
        (CliKind::Claude, "Notification") => {
            Report::Waiting(message.unwrap_or_else(|| "Claude Code needs your attention".into()))
        }
        (CliKind::Gemini, "Notification") => {
            Report::Waiting(message.unwrap_or_else(|| "Gemini CLI needs your attention".into()))
        }
        (CliKind::Claude, "PermissionRequest") => {
            Report::Waiting(permission_message("Claude Code", payload))
        }
        (CliKind::Codex, "PermissionRequest") => {
            Report::Waiting(permission_message("Codex", payload))
        }
        (CliKind::Claude, "Stop") => Report::Idle("Claude Code finished its turn".into()),
        (CliKind::Codex, "Stop") => Report::Idle("Codex finished its turn".into()),
        (CliKind::Codex, "notify") if payload["type"] == "agent-turn-complete" => {
            Report::Idle("Codex finished its turn".into())
        }
        (CliKind::Gemini, "AfterAgent") => Report::Idle("Gemini CLI finished its turn".into()),
        (CliKind::Aider, "notify") => Report::Idle("aider's reply is ready".into()),
        _ => Report::Nothing,
    }
}

/// The payload on stdin (none from a terminal), read within [`STDIN_DEADLINE`]; anything that
/// is not JSON counts as no payload.
fn read_stdin_payload() -> Value {
    if std::io::stdin().is_terminal() {
        return Value::Null;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    // A CLI that never closes the pipe must not hold its own hook: read in a thread and stop
    // waiting at the deadline (the thread ends with the process).
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::stdin().take(MAX_PAYLOAD).read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx.recv_timeout(STDIN_DEADLINE)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

fn send(report: &Report) -> Option<()> {
    let (kind, message) = match report {
        Report::Renew => ("renew", None),
        Report::Waiting(m) => ("waiting", Some(m.as_str())),
        Report::Idle(m) => ("idle", Some(m.as_str())),
        Report::Nothing => return Some(()),
    };
    // Outside an agent session there is nobody to report on.
    client::env_identity()?.agent?;
    let target = client::target().ok()?;
    // Never start a board from a hook: a stopped board stays stopped, and the CLI waits.
    let mut c = Client::connect(&target, false).ok()?;
    c.set_timeout(ANSWER_DEADLINE).ok()?;
    c.call("activity", json!({ "kind": kind, "message": message }))
        .ok()
        .map(|_| ())
}

/// Runs `board hook CLI EVENT [ARG…]`; always returns 0. `args[0]` is the event; Codex's
/// `notify` passes its JSON payload as the last argument instead of on stdin.
pub fn run(cli: CliKind, args: &[String]) -> i32 {
    let Some(event) = args.first() else {
        return 0;
    };
    let payload = match (cli, event.as_str()) {
        (CliKind::Codex, "notify") => args
            .last()
            .and_then(|a| serde_json::from_str(a).ok())
            .unwrap_or(Value::Null),
        (CliKind::Aider | CliKind::Shell, _) => Value::Null,
        _ => read_stdin_payload(),
    };
    let report = report_of(cli, event, &payload);
    if send(&report).is_none() {
        tracing::debug!(cli = cli.as_str(), event, "hook not delivered");
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_payloads_map_to_reports() {
        let claude_perm = json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build", "description": "Clean the build"}});
        assert_eq!(
            report_of(CliKind::Claude, "PermissionRequest", &claude_perm),
            Report::Waiting("Claude Code asks permission to use Bash: Clean the build".into())
        );
        let note = json!({"message": "Claude needs your permission to use Bash",
            "notification_type": "permission_prompt"});
        assert_eq!(
            report_of(CliKind::Claude, "Notification", &note),
            Report::Waiting("Claude needs your permission to use Bash".into())
        );
        let idle = json!({"message": "Claude is waiting for your input",
            "notification_type": "idle_prompt"});
        assert!(matches!(
            report_of(CliKind::Claude, "Notification", &idle),
            Report::Idle(_)
        ));
        assert_eq!(
            report_of(CliKind::Gemini, "AfterTool", &Value::Null),
            Report::Renew
        );
        let notify = json!({"type": "agent-turn-complete", "last-assistant-message": "done"});
        assert!(matches!(
            report_of(CliKind::Codex, "notify", &notify),
            Report::Idle(_)
        ));
        assert_eq!(
            report_of(CliKind::Codex, "SessionEnd", &Value::Null),
            Report::Nothing
        );
    }

    #[test]
    fn every_installed_event_reports_something() {
        for cli in CliKind::ALL {
            for event in installed_events(cli) {
                let payload = json!({"type": "agent-turn-complete", "message": "m"});
                assert_ne!(
                    report_of(cli, event, &payload),
                    Report::Nothing,
                    "{cli:?} {event}"
                );
            }
        }
    }

    #[test]
    fn long_messages_are_cut() {
        let p = json!({"message": "x".repeat(5000)});
        let Report::Waiting(m) = report_of(CliKind::Gemini, "Notification", &p) else {
            panic!("waiting expected");
        };
        assert_eq!(m.chars().count(), MAX_MESSAGE + 1);
    }
}
