//! Requests a client writes at once (as every client command writes `hello` and its call) are
//! answered in the order they were sent, one answer each, whatever lies between them: a
//! malformed line, a blank line, and a `subscribe` that turns the connection into a stream.

use serde_json::json;

use crate::harness::test_board::TestBoard;

/// A board that tells agents apart by their tokens alone (`check_process_tree = false`), so the
/// test process can speak as an agent session on a socket of its own.
fn token_only_board() -> TestBoard {
    let builder = TestBoard::builder();
    let text = builder
        .config_text()
        .replace("check_process_tree = true", "check_process_tree = false");
    let mut board = builder.unserved();
    board.write_config(&text);
    board.serve();
    board
}

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

/// The `hello` and the call a client command writes together, as the same agent session (here
/// by its token: the board does not look at process trees), are answered as they would be one
/// by one: `hello` names the agent as the caller, and the call is applied for it.
#[test]
fn a_hello_and_its_call_from_one_agent_are_answered_for_that_agent() {
    let board = token_only_board();
    let task = board.add("first");
    let mut agent = board.agent("codex");
    let token = agent.sh("printf %s \"$BOARD_TOKEN\"").ok().stdout;
    let who = json!({ "agent": agent.id, "token": token });
    let mut rpc = board.rpc();
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "hello", "params": who});
    let mut claim = who.clone();
    claim["task"] = json!(task);
    claim["op_id"] = json!("a1");
    let claim = json!({"jsonrpc": "2.0", "id": 2, "method": "claim", "params": claim});
    rpc.send_raw(format!("{hello}\n{claim}\n").as_bytes());

    let hello = rpc.read_response();
    assert_eq!(hello["id"], 1, "{hello}");
    assert_eq!(hello["result"]["caller"], agent.id.as_str(), "{hello}");
    assert_eq!(hello["result"]["protocol"], 1, "{hello}");
    let claimed = rpc.read_response();
    assert_eq!(claimed["id"], 2, "{claimed}");
    assert_eq!(
        claimed["result"]["task"]["holder"],
        agent.id.as_str(),
        "{claimed}"
    );
    assert_eq!(
        board.json(&["show", &task.to_string()])["task"]["state"],
        "claimed"
    );
}

/// A `hello` and a call written together but carrying different identities, or an identity
/// the board refuses, are each answered for their own: the operator's `hello` is answered, a
/// call with a wrong token is refused, and a pair both refused tells it twice, in order.
#[test]
fn a_hello_and_a_call_of_other_identities_are_each_answered_for_their_own() {
    let board = token_only_board();
    let mut agent = board.agent("codex");
    let wrong = json!({ "agent": agent.id, "token": "0".repeat(32) });
    let mut rpc = board.rpc();
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {}});
    let check = json!({"jsonrpc": "2.0", "id": 2, "method": "check", "params": wrong});
    let refused_hello = json!({"jsonrpc": "2.0", "id": 3, "method": "hello", "params": wrong});
    let refused_check = json!({"jsonrpc": "2.0", "id": 4, "method": "check", "params": wrong});
    rpc.send_raw(format!("{hello}\n{check}\n{refused_hello}\n{refused_check}\n").as_bytes());

    let hello = rpc.read_response();
    assert_eq!(hello["id"], 1, "{hello}");
    assert_eq!(hello["result"]["caller"], "operator", "{hello}");
    for id in [2, 3, 4] {
        let refused = rpc.read_response();
        assert_eq!(refused["id"], id, "{refused}");
        assert_eq!(
            refused["error"]["data"]["kind"], "unauthorized",
            "{refused}"
        );
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("wrong token"),
            "{refused}"
        );
    }
    // The agent itself is unaffected: its own calls still go through.
    let ready = agent.board(&["ready"]);
    assert_eq!(ready.code, 0, "{ready:?}");
}
