//! Messages reach an agent that finished its turn, without waiting for its next board call:
//! a turn-end hook that can continue its CLI's turn (Claude Code's `Stop`) answers with the
//! messages as Claude Code's block decision; an agent idle at its prompt in a board pane sees a
//! line in that pane, never while a person is typing there; and an agent that said its turn
//! finished while holding a claim is nudged once, is no longer renewed by CPU alone, and loses
//! the claim one lease later unless it acts.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::agent::Agent;
use crate::harness::test_board::TestBoard;
use crate::harness::{poll, sh_quote};

/// Claude Code's documented `Stop` payload.
fn stop_payload(stop_hook_active: bool) -> Value {
    json!({"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
           "hook_event_name": "Stop", "stop_hook_active": stop_hook_active})
}

/// Runs `board hook claude Stop` inside `agent` with the payload on stdin; the hook always
/// exits 0 and writes nothing to stderr. Its stdout.
fn stop_hook(agent: &mut Agent, stop_hook_active: bool) -> String {
    let out = agent.sh(&format!(
        "printf '%s' {} | board hook claude Stop",
        sh_quote(&stop_payload(stop_hook_active).to_string())
    ));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stderr, "", "{out:?}");
    out.stdout
}

#[test]
fn claudes_stop_hook_continues_the_turn_with_unread_messages_once() {
    let board = TestBoard::start();
    let mut a = board.agent("claude");
    let mut other = board.agent("codex");
    // A holder, so that "idle" means its turn finished (an agent holding nothing shows idle).
    let task = board.add("Pick the store");
    a.claim(task);

    // Nothing unread: the hook prints nothing (the turn ends) and the agent is idle.
    assert_eq!(stop_hook(&mut a, false), "");
    assert_eq!(board.session(&a.id).unwrap()["state"], "idle");

    board
        .board(&["send", &a.id, "Use SQLite, not Postgres"])
        .ok();
    other.board(&["send", &a.id, "I rebased main"]).ok();
    let printed = stop_hook(&mut a, false);
    let decision: Value = serde_json::from_str(printed.trim())
        .unwrap_or_else(|e| panic!("not one JSON decision ({e}): {printed:?}"));
    assert_eq!(decision["decision"], "block", "{decision}");
    let reason = decision["reason"].as_str().unwrap();
    assert!(
        reason.contains("from operator: Use SQLite, not Postgres"),
        "{reason}"
    );
    assert!(
        reason.contains(&format!("from {}: I rebased main", other.id)),
        "{reason}"
    );
    // Delivered: marked read, and the agent's turn goes on (not idle).
    assert_eq!(a.json(&["inbox"])["messages"], json!([]));
    assert_eq!(board.session(&a.id).unwrap()["state"], "working");

    // Claude stops again with stop_hook_active: nothing new, so nothing continues the turn.
    assert_eq!(stop_hook(&mut a, true), "");
    assert_eq!(board.session(&a.id).unwrap()["state"], "idle");
}

/// Claude Code's documented `PostToolUse` payload.
fn tool_payload() -> Value {
    json!({"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": "ok"}})
}

/// Runs `board hook claude PostToolUse` inside `agent`: a tool ran.
fn tool_hook(agent: &mut Agent) {
    let out = agent.sh(&format!(
        "printf '%s' {} | board hook claude PostToolUse",
        sh_quote(&tool_payload().to_string())
    ));
    assert_eq!(out.code, 0, "{out:?}");
}

