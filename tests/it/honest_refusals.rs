//! Honest answers about claims: claiming your own task again is ok (`already`), an agent that
//! lost several claims is told every one on its next call, every `lapsed` error says where the
//! task stands now, and a force-release at a stale generation changes nothing.

use std::time::Duration;

use crate::harness::poll_until;

use crate::harness::test_board::TestBoard;

#[test]
fn claiming_a_task_you_hold_answers_already_with_the_same_generation() {
    let board = TestBoard::start();
    let task = board.add("write the parser");
    let mut a = board.agent("claude");
    let first = a.claim(task);
    let again = a.json(&["claim", &task.to_string()]);
    assert_eq!(again["already"], true, "{again}");
    assert_eq!(again["generation"], first);
    let human = a.board(&["claim", &task.to_string()]).ok();
    assert!(human.stdout.contains("already hold"), "{human:?}");
    assert_eq!(
        board.log_of("grant", task).len(),
        1,
        "nothing new was granted"
    );
}

#[test]
fn an_agent_that_lost_two_claims_is_told_both_on_its_next_call() {
    let board = TestBoard::builder().lease("1s").sweep("100ms").start();
    let one = board.add("one");
    let two = board.add("two");
    let mut a = board.agent("slow");
    a.claim(one);
    a.claim(two);
    // Silent (blocked in `read`, no CPU) past its lease: both claims lapse.
    assert!(poll_until(Duration::from_secs(10), || {
        board.log_of("lapse", one).len() == 1 && board.log_of("lapse", two).len() == 1
    }));
    let v = a.json(&["list"]);
    let lost: Vec<(i64, String)> = v["lost"]
        .as_array()
        .unwrap_or_else(|| panic!("no `lost` in {v}"))
        .iter()
        .map(|l| {
            (
                l["task"].as_i64().unwrap(),
                l["end"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(lost, vec![(one, "lapse".into()), (two, "lapse".into())]);
    let again = a.json(&["list"]);
    assert!(again.get("lost").is_none(), "told once: {again}");

    // The lapsed error of a late write says where the task stands: generation and holder.
    let mut b = board.agent("next");
    assert_eq!(b.claim(one), 2);
    let late = a
        .board_json(&["done", &one.to_string(), "--generation", "1"])
        .expect_code(5);
    let e = late.json();
    assert_eq!(e["data"]["generation"], 2, "{e}");
    assert_eq!(e["data"]["holder"], b.id.as_str(), "{e}");
}

#[test]
fn force_release_at_a_stale_generation_is_refused_and_changes_nothing() {
    let board = TestBoard::start();
    let task = board.add("t");
    let mut a = board.agent("claude");
    assert_eq!(a.claim(task), 1);
    let out = board
        .board_json(&["release", &task.to_string(), "--force", "--generation", "9"])
        .expect_code(5);
    assert!(out.stdout.contains("not current"), "{out:?}");
    assert_eq!(board.task(task)["holder"], a.id.as_str());
    board.json(&["release", &task.to_string(), "--force", "--generation", "1"]);
    assert_eq!(board.task(task)["state"], "open");
}
