//! The board outlives the agent session that started it: a board autostarted by `board run`
//! itself, or by a command inside the agent (whose launcher is a child subreaper and so adopts
//! the board), is never ended by the launcher's cleanup of the agent's leftovers.

use serde_json::json;
use std::os::unix::net::UnixStream;
use std::process::Command;

use crate::harness::{exit_code, poll_until, wait_child, BOARD, STEP};

use crate::harness::driven::{run_board, TestBoard};

fn board_pid(socket: &std::path::Path) -> Option<i64> {
    let mut rpc = crate::harness::driven::Rpc::connect(socket).ok()?;
    rpc.result("hello", json!({}))["pid"].as_i64()
}

fn alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| !r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

#[test]
fn a_board_autostarted_by_board_run_keeps_running_after_the_agent_exits() {
    let dir = tempfile::Builder::new()
        .prefix("board-test-")
        .tempdir()
        .unwrap();
    run_board(dir.path(), &["init", "--name", "solo"]).ok();
    let socket = dir.path().join(".board/board.sock");
    assert!(UnixStream::connect(&socket).is_err(), "no board yet");
    let mut run = Command::new(BOARD)
        .current_dir(dir.path())
        .env_remove("BOARD_SOCKET")
        .env_remove("BOARD_AGENT")
        .env_remove("BOARD_TOKEN")
        .args(["run", "--name", "solo", "--", "sh", "-c", "sleep 0.3"])
        .spawn()
        .unwrap();
    let st = wait_child(&mut run, STEP).expect("board run exits");
    assert_eq!(exit_code(st), 0);
    let pid = board_pid(&socket).expect("the board still answers after the agent exited");
    assert!(alive(pid));
    let log = std::fs::read_to_string(dir.path().join(".board/board.log")).unwrap_or_default();
    assert!(
        !log.contains("SIGTERM") && !log.contains("board stopped"),
        "{log}"
    );
    run_board(dir.path(), &["stop"]).ok();
}

#[test]
fn a_board_autostarted_inside_an_agent_survives_the_launchers_cleanup() {
    let mut board = TestBoard::start();
    let go = board.scratch().join("go");
    let script = format!(
        "while [ ! -f {go} ]; do sleep 0.02; done; board list > /dev/null; sleep 0.2",
        go = go.display()
    );
    let mut run = board.spawn_run("worker", &script, &[]);
    assert!(poll_until(STEP, || {
        board.json(&["agents"])["agents"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    }));
    board.stop();
    std::fs::write(&go, "").unwrap();
    // The agent's `board list` started a new board, which the launcher (a child subreaper)
    // adopted when `board list` exited; the launcher then exits and cleans up its leftovers.
    let st = wait_child(&mut run, STEP).expect("board run exits");
    assert_eq!(exit_code(st), 0);
    // The launcher has exited, so its cleanup is over: the board must still be there.
    let pid = board_pid(&board.socket()).expect("the autostarted board survived the cleanup");
    assert!(alive(pid));
}