#[test]
fn a_holder_that_finished_its_turn_is_nudged_then_lapses_though_its_cpu_is_busy() {
    let board = TestBoard::builder()
        .lease("2s")
        .sweep("200ms")
        .liveness("activity")
        .start();
    let finished_task = board.add("Left behind");
    let working_task = board.add("Still at it");
    let mut finished = board.agent("claude");
    let mut working = board.agent("claude");
    // Each claims and ends its turn at once (one shell line: a 2 s lease leaves a loaded
    // machine little room); then `finished` only burns CPU (an idle screen, a stray helper),
    // while `working` starts a new turn and runs tools.
    for (a, task) in [(&mut finished, finished_task), (&mut working, working_task)] {
        let out = a.sh(&format!(
            "board claim {task} > /dev/null && printf '%s' {} | board hook claude Stop",
            sh_quote(&stop_payload(false).to_string())
        ));
        assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    }
    finished.sh("(while :; do :; done) > /dev/null 2>&1 &");
    let lapsed = poll(Duration::from_secs(20), || {
        tool_hook(&mut working);
        let lapse = board.log_of("lapse", finished_task);
        (!lapse.is_empty()).then_some(lapse)
    })
    .expect("the idle holder's claim lapsed although its CPU was busy");
    assert!(
        lapsed[0]["agent"] == json!(finished.id),
        "lapsed from the idle holder: {lapsed:?}"
    );

    // It was nudged once, before the lapse, naming the task.
    let log = board.log();
    let nudges: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e["kind"] == "warn"
                && e["task"] == json!(finished_task)
                && e["reason"]
                    .as_str()
                    .unwrap_or("")
                    .contains("finished its turn")
        })
        .map(|(i, _)| i)
        .collect();
    let lapse_at = log
        .iter()
        .position(|e| e["kind"] == "lapse" && e["task"] == json!(finished_task))
        .unwrap();
    assert_eq!(nudges.len(), 1, "one nudge: {log:?}");
    assert!(nudges[0] < lapse_at, "nudged before the lapse: {log:?}");

    // The agent that kept working keeps its claim, lease after lease.
    let keep_until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < keep_until {
        tool_hook(&mut working);
        let task = board.task(working_task);
        assert_eq!(task["holder"], json!(working.id), "{task}");
    }
    assert!(board.log_of("lapse", working_task).is_empty());
}

