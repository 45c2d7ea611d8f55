//! The board outlives the agent session that started it: a board autostarted by `board run`
//! itself, or by a command inside the agent (whose launcher is a child subreaper and so adopts
//! the board), is never ended by the launcher's cleanup of the agent's leftovers.

use std::os::unix::net::UnixStream;

use crate::harness::process::running;
use crate::harness::test_board::TestBoard;
use crate::harness::{poll_until, STEP};

#[test]
fn a_board_autostarted_by_board_run_keeps_running_after_the_agent_exits() {
    let b = TestBoard::builder().unserved();
    let socket = b.socket();
    assert!(UnixStream::connect(&socket).is_err(), "no board yet");
    b.board(&["run", "--name", "solo", "--", "sh", "-c", "sleep 0.3"])
        .ok();
    let pid = b
        .board_pid()
        .expect("the board still answers after the agent exited");
    assert!(running(pid));
    let log = std::fs::read_to_string(b.root().join(".board/board.log")).unwrap_or_default();
    assert!(
        !log.contains("SIGTERM") && !log.contains("board stopped"),
        "{log}"
    );
    b.board(&["stop"]).ok();
}

#[test]
fn a_board_autostarted_inside_an_agent_survives_the_launchers_cleanup() {
    let mut board = TestBoard::start();
    let go = board.scratch().join("go");
    let script = format!(
        "while [ ! -f {go} ]; do sleep 0.02; done; board list > /dev/null; sleep 0.2",
        go = go.display()
    );
    let mut run = board.run_agent("worker", &script);
    assert!(poll_until(STEP, || {
        board.json(&["agents"])["agents"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    }));
    board.stop();
    std::fs::write(&go, "").unwrap();
    // The agent's `board list` started a new board, which the launcher (a child subreaper)
    // adopted when `board list` exited; the launcher then exits and cleans up its leftovers.
    assert_eq!(run.wait_launcher(), 0);
    // The launcher has exited, so its cleanup is over: the board must still be there.
    let pid = board
        .board_pid()
        .expect("the autostarted board survived the cleanup");
    assert!(running(pid));
}
