//! A question waits for its answer: `board wait "Q"` stays open through every hook of every
//! agent CLI, every other board call and the sweep, until a person answers it (`board answer`,
//! MCP `board_answer`), the agent withdraws it (`board resume`) or its session ends. The answer
//! lands in the agent's inbox, and a `board wait --block` (MCP `board_wait` with `wait_s`)
//! that was waiting prints it. A CLI's permission prompt stays the shorter state it was: it
//! ends when the CLI moves on.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::agent::Agent;
use crate::harness::mcp::Mcp;
use crate::harness::test_board::TestBoard;
use crate::harness::{poll, sh_quote, STEP};

/// The hooks an agent's CLIs run while it works, with their documented payloads: (cli, event,
/// payload; None for the shell prompt's hook, which reads nothing).
fn activity_hooks() -> Vec<(&'static str, &'static str, Option<Value>)> {
    vec![
        (
            "claude",
            "PostToolUse",
            Some(json!({"hook_event_name": "PostToolUse", "session_id": "s1",
                        "tool_name": "Bash", "tool_input": {"command": "cargo test"},
                        "tool_response": {"stdout": "ok"}})),
        ),
        (
            "claude",
            "Stop",
            Some(json!({"hook_event_name": "Stop", "session_id": "s1",
                        "stop_hook_active": false})),
        ),
        (
            "claude",
            "UserPromptSubmit",
            Some(
                json!({"hook_event_name": "UserPromptSubmit", "session_id": "s1",
                        "prompt": "go on"}),
            ),
        ),
        ("shell", "prompt", None),
        (
            "codex",
            "PostToolUse",
            Some(json!({"hook_event_name": "PostToolUse", "turn_id": "t1",
                        "tool_name": "Bash", "tool_input": {"command": "ls"},
                        "tool_response": "Cargo.toml\nsrc"})),
        ),
        (
            "gemini",
            "AfterTool",
            Some(
                json!({"hook_event_name": "AfterTool", "tool_name": "run_shell_command",
                        "tool_input": {"command": "ls"},
                        "tool_response": {"llmContent": "Cargo.toml"}}),
            ),
        ),
    ]
}

/// Runs `board hook CLI EVENT` inside `agent` (its tree) with `payload` on stdin.
fn hook(agent: &mut Agent, cli: &str, event: &str, payload: Option<&Value>) {
    let line = match payload {
        Some(p) => format!(
            "printf '%s' {} | board hook {cli} {event}",
            sh_quote(&p.to_string())
        ),
        None => format!("board hook {cli} {event} </dev/null"),
    };
    let out = agent.sh(&line);
    assert_eq!(out.code, 0, "{cli} {event}: {out:?}");
}

/// Starts `board --json wait --block ARGS… QUESTION` in the background inside `agent`; it
/// leaves its document in `NAME.json` and its exit code in `NAME.code` under `root`.
fn blocked_wait(agent: &mut Agent, root: &Path, name: &str, args: &str, question: &str) {
    let json = root.join(format!("{name}.json"));
    let code = root.join(format!("{name}.code"));
    agent.sh(&format!(
        "(board --json wait --block {args} {} > {} 2>/dev/null; echo $? > {}.part && mv {}.part {}) &",
        sh_quote(question),
        sh_quote(json.to_str().unwrap()),
        sh_quote(code.to_str().unwrap()),
        sh_quote(code.to_str().unwrap()),
        sh_quote(code.to_str().unwrap()),
    ));
}

/// The exit code a background waiter left, once it left one.
fn finished(root: &Path, name: &str, timeout: Duration) -> Option<i32> {
    let code = root.join(format!("{name}.code"));
    poll(timeout, || {
        std::fs::read_to_string(&code)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    })
}

/// Waits until `id`'s open question is `question`; returns its `board agents --json` entry.
fn wait_asked(board: &TestBoard, id: &str, question: &str) -> Value {
    poll(STEP, || {
        board.session(id).filter(|s| s["question"] == question)
    })
    .unwrap_or_else(|| panic!("{id} never asked {question:?}: {:?}", board.session(id)))
}

