//! `board reopen`: a done or cancelled task is open again, and the next claim of it is at a
//! higher generation, so the holder that finished it first can no longer write to it. A task
//! that is not finished is refused, naming its state, and nothing changes.

use crate::harness::{test_board::frozen, test_board::TestBoard};

#[test]
fn a_reopened_task_is_claimed_again_at_a_new_generation_that_fences_its_first_holder() {
    let board = TestBoard::start();
    let task = board.add("migrate the settings file");
    let t = task.to_string();
    let mut first = board.agent("first");
    let g1 = first.claim(task);
    first.json(&["done", &t, "--generation", &g1.to_string()]);

    let reopened = board.json(&["reopen", &t]);
    assert_eq!(reopened["task"]["state"], "open", "{reopened}");
    assert_eq!(reopened["task"]["ready"], true, "{reopened}");
    assert!(reopened["task"]["done_by"].is_null(), "{reopened}");
    assert_eq!(reopened["task"]["generation"], g1, "the generation is kept");
    let edits = board.log_of("edit", task);
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert_eq!(edits[0]["reason"], "reopened");

    let mut second = board.agent("second");
    let g2 = second.claim(task);
    assert!(
        g2 > g1,
        "the next claim is at a higher generation: {g2} after {g1}"
    );
    first
        .board(&["done", &t, "--generation", &g1.to_string()])
        .expect_code(5);
    let done = second.json(&["done", &t, "--generation", &g2.to_string()]);
    assert_eq!(done["task"]["state"], "done");
    assert_eq!(done["task"]["done_by"], second.id.as_str());
}

#[test]
fn a_cancelled_task_reopens_and_an_unfinished_one_is_refused_unchanged() {
    let board = TestBoard::start();
    let task = board.add("drop the old endpoint");
    let t = task.to_string();

    let before = board.show(task);
    let refused = board.board_json(&["reopen", &t]).expect_code(4).json();
    assert_eq!(refused["data"]["kind"], "conflict");
    assert_eq!(refused["data"]["state"], "open");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("only done or cancelled"),
        "{refused}"
    );
    assert_eq!(frozen(&board.show(task)["task"]), frozen(&before["task"]));
    assert!(board.log_of("edit", task).is_empty());

    board.json(&["cancel", &t]);
    assert_eq!(board.json(&["reopen", &t])["task"]["ready"], true);
    board.board_json(&["reopen", "999"]).expect_code(6);
}
