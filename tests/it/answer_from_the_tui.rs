//! Answering a waiting agent from the TUI (real tmux, private server): the agent runs in a pane
//! and says `board wait`; in the TUI pane, `A`, the answer, Enter. The answer reaches the agent's
//! inbox, its question ends (an `answer` event with the answer, before the agent makes another
//! call), the answer is a `message` event in the log, and it is typed into the agent's pane,
//! where the agent's `read` gets it.

use std::fs;
use std::time::Duration;

use serde_json::Value;

use crate::harness::test_board::TestBoard;

use crate::harness::*;

const ASKER: &str = r#"board wait "deploy to production now?"
IFS= read -r answer
printf '%s' "$answer" > typed.part && mv typed.part typed.txt
board --json inbox > inbox.part && mv inbox.part inbox.json
exec sleep 600
"#;

#[test]
fn an_answer_from_the_tui_reaches_the_inbox_ends_the_wait_and_is_typed_into_the_pane() {
    let mut b = TestBoard::builder().lease("60s").sweep("1s").start();
    fs::write(b.root().join("asker.sh"), ASKER).unwrap();
    let root = b.root().to_path_buf();
    let t = b.tmux();
    let path = crate::harness::path_env();
    let new_window = |name: &str, command: &str| {
        // The panes' shells find `board` on this PATH (the tmux server's own may lack it).
        let command = format!("export PATH='{path}'; {command}");
        let out = t
            .cmd()
            .current_dir(&root)
            .args(["new-window", "-d", "-t", "keepalive", "-n", name, &command])
            .output()
            .expect("tmux new-window");
        assert!(out.status.success(), "{out:?}");
    };
    new_window(
        "agent",
        "board run --name asker -- sh asker.sh; echo \"agent exited with $?\"; exec sleep 600",
    );
    new_window("tui", "NO_COLOR=1 board tui; exec sleep 600");
    let asker = poll(Duration::from_secs(15), || {
        let v = b.json(&["agents"]);
        v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["state"] == "waiting" && a["pane"].is_string())
            .cloned()
    })
    .unwrap_or_else(|| {
        let t = b.tmux();
        panic!(
            "the agent waits, with its pane known:\n{}\n---\n{}",
            t.capture("keepalive:agent", &[]),
            t.capture("keepalive:tui", &[])
        )
    });
    assert_eq!(asker["question"], "deploy to production now?");
    let t = b.tmux();
    t.wait_screen(
        "keepalive:tui",
        &[],
        "the TUI to show the wait",
        Duration::from_secs(15),
        |s| s.contains("asker asks: deploy to production now? — A to answer"),
    );

    t.run(&["send-keys", "-t", "keepalive:tui", "A"]);
    t.wait_screen(
        "keepalive:tui",
        &[],
        "the answer form",
        Duration::from_secs(5),
        |s| s.contains("Answer asker"),
    );
    t.run(&[
        "send-keys",
        "-t",
        "keepalive:tui",
        "-l",
        "yes, after the tests pass",
    ]);
    // Typing into the pane is off by default (a shell would run it); this agent reads it.
    t.run(&["send-keys", "-t", "keepalive:tui", "Tab", "BSpace", "y"]);
    t.run(&["send-keys", "-t", "keepalive:tui", "Enter"]);

    // The pane got it (typed), and the agent then read its inbox.
    let typed = poll(Duration::from_secs(10), || {
        fs::read_to_string(root.join("typed.txt")).ok()
    })
    .unwrap_or_else(|| {
        panic!(
            "nothing typed into the agent's pane:\n{}",
            t.capture("keepalive:agent", &[])
        )
    });
    assert_eq!(typed, "yes, after the tests pass");
    let inbox: Value = poll(Duration::from_secs(10), || {
        fs::read_to_string(root.join("inbox.json"))
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
    })
    .expect("the agent read its inbox");
    let m = &inbox["messages"][0];
    assert_eq!(m["text"], "yes, after the tests pass", "{inbox}");
    assert_eq!(m["from"], "operator");
    assert_eq!(m["answer"], true);

    // The wait ended with the answer (not with the agent's later call), and the log has it.
    let log = b.json(&["log", "--limit", "1000"]);
    let events = log["events"].as_array().unwrap();
    let message = events
        .iter()
        .position(|e| e["kind"] == "message" && e["agent"] == "asker")
        .expect("a message event");
    assert!(events[message]["reason"]
        .as_str()
        .unwrap()
        .contains("operator → asker: yes, after the tests pass"));
    let answered = events
        .iter()
        .position(|e| e["kind"] == "answer" && e["agent"] == "asker")
        .expect("an answer event");
    assert_eq!(events[answered]["reason"], "yes, after the tests pass");
    assert!(answered > message);
    let a = b.session("asker").unwrap();
    assert!(a["question"].is_null(), "{a}");
}
