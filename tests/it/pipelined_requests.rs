//! Requests a client writes at once (as every client command writes `hello` and its call) are
//! answered in the order they were sent, one answer each, whatever lies between them: a
//! malformed line, a blank line, and a `subscribe` that turns the connection into a stream.

use crate::harness::test_board::TestBoard;

#[test]
fn pipelined_requests_are_answered_in_order_one_answer_each() {
    let board = TestBoard::start();
    let mut rpc = board.rpc();
    let mut burst = String::new();
    burst.push_str(r#"{"jsonrpc":"2.0","id":1,"method":"hello","params":{}}"#);
    burst.push('\n');
    burst.push_str(r#"{"jsonrpc":"2.0","id":2,"method":"add","params":{"title":"first"}}"#);
    burst.push('\n');
    burst.push_str("this is not json\n");
    burst.push_str(r#"{"jsonrpc":"2.0","id":3,"method":"add","params":{"title":"second"}}"#);
    burst.push_str("\r\n\n");
    burst.push_str(r#"{"jsonrpc":"2.0","id":4,"method":"list","params":{}}"#);
    burst.push('\n');
    burst.push_str(r#"{"jsonrpc":"2.0","id":5,"method":"subscribe","params":{}}"#);
    burst.push('\n');
    burst.push_str(r#"{"jsonrpc":"2.0","id":6,"method":"hello","params":{}}"#);
    burst.push('\n');
    rpc.send_raw(burst.as_bytes());

    let hello = rpc.read_response();
    assert_eq!(hello["id"], 1, "{hello}");
    assert_eq!(hello["result"]["protocol"], 1, "{hello}");
    let first = rpc.read_response();
    assert_eq!(first["id"], 2, "{first}");
    assert_eq!(first["result"]["task"]["title"], "first", "{first}");
    let bad = rpc.read_response();
    assert!(bad["id"].is_null(), "{bad}");
    assert_eq!(bad["error"]["code"], -32700, "{bad}");
    let second = rpc.read_response();
    assert_eq!(second["id"], 3, "{second}");
    assert_eq!(second["result"]["task"]["title"], "second", "{second}");
    let list = rpc.read_response();
    assert_eq!(list["id"], 4, "{list}");
    let titles: Vec<&str> = list["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["first", "second"], "{list}");
    let ack = rpc.read_response();
    assert_eq!(ack["id"], 5, "{ack}");
    assert_eq!(ack["result"]["subscribed"], true, "{ack}");
    // After `subscribe` the connection is an event stream: the line after it is not answered as
    // a request, and the next thing on it is the next event.
    board.add("third");
    let event = rpc.read_response();
    assert_eq!(event["method"], "event", "{event}");
    assert!(event.get("id").is_none(), "{event}");
}
