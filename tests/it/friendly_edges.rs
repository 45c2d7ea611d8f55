//! The edges a new user meets first: a broken board.toml is told once per change, `list
//! --state` speaks of ready and blocked, claiming a finished task says so, `board run claude`
//! without `--` shows the working line, `board agents` points at `--all`.

use crate::harness::test_board::TestBoard;

use crate::harness::*;
use serde_json::Value;

fn ids(v: &Value) -> Vec<i64> {
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_i64().unwrap())
        .collect()
}

#[test]
fn list_state_accepts_ready_and_blocked() {
    let b = TestBoard::start();
    let first = b.add("first");
    let after = b.json(&["add", "second", "--after", &first.to_string()])["task"]["id"]
        .as_i64()
        .unwrap();
    assert_eq!(ids(&b.json(&["list", "--state", "ready"])), vec![first]);
    assert_eq!(ids(&b.json(&["list", "--state", "blocked"])), vec![after]);
    assert_eq!(
        ids(&b.json(&["list", "--state", "ready", "--state", "blocked"])),
        vec![first, after]
    );
    let bad = b
        .board_json(&["list", "--state", "soon"])
        .expect_code(2)
        .json();
    let msg = bad["message"].as_str().unwrap();
    assert!(msg.contains("ready") && msg.contains("blocked"), "{msg}");
}

#[test]
fn claiming_a_done_or_cancelled_task_says_so() {
    let b = TestBoard::start();
    let done = b.add("finished work");
    let cancelled = b.add("dropped work");
    let mut a = b.agent("worker");
    a.claim(done);
    a.json(&["done", &done.to_string()]);
    b.json(&["cancel", &cancelled.to_string()]);

    let out = a.board(&["claim", &done.to_string()]).expect_code(3);
    assert!(
        out.stderr.contains("already done") && out.stderr.contains("finished by worker"),
        "{out:?}"
    );
    let v = a
        .board_json(&["claim", &done.to_string()])
        .expect_code(3)
        .json();
    assert_eq!(v["data"]["kind"], "no_ready_task", "{v}");
    assert_eq!(v["data"]["state"], "done", "{v}");
    let out = a.board(&["claim", &cancelled.to_string()]).expect_code(3);
    assert!(out.stderr.contains("is cancelled"), "{out:?}");
    // `claim --wait` on a finished task gives up at once instead of waiting out its timeout.
    let out = a.board(&["claim", &done.to_string(), "--wait", "--timeout", "1h"]);
    assert_eq!(out.code, 3, "{out:?}");
}

#[test]
fn run_without_separator_suggests_the_working_line() {
    let b = TestBoard::start();
    let out = b
        .board(&["run", "--name", "c", "claude", "--verbose"])
        .expect_code(2);
    assert!(
        out.stderr
            .contains("board run --name c -- claude --verbose"),
        "{out:?}"
    );
    let v = b.board_json(&["run", "claude"]).expect_code(2).json();
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("board run -- claude"),
        "{v}"
    );
}

#[test]
fn agents_shows_a_just_ended_session_by_name_as_gone() {
    let b = TestBoard::start();
    let out = b.board(&["agents"]).ok();
    assert_eq!(out.stdout.trim(), "no agent sessions");
    let mut a = b.agent("short-lived");
    a.exit_with(0);
    a.wait_launcher();
    let out = b.board(&["agents"]).ok();
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("short-lived"))
        .unwrap_or_else(|| panic!("the last ended session of its name is listed: {out:?}"));
    assert!(row.contains("gone") && row.contains("exited"), "{out:?}");
    assert_eq!(b.json(&["agents"])["ended"], 1);
}

#[test]
fn a_broken_board_toml_is_reported_once_per_change() {
    let b = TestBoard::start();
    let good = std::fs::read_to_string(b.root().join("board.toml")).unwrap();
    let mut a = b.agent("reader");
    std::fs::write(
        b.root().join("board.toml"),
        format!("{good}\n[lease\nduration = \"1s\"\n"),
    )
    .unwrap();
    let count = |s: &str| s.matches("board.toml is invalid").count();
    let first = b.board(&["list"]).ok();
    assert_eq!(count(&first.stderr), 1, "{first:?}");
    assert_eq!(
        first.stderr.trim().lines().count(),
        1,
        "one line: {first:?}"
    );
    for _ in 0..3 {
        let later = b.board(&["list"]).ok();
        assert_eq!(count(&later.stderr), 0, "{later:?}");
        let in_agent = a.board(&["list"]).ok();
        assert_eq!(count(&in_agent.stderr), 0, "{in_agent:?}");
    }
    // `board status` keeps saying it.
    let status = poll(STEP, || {
        let s = b.json(&["status"]);
        s["config_error"].is_string().then_some(s)
    })
    .expect("status reports the broken edit");
    assert!(status["config_error"]
        .as_str()
        .unwrap()
        .contains("board.toml"));
    // The board logs it once, however often clients read the file.
    let refused = |b: &TestBoard| b.log_kind("config").len();
    assert_eq!(refused(&b), 1);

    // Another broken edit is news again; then nothing.
    std::fs::write(
        b.root().join("board.toml"),
        format!("{good}\n[nonsense]\nx = 1\n"),
    )
    .unwrap();
    let second = a.board(&["list"]).ok();
    assert_eq!(count(&second.stderr), 1, "{second:?}");
    assert_eq!(count(&b.board(&["list"]).ok().stderr), 0);
    assert!(poll_until(STEP, || refused(&b) == 2));

    // Fixed: quiet, and `status` clears; breaking it the same way again warns again.
    std::fs::write(b.root().join("board.toml"), &good).unwrap();
    assert_eq!(count(&b.board(&["list"]).ok().stderr), 0);
    assert!(poll_until(STEP, || b.json(&["status"])["config_error"].is_null()));
    std::fs::write(
        b.root().join("board.toml"),
        format!("{good}\n[nonsense]\nx = 1\n"),
    )
    .unwrap();
    assert_eq!(count(&b.board(&["list"]).ok().stderr), 1);
}

#[test]
fn board_up_says_what_the_tmux_session_names_hash_suffix_is_for() {
    let mut b = TestBoard::builder()
        .lease("30s")
        .liveness("process")
        .config("[[agents]]\nname = \"napper\"\nprofile = \"napper\"\n")
        .unserved();
    b.write_profile(
        "napper",
        "description = \"sleeps\"\ncommand = [\"sh\", \"-c\", \"exec sleep 300\"]\n",
    );
    b.serve();
    b.tmux();
    let out = b.board(&["up"]).ok();
    let session = b.json(&["up"])["session"].as_str().unwrap().to_string();
    let hash = session.rsplit_once('-').unwrap().1;
    assert!(
        out.stdout.contains(&format!(
            "`-{hash}` tells it from the session of another project"
        )),
        "{out:?}"
    );
}