/// A `board up` project with two `shell` agents, `sh` and `sh-2`, each in its pane; the board
/// serves, and both shells are at their prompt. The board and the panes of `sh` and `sh-2`.
fn two_shells_up() -> (TestBoard, String, String) {
    let mut b = TestBoard::builder()
        .lease("120s")
        .sweep("1s")
        .liveness("activity")
        .config("[[agents]]\nname = \"sh\"\nprofile = \"shell\"\ncount = 2\n")
        // A fresh HOME: the shells read no rc file of the machine's user.
        .user_home()
        .unserved();
    b.serve();
    b.tmux();
    let up = b.json(&["up"]);
    let pane = |slot: &str| {
        up["panes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["agent_name"] == slot)
            .and_then(|p| p["pane"].as_str())
            .unwrap_or_else(|| panic!("no pane for {slot} in {up}"))
            .to_string()
    };
    let (first, second) = (pane("sh"), pane("sh-2"));
    for (p, name) in [(&first, "sh"), (&second, "sh-2")] {
        b.tmux().wait_screen(
            p,
            &["-J"],
            "the shell's prompt",
            Duration::from_secs(20),
            |s| s.contains(&format!("[board:{name}]")),
        );
    }
    (b, first, second)
}

const LINE: &str = "board: 1 unread message (from operator) — run board inbox";

#[test]
fn a_message_to_a_shell_at_its_prompt_shows_in_its_pane_but_not_while_a_person_types() {
    let (mut b, idle_pane, typing_pane) = two_shells_up();

    // Someone is typing in sh-2's terminal (a keystroke every second) when both get a message.
    let typist = b.tmux().share();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let typing = {
        let (stop, pane) = (stop.clone(), typing_pane.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                typist.type_text(&pane, "x");
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    std::thread::sleep(Duration::from_secs(2));
    b.board(&["send", "sh", "Please look at #3"]).ok();
    b.board(&["send", "sh-2", "Please look at #4"]).ok();

    // The quiet shell shows the line in its pane, without a board call of its own.
    b.tmux().wait_screen(
        &idle_pane,
        &["-J"],
        "the unread line in sh's pane",
        Duration::from_secs(30),
        |s| s.contains(LINE),
    );
    // Written as output: nothing was typed at its prompt (no command ran, no history).
    let history = b.tmux().capture(&idle_pane, &["-J"]);
    assert!(!history.contains("command not found"), "{history}");
    // While the person types, sh-2's pane stays as they left it.
    for _ in 0..5 {
        let screen = b.tmux().capture(&typing_pane, &["-J"]);
        assert!(
            !screen.contains("unread message"),
            "typed over a typist:\n{screen}"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    typing.join().unwrap();
    // After the typing stops, it comes once the terminal has been quiet long enough.
    b.tmux().wait_screen(
        &typing_pane,
        &["-J"],
        "the unread line in sh-2's pane after the typing",
        Duration::from_secs(40),
        |s| s.contains("board: 1 unread message (from operator)"),
    );
    // Once per batch: the sweep and the retries do not repeat it.
    std::thread::sleep(Duration::from_secs(2));
    let screen = b.tmux().capture(&idle_pane, &["-J"]);
    assert_eq!(screen.matches(LINE).count(), 1, "{screen}");
}

#[test]
fn a_message_to_a_cli_idle_at_its_prompt_in_a_pane_is_typed_as_its_next_prompt() {
    let mut b = TestBoard::builder().lease("120s").sweep("1s").start();
    // A stand-in for an agent CLI (not a shell): its turn-end hook reports idle, then it reads
    // its next prompt from the terminal, as Claude Code at its prompt does. It writes what it
    // read under another name and renames it, so the test never reads a half-written file.
    let cli = b.root().join("fakecli");
    std::fs::copy("/bin/sh", &cli).unwrap();
    let script = "printf '%s' '{\"hook_event_name\":\"Stop\",\"stop_hook_active\":false}' \
                  | board hook claude Stop; read -r prompt; printf '%s\\n' \"$prompt\" > prompt.part; \
                  mv prompt.part prompt.txt; exec sleep 300";
    let cmd = format!(
        "PATH={} board run --name cli -- ./fakecli -c {}",
        sh_quote(&crate::harness::path_env()),
        sh_quote(script)
    );
    let root = b.root().to_str().unwrap().to_string();
    b.tmux()
        .run(&["new-window", "-t", "keepalive", "-c", &root, &cmd]);
    // Its turn ended (the hook's `idle` event; an agent holding nothing shows idle before).
    poll(Duration::from_secs(15), || {
        b.log_kind("idle").into_iter().find(|e| e["agent"] == "cli")
    })
    .unwrap_or_else(|| panic!("the CLI's turn never ended: {:?}", b.session("cli")));

    b.board(&["send", "cli", "Rebase on main, then run the tests"])
        .ok();
    let typed = poll(Duration::from_secs(40), || {
        std::fs::read_to_string(b.root().join("prompt.txt")).ok()
    })
    .expect("a line was typed into the CLI's pane");
    assert_eq!(
        typed.trim(),
        "board: 1 unread message (from operator) — run board inbox"
    );
    // The message itself stays in the inbox until the agent reads it.
    let s = b.session("cli").unwrap();
    assert!(s["ended_at"].is_null(), "{s}");
}

#[test]
fn a_cli_that_finished_its_turn_in_a_pane_loses_its_claim_though_it_keeps_reading_and_spinning() {
    let mut b = TestBoard::builder()
        .lease("2s")
        .sweep("200ms")
        .liveness("activity")
        .start();
    let task = b.add("Left behind in a pane");
    // A stand-in for an idle agent CLI on its terminal: its turn ended, and its screen keeps
    // reading files and using CPU (as Claude Code's idle screen does), but nobody types.
    let cli = b.root().join("fakecli");
    std::fs::copy("/bin/sh", &cli).unwrap();
    let script = format!(
        "board claim {task} > /dev/null; \
         printf '%s' '{{\"hook_event_name\":\"Stop\",\"stop_hook_active\":false}}' \
         | board hook claude Stop; \
         while :; do cat /etc/hostname > /dev/null; done"
    );
    let cmd = format!(
        "PATH={} board run --name cli -- ./fakecli -c {}",
        sh_quote(&crate::harness::path_env()),
        sh_quote(&script)
    );
    let root = b.root().to_str().unwrap().to_string();
    b.tmux()
        .run(&["new-window", "-t", "keepalive", "-c", &root, &cmd]);
    let lapse = poll(Duration::from_secs(20), || {
        b.log_of("lapse", task).into_iter().next()
    })
    .unwrap_or_else(|| panic!("kept by its reads and CPU: {}", b.task(task)));
    assert_eq!(lapse["agent"], "cli", "{lapse}");
    let nudged = b.log_of("warn", task);
    assert!(
        nudged.iter().any(|e| e["reason"]
            .as_str()
            .unwrap_or("")
            .contains("finished its turn")),
        "nudged first: {nudged:?}"
    );
}
