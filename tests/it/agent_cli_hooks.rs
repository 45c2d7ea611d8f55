//! `board hook <cli> <event>`, as the agent CLIs' own hooks run it with their documented JSON
//! payloads: a prompt or tool call renews the claims, a permission request puts the session in
//! **waiting** with the CLI's message (TUI banner, `board agents --json`), a finished turn marks
//! it **idle**; a session that never calls the board nor fires a hook needs attention; a hook
//! with no board running exits 0 at once and starts none.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{poll, sh_quote, BOARD, STEP};

use crate::harness::agent::Agent;
use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;
use serde_json::{json, Value};

/// `board agents --json` entry of `id`.
fn agent_view(board: &TestBoard, id: &str) -> Value {
    board.session(id).unwrap_or_else(|| panic!("no agent {id}"))
}

/// Runs `board hook CLI EVENT` inside the agent with `payload` on stdin; the hook must say
/// nothing and exit 0.
fn hook(agent: &mut Agent, cli: &str, event: &str, payload: &Value) {
    let out = agent.sh(&format!(
        "printf '%s' {} | board hook {cli} {event}",
        sh_quote(&payload.to_string())
    ));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "", "a hook prints nothing: {out:?}");
    assert_eq!(out.stderr, "", "a hook prints nothing: {out:?}");
}

/// A private tmux server running `board tui` for `root` in session `tui`; None (after saying
/// why) when tmux is missing.
fn tui_pane(root: &Path) -> Option<Tmux> {
    if Tmux::missing() {
        return None;
    }
    let t = Tmux::private(Vec::new());
    let tui = format!("{} tui", sh_quote(BOARD));
    let root = root.to_str().unwrap();
    t.run(&[
        "new-session",
        "-d",
        "-s",
        "tui",
        "-x",
        "200",
        "-y",
        "40",
        "-c",
        root,
        &tui,
    ]);
    Some(t)
}

/// Waits (the TUI refreshes on events and every 5 s) until the TUI's screen contains `text`.
fn wait_for(tui: &Tmux, text: &str) -> String {
    tui.wait_screen("tui", &[], text, Duration::from_secs(20), |s| {
        s.contains(text)
    })
}

#[test]
fn claude_hooks_renew_then_wait_with_the_clis_message_then_go_idle() {
    let board = TestBoard::builder().lease("4s").sweep("100ms").start();
    let task = board.add("Fix the parser");
    let mut a = board.agent("claude");
    a.claim(task);
    let tui = tui_pane(board.root());

    // Let the lease run down a little, then a tool call renews it.
    std::thread::sleep(Duration::from_millis(1500));
    let before = board.task(task)["expires_in_ms"].as_i64().unwrap();
    hook(
        &mut a,
        "claude",
        "PostToolUse",
        &json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": "ok"}}),
    );
    let after = board.task(task)["expires_in_ms"].as_i64().unwrap();
    assert!(after > before + 1000, "renewed: {before} ms → {after} ms");
    assert_eq!(agent_view(&board, &a.id)["state"], "working");

    // A permission prompt: waiting for a human, with Claude's own words; the claim stays.
    hook(
        &mut a,
        "claude",
        "PermissionRequest",
        &json!({"hook_event_name": "PermissionRequest", "session_id": "s1",
                "tool_name": "Bash",
                "tool_input": {"command": "rm -rf target", "description": "Remove build output"}}),
    );
    let want = "Claude Code asks permission to use Bash: rm -rf target (Remove build output)";
    let v = agent_view(&board, &a.id);
    assert_eq!(v["state"], "waiting", "{v}");
    assert_eq!(v["waiting"], want);
    assert_eq!(v["claims"], json!([task]));
    if let Some(tui) = &tui {
        // A permission prompt's banner, not a question's.
        let screen = wait_for(tui, want);
        assert!(
            screen.contains(&format!("{} asks permission: {want}", a.id)),
            "{screen}"
        );
    }
    // While waiting, the sweep keeps the claim alive without any activity (rule 12).
    std::thread::sleep(Duration::from_millis(4500));
    assert_eq!(
        board.task(task)["holder"],
        json!(a.id),
        "kept while waiting"
    );

    // The human answered; Claude runs the tool: the wait ends.
    hook(
        &mut a,
        "claude",
        "PostToolUse",
        &json!({"tool_name": "Bash"}),
    );
    let v = agent_view(&board, &a.id);
    assert_eq!(v["state"], "working", "{v}");
    assert!(v["waiting"].is_null());

    // The turn ends: idle, claim kept, an `idle` event says who said so.
    hook(
        &mut a,
        "claude",
        "Stop",
        &json!({"hook_event_name": "Stop", "stop_hook_active": false}),
    );
    let v = agent_view(&board, &a.id);
    assert_eq!(v["state"], "idle", "{v}");
    assert!(v["idle_since"].is_string(), "{v}");
    assert_eq!(v["claims"], json!([task]));
    let idle: Vec<Value> = board.log_kind("idle");
    assert_eq!(idle.len(), 1, "{idle:?}");
    assert_eq!(idle[0]["agent"], json!(a.id));
    assert_eq!(idle[0]["reason"], "Claude Code finished its turn");

    // The next prompt makes it work again.
    hook(
        &mut a,
        "claude",
        "UserPromptSubmit",
        &json!({"hook_event_name": "UserPromptSubmit", "prompt": "go on"}),
    );
    assert_eq!(agent_view(&board, &a.id)["state"], "working");
}

