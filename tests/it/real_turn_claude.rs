//! The real Claude Code finishes a turn unattended against a scripted model speaking the
//! Anthropic Messages API: it claims a task through the board's MCP tool as its own agent
//! session, writes work.txt and finishes the task with `board done ID --generation G` in its
//! own shell, claims the next one and finishes it through MCP, and nobody answers a dialog.
//! Headless (`claude -p`) in a project set up by plain `board init --agents` (workspace not
//! trusted) and after `--trust`. Its PostToolUse hook keeps the claims alive (`renew` events).

use std::time::Duration;

use serde_json::Value;

use crate::harness::command::{run_within, Out};
use crate::harness::real_clis::{real_project, require};
use crate::harness::scripted::{anthropic, turn, Endpoint};
use crate::harness::test_board::TestBoard;
use crate::harness::{poll, BOARD};
use board::agent_tools::profile::Profile;

/// Longest one headless turn may take on a loaded 2-core machine.
const TURN: Duration = Duration::from_secs(110);

const PROMPT: &str = "Work on the board's tasks.";

/// A served project with two ready tasks, set up by `board init --agents` (plus `--trust` when
/// `trust`), and a scripted Anthropic endpoint replaying the standard turn.
fn project(trust: bool) -> (TestBoard, Endpoint) {
    let mut p = real_project("");
    if trust {
        let out = p.board(&["init", "--agents", "--trust"]);
        assert!(out.success(), "{}", out.text());
    }
    p.serve();
    p.json(&["add", "first task"]);
    p.json(&["add", "second task"]);
    (p, Endpoint::start(anthropic::answer(turn::STANDARD)))
}

/// The variables pointing Claude Code at `e` and keeping it off the network.
fn model_env(e: &Endpoint) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", e.base_url()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
    ]
}

/// The claude profile's command line (what `board up` starts) without its prompt.
fn profile_argv(p: &TestBoard) -> Vec<String> {
    let prof = Profile::load(p.root(), "claude").unwrap();
    let mut argv = prof.argv(BOARD, p.root(), &p.root().join(".board"));
    argv.truncate(argv.len() - prof.prompt_args.len());
    argv
}

/// `board run --name claude -- PROFILE-COMMAND -p PROMPT` in the project.
fn headless_turn(p: &TestBoard, e: &Endpoint) -> Out {
    let mut c = p.board_cmd(&["run", "--name", "claude", "--"]);
    c.args(profile_argv(p))
        .args(["-p", PROMPT])
        .envs(model_env(e));
    run_within(&mut c, TURN)
}

fn events(p: &TestBoard) -> Vec<Value> {
    p.json(&["log", "--limit", "500"])["events"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn event<'a>(events: &'a [Value], kind: &str, task: i64) -> Option<&'a Value> {
    events
        .iter()
        .find(|e| e["kind"] == kind && e["task"] == task)
}

/// The turn's request holding the most tool results (the whole conversation).
fn last_turn(e: &Endpoint) -> Option<Value> {
    e.log
        .requests()
        .into_iter()
        .filter(|(r, _)| r.route() == "/v1/messages")
        .map(|(r, _)| r.json)
        .filter(|b| b["tools"].is_array())
        .max_by_key(|b| anthropic::tool_results(b).len())
}

/// The tool calls the scripted model made, in order, as `NAME INPUT`.
fn tool_calls(e: &Endpoint) -> Vec<String> {
    let Some(last) = last_turn(e) else {
        return vec![];
    };
    last["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| format!("{} {}", b["name"].as_str().unwrap_or(""), b["input"]))
        .collect()
}

/// The standard turn's outcome: both tasks done by the agent `claude`, the first with `board
/// done` from Claude's shell (work.txt written first), the second through MCP, every claim held
/// by Claude's own session, and its hook's renewals in the log.
fn assert_standard_turn(p: &TestBoard, e: &Endpoint, said: &str) {
    let why = || {
        format!(
            "{said}\ntool calls: {:?}\ntool results: {:?}\nrequests:\n{}",
            tool_calls(e),
            last_turn(e).map(|b| anthropic::tool_results(&b)),
            e.log.describe(300)
        )
    };
    let done = poll(Duration::from_secs(20), || {
        let tasks = p.json(&["list"])["tasks"].as_array().cloned()?;
        tasks.iter().all(|t| t["state"] == "done").then_some(tasks)
    });
    assert!(
        done.is_some(),
        "both tasks are not done: {}\n{}",
        p.json(&["list"]),
        why()
    );
    let calls = tool_calls(e);
    let expected = [
        "mcp__board__board_claim",
        "Bash",
        "Bash",
        "mcp__board__board_claim",
        "mcp__board__board_done",
    ];
    let names: Vec<&str> = calls
        .iter()
        .map(|c| c.split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(names, expected, "{calls:?}\n{}", why());
    assert!(calls[2].contains("board done 1 --generation"), "{calls:?}");
    let work = std::fs::read_to_string(p.root().join("work.txt")).unwrap_or_default();
    assert_eq!(
        work.trim(),
        "done",
        "work.txt from Claude's shell\n{}",
        why()
    );

    let log = events(p);
    for task in [1, 2] {
        let grant =
            event(&log, "grant", task).unwrap_or_else(|| panic!("no grant of {task}: {log:?}"));
        assert_eq!(
            grant["agent"], "claude",
            "the claim is Claude's own: {grant}"
        );
        let finished =
            event(&log, "done", task).unwrap_or_else(|| panic!("no done of {task}: {log:?}"));
        assert_eq!(finished["agent"], "claude", "{finished}");
    }
    let stop_hook = log
        .iter()
        .find(|e| e["kind"] == "idle" && e["agent"] == "claude");
    assert!(
        stop_hook.is_some(),
        "Claude's Stop hook never reached the board: {log:?}"
    );
    let hook_renewal = log.iter().find(|e| {
        e["kind"] == "renew"
            && e["agent"] == "claude"
            && e["reason"].as_str().is_some_and(|r| r.contains("hook"))
    });
    assert!(
        hook_renewal.is_some(),
        "no renewal by Claude's hook in the log: {log:?}"
    );
}

#[test]
fn claude_headless_before_workspace_trust_finishes_the_turn_unattended() {
    if require("claude").is_none() {
        return;
    }
    let (p, e) = project(false);
    let out = headless_turn(&p, &e);
    assert_standard_turn(&p, &e, &out.text());
}

#[test]
fn claude_headless_in_a_trusted_workspace_finishes_the_turn_unattended() {
    if require("claude").is_none() {
        return;
    }
    let (p, e) = project(true);
    let out = headless_turn(&p, &e);
    assert_standard_turn(&p, &e, &out.text());
}
