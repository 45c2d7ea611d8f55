//! The TUI's agents panel and needs-you list with real panes (private tmux server), a real
//! board and real agents: with the agents panel focused, backlog keys and typed text change no
//! task; `K` stops an interactive bash and an agent that ignores SIGTERM (SIGTERM, then SIGKILL
//! after `hangup_grace`) and the TUI says "stopped" once each session ended; a message to the
//! operator is counted in the header, read from the needs-you list, and then marked read; an
//! agent's question stays in the banner through every kind of activity until it is answered.

use std::time::Duration;

use serde_json::Value;

use crate::harness::test_board::TestBoard;

use crate::harness::*;

const SLEEPER: &str =
    "description = \"sleeps\"\ncommand = [\"sh\", \"-c\", \"echo worker is up; exec sleep 300\"]\n";

/// An agent that ignores SIGTERM, as some agent CLIs do.
const STUBBORN: &str = "description = \"ignores SIGTERM\"\ncommand = [\"sh\", \"-c\", \"trap '' TERM; echo stubborn is up; while :; do sleep 1; done\"]\n";

/// `board up` of `b`; the TUI's pane id.
fn up_with_tui(b: &mut TestBoard) -> String {
    b.tmux();
    let up = b.json(&["up"]);
    let session = up["session"].as_str().unwrap().to_string();
    b.tmux().run(&[
        "list-panes",
        "-t",
        &format!("={session}:board"),
        "-F",
        "#{pane_id}",
    ])
}

fn live_ids(b: &TestBoard) -> Vec<String> {
    b.json(&["agents"])["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["ended_at"].is_null() && a["pid"].is_i64())
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect()
}

fn wait_live(b: &TestBoard, n: usize) -> Vec<String> {
    poll(Duration::from_secs(15), || {
        let ids = live_ids(b);
        (ids.len() == n).then_some(ids)
    })
    .unwrap_or_else(|| panic!("{n} live agents expected: {:?}", live_ids(b)))
}

#[test]
fn typing_on_the_agents_panel_changes_no_task() {
    let mut b = TestBoard::builder()
        .lease("30s")
        .sweep("10s")
        .liveness("process")
        .config("[[agents]]\nname = \"w\"\nprofile = \"sleeper\"\n")
        .unserved();
    b.write_profile("sleeper", SLEEPER);
    b.serve();
    let first = b.add("Keep this title");
    b.add("Keep this one too");
    let tui = up_with_tui(&mut b);
    wait_live(&b, 1);
    b.tmux().wait_screen(
        &tui,
        &["-J"],
        "the TUI with agent w",
        Duration::from_secs(10),
        |s| s.contains("● live") && s.lines().any(|l| l.contains(" w ")),
    );

    // The agents panel: its footer lists its keys, none of the backlog's.
    b.tmux().keys(&tui, &["Tab"]);
    let screen = b.tmux().wait_screen(
        &tui,
        &["-J"],
        "the agents panel's footer",
        Duration::from_secs(10),
        |s| s.contains("K  stop"),
    );
    let footer = screen.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(
        !footer.contains("cancel") && !footer.contains("edit"),
        "{footer}"
    );

    // Backlog letters, the old stop key and free text: nothing of it reaches a task.
    for k in ["e", "x", "y", "X", "y", "a", "s", "r", "c", "/"] {
        b.tmux().type_text(&tui, k);
    }
    b.tmux().type_text(&tui, "hello world");
    // Back on the backlog, Enter asks the board for the task's details on the same connection
    // the TUI would have sent an edit or a cancel on: once they show, any such call was
    // answered.
    b.tmux().keys(&tui, &["Escape", "Tab", "g", "Enter"]);
    b.tmux().wait_screen(
        &tui,
        &["-J"],
        "the details of the first ready task",
        Duration::from_secs(10),
        |s| s.contains("open · ready · generation"),
    );
    for kind in ["edit", "cancel", "add", "goal", "release"] {
        let seen: Vec<Value> = b
            .log_kind(kind)
            .into_iter()
            .filter(|e| kind != "add" || e["task"].as_i64() > Some(first + 1))
            .collect();
        assert!(
            seen.is_empty(),
            "a {kind} from keys on the agents panel: {seen:?}"
        );
    }
    assert_eq!(b.task(first)["title"], "Keep this title");
    assert_eq!(b.task(first)["state"], "open");
    assert_eq!(
        live_ids(&b),
        vec!["w".to_string()],
        "X stops nothing any more"
    );
}

#[test]
fn stop_ends_an_interactive_shell_and_an_agent_that_ignores_sigterm() {
    let mut b = TestBoard::builder()
        .lease("30s")
        .sweep("10s")
        .liveness("process")
        .config(
            "[run]\nhangup_grace = \"1s\"\n\n[[agents]]\nname = \"sh\"\nprofile = \"shell\"\n\n\
             [[agents]]\nname = \"stubborn\"\nprofile = \"stubborn\"\n",
        )
        .unserved();
    b.write_profile("stubborn", STUBBORN);
    b.serve();
    let tui = up_with_tui(&mut b);
    let ids = wait_live(&b, 2);
    b.tmux().wait_screen(
        &tui,
        &["-J"],
        "both agents in the TUI",
        Duration::from_secs(15),
        |s| ids.iter().all(|id| s.contains(&format!(" {id} "))),
    );
    b.tmux().keys(&tui, &["Tab"]);
    let mut stopped = Vec::new();
    for round in 0..2 {
        // The first row is the first live agent (ended ones are listed after the live).
        b.tmux().keys(&tui, &["g", "K"]);
        b.tmux().wait_screen(
            &tui,
            &["-J"],
            "the stop question",
            Duration::from_secs(10),
            |s| s.contains("Stop agent"),
        );
        b.tmux().keys(&tui, &["y"]);
        let gone = poll(Duration::from_secs(15), || {
            ids.iter()
                .find(|id| {
                    !stopped.contains(*id)
                        && b.session(id).is_some_and(|s| s["ended_at"].is_string())
                })
                .cloned()
        })
        .unwrap_or_else(|| panic!("round {round}: no agent ended: {:?}", live_ids(&b)));
        b.tmux().wait_screen(
            &tui,
            &["-J"],
            "the TUI saying the agent stopped",
            Duration::from_secs(15),
            |s| s.contains(&format!("stopped {gone}: its session ended")),
        );
        stopped.push(gone);
    }
    assert!(live_ids(&b).is_empty());
    // Both ignored SIGTERM (an interactive bash does), so SIGKILL ended them.
    for id in &stopped {
        let s = b.session(id).unwrap();
        assert_eq!(s["end_reason"], "killed by SIGKILL", "{s}");
    }
}

#[test]
fn a_message_to_the_operator_is_counted_read_in_the_tui_and_then_marked_read() {
    let mut b = TestBoard::builder().lease("60s").sweep("1s").start();
    let mut one = b.agent("one");
    one.json(&["send", "operator", "the parser is done"]);
    // `board status` as the operator tells of it; `board inbox` would read it.
    let status = b.json(&["status"]);
    assert_eq!(status["inbox"]["unread"], 1, "{status}");
    assert_eq!(status["inbox"]["from"][0], "one", "{status}");
    let text = b.board(&["status"]).ok();
    assert!(
        text.stderr
            .contains("1 unread message (from one): `board inbox` reads them"),
        "{text:?}"
    );

    let tui = tui_window(&mut b);
    let t = b.tmux();
    t.wait_screen(
        tui,
        &["-J"],
        "the count in the header",
        Duration::from_secs(15),
        |s| s.contains("⚑ 1 needs you · i"),
    );
    t.keys(tui, &["i"]);
    t.wait_screen(
        tui,
        &["-J"],
        "the needs-you list",
        Duration::from_secs(10),
        |s| s.contains("1 unread message to you from one"),
    );
    t.keys(tui, &["Enter"]);
    t.wait_screen(
        tui,
        &["-J"],
        "the message",
        Duration::from_secs(10),
        // The dialog opens with the board's answer to `inbox`, so the message is read by then.
        |s| s.contains("Messages to you (now marked read)") && s.contains("the parser is done"),
    );
    let again = b.json(&["inbox"]);
    assert_eq!(again["messages"], serde_json::json!([]), "{again}");
    assert!(b.json(&["status"]).get("inbox").is_none());
}

/// Starts `board tui` in a window `tui` of the test's tmux server.
fn tui_window(b: &mut TestBoard) -> &'static str {
    let root = b.root().to_path_buf();
    let path = crate::harness::path_env();
    let t = b.tmux();
    let command = format!("export PATH='{path}'; NO_COLOR=1 board tui; exec sleep 600");
    let out = t
        .cmd()
        .current_dir(&root)
        .args(["new-window", "-d", "-t", "keepalive", "-n", "tui", &command])
        .output()
        .expect("tmux new-window");
    assert!(out.status.success(), "{out:?}");
    "keepalive:tui"
}

