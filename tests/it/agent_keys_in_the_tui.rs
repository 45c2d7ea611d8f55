//! The TUI controls the team: in a real `board up` session (private tmux server), keys sent to
//! the TUI's pane go to an agent's pane (Enter), stop it (K, y), start it again (S) and restart
//! it (R, y). The agent keeps its configured name through it all; its session ids stay unique.

use std::time::Duration;

use serde_json::Value;

use crate::harness::test_board::TestBoard;

use crate::harness::*;

const SLEEPER: &str =
    "description = \"sleeps\"\ncommand = [\"sh\", \"-c\", \"echo worker is up; exec sleep 300\"]\n";

fn pane_in(b: &mut TestBoard, session: &str, window: &str) -> String {
    b.tmux().run(&[
        "list-panes",
        "-t",
        &format!("={session}:{window}"),
        "-F",
        "#{pane_id}",
    ])
}

/// The live session of slot `name`, once there is one other than `not`.
fn live_session(b: &TestBoard, name: &str, not: &str) -> Value {
    poll(Duration::from_secs(10), || {
        b.json(&["agents"])["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name && a["id"] != not && a["pid"].is_i64())
            .cloned()
    })
    .unwrap_or_else(|| panic!("no live session of {name} besides {not:?}"))
}

fn wait_ended(b: &TestBoard, id: &str) -> Value {
    poll(Duration::from_secs(10), || {
        b.session(id).filter(|s| s["ended_at"].is_string())
    })
    .unwrap_or_else(|| panic!("session {id} did not end: {:?}", b.session(id)))
}

#[test]
fn tui_keys_attach_stop_start_and_restart_an_agent() {
    let mut b = TestBoard::builder()
        .lease("30s")
        .sweep("10s")
        .liveness("process")
        .config("[[agents]]\nname = \"w\"\nprofile = \"sleeper\"\n")
        .unserved();
    b.write_profile("sleeper", SLEEPER);
    b.serve();
    b.tmux();
    let up = b.json(&["up"]);
    let session = up["session"].as_str().unwrap().to_string();
    let agent_pane = up["panes"][0]["pane"].as_str().unwrap().to_string();
    let tui = pane_in(&mut b, &session, "board");
    let first = live_session(&b, "w", "");
    assert_eq!(first["id"], "w");
    b.tmux().wait_screen(
        &tui,
        &["-J"],
        "the TUI with agent w",
        Duration::from_secs(10),
        |s| s.contains("● live") && s.lines().any(|l| l.contains(" w ") && l.contains("idle")),
    );

    // Enter on the agents panel brings the agent's pane on screen.
    b.tmux().keys(&tui, &["Tab"]);
    b.tmux().wait_screen(
        &tui,
        &["-J"],
        "the agent keys in the footer",
        Duration::from_secs(10),
        |s| s.contains("K  stop"),
    );
    b.tmux().keys(&tui, &["Enter"]);
    let shown = poll(Duration::from_secs(5), || {
        let v = b.tmux().run(&[
            "display-message",
            "-p",
            "-t",
            &format!("={session}:"),
            "#{window_name} #{pane_id}",
        ]);
        (v == format!("agents {agent_pane}")).then_some(v)
    });
    assert!(
        shown.is_some(),
        "the agent's pane was not brought on screen; the TUI shows:\n{}",
        b.tmux().run(&["capture-pane", "-p", "-t", &tui])
    );
    b.tmux()
        .run(&["select-window", "-t", &format!("={session}:board")]);

    // K asks, y stops it: the session ends, the pane stays and says why.
    b.tmux().keys(&tui, &["K"]);
    b.tmux().wait_screen(
        &tui,
        &["-J"],
        "the stop question",
        Duration::from_secs(10),
        |s| s.contains("Stop agent w?"),
    );
    b.tmux().keys(&tui, &["y"]);
    let ended = wait_ended(&b, "w");
    assert_eq!(ended["end_reason"], "killed by SIGTERM", "{ended}");
    b.tmux().wait_screen(
        &agent_pane,
        &["-J"],
        "the stopped agent's pane",
        Duration::from_secs(10),
        |s| s.contains("agent w was killed by signal 15; the board says: killed by SIGTERM"),
    );

    // S starts it again in its pane, under its name (once the TUI has seen it end).
    b.tmux().wait_screen(
        &tui,
        &["-J"],
        "w gone in the TUI",
        Duration::from_secs(10),
        |s| s.lines().any(|l| l.contains(" w ") && l.contains("gone")),
    );
    b.tmux().keys(&tui, &["S"]);
    let second = live_session(&b, "w", "w");
    assert_eq!(second["id"], "w-2");
    assert_eq!(second["pane"], agent_pane.as_str());
    assert_eq!(second["restarts"], 1, "{second}");

    // R asks, y restarts the running agent: a new session, same name, same pane.
    b.tmux().wait_screen(
        &tui,
        &["-J"],
        "w, restarted, in the TUI",
        Duration::from_secs(10),
        |s| {
            s.lines()
                .any(|l| l.contains(" w ") && l.contains("restarted 1×"))
        },
    );
    b.tmux().keys(&tui, &["R"]);
    b.tmux().wait_screen(
        &tui,
        &["-J"],
        "the restart question",
        Duration::from_secs(10),
        |s| s.contains("Restart agent w?"),
    );
    b.tmux().keys(&tui, &["y"]);
    wait_ended(&b, "w-2");
    let third = live_session(&b, "w", "w-2");
    assert_eq!(third["id"], "w-3");
    assert_eq!(third["pane"], agent_pane.as_str());
    assert_eq!(third["restarts"], 2, "{third}");
    b.tmux().wait_screen(
        &tui,
        &["-J"],
        "the restarted agent in the panel",
        Duration::from_secs(10),
        |s| {
            s.lines()
                .any(|l| l.contains(" w ") && l.contains("restarted 2×"))
        },
    );
    b.tmux().wait_screen(
        &agent_pane,
        &["-J"],
        "the new agent in its pane",
        Duration::from_secs(10),
        |s| s.contains("worker is up"),
    );
}
