//! A human in a shell keeps a claim while reading: a `bash -i` pane (real tmux, private server)
//! holding a claim with a 10 s lease, receiving a keystroke every 3 s and making no board call,
//! keeps the claim for 60 s; with no input, a warning shows in the pane and in the TUI before
//! the claim lapses.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::test_board::TestBoard;

use crate::harness::*;

/// This test's private tmux server (the one `TestBoard::tmux` started), by its socket folder.
#[test]
fn typing_in_the_pane_keeps_the_claim_and_silence_is_warned_before_the_lapse() {
    let mut b = TestBoard::builder()
        .lease("10s")
        .sweep("1s")
        .liveness("activity")
        .start();
    b.add_tasks(1);
    let root = b.root().to_path_buf();
    let path = crate::harness::path_env();
    let t = b.tmux().share();
    let new_window = |name: &str, command: &str| {
        let command = format!("export PATH='{path}'; cd '{}'; {command}", root.display());
        t.run(&["new-window", "-d", "-t", "keepalive", "-n", name, &command]);
    };
    new_window(
        "human",
        "PS1='$ ' board run --name human -- bash --norc --noprofile -i",
    );
    new_window("tui", "NO_COLOR=1 board tui; exec sleep 600");
    let pane = "keepalive:human";
    t.wait_screen(
        pane,
        &["-J"],
        "a shell prompt",
        Duration::from_secs(15),
        |s| s.contains("$ "),
    );
    t.run(&["send-keys", "-t", pane, "-l", "board claim 1"]);
    t.run(&["send-keys", "-t", pane, "Enter"]);
    let claimed = poll(Duration::from_secs(10), || {
        let task = b.show(1)["task"].clone();
        (task["holder"] == "human").then_some(task)
    })
    .unwrap_or_else(|| panic!("the human did not claim #1:\n{}", t.capture(pane, &["-J"])));
    let generation = claimed["generation"].clone();

    // 60 s of reading: a keystroke every 3 s, no board call. The claim never changes hands.
    let start = Instant::now();
    let mut next_key = start;
    while start.elapsed() < Duration::from_secs(60) {
        if Instant::now() >= next_key {
            t.run(&["send-keys", "-t", pane, "-l", "x"]);
            next_key += Duration::from_secs(3);
        }
        let task = b.show(1)["task"].clone();
        assert_eq!(
            (task["holder"].clone(), task["generation"].clone()),
            (Value::from("human"), generation.clone()),
            "the claim was lost after {:?} of typing: {task}",
            start.elapsed()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(
        !b.log()
            .iter()
            .any(|e| e["kind"] == "lapse" || e["kind"] == "warn"),
        "no lapse and no warning while typing"
    );
    // Clear the typed line, then stop typing: warned in the pane and in the TUI, then lapsed.
    t.run(&["send-keys", "-t", pane, "C-u"]);
    t.wait_screen(
        pane,
        &["-J"],
        "the warning in the pane",
        Duration::from_secs(15),
        |s| s.contains("[board] your claim on task #1 lapses in"),
    );
    let still_held = b.show(1)["task"].clone();
    assert_eq!(
        still_held["holder"], "human",
        "warned before the lapse: {still_held}"
    );
    t.wait_screen(
        "keepalive:tui",
        &["-J"],
        "the warning in the TUI",
        Duration::from_secs(5),
        |s| s.contains("warn") && s.contains("lapses in"),
    );
    let lapsed = poll(Duration::from_secs(15), || {
        let task = b.show(1)["task"].clone();
        task["holder"].is_null().then_some(task)
    });
    assert!(lapsed.is_some(), "the claim did not lapse without input");
    let log = b.log();
    let warn = log
        .iter()
        .position(|e| e["kind"] == "warn" && e["task"] == 1);
    let lapse = log
        .iter()
        .position(|e| e["kind"] == "lapse" && e["task"] == 1);
    assert!(
        matches!((warn, lapse), (Some(w), Some(l)) if w < l),
        "{log:?}"
    );
}
