//! `board hook <cli> <event>`: the command that agent CLIs' own hooks run (installed by
//! `board init --agents`), telling the board what the agent is doing.
//!
//! Each CLI sends a documented JSON payload on stdin (Claude Code: code.claude.com/docs hooks
//! reference; Codex: developers.openai.com/codex/hooks; Gemini CLI: geminicli.com/docs/hooks),
//! or, for Codex's `notify` program, as its last argument. The event becomes one `activity`
//! call: `renew` (a prompt was submitted, a tool ran, the session started), `waiting` with the
//! CLI's own message (a permission prompt: ARCHITECTURE.md rule 12), or `idle` (the turn finished).
//!
//! A hook must never block or fail its CLI: this command always exits 0, never starts a board,
//! and bounds every step (stdin, connect, answer) by a short deadline. It prints nothing, except
//! at a turn's end (Claude Code's and Codex's `Stop`, Gemini CLI's `AfterAgent`) when the agent
//! has unread messages: then it reads them (marking them read) and prints the CLI's own
//! "continue the turn" decision, `{"decision":"block","reason":…}`, with the messages as the
//! reason, so an agent that finished its turn gets them at once (see [`continuation`]).

use std::io::{IsTerminal, Read};
use std::time::Duration;

use serde_json::{json, Value};

use super::profile::CliKind;
use crate::proto::client::{self, Client};
use crate::proto::methods::{ActivityKind, ActivityParams, Call, InboxParams};
use crate::proto::methods::{ActivityResult, InboxResult};
use crate::proto::MessageView;

/// The longest the hook waits for its payload on stdin.
const STDIN_DEADLINE: Duration = Duration::from_millis(300);
/// The longest the hook waits for the board's answer once connected.
const ANSWER_DEADLINE: Duration = Duration::from_millis(500);
/// Largest payload read (a PostToolUse payload carries the tool's output; only a few fields
/// are needed).
const MAX_PAYLOAD: u64 = 4 << 20;
/// Longest message passed on to the board, in characters.
const MAX_MESSAGE: usize = 400;
/// Longest text of one delivered message in a turn-end decision, in characters.
const MAX_DELIVERED: usize = 2000;

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

/// "permission to use TOOL: what it wants to do", from a PermissionRequest payload: the
/// command or file first (what a person decides on), then the CLI's description of it.
fn permission_message(cli: &str, p: &Value) -> String {
    let tool = text(&p["tool_name"]).unwrap_or_else(|| "a tool".into());
    let input = &p["tool_input"];
    let target = text(&input["command"]).or_else(|| text(&input["file_path"]));
    let what = match (target, text(&input["description"])) {
        (Some(t), Some(d)) => Some(format!("{t} ({d})")),
        (t, d) => t.or(d),
    };
    match what {
        Some(w) => format!("{cli} asks permission to use {tool}: {w}"),
        None => format!("{cli} asks permission to use {tool}"),
    }
}

/// Codex's PermissionRequest: the command it asks to run, then the model's reason for asking
/// (`description`, which Codex fills with the model's justification, not the command).
fn codex_permission_message(p: &Value) -> String {
    match text(&p["tool_input"]["command"]) {
        Some(cmd) => match text(&p["tool_input"]["description"]) {
            Some(why) if why != cmd => format!("Codex asks permission to run `{cmd}`: {why}"),
            _ => format!("Codex asks permission to run `{cmd}`"),
        },
        None => permission_message("Codex", p),
    }
}

