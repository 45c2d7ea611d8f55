//! Subscribers receive events in id order with no gaps, however many threads commit at once,
//! and a follower that resumes with `after` = the last id it saw neither loses nor repeats one.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::events::Events;
use crate::harness::test_board::TestBoard;

#[test]
fn concurrent_writes_reach_subscribers_in_id_order_without_gaps() {
    let board = TestBoard::start();
    let first = board.rpc().result("log", json!({ "limit": 1 }))["events"][0]["id"]
        .as_i64()
        .unwrap_or(0);
    let mut live = Events::subscribe(&board.socket(), None);
    const THREADS: usize = 6;
    const EACH: usize = 60;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let board = &board;
            s.spawn(move || {
                let mut rpc = board.rpc();
                for i in 0..EACH {
                    rpc.result("add", json!({ "title": format!("t{t}-{i}") }));
                }
            });
        }
        let mut prev = first;
        let deadline = Instant::now() + Duration::from_secs(60);
        for n in 0..THREADS * EACH {
            let e = live.next();
            let id = e["id"].as_i64().unwrap();
            assert_eq!(
                id,
                prev + 1,
                "event {n}: id {id} after {prev} (out of order or a gap)"
            );
            prev = id;
            assert!(Instant::now() < deadline);
        }
    });

    // Resume in the middle: exactly the events after that id, in order, once each.
    let all = board.log();
    let mid = all[all.len() / 2]["id"].as_i64().unwrap();
    let mut resumed = Events::subscribe(&board.socket(), Some(mid));
    for want in all.iter().filter(|e| e["id"].as_i64().unwrap() > mid) {
        let got = resumed.next();
        assert_eq!(
            got["id"], want["id"],
            "resumed stream: {got} instead of {want}"
        );
    }
    board.add("one more");
    let got = resumed.next();
    assert_eq!(got["kind"], "add");
    assert_eq!(
        got["id"].as_i64(),
        all.last().and_then(|e| e["id"].as_i64()).map(|i| i + 1)
    );
}
