//! `board demo` exits 0, and its summary reports every task done exactly once, one
//! expulsion, and the paused agent's late writes rejected (the fence). The board's own log,
//! read back afterwards, agrees with the summary.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::harness::test_board::TestBoard;

#[test]
fn the_demo_finishes_every_task_once_with_one_expulsion() {
    let mut board = TestBoard::builder().bare().unserved();
    let dir = board.root().to_str().unwrap().to_string();
    let demo = board
        .board_within(&["demo", "--dir", &dir], Duration::from_secs(90))
        .ok();
    let summary = demo
        .stdout
        .split_once("\nsummary after")
        .unwrap_or_else(|| panic!("no summary:\n{demo:?}"))
        .1;
    let line = |label: &str| {
        summary
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} line in the summary:\n{summary}"))
            .to_string()
    };
    let tasks_done = line("tasks done:");
    let (done, total) = tasks_done
        .split_whitespace()
        .nth(2)
        .and_then(|f| f.split_once('/'))
        .expect("tasks done: N/M");
    assert_eq!(done, total, "{tasks_done}");
    assert!(tasks_done.ends_with('✓'), "{tasks_done}");
    assert!(line("each done once:").contains("yes ✓"), "{summary}");
    assert!(
        line("expulsions:").split_whitespace().nth(1) == Some("1"),
        "{summary}"
    );
    assert!(
        line("expelled task finished by another agent:").contains("yes ✓"),
        "{summary}"
    );
    // The fence: one agent was paused past its lease, another took its task, and the paused
    // one's late writes were rejected.
    assert!(line("paused past its lease:").ends_with('✓'), "{summary}");
    let stale = line("rejected stale writes of the paused agent:");
    assert!(stale.ends_with('✓'), "{summary}");
    let n: usize = stale
        .split_whitespace()
        .rev()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(n >= 1, "{stale}");
    assert!(summary.contains("demo OK"), "{summary}");

    // The demo stopped its board; start one on the same directory and read the record.
    board.serve();
    let tasks = board.json(&["list"])["tasks"].as_array().unwrap().clone();
    assert_eq!(tasks.len().to_string(), total);
    assert!(tasks.iter().all(|t| t["state"] == "done"), "{tasks:?}");
    let events = board.log();
    let mut done_per_task = BTreeMap::new();
    for e in events.iter().filter(|e| e["kind"] == "done") {
        *done_per_task
            .entry(e["task"].as_i64().unwrap())
            .or_insert(0) += 1;
    }
    assert_eq!(done_per_task.len(), tasks.len(), "{done_per_task:?}");
    assert!(done_per_task.values().all(|n| *n == 1), "{done_per_task:?}");
    let expels: Vec<_> = events.iter().filter(|e| e["kind"] == "expel").collect();
    assert_eq!(expels.len(), 1, "{expels:?}");
}
