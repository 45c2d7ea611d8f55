//! `list` pages through the backlog with a cursor, `ready` takes a limit, and `board list`
//! (which pages underneath) prints the same single document as one unpaged call.

use serde_json::json;

use crate::harness::{queries::ready_ids as ids, test_board::TestBoard};

#[test]
fn list_pages_follow_the_cursor_and_end_with_a_null_next() {
    let b = TestBoard::start();
    let mut rpc = b.rpc();
    for i in 1..=5 {
        rpc.result("add", json!({ "title": format!("t{i}") }));
    }
    let p1 = rpc.result("list", json!({ "limit": 2 }));
    assert_eq!(ids(&p1), vec![1, 2]);
    assert_eq!(p1["next"], json!(2));
    let p2 = rpc.result("list", json!({ "limit": 2, "after": 2 }));
    assert_eq!(ids(&p2), vec![3, 4]);
    let p3 = rpc.result("list", json!({ "limit": 2, "after": p2["next"] }));
    assert_eq!(ids(&p3), vec![5]);
    assert!(p3["next"].is_null(), "the last page has no cursor: {p3}");
    let page = b.json(&["list", "--limit", "3", "--after", "1"]);
    assert_eq!(ids(&page), vec![2, 3, 4]);
    assert_eq!(page["next"], json!(4));
    let bad = rpc.call("list", json!({ "limit": 0 }));
    assert_eq!(bad["error"]["data"]["kind"], "invalid", "{bad}");
}

#[test]
fn ready_with_a_limit_is_the_head_of_the_claim_order() {
    let b = TestBoard::start();
    let mut rpc = b.rpc();
    rpc.result("add", json!({ "title": "low" }));
    rpc.result("add", json!({ "title": "high", "priority": 5 }));
    rpc.result("add", json!({ "title": "mid", "priority": 2 }));
    rpc.result(
        "add",
        json!({ "title": "after high", "priority": 9, "after": [2] }),
    );
    assert_eq!(ids(&b.json(&["ready"])), vec![2, 3, 1]);
    assert_eq!(ids(&b.json(&["ready", "--limit", "2"])), vec![2, 3]);
    let blocked = rpc.result("list", json!({ "state": "open", "limit": 10 }));
    let t4 = &blocked["tasks"][3];
    assert_eq!(t4["blocked_by"], json!([2]), "{t4}");
    assert_eq!(t4["ready"], json!(false));
    b.board(&["ready", "--limit", "0"]).expect_code(2);
}

#[test]
fn board_list_pages_underneath_and_prints_one_document() {
    let b = TestBoard::start();
    let mut rpc = b.rpc();
    // More than one of the CLI's pages (1000 tasks), with a dependency across the page edge.
    for i in 1..=1005 {
        let mut p = json!({ "title": format!("task {i}") });
        if i == 1002 {
            p["after"] = json!([999]);
        }
        rpc.result("add", p);
    }
    let unpaged = rpc.result("list", json!({}));
    let printed = b.json(&["list"]);
    assert_eq!(
        printed, unpaged,
        "board list --json differs from one unpaged call"
    );
    assert_eq!(ids(&printed).len(), 1005);
    assert_eq!(printed["tasks"][1001]["after"], json!([999]));
    let open = b.json(&["list", "--state", "open"]);
    assert_eq!(ids(&open).len(), 1005);
    let human = b.board(&["list"]).ok();
    assert_eq!(human.stdout.lines().count(), 1005, "one line per task");
}
