//! `board.toml` edits apply while the board runs; a broken edit is reported and
//! changes nothing.

use std::time::Duration;

use crate::harness::agent::Agent;
use crate::harness::command::*;
use crate::harness::process::*;
use crate::harness::test_board::{Builder, TestBoard};

use crate::harness::*;
use serde_json::Value;

/// A board with a `duration` lease, a 100 ms sweep and process liveness.
fn lease(duration: &str) -> Builder {
    TestBoard::builder()
        .lease(duration)
        .sweep("100ms")
        .liveness("process")
}

/// Starts an agent that claims `task` and keeps the answer in `NAME.json`; returns the answer.
/// The launcher finds the board through `BOARD_SOCKET` (`board.toml` may be broken).
fn claim_in_agent(b: &TestBoard, name: &str, task: i64) -> (Agent, Value) {
    let a = b.run_agent_with(
        name,
        &format!(
            "board --json claim {task} > {name}.tmp && mv {name}.tmp {name}.json; exec sleep 300"
        ),
        &[],
        &[("BOARD_SOCKET", &b.socket())],
    );
    let v = poll(Duration::from_secs(10), || {
        std::fs::read_to_string(b.root().join(format!("{name}.json")))
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
    })
    .unwrap_or_else(|| panic!("{name} did not claim task {task}"));
    assert_eq!(v["task"]["id"], task, "{v}");
    (a, v)
}

#[test]
fn lease_edits_apply_without_restart_and_a_broken_edit_keeps_the_old_values() {
    let mut b = lease("120s").unserved();
    let pid = b.serve();
    b.add_tasks(3);
    let status = b.json(&["status"]);
    assert_eq!(status["lease"]["duration_ms"], 120_000);
    let (_a1, c1) = claim_in_agent(&b, "before", 1);
    assert!(c1["expires_in_ms"].as_i64().unwrap() > 100_000, "{c1}");

    b.write_config(&lease("2s").config_text());
    let applied = poll(Duration::from_secs(5), || {
        let s = b.json(&["status"]);
        (s["lease"]["duration_ms"] == 2000).then_some(s)
    })
    .expect("the edit took effect without a restart");
    assert_eq!(applied["pid"], pid, "same board process");
    assert!(applied["config_error"].is_null());
    let (_a2, c2) = claim_in_agent(&b, "after", 2);
    let left = c2["expires_in_ms"].as_i64().unwrap();
    assert!(
        left > 0 && left <= 2000,
        "a new claim gets the new lease: {c2}"
    );

    // A syntax error: the board keeps running with the previous settings and says so.
    std::fs::write(
        b.root().join("board.toml"),
        "[lease\nduration = \"1s\"\nsweep = \"100ms\"\n",
    )
    .unwrap();
    let broken = poll(Duration::from_secs(5), || {
        let s = b.call("status", serde_json::json!({})).unwrap();
        s["config_error"].is_string().then_some(s)
    })
    .expect("status reports the broken edit");
    println!("config_error: {}", broken["config_error"]);
    assert_eq!(broken["pid"], pid, "the board kept running");
    assert_eq!(
        broken["lease"]["duration_ms"], 2000,
        "old values stay in force"
    );
    assert_eq!(broken["lease"]["sweep_ms"], 100);
    assert!(broken["config_error"]
        .as_str()
        .unwrap()
        .contains("board.toml"));
    assert!(b.serve_pid().is_some_and(running));
    // The board read the broken file once, not over and over (its own reads of the file, and
    // every client command's, are no edits).
    let refusals = || {
        std::fs::read_to_string(b.root().join(".board/board.log"))
            .unwrap()
            .matches("board.toml edit refused")
            .count()
    };
    let mut observed = Vec::new();
    for _ in 0..5 {
        b.board(&["status"]); // a client reading board.toml
        std::thread::sleep(Duration::from_millis(200));
        observed.push(refusals());
    }
    assert!(
        observed[0] <= 2 && observed.iter().all(|&n| n == observed[0]),
        "the broken board.toml was re-read without an edit: refusals logged {observed:?}"
    );

    // Agents already under the board keep working with the old values.
    let (_a3, c3) = claim_in_agent(&b, "during", 3);
    let left = c3["expires_in_ms"].as_i64().unwrap();
    assert!(left > 0 && left <= 2000, "{c3}");

    // A valid edit clears the error.
    b.write_config(&lease("3s").config_text());
    let fixed = poll(Duration::from_secs(5), || {
        let s = b.json(&["status"]);
        (s["lease"]["duration_ms"] == 3000).then_some(s)
    })
    .expect("the fixed file is applied");
    assert!(fixed["config_error"].is_null(), "{fixed}");
}

