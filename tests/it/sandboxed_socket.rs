//! A client that the system forbids to connect to the board socket (EACCES/EPERM: an agent's
//! sandbox, or permissions) is told that the sandbox blocks the socket and how to allow it, with
//! exit 8 — never "started a board but it did not answer". The same when Codex's sandbox says it
//! has no network (`CODEX_SANDBOX_NETWORK_DISABLED=1`).

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

use crate::harness::{BOARD, STEP};

use crate::harness::command::{run_within, Out};
use crate::harness::test_board::TestBoard;

fn assert_sandbox_message(out: &Out) {
    assert_eq!(out.code, 8, "{out:?}");
    let v = out.json();
    let msg = v["message"].as_str().unwrap_or_default();
    assert!(msg.contains("sandbox blocks the board socket"), "{out:?}");
    assert!(
        msg.contains("sandbox_workspace_write.network_access=true"),
        "{out:?}"
    );
    assert!(!msg.contains("did not answer"), "{out:?}");
    assert_eq!(v["data"]["kind"], "unavailable", "{out:?}");
}

#[test]
fn a_socket_the_system_refuses_gets_the_sandbox_message() {
    let board = TestBoard::start();
    let data_dir = board.root().join(".board");
    let root_user = nix::unistd::geteuid().is_root();
    let mut cmd;
    if root_user {
        // Root passes every permission check: ask as an unprivileged user instead, who may read
        // the project (so it would try to start a board) but not enter `.board` (mode 0700).
        std::fs::set_permissions(board.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
        cmd = Command::new("setpriv");
        cmd.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            BOARD,
        ]);
    } else {
        std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o000)).unwrap();
        cmd = Command::new(BOARD);
    }
    cmd.current_dir(board.root())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .args(["--json", "status"])
        .stdin(Stdio::null());
    let out = run_within(&mut cmd, STEP);
    if !root_user {
        std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    assert!(out.stdout.contains("Permission denied"), "{out:?}");
    assert_sandbox_message(&out);
    // The board that serves the socket is untouched.
    assert_eq!(board.json(&["status"])["name"], "test");
}

#[test]
fn codex_without_network_gets_the_sandbox_message_and_starts_no_board() {
    let mut board = TestBoard::start();
    board.stop();
    let mut cmd = board.board_cmd(&["--json", "renew"]);
    let out = run_within(cmd.env("CODEX_SANDBOX_NETWORK_DISABLED", "1"), STEP);
    assert_sandbox_message(&out);
    assert!(
        out.stdout.contains("CODEX_SANDBOX_NETWORK_DISABLED=1"),
        "{out:?}"
    );
    assert!(
        std::os::unix::net::UnixStream::connect(board.socket()).is_err(),
        "no board was started"
    );
}
