//! `board up` panes tell the truth: a missing agent command is refused before any pane exists,
//! an agent that fails at start keeps its pane with its last output and exit status, and `board
//! up` again restarts only that agent, under its configured name.
//!
//! Real tmux (a private server per test), real `board run` launchers, real `sh` agents.

use std::time::Duration;

use crate::harness::test_board::{Builder, TestBoard};

use crate::harness::*;
use serde_json::Value;

fn project() -> Builder {
    TestBoard::builder()
        .lease("30s")
        .sweep("10s")
        .liveness("process")
}

const SLEEPER: &str =
    "description = \"sleeps\"\ncommand = [\"sh\", \"-c\", \"echo good is up; exec sleep 300\"]\n";
const FAILER: &str = "description = \"fails at start\"\ncommand = [\"sh\", \"-c\", \"echo 'cannot log in: no credentials' >&2; exit 1\"]\n";

fn agents(entries: &[(&str, &str)]) -> String {
    entries
        .iter()
        .map(|(n, p)| format!("[[agents]]\nname = \"{n}\"\nprofile = \"{p}\"\n"))
        .collect()
}

fn sessions(b: &mut TestBoard) -> Vec<String> {
    b.tmux()
        .run(&["list-sessions", "-F", "#{session_name}"])
        .lines()
        .map(str::to_string)
        .collect()
}

fn pane_of(up: &Value, slot: &str) -> Value {
    up["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["agent_name"] == slot)
        .cloned()
        .unwrap_or_else(|| panic!("no pane for {slot} in {up}"))
}

#[test]
fn up_refuses_a_missing_agent_command_before_any_pane_exists() {
    let mut b = project()
        .config(&agents(&[("good", "sleeper"), ("coder", "ghost")]))
        .unserved();
    b.write_profile("sleeper", SLEEPER);
    b.write_profile(
        "ghost",
        "description = \"not installed\"\ncommand = [\"no-such-agent-cli\", \"--yes\"]\n",
    );
    b.serve();
    let before = sessions(&mut b);
    let out = b.board_json(&["up"]);
    let (code, v) = (out.code, out.json());
    assert_eq!(code, 2, "{v}");
    let msg = v["message"].as_str().unwrap();
    assert!(
        msg.contains("\"coder\"") && msg.contains("no-such-agent-cli") && msg.contains("PATH"),
        "{msg}"
    );
    assert_eq!(v["data"]["agent"], "coder", "{v}");
    assert_eq!(sessions(&mut b), before, "a tmux session was created");
    assert!(b.json(&["agents", "--all"])["agents"]
        .as_array()
        .unwrap()
        .is_empty());

    // A path that is not executable is named too.
    b.write_profile(
        "ghost",
        "description = \"a path\"\ncommand = [\"./bin/agent.sh\"]\n",
    );
    let out = b.board_json(&["up"]);
    let (code, v) = (out.code, out.json());
    assert_eq!(code, 2, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("\"./bin/agent.sh\" is not an executable file"),
        "{v}"
    );
    assert_eq!(sessions(&mut b), before);
}

#[test]
fn a_failed_agent_keeps_its_pane_and_up_restarts_only_it_under_its_name() {
    let mut b = project()
        .config(&agents(&[("good", "sleeper"), ("bad", "failer")]))
        .unserved();
    b.write_profile("sleeper", SLEEPER);
    b.write_profile("failer", FAILER);
    b.serve();
    b.tmux();
    let up = b.json(&["up"]);
    let session = up["session"].as_str().unwrap().to_string();
    let bad = pane_of(&up, "bad");
    let good = pane_of(&up, "good");
    assert_eq!(bad["outcome"], "started");
    assert_eq!(good["outcome"], "started");
    let bad_pane = bad["pane"].as_str().unwrap().to_string();

    // The failed agent's pane stays, with its output, its status and the board's reason.
    let last = b.tmux().wait_screen(
        &bad_pane,
        &["-J"],
        "the agent's end in its pane",
        Duration::from_secs(10),
        |s| s.contains("agent bad exited with status 1; the board says: exited (status 1)"),
    );
    assert!(last.contains("cannot log in: no credentials"), "{last}");
    assert!(last.contains("Enter starts it again"), "{last}");
    let state = b
        .tmux()
        .run(&["display-message", "-p", "-t", &bad_pane, "#{@board_state}"]);
    assert_eq!(state, "ended");
    // The agents window keeps both panes.
    let window = format!("={session}:agents");
    let panes = b
        .tmux()
        .run(&["list-panes", "-t", &window, "-F", "#{pane_id}"]);
    assert_eq!(panes.lines().count(), 2, "{panes}");
    let good_session = b.session("good").expect("good registered");
    assert!(good_session["ended_at"].is_null(), "{good_session}");

    // `board up` again: only the ended agent starts, in its pane, under its configured name.
    let again = b.json(&["up"]);
    assert_eq!(pane_of(&again, "good")["outcome"], "running", "{again}");
    assert_eq!(pane_of(&again, "good")["pid"], good["pid"], "{again}");
    let bad2 = pane_of(&again, "bad");
    assert_eq!(bad2["outcome"], "restarted", "{again}");
    assert_eq!(bad2["pane"], bad_pane.as_str(), "{again}");
    let s = poll(Duration::from_secs(10), || {
        b.session("bad-2").filter(|s| s["ended_at"].is_string())
    })
    .expect("the restarted agent's session");
    assert_eq!(s["name"], "bad", "{s}");
    assert_eq!(s["restarts"], 1, "{s}");
    b.tmux().wait_screen(
        &bad_pane,
        &["-J"],
        "the restarted agent's end in its pane",
        Duration::from_secs(10),
        |s| s.contains("agent bad (session bad-2) exited with status 1"),
    );
    // The healthy agent was never touched.
    let g = b.session("good").unwrap();
    assert!(g["ended_at"].is_null(), "{g}");
    assert_eq!(g["restarts"], 0);
    let human = b.board(&["agents", "--all"]).stdout;
    let line = human
        .lines()
        .find(|l| l.contains("id bad-2 "))
        .unwrap_or_else(|| panic!("{human}"));
    assert!(
        line.starts_with("bad ") && line.contains("restarted once"),
        "{line}"
    );
}
