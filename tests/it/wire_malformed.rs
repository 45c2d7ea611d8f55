//! A malformed line on the socket (not JSON, wrong types, a 2 MiB line) gets an
//! `invalid` error, changes nothing, and the board keeps serving that client and the others.

use crate::harness::{rpc::Rpc, test_board::TestBoard};
use serde_json::{json, Value};

/// Asserts `resp` is an `invalid` error with JSON-RPC `code`, and returns its message.
#[track_caller]
fn assert_invalid(resp: &Value, code: i64) -> String {
    assert_eq!(resp["jsonrpc"], "2.0", "{resp}");
    assert_eq!(resp["error"]["data"]["kind"], "invalid", "{resp}");
    assert_eq!(resp["error"]["code"], code, "{resp}");
    assert!(resp.get("result").is_none(), "{resp}");
    resp["error"]["message"].as_str().unwrap().to_string()
}

/// Sends one raw line and reads the one answer.
fn send_line(rpc: &mut Rpc, line: &[u8]) -> Value {
    rpc.send_raw(line);
    rpc.send_raw(b"\n");
    rpc.read_response()
}

#[test]
fn malformed_lines_get_invalid_errors_and_the_board_keeps_serving() {
    let board = TestBoard::start();
    board.add("the only task");
    let tasks_before = board.json(&["list"]);

    // Another client, connected before the garbage arrives, and one that stalls mid-line.
    let mut bystander = board.rpc();
    assert_eq!(bystander.result("hello", json!({}))["protocol"], 1);
    let mut staller = board.rpc();
    staller.send_raw(br#"{"jsonrpc":"2.0","id":1,"meth"#);

    let mut bad = board.rpc();
    assert_invalid(&send_line(&mut bad, b"this is not json"), -32700);
    assert_invalid(
        &send_line(&mut bad, b"{\"jsonrpc\":\"2.0\",\"id\":1,"),
        -32700,
    );
    assert_invalid(&send_line(&mut bad, b"[1, 2, 3]"), -32600);
    assert_invalid(&send_line(&mut bad, b"\xff\xfe not utf-8"), -32700);
    assert_invalid(&send_line(&mut bad, &[b'['; 500_000]), -32700);
    // Wrong types.
    let resp = send_line(&mut bad, br#"{"jsonrpc":"2.0","id":2,"method":7}"#);
    assert_invalid(&resp, -32600);
    assert_eq!(resp["id"], 2, "the id is answered when it could be read");
    let resp = send_line(
        &mut bad,
        br#"{"jsonrpc":"2.0","id":3,"method":"list","params":[1]}"#,
    );
    assert_invalid(&resp, -32602);
    let resp = send_line(
        &mut bad,
        br#"{"jsonrpc":"2.0","id":4,"method":"show","params":{"task":"one"}}"#,
    );
    assert!(assert_invalid(&resp, -32602).contains("`task`"), "{resp}");
    let resp = send_line(
        &mut bad,
        br#"{"jsonrpc":"2.0","id":5,"method":"add","params":{"title":5}}"#,
    );
    assert!(assert_invalid(&resp, -32602).contains("`title`"), "{resp}");
    assert_eq!(resp["id"], 5);
    // A 2 MiB line (a valid request padded with spaces, so only its size is wrong).
    let mut huge = br#"{"jsonrpc":"2.0","id":6,"method":"add","params":{"title":"huge"}}"#.to_vec();
    huge.resize(2 << 20, b' ');
    let resp = send_line(&mut bad, &huge);
    assert!(assert_invalid(&resp, -32600).contains("1 MiB"), "{resp}");

    // The same connection still works after all of it.
    let hello = bad.result("hello", json!({}));
    assert_eq!(hello["protocol"], 1);
    // The other clients too: the one connected before, a new one, and the CLI.
    assert_eq!(
        bystander.result("list", json!({}))["tasks"],
        tasks_before["tasks"]
    );
    assert_eq!(
        board.rpc().result("list", json!({}))["tasks"],
        tasks_before["tasks"]
    );
    assert_eq!(
        board.json(&["list"]),
        tasks_before,
        "nothing was added or changed"
    );
    // The stalled client finishes its line and gets its answer.
    staller.send_raw(b"od\":\"hello\"}\n");
    assert_eq!(staller.read_response()["result"]["protocol"], 1);
}
