//! With a 1 s lease and a 100 ms sweep, an agent that stays silent past its lease
//! loses its claim. Its late `board done` exits 5 and changes nothing; another agent can then
//! claim the task, at the next generation.

use std::time::Duration;

use crate::harness::poll_until;

use crate::harness::events::event_time;
use crate::harness::test_board::TestBoard;
use serde_json::Value;

#[test]
fn a_silent_agent_loses_its_claim_and_its_late_done_changes_nothing() {
    let board = TestBoard::builder().lease("1s").sweep("100ms").start();
    let task = board.add("parse the config file");
    let mut slow = board.agent("slow");

    assert_eq!(slow.claim(task), 1);
    // From here `slow` is silent: blocked waiting for its next line, no board calls, no CPU.

    let lapsed = poll_until(Duration::from_secs(5), || {
        board.task(task)["state"] == "open"
    });
    assert!(lapsed, "the claim did not lapse: {}", board.task(task));
    let lapse = board.log_of("lapse", task);
    assert_eq!(lapse.len(), 1, "one lapse event: {lapse:?}");
    assert_eq!(lapse[0]["agent"], slow.id.as_str());
    assert_eq!(lapse[0]["generation"], 1);
    assert!(
        lapse[0]["reason"]
            .as_str()
            .unwrap()
            .contains("lease expired"),
        "{}",
        lapse[0]
    );
    let grant = &board.log_of("grant", task)[0];
    let held = event_time(&lapse[0])
        .duration_since(event_time(grant))
        .unwrap();
    eprintln!("claim granted → lapsed after {} ms", held.as_millis());
    assert!(
        held >= Duration::from_millis(990),
        "a claim must last its whole lease (1 s), it lapsed after {held:?}"
    );
    assert!(
        held <= Duration::from_millis(2500),
        "a claim must lapse soon after its lease (1 s) and a sweep (100 ms), it took {held:?}"
    );

    let before = board.show(task);
    let late = slow.board(&["done", &task.to_string()]).expect_code(5);
    assert!(
        late.stderr.contains("lease expired"),
        "the refusal says why: {late:?}"
    );
    let after = board.show(task);
    assert_eq!(
        after["task"], before["task"],
        "a rejected done changes the task"
    );
    assert_eq!(after["notes"], before["notes"]);
    assert_eq!(after["task"]["state"], "open");
    assert_eq!(after["task"]["done_by"], Value::Null);
    assert!(board.log_of("done", task).is_empty(), "no done event");
    assert_eq!(
        board.log_of("reject", task).len(),
        1,
        "the refusal is logged"
    );

    let mut other = board.agent("other");
    assert_eq!(other.claim(task), 2, "the next claim gets generation + 1");
    assert_eq!(board.task(task)["holder"], other.id.as_str());

    // The late writer is still fenced off now that someone else holds the task.
    let fenced = slow
        .board_json(&["done", &task.to_string(), "--generation", "1"])
        .expect_code(5);
    let e = fenced.json();
    assert_eq!(e["data"]["kind"], "lapsed");
    assert_eq!(e["data"]["holder"], other.id.as_str());
    assert_eq!(board.task(task)["state"], "claimed");
    assert!(board.log_of("done", task).is_empty(), "still no done event");
}