/// What a Gemini CLI `Notification` (`ToolPermission`) asks, from its `details`: the command
/// (`exec`), the MCP tool and its server (`mcp`), the file (`edit`) or the pages (`info`). Its
/// own `message` ("Tool Confirm MCP Tool Execution requires MCP") names none of them. None when
/// `details` has none of these (the caller falls back on the message).
fn gemini_permission_message(details: &Value) -> Option<String> {
    let ask = "Gemini CLI asks permission";
    match details["type"].as_str()? {
        "exec" => text(&details["command"]).map(|c| format!("{ask} to run: {c}")),
        "mcp" => {
            let tool = text(&details["toolName"])?;
            Some(match text(&details["serverName"]) {
                Some(server) => format!("{ask} to use {tool} ({server} MCP server)"),
                None => format!("{ask} to use {tool}"),
            })
        }
        "edit" => text(&details["fileName"])
            .or_else(|| text(&details["filePath"]))
            .map(|f| format!("{ask} to edit {f}")),
        "info" => {
            let urls: Vec<&str> = details["urls"]
                .as_array()
                .map(|u| u.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            text(&Value::String(urls.join(" ")))
                .or_else(|| text(&details["prompt"]))
                .map(|w| format!("{ask} to fetch: {w}"))
        }
        _ => None,
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
        // Claude sends this ~6 s into a permission dialog whose PermissionRequest hook already
        // said which tool and input it asks about; its vaguer "Claude needs your permission"
        // must not replace that for the rest of the dialog.
        (CliKind::Claude, "Notification")
            if payload["notification_type"].as_str() == Some("permission_prompt") =>
        {
            Report::Nothing
        }
        (CliKind::Claude, "Notification") => {
            Report::Waiting(message.unwrap_or_else(|| "Claude Code needs your attention".into()))
        }
        (CliKind::Gemini, "Notification") => Report::Waiting(
            gemini_permission_message(&payload["details"])
                .or(message)
                .unwrap_or_else(|| "Gemini CLI needs your attention".into()),
        ),
        (CliKind::Claude, "PermissionRequest") => {
            Report::Waiting(permission_message("Claude Code", payload))
        }
        (CliKind::Codex, "PermissionRequest") => Report::Waiting(codex_permission_message(payload)),
        (CliKind::Claude, "Stop") => Report::Idle("Claude Code finished its turn".into()),
        (CliKind::Codex, "Stop") => Report::Idle("Codex finished its turn".into()),
        (CliKind::Codex, "notify") if payload["type"] == "agent-turn-complete" => {
            Report::Idle("Codex finished its turn".into())
        }
        (CliKind::Gemini, "AfterAgent") => Report::Idle("Gemini CLI finished its turn".into()),
        (CliKind::Aider, "notify") => match text(&payload["command"]) {
            Some(c) => Report::Waiting(format!("aider asks permission to run: {c}")),
            None => Report::Idle("aider's reply is ready".into()),
        },
        _ => Report::Nothing,
    }
}

/// Whether `event` of `cli` ends a turn in a way its hook can continue: the CLI reads
/// `{"decision":"block","reason":R}` on the hook's stdout and goes on with R as the next prompt.
/// Claude Code `Stop` (code.claude.com hooks reference), Codex `Stop` (0.171: "Stop hook
/// requested continuation"), Gemini CLI `AfterAgent` (0.61: a `block`/`deny` decision sends the
/// reason as a new prompt). Codex's `notify` and aider's notifications command cannot.
pub fn can_continue(cli: CliKind, event: &str) -> bool {
    matches!(
        (cli, event),
        (CliKind::Claude, "Stop") | (CliKind::Codex, "Stop") | (CliKind::Gemini, "AfterAgent")
    )
}

/// The decision a turn-end hook prints to deliver `messages` (the `messages` of an `inbox`
/// answer: `from`, `text`, `answer`): `{"decision":"block","reason":…}`, the reason naming each
/// message's sender, its text made inert and cut to `MAX_DELIVERED` characters. None when
/// there is nothing to deliver (the hook then prints nothing and the turn ends).
pub fn continuation(messages: &[MessageView]) -> Option<String> {
    if messages.is_empty() {
        return None;
    }
    let n = messages.len();
    let mut reason = format!(
        "board: {n} unread message{} for you (now marked read):",
        if n == 1 { "" } else { "s" }
    );
    for m in messages {
        let from = crate::proto::sanitize::one_line(&m.from);
        let text = crate::proto::sanitize::inert(&m.text);
        let mut text: String = text.chars().take(MAX_DELIVERED).collect();
        if m.text.chars().count() > MAX_DELIVERED {
            text.push('…');
        }
        let what = if m.answer { "answer from" } else { "from" };
        reason.push_str(&format!("\n- {what} {from}: {text}"));
    }
    Some(json!({ "decision": "block", "reason": reason }).to_string())
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

/// aider's notification carries nothing: `{"command": C}` when the reply it just wrote to its
/// chat history makes it ask to run the shell command C (see [`super::aider_question`]), else
/// null. The command runs in aider's working directory.
fn aider_payload() -> Value {
    let command = std::env::current_dir()
        .ok()
        .map(|d| super::aider_question::history_path(&d))
        .and_then(|p| super::aider_question::read_tail(&p))
        .and_then(|t| super::aider_question::pending_command(&t));
    command.map_or(Value::Null, |c| json!({ "command": c }))
}

/// A connection to the board for a hook: None outside an agent session or when no board
/// answers (never starts one: a stopped board stays stopped, and the CLI goes on).
fn connect() -> Option<Client> {
    // Outside an agent session there is nobody to report on.
    client::env_identity()?.agent?;
    let target = client::target().ok()?;
    let c = Client::connect(&target, false).ok()?;
    c.set_timeout(ANSWER_DEADLINE).ok()?;
    Some(c)
}

/// Sends `report` as one `activity` call; the board's answer (None when nothing was sent).
/// Without the `hello` handshake: that is a call of the agent's own, which the board would take
/// as the agent moving on (ending the very `waiting` this report sets, a `resume` and a `wait`
/// in the log for every report) and as the cause of the renewal (`call hello` in the log where
/// the hook should be named). A board of another protocol refuses the call: the hook ignores it.
fn send(c: &mut Client, report: &Report, hook: &str) -> Option<Value> {
    let (kind, message) = match report {
        Report::Renew => (ActivityKind::Renew, None),
        Report::Waiting(m) => (ActivityKind::Waiting, Some(m.clone())),
        Report::Idle(m) => (ActivityKind::Idle, Some(m.clone())),
        Report::Nothing => return None,
    };
    c.send_raw(Call::Activity(ActivityParams {
        kind,
        message,
        hook: Some(hook.to_string()),
    }))
    .ok()
}

/// At a turn's end that its CLI can continue: when the `activity` answer says the agent has
/// unread messages, reads them (`inbox`, which marks them read, so a message is delivered
/// once and a repeated `Stop` with `stop_hook_active` does not loop) and returns the decision
/// to print. The `inbox` call is itself activity: the agent is no longer idle, as its turn goes on.
fn deliver(c: &mut Client, answer: &Value) -> Option<String> {
    let activity = client::answer_of::<ActivityResult>(answer.clone()).ok()?;
    if activity.inbox.is_none_or(|n| n.unread <= 0) {
        return None;
    }
    let inbox = c
        .ask::<InboxResult>(Call::Inbox(InboxParams::default()))
        .ok()?;
    continuation(&inbox.result.messages)
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
        (CliKind::Aider, "notify") => aider_payload(),
        (CliKind::Aider | CliKind::Shell, _) => Value::Null,
        _ => read_stdin_payload(),
    };
    let report = report_of(cli, event, &payload);
    let Some(mut c) = connect() else {
        tracing::debug!(cli = cli.as_str(), event, "hook not delivered: no board");
        return 0;
    };
    let hook = format!("{} {event}", cli.as_str());
    let Some(answer) = send(&mut c, &report, &hook) else {
        tracing::debug!(cli = cli.as_str(), event, "hook not delivered");
        return 0;
    };
    if can_continue(cli, event) {
        if let Some(decision) = deliver(&mut c, &answer) {
            println!("{decision}");
        }
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
            Report::Waiting(
                "Claude Code asks permission to use Bash: rm -rf build (Clean the build)".into()
            )
        );
        // The same dialog's later notice keeps the PermissionRequest's message.
        let note = json!({"message": "Claude needs your permission to use Bash",
            "notification_type": "permission_prompt"});
        assert_eq!(
            report_of(CliKind::Claude, "Notification", &note),
            Report::Nothing
        );
        let dialog = json!({"message": "Claude Code needs your input",
            "notification_type": "elicitation_dialog"});
        assert_eq!(
            report_of(CliKind::Claude, "Notification", &dialog),
            Report::Waiting("Claude Code needs your input".into())
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
    fn aider_about_to_ask_to_run_a_command_is_waiting_naming_it() {
        assert_eq!(
            report_of(
                CliKind::Aider,
                "notify",
                &json!({"command": "board claim --json"})
            ),
            Report::Waiting("aider asks permission to run: board claim --json".into())
        );
        assert_eq!(
            report_of(CliKind::Aider, "notify", &Value::Null),
            Report::Idle("aider's reply is ready".into())
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
    fn a_turn_end_continues_only_with_messages_each_naming_its_sender() {
        assert_eq!(continuation(&[]), None);
        let message = |id: i64, from: &str, text: &str, answer: bool| MessageView {
            id,
            from: from.into(),
            to: "claude".into(),
            text: text.into(),
            sent_at: "2026-03-01T12:00:00.000Z".into(),
            answer,
        };
        let msgs = [
            message(1, "operator", "use SQLite", true),
            message(2, "codex", "rebase on main\u{1b}[2J", false),
        ];
        let out: Value = serde_json::from_str(&continuation(&msgs).unwrap()).unwrap();
        assert_eq!(out["decision"], "block");
        let reason = out["reason"].as_str().unwrap();
        assert!(reason.starts_with("board: 2 unread messages"), "{reason}");
        assert!(
            reason.contains("answer from operator: use SQLite"),
            "{reason}"
        );
        assert!(reason.contains("from codex: rebase on main"), "{reason}");
        assert!(
            !reason.contains('\u{1b}'),
            "control sequences made inert: {reason}"
        );
        assert!(can_continue(CliKind::Claude, "Stop"));
        assert!(can_continue(CliKind::Codex, "Stop"));
        assert!(can_continue(CliKind::Gemini, "AfterAgent"));
        assert!(!can_continue(CliKind::Codex, "notify"));
        assert!(!can_continue(CliKind::Aider, "notify"));
        assert!(!can_continue(CliKind::Claude, "PostToolUse"));
    }

    #[test]
    fn gemini_permission_prompts_name_the_command_or_the_mcp_tool() {
        let exec = json!({"notification_type": "ToolPermission",
            "message": "Tool Shell requires execution",
            "details": {"type": "exec", "title": "Shell", "command": "echo done > work.txt",
                        "rootCommand": "echo"}});
        assert_eq!(
            report_of(CliKind::Gemini, "Notification", &exec),
            Report::Waiting("Gemini CLI asks permission to run: echo done > work.txt".into())
        );
        let mcp = json!({"notification_type": "ToolPermission",
            "message": "Tool Confirm MCP Tool Execution requires MCP",
            "details": {"type": "mcp", "title": "Confirm MCP Tool Execution",
                        "serverName": "board", "toolName": "board_claim"}});
        assert_eq!(
            report_of(CliKind::Gemini, "Notification", &mcp),
            Report::Waiting(
                "Gemini CLI asks permission to use board_claim (board MCP server)".into()
            )
        );
        let edit = json!({"details": {"type": "edit", "fileName": "a.rs"}});
        assert_eq!(
            report_of(CliKind::Gemini, "Notification", &edit),
            Report::Waiting("Gemini CLI asks permission to edit a.rs".into())
        );
        // Unknown details: the CLI's own message, then a generic one.
        let odd = json!({"message": "Tool requires confirmation", "details": {"type": "new"}});
        assert_eq!(
            report_of(CliKind::Gemini, "Notification", &odd),
            Report::Waiting("Tool requires confirmation".into())
        );
        let hostile = json!({"details": {"type": "exec", "command": "x".repeat(5000)}});
        let Report::Waiting(m) = report_of(CliKind::Gemini, "Notification", &hostile) else {
            panic!("waiting expected");
        };
        assert!(m.chars().count() < MAX_MESSAGE + 40, "{}", m.len());
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
