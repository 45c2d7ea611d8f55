//! Clients never hang: every wait for the board's answer has a deadline (`[client] timeout`,
//! `BOARD_TIMEOUT`, default 5 s). A board that accepts connections but never answers (here:
//! SIGSTOPped) makes a command exit 8 within that deadline, naming the board's pid and socket;
//! `board json` answers the line with that error instead of waiting.

use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use crate::harness::command::{run_with_input, run_within};
use crate::harness::process::*;
use crate::harness::test_board::TestBoard;
use crate::harness::*;

/// SIGCONTs the board when the test ends, however it ends (the harness then stops it).
struct Resume(i32);

impl Drop for Resume {
    fn drop(&mut self) {
        let _ = kill(Pid::from_raw(self.0), Signal::SIGCONT);
    }
}

/// A board (with `client` as extra board.toml sections) that holds one task and is stopped
/// with SIGSTOP; returns it and its pid.
fn stopped_board(client: &str) -> (TestBoard, i32) {
    let b = TestBoard::builder()
        .lease("60s")
        .sweep("1s")
        .config(client)
        .start();
    let pid = b.serve_pid().unwrap();
    b.json(&["add", "a task"]);
    kill(Pid::from_raw(pid), Signal::SIGSTOP).unwrap();
    assert!(
        poll_until(Duration::from_secs(5), || proc_state(pid) == Some('T')),
        "the board did not stop"
    );
    (b, pid)
}

/// Runs `cmd` and returns (exit code, stdout, stderr, how long it took); fails the test if it
/// is still running after `limit`.
fn timed(mut cmd: std::process::Command, limit: Duration) -> (i32, String, String, Duration) {
    let t0 = Instant::now();
    let out = run_within(&mut cmd, limit);
    (out.code, out.stdout, out.stderr, t0.elapsed())
}

#[test]
fn a_stopped_board_makes_a_command_exit_8_naming_its_pid_and_socket() {
    let (b, pid) = stopped_board("");
    let _resume = Resume(pid);
    let socket = b.socket().display().to_string();
    let mut cmd = b.board_cmd(&["list"]);
    cmd.env("BOARD_TIMEOUT", "1s");
    let (code, _, err, took) = timed(cmd, Duration::from_secs(20));
    println!("`board list` on a stopped board: exit {code} after {took:?}");
    assert_eq!(code, 8, "{err}");
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    assert!(err.contains(&socket), "{err}");
    assert!(err.contains("did not answer within 1s"), "{err}");
    assert!(took < Duration::from_secs(10), "took {took:?}");

    // A write too, with the JSON error naming them as data.
    let mut cmd = b.board_cmd(&["--json", "add", "another"]);
    cmd.env("BOARD_TIMEOUT", "1s");
    let (code, out, _, took) = timed(cmd, Duration::from_secs(20));
    assert_eq!(code, 8, "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["data"]["kind"], "unavailable", "{v}");
    assert_eq!(v["data"]["pid"], pid, "{v}");
    assert_eq!(v["data"]["socket"], socket.as_str(), "{v}");
    assert_eq!(v["data"]["answer_timeout_ms"], 1000, "{v}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn the_client_timeout_of_board_toml_bounds_the_wait() {
    let (b, pid) = stopped_board("[client]\ntimeout = \"300ms\"");
    let _resume = Resume(pid);
    let (code, _, err, took) = timed(b.board_cmd(&["show", "1"]), Duration::from_secs(20));
    println!("`board show 1` with [client] timeout = 300ms: exit {code} after {took:?}");
    assert_eq!(code, 8, "{err}");
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    assert!(err.contains("within 300ms"), "{err}");
    // Without BOARD_TIMEOUT or the file's setting: the default, a few seconds.
    b.write_config(&TestBoard::builder().config_text());
    let (code, _, err, took) = timed(b.board_cmd(&["status"]), Duration::from_secs(30));
    println!("`board status` with the default timeout: exit {code} after {took:?}");
    assert_eq!(code, 8, "{err}");
    assert!(err.contains("within 5s"), "{err}");
}

#[test]
fn board_json_answers_a_line_with_the_timeout_error() {
    let (b, pid) = stopped_board("");
    let _resume = Resume(pid);
    let mut cmd = b.board_cmd(&["json"]);
    let t0 = Instant::now();
    let out = run_with_input(
        cmd.env("BOARD_TIMEOUT", "1s"),
        b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"add\",\"params\":{\"title\":\"t\"}}\n",
        Duration::from_secs(20),
    );
    let took = t0.elapsed();
    let line: Value = serde_json::from_str(&out.stdout).unwrap();
    println!("`board json` on a stopped board answered after {took:?}: {line}");
    assert_eq!(line["id"], 7, "{line}");
    assert_eq!(line["error"]["data"]["kind"], "unavailable", "{line}");
    assert_eq!(line["error"]["data"]["pid"], pid, "{line}");
    // The write's op_id, added by `board json`, so the caller can ask again with it.
    assert_eq!(
        line["error"]["data"]["op_id"].as_str().map(str::len),
        Some(32),
        "{line}"
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
}