#[test]
fn a_question_outlives_every_hook_and_call_until_a_person_answers_and_the_blocked_wait_prints_it() {
    let board = TestBoard::builder().lease("5s").sweep("100ms").start();
    let task = board.add("Choose the store");
    let mut w = board.agent("w");
    w.claim(task);
    let root = board.root().to_path_buf();

    // The agent asks and blocks on the answer; asking the same question again keeps it open.
    blocked_wait(&mut w, &root, "blocked", "--timeout 120s", "Which store?");
    wait_asked(&board, &w.id, "Which store?");
    let asked = w.board(&["wait", "Which store?"]).ok();
    assert!(asked.stdout.contains("Which store?"), "{asked:?}");

    // Twenty hooks of four CLIs, then renew and list: the question stays, so do the claims.
    let hooks = activity_hooks();
    for (cli, event, payload) in hooks.iter().cycle().take(20) {
        hook(&mut w, cli, event, payload.as_ref());
    }
    w.board(&["renew"]).ok();
    w.board(&["list"]).ok();
    let v = board.session(&w.id).unwrap();
    assert_eq!(v["state"], "waiting", "{v}");
    assert_eq!(v["question"], "Which store?", "{v}");
    assert_eq!(v["claims"], json!([task]), "{v}");
    let ended: Vec<Value> = board
        .log()
        .into_iter()
        .filter(|e| e["agent"] == w.id.as_str())
        .filter(|e| matches!(e["kind"].as_str(), Some("answer" | "resume" | "lapse")))
        .collect();
    assert!(
        ended.is_empty(),
        "the question or the claim ended: {ended:?}"
    );
    assert!(
        !root.join("blocked.code").exists(),
        "the blocked wait returned before any answer"
    );

    // A person answers; the blocked wait prints it, marked read.
    let answered = board.json(&["answer", "w", "SQLite"]);
    assert_eq!(answered["question"], "Which store?", "{answered}");
    assert_eq!(answered["message"]["to"], w.id.as_str());
    assert_eq!(finished(&root, "blocked", STEP), Some(0));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("blocked.json")).unwrap()).unwrap();
    assert_eq!(doc["outcome"], "answered", "{doc}");
    assert_eq!(doc["answer"], "SQLite", "{doc}");
    assert_eq!(doc["from"], "operator", "{doc}");
    assert_eq!(doc["messages"][0]["answer"], true, "{doc}");
    let v = board.session(&w.id).unwrap();
    assert!(v["question"].is_null(), "{v}");
    assert_ne!(v["state"], "waiting", "{v}");
    let answer = board.log_kind("answer");
    assert_eq!(answer.len(), 1, "{answer:?}");
    assert_eq!(answer[0]["agent"], w.id.as_str());
    assert_eq!(answer[0]["reason"], "SQLite");

    // Asked and answered with nobody blocked: the answer waits in the agent's inbox.
    w.board(&["wait", "Which PostgreSQL version?"]).ok();
    board.board(&["answer", "w", "16"]).ok();
    let inbox = w.json(&["inbox"]);
    let m = &inbox["messages"][0];
    assert_eq!(
        (&m["text"], &m["from"], &m["answer"]),
        (&json!("16"), &json!("operator"), &json!(true)),
        "{inbox}"
    );
}

#[test]
fn a_blocked_wait_times_out_with_its_question_still_open_and_ends_when_the_agent_withdraws_it() {
    let board = TestBoard::start();
    let mut w = board.agent("w");
    let root = board.root().to_path_buf();

    let out = w.sh("board wait --block --timeout 300ms 'Deploy now?'");
    assert_eq!(out.code, 9, "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    assert!(out.stderr.contains("stays open"), "{out:?}");
    assert_eq!(board.session(&w.id).unwrap()["question"], "Deploy now?");

    // A new question (so its asking is seen), then the agent withdraws it.
    blocked_wait(
        &mut w,
        &root,
        "withdrawn",
        "--timeout 60s",
        "Deploy on Friday?",
    );
    wait_asked(&board, &w.id, "Deploy on Friday?");
    w.board(&["resume"]).ok();
    assert_eq!(finished(&root, "withdrawn", STEP), Some(10));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("withdrawn.json")).unwrap())
            .unwrap();
    assert_eq!(doc["outcome"], "withdrawn", "{doc}");
    assert!(board.session(&w.id).unwrap()["question"].is_null());
}

#[test]
fn a_permission_prompt_ends_on_the_next_activity_while_a_question_stays() {
    let board = TestBoard::start();
    let mut w = board.agent("w");
    w.board(&["wait", "Which store?"]).ok();
    hook(
        &mut w,
        "claude",
        "PermissionRequest",
        Some(
            &json!({"hook_event_name": "PermissionRequest", "session_id": "s1",
                     "tool_name": "Bash",
                     "tool_input": {"command": "rm -rf target", "description": "Remove build output"}}),
        ),
    );
    let v = board.session(&w.id).unwrap();
    assert_eq!(
        v["waiting"],
        "Claude Code asks permission to use Bash: rm -rf target (Remove build output)"
    );
    assert_eq!(v["question"], "Which store?");

    let (cli, event, payload) = &activity_hooks()[0];
    hook(&mut w, cli, event, payload.as_ref());
    let v = board.session(&w.id).unwrap();
    assert!(v["waiting"].is_null(), "the permission prompt ended: {v}");
    assert_eq!(v["question"], "Which store?", "{v}");
    assert_eq!(v["state"], "waiting", "{v}");
}