#[test]
fn status_says_when_board_toml_is_broken() {
    let mut b = lease("120s").unserved();
    b.serve();
    std::fs::write(b.root().join("board.toml"), "[lease]\nduration = 5\n").unwrap();
    let shown = poll(Duration::from_secs(5), || {
        // The CLI itself cannot read the broken file, so point it at the socket.
        let (ok, text) = status_by_socket(&b);
        (ok && text.contains("CONFIG ERROR")).then_some(text)
    })
    .expect("`board status` shows the error");
    println!("{shown}");
    assert!(shown.contains("previous settings in force"), "{shown}");
    let s = b.call("status", serde_json::json!({})).unwrap();
    assert_eq!(s["lease"]["duration_ms"], 120_000);
}

#[test]
fn with_board_toml_broken_and_no_board_a_client_fails_at_once() {
    let b = lease("120s").unserved();
    b.write_config("[lease\n");
    // The client starts a board (autostart), which refuses the broken file and exits: the
    // client says what is wrong in the file (bad input: exit 2), instead of waiting out its
    // 5 s connect deadline or starting boards that would refuse it too.
    let started = std::time::Instant::now();
    let out = b.board_json(&["ready"]);
    let (code, v) = (out.code, out.json());
    let took = started.elapsed();
    assert_eq!(code, 2, "{v}");
    assert_eq!(v["data"]["kind"], "usage", "{v}");
    let message = v["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("board.toml is invalid") && message.contains("line 1"),
        "the error names the file and the place: {v}"
    );
    assert!(
        took < Duration::from_secs(4),
        "the client waited {took:?} for a board that had already exited: {v}"
    );
}

#[test]
fn a_five_mib_broken_line_is_quoted_in_at_most_two_hundred_characters() {
    let mut b = lease("120s").unserved();
    b.serve();
    let log = b.root().join(".board/board.log");
    let log_before = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    let huge = format!("{}\n", "\x1b]0;x".repeat(1024 * 1024));
    b.write_config(&format!("{}{huge}", lease("120s").config_text()));
    let status = poll(Duration::from_secs(5), || {
        let (_, text) = status_by_socket(&b);
        text.contains("CONFIG ERROR").then_some(text)
    })
    .expect("`board status` shows the error");
    let error_line = status
        .lines()
        .find(|l| l.contains("is invalid"))
        .unwrap_or_else(|| panic!("no error line in {status}"));
    assert!(error_line.chars().count() <= 400, "{error_line}");
    assert!(!status.contains('\x1b'), "an escape reached the terminal");
    // An agent's command warns once, briefly.
    let out = b.board_cmd(&["list"]).output().unwrap();
    assert!(
        out.stderr.len() < 600,
        "{} bytes on stderr",
        out.stderr.len()
    );
    let grown = std::fs::metadata(&log).unwrap().len() - log_before;
    assert!(grown < 16 * 1024, "the log grew by {grown} bytes");
    // A board started on the broken file says why in a line, not in 5 MiB.
    let out = b.board(&["serve"]);
    assert!(!out.success());
    let said = &out.stderr;
    assert!(said.contains("is invalid"), "{said}");
    assert!(
        out.stderr.len() < 600,
        "{} bytes from board serve",
        out.stderr.len()
    );
}

/// `board status` pointed at the socket (the CLI itself may not be able to read a broken
/// board.toml): whether it succeeded, and what it printed.
fn status_by_socket(b: &TestBoard) -> (bool, String) {
    let out = run_within(
        b.board_cmd(&["status"]).env("BOARD_SOCKET", b.socket()),
        STEP,
    );
    (out.success(), out.stdout)
}

#[test]
fn with_board_toml_broken_and_no_board_every_command_says_one_thing_and_exits_2() {
    let b = lease("120s").unserved();
    b.write_config("[lease\n");
    for args in [&["list"][..], &["up"][..]] {
        let out = b.board(args);
        assert_eq!(out.code, 2, "board {args:?}: {out:?}");
        assert!(
            out.stderr.contains("cannot start") && out.stderr.contains("is invalid"),
            "board {args:?} names the file's problem: {out:?}"
        );
        assert!(
            !out.stderr.contains("keeps its previous settings"),
            "no running board keeps anything: {out:?}"
        );
    }
}
