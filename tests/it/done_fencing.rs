//! `done` is idempotent for its holder at the same generation (`already: true` the
//! second time), and a `done` with a stale `--generation` exits 5 and changes nothing.

use crate::harness::{test_board::frozen, test_board::TestBoard};

#[test]
fn done_twice_at_the_same_generation_answers_ok_both_times() {
    let board = TestBoard::start();
    let task = board.add("write the changelog");
    let mut agent = board.agent("writer");
    let generation = agent.claim(task);
    let t = task.to_string();
    let g = generation.to_string();

    let first = agent.json(&["done", &t, "--generation", &g]);
    assert_eq!(first["already"], false);
    assert_eq!(first["generation"], generation);
    assert_eq!(first["task"]["state"], "done");

    let second = agent.json(&["done", &t, "--generation", &g]);
    assert_eq!(second["already"], true, "a repeated done says so");
    assert_eq!(second["generation"], generation);
    assert_eq!(second["task"]["state"], "done");

    // Without --generation too (a retry by a script that did not keep it).
    assert_eq!(agent.json(&["done", &t])["already"], true);

    assert_eq!(board.log_of("done", task).len(), 1, "done once in the log");
    let task_now = board.task(task);
    assert_eq!(task_now["done_by"], agent.id.as_str());
    assert_eq!(task_now["generation"], generation);
}

#[test]
fn done_with_a_stale_generation_is_rejected_and_changes_nothing() {
    let board = TestBoard::start();
    let (task, mut agent) = board.reclaimed("fix the flaky test", "fixer");
    let t = task.to_string();

    let before = board.show(task);
    let stale = agent
        .board_json(&["done", &t, "--generation", "1"])
        .expect_code(5);
    let e = stale.json();
    assert_eq!(e["data"]["kind"], "lapsed");
    assert!(
        e["message"].as_str().unwrap().contains("stale"),
        "the refusal says the generation is stale: {e}"
    );
    let after = board.show(task);
    assert_eq!(
        frozen(&after["task"]),
        frozen(&before["task"]),
        "the task did not change"
    );
    assert_eq!(after["notes"], before["notes"]);
    assert_eq!(after["task"]["state"], "claimed");
    assert_eq!(after["task"]["holder"], agent.id.as_str());
    assert!(board.log_of("done", task).is_empty());
    let rejects = board.log_of("reject", task);
    assert_eq!(
        rejects.len(),
        1,
        "the rejected write is logged: {rejects:?}"
    );
    assert_eq!(rejects[0]["generation"], 1);

    // The current generation still works, and after it the stale one is still refused.
    let done = agent.json(&["done", &t, "--generation", "2"]);
    assert_eq!(done["already"], false);
    agent
        .board(&["done", &t, "--generation", "1"])
        .expect_code(5);
    assert_eq!(board.log_of("done", task).len(), 1);
}