#[test]
fn answering_an_agent_with_no_open_question_is_refused_and_changes_nothing() {
    let board = TestBoard::start();
    let mut w = board.agent("w");
    let before = board.log().len();

    let out = board.board_json(&["answer", "w", "SQLite"]);
    let (err, code) = out.json_and_code();
    assert_eq!(code, 6, "{err}");
    assert_eq!(err["data"]["kind"], "not_found", "{err}");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("no open question"),
        "{err}"
    );
    let out = board.board(&["answer", "nobody", "SQLite"]);
    assert_eq!(out.code, 6, "{out:?}");
    assert_eq!(
        board.log().len(),
        before,
        "a refused answer logged something"
    );
    assert!(w.json(&["inbox"])["messages"]
        .as_array()
        .unwrap()
        .is_empty());

    // The asker cannot answer itself.
    w.board(&["wait", "Which store?"]).ok();
    let out = w.board(&["answer", "w", "SQLite"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("own question"), "{out:?}");
    assert_eq!(board.session(&w.id).unwrap()["question"], "Which store?");
}

#[test]
fn mcp_board_wait_with_wait_s_returns_the_answer_board_answer_gives() {
    let board = TestBoard::start();
    let mut agent = Mcp::spawn(board.board_cmd(&["run", "--name", "m", "--", "board", "mcp"]));
    agent.initialize();
    let mut operator = Mcp::spawn(board.board_cmd(&["mcp"]));
    operator.initialize();

    // Not answered in time: still open, not an error.
    let r = agent.tool(
        "board_wait",
        json!({"question": "Which store?", "wait_s": 1}),
    );
    assert_eq!(r["outcome"], "timed_out", "{r}");
    assert_eq!(board.session("m").unwrap()["question"], "Which store?");

    // Answered by the operator's board_answer while the agent's board_wait waits (a new
    // question, so its asking is seen before the answer goes).
    let answered = std::thread::scope(|s| {
        let waiting = s.spawn(|| {
            agent.tool(
                "board_wait",
                json!({"question": "Which store, then?", "wait_s": 60}),
            )
        });
        wait_asked(&board, "m", "Which store, then?");
        let a = operator.tool("board_answer", json!({"to": "m", "text": "SQLite"}));
        assert_eq!(a["question"], "Which store, then?", "{a}");
        waiting.join().unwrap()
    });
    assert_eq!(answered["outcome"], "answered", "{answered}");
    assert_eq!(answered["answer"], "SQLite", "{answered}");
    assert!(board.session("m").unwrap()["question"].is_null());

    // Asked without waiting, answered, read from the inbox.
    agent.tool("board_wait", json!({"question": "Which version?"}));
    operator.tool("board_answer", json!({"to": "m", "text": "16"}));
    let inbox = agent.tool("board_inbox", json!({}));
    assert_eq!(inbox["messages"][0]["text"], "16", "{inbox}");
    assert_eq!(inbox["messages"][0]["answer"], true, "{inbox}");
    let refused = operator.call("board_answer", json!({"to": "m", "text": "again"}));
    assert_eq!(refused["isError"], true, "{refused}");
}

#[test]
fn a_question_and_its_blocked_wait_outlive_a_board_restart() {
    let mut board = TestBoard::start();
    let mut w = board.agent("w");
    let root = board.root().to_path_buf();
    blocked_wait(&mut w, &root, "across", "--timeout 120s", "Which store?");
    wait_asked(&board, &w.id, "Which store?");

    board.stop();
    board.serve();
    // The question is still open on the board that started again.
    let v = wait_asked(&board, &w.id, "Which store?");
    assert_eq!(v["state"], "waiting", "{v}");
    assert!(!root.join("across.code").exists(), "the wait gave up");

    board.board(&["answer", "w", "SQLite"]).ok();
    assert_eq!(finished(&root, "across", STEP), Some(0));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("across.json")).unwrap()).unwrap();
    assert_eq!(doc["answer"], "SQLite", "{doc}");
}