#[test]
fn codex_and_gemini_payloads_wait_and_finish_turns_too() {
    let board = TestBoard::start();
    let mut cx = board.agent("codex");
    let mut gm = board.agent("gemini");

    hook(
        &mut cx,
        "codex",
        "PermissionRequest",
        &json!({"hook_event_name": "PermissionRequest", "turn_id": "t1", "tool_name": "Bash",
                "tool_input": {"command": "curl example.com", "description": "network-access example.com"}}),
    );
    assert_eq!(
        agent_view(&board, &cx.id)["waiting"],
        "Codex asks permission to run `curl example.com`: network-access example.com"
    );
    // Codex's `notify` program gets its payload as its last argument, not on stdin.
    let notify = json!({"type": "agent-turn-complete", "turn-id": "t1",
                        "input-messages": ["hi"], "last-assistant-message": "done"});
    let out = cx.sh(&format!(
        "board hook codex notify {} </dev/null",
        sh_quote(&notify.to_string())
    ));
    assert_eq!(out.code, 0, "{out:?}");
    let v = agent_view(&board, &cx.id);
    assert_eq!(v["state"], "idle", "{v}");

    hook(
        &mut gm,
        "gemini",
        "Notification",
        &json!({"hook_event_name": "Notification", "notification_type": "ToolPermission",
                "message": "Tool run_shell_command requires confirmation", "details": {}}),
    );
    let v = agent_view(&board, &gm.id);
    assert_eq!(v["state"], "waiting", "{v}");
    assert_eq!(v["waiting"], "Tool run_shell_command requires confirmation");
    hook(&mut gm, "gemini", "AfterAgent", &json!({"prompt": "x"}));
    let v = agent_view(&board, &gm.id);
    assert_eq!(v["state"], "idle", "{v}");
    assert!(
        v["waiting"].is_null(),
        "finishing the turn ends the wait: {v}"
    );

    // Junk on stdin, unknown events, odd text: exit 0, nothing breaks.
    let out = gm.sh("printf '\\033[2Jnot json' | board hook gemini AfterTool");
    assert_eq!(out.code, 0, "{out:?}");
    let out = gm.sh("board hook gemini NoSuchEvent </dev/null");
    assert_eq!(out.code, 0, "{out:?}");
}

