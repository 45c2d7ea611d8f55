//! `board demo` exits 0, and its summary reports every task done exactly once, one
//! expulsion, and the paused agent's late writes rejected (the fence). The board's own log,
//! read back afterwards, agrees with the summary. Its ending, in the git repository it leaves in
//! its directory: a reviewed commit was accepted and landed on `main` with its fence trailers,
//! and a paused agent's stale commit was refused at land (exit 5) and never reached `main`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::harness::test_board::TestBoard;

#[test]
fn the_demo_finishes_every_task_once_with_one_expulsion_then_lands_a_reviewed_commit_and_refuses_a_stale_one(
) {
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
    let tasks_done = line("backlog done:");
    let (done, total) = tasks_done
        .split_whitespace()
        .nth(2)
        .and_then(|f| f.split_once('/'))
        .expect("backlog done: N/M");
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

    let (landed_task, stale_task) = ending_in_summary(summary, &demo.stdout);

    // The demo stopped its board; start one on the same directory and read the record.
    board.serve();
    let all = board.json(&["list"])["tasks"].as_array().unwrap().clone();
    let (tasks, ending): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|t| ![landed_task, stale_task].contains(&t["id"].as_i64().unwrap()));
    assert_eq!(tasks.len().to_string(), total);
    assert!(tasks.iter().all(|t| t["state"] == "done"), "{tasks:?}");
    let events = board.log();
    let mut done_per_task = BTreeMap::new();
    let backlog = |e: &&Value| {
        e["task"]
            .as_i64()
            .is_some_and(|t| t < landed_task.min(stale_task))
    };
    for e in events
        .iter()
        .filter(backlog)
        .filter(|e| e["kind"] == "done")
    {
        *done_per_task
            .entry(e["task"].as_i64().unwrap())
            .or_insert(0) += 1;
    }
    assert_eq!(done_per_task.len(), tasks.len(), "{done_per_task:?}");
    assert!(done_per_task.values().all(|n| *n == 1), "{done_per_task:?}");
    let expels: Vec<_> = events.iter().filter(|e| e["kind"] == "expel").collect();
    assert_eq!(expels.len(), 1, "{expels:?}");

    the_ending_left_main_with_the_reviewed_commit_only(&board, &ending, &events, stale_task);
}

/// The ending's summary lines hold and the demo showed both accepts with their exit codes;
/// (the task that landed, the stale task).
fn ending_in_summary(summary: &str, stdout: &str) -> (i64, i64) {
    let line = |label: &str| {
        summary
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} line in the summary:\n{summary}"))
            .to_string()
    };
    let task_of = |l: &str| -> i64 {
        l.split_once('#')
            .and_then(|(_, r)| r.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no task in {l:?}"))
    };
    let landed = line("reviewed, accepted and landed on main:");
    assert!(landed.ends_with('✓'), "{summary}");
    let stale = line("stale commit refused at land:");
    assert!(stale.contains("main unchanged: yes ✓"), "{summary}");
    let late = line("late done of the paused agent rejected by generation:");
    assert!(late.ends_with("yes ✓"), "{summary}");
    let (landed, stale) = (task_of(&landed), task_of(&stale));
    for (task, code) in [(landed, 0), (stale, 5)] {
        assert!(
            stdout.contains(&format!("board accept {task}: exit {code}")),
            "{stdout}"
        );
    }
    (landed, stale)
}

/// In the repository the demo left: `main` has the accepted commit with its trailers, and
/// neither the paused agent's commit nor the one built on it; the stale task stays in review,
/// and the paused agent's late done was rejected.
fn the_ending_left_main_with_the_reviewed_commit_only(
    board: &TestBoard,
    ending: &[Value],
    events: &[Value],
    stale_task: i64,
) {
    let state = |id: i64| {
        ending
            .iter()
            .find(|t| t["id"] == id)
            .map(|t| t["state"].clone())
    };
    let landed = ending.iter().find(|t| t["id"] != stale_task).unwrap();
    assert_eq!(landed["state"], "done", "{landed}");
    assert_eq!(state(stale_task), Some(Value::from("review")), "{ending:?}");
    let commit = landed["commit"].as_str().expect("the landed task's commit");
    let on_main = |c: &str| {
        board
            .git_cmd()
            .args(["merge-base", "--is-ancestor", c, "main"])
            .status()
            .unwrap()
            .success()
    };
    assert!(on_main(commit), "{landed}");
    let message = board.git(&["log", "-1", "--format=%B", commit]);
    let id = landed["id"].as_i64().unwrap();
    assert!(
        message.contains(&format!("Board-Task: {id}")) && message.contains("Board-Generation: 1"),
        "{message}"
    );
    assert_eq!(
        landed["landed"].as_str(),
        Some(board.git(&["rev-parse", "main"]).trim()),
        "{landed}"
    );
    for agent in ["agent-4", "agent-5"] {
        let c = board.git(&["rev-parse", &format!("board/{agent}")]);
        assert!(!on_main(c.trim()), "{agent}'s commit reached main");
    }
    let a_commit = board.git(&["rev-parse", "board/agent-4"]);
    let a_message = board.git(&["log", "-1", "--format=%B", a_commit.trim()]);
    assert!(
        a_message.contains(&format!("Board-Task: {stale_task}"))
            && a_message.contains("Board-Generation: 1"),
        "{a_message}"
    );
    let late = events
        .iter()
        .any(|e| e["kind"] == "reject" && e["task"] == stale_task && e["agent"] == "agent-4");
    assert!(late, "the paused agent's late done was not rejected");
}