#[test]
fn an_open_question_stays_in_the_banner_through_hooks_until_answered() {
    let mut b = TestBoard::builder().lease("60s").sweep("1s").start();
    let mut w = b.agent("w");
    let tui = tui_window(&mut b);
    w.board(&["wait", "Which store?"]).ok();
    let banner = "w asks: Which store? — A to answer";
    b.tmux().wait_screen(
        tui,
        &["-J"],
        "the question's banner",
        Duration::from_secs(15),
        |s| s.contains(banner) && s.contains("⚑ 1 needs you · i"),
    );
    // Activity of every kind: hooks of each CLI, a renewal, a read.
    for line in [
        "printf '%s' '{\"hook_event_name\":\"PostToolUse\",\"session_id\":\"s1\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"},\"tool_response\":{\"stdout\":\"ok\"}}' | board hook claude PostToolUse",
        "printf '%s' '{\"hook_event_name\":\"Stop\",\"session_id\":\"s1\",\"stop_hook_active\":false}' | board hook claude Stop",
        "board hook shell prompt </dev/null",
        "printf '%s' '{\"hook_event_name\":\"AfterTool\",\"tool_name\":\"run_shell_command\",\"tool_input\":{\"command\":\"ls\"},\"tool_response\":{\"llmContent\":\"ok\"}}' | board hook gemini AfterTool",
        "board renew",
        "board list",
    ] {
        let out = w.sh(line);
        assert_eq!(out.code, 0, "{line}: {out:?}");
    }
    // A task added after them: the screen that shows it was fetched after every hook.
    b.add("Marker after the hooks");
    let screen = b.tmux().wait_screen(
        tui,
        &["-J"],
        "the marker task",
        Duration::from_secs(15),
        |s| s.contains("Marker after the hooks"),
    );
    assert!(screen.contains(banner), "the question went away:\n{screen}");

    b.json(&["answer", "w", "SQLite"]);
    b.tmux().wait_screen(
        tui,
        &["-J"],
        "the banner gone once answered",
        Duration::from_secs(15),
        |s| s.contains("● live") && !s.contains("w asks:") && !s.contains("⚑"),
    );
}