/// `board run --attention-after D -- sleep 600`: an agent that never reaches a prompt.
fn silent_agent(board: &TestBoard, name: &str, after: &str) -> Child {
    board
        .board_cmd(&["run", "--name", name, "--attention-after", after, "--"])
        .args(["sleep", "600"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_session_that_never_calls_needs_attention_until_it_does() {
    let board = TestBoard::start();
    let mut stuck = silent_agent(&board, "stuck", "1s");
    let mut a = board.agent("talks");
    // A session that calls in time never needs attention.
    a.board(&["renew"]).ok();
    let v = poll(STEP, || {
        let v = agent_view(&board, "stuck");
        (v["state"] == "needs_attention").then_some(v)
    })
    .expect("needs attention after 1 s");
    assert!(
        v["attention"]
            .as_str()
            .unwrap()
            .contains("first-run dialog"),
        "{v}"
    );
    let tui = tui_pane(board.root());
    if let Some(tui) = &tui {
        let screen = wait_for(tui, "NEEDS ATTENTION");
        assert!(screen.contains("stuck"), "{screen}");
    }
    let human = board.board(&["agents"]).ok().stdout;
    assert!(human.contains("NEEDS ATTENTION"), "{human}");
    assert_ne!(agent_view(&board, &a.id)["state"], "needs_attention");
    let _ = stuck.kill();
    let _ = stuck.wait();
}

#[test]
fn a_hook_with_no_board_running_exits_0_at_once_and_starts_none() {
    let mut board = TestBoard::start();
    let mut a = board.agent("claude");
    board.stop();
    let socket = board.socket();
    let start = Instant::now();
    let out = a.sh(
        "printf '%s' '{\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\"}' | board hook claude PostToolUse",
    );
    let elapsed = start.elapsed();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(format!("{}{}", out.stdout, out.stderr), "", "{out:?}");
    eprintln!("hook with the board stopped: exit 0 after {elapsed:?} (round trip through the test's agent shell)");
    // Not a speed test (those live in BENCHMARKS.md): only a bound that a connect timeout or an
    // autostarted board would blow.
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    assert!(
        std::os::unix::net::UnixStream::connect(&socket).is_err(),
        "the hook must not start a board"
    );
}

/// The `renew` events of `agent` whose text names `source`.
fn renewals_by(board: &TestBoard, agent: &str, source: &str) -> Vec<Value> {
    board
        .log_kind("renew")
        .into_iter()
        .filter(|e| e["agent"] == agent && e["reason"].as_str().unwrap_or("").contains(source))
        .collect()
}

#[test]
fn a_hooks_renewal_is_in_the_log_naming_the_hook_once_per_lease() {
    // An 8 s lease: renewal writes are coalesced to one per second, their log lines to one per
    // source per lease.
    let board = TestBoard::builder().lease("8s").sweep("100ms").start();
    let task = board.add("Fix the parser");
    let mut a = board.agent("claude");
    a.claim(task);
    let post = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cargo test"}});
    // Whichever writes the renewal, the call's path or the next sweep, names the hook.
    poll(STEP, || {
        hook(&mut a, "claude", "PostToolUse", &post);
        let r = renewals_by(&board, &a.id, "hook claude PostToolUse");
        (!r.is_empty()).then_some(r)
    })
    .expect("a renew event naming the hook");
    for _ in 0..3 {
        hook(&mut a, "claude", "PostToolUse", &post);
    }
    assert_eq!(
        renewals_by(&board, &a.id, "hook claude PostToolUse").len(),
        1,
        "the same source is logged once per lease"
    );
    let human = board.board(&["log"]).ok().stdout;
    assert!(human.contains("hook claude PostToolUse"), "{human}");
}

#[test]
fn a_hooks_renewal_is_named_by_the_hook_not_by_the_handshake_before_it() {
    // A 16 s lease: renewal writes coalesced to one per 2 s; the sweep (15 s) stays out of it.
    let board = TestBoard::builder().lease("16s").sweep("15s").start();
    let task = board.add("Fix the parser");
    let mut a = board.agent("gemini");
    a.claim(task);
    let after = json!({"hook_event_name": "AfterTool", "tool_name": "run_shell_command"});
    // Each hook sends `hello`, then its report; the first past the slack writes the renewal.
    let logged = poll(Duration::from_secs(20), || {
        hook(&mut a, "gemini", "AfterTool", &after);
        let r: Vec<Value> = board
            .log_kind("renew")
            .into_iter()
            .filter(|e| e["agent"] == a.id.as_str())
            .collect();
        (!r.is_empty()).then_some(r)
    })
    .expect("a renew event");
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(
        logged[0]["reason"],
        format!("renewed #{task} (hook gemini AfterTool)"),
        "{logged:?}"
    );
}
