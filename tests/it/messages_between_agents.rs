//! `board send` and `board inbox`: the recipient's next board call — CLI (stderr note and
//! `--json` field), `board json` line, MCP tool result — says it has unread messages; `board
//! inbox` shows them once; every message is an event in the log.

use serde_json::{json, Value};

use crate::harness::agent::Agent;
use crate::harness::mcp::Mcp;
use crate::harness::test_board::TestBoard;

use crate::harness::schema::check;

#[test]
fn the_next_cli_call_and_board_json_line_say_there_are_unread_messages() {
    let b = TestBoard::start();
    b.add("something to do");
    let [mut sender, mut reader] = <[Agent; 2]>::try_from(b.agents(&["sender", "reader"]))
        .ok()
        .unwrap();
    let sent = sender.json(&["send", "reader", "please look at the parser"]);
    assert_eq!(sent["message"]["from"], "sender");
    assert_eq!(sent["message"]["to"], "reader");
    b.json(&["send", "reader", "and hurry \u{1b}[31mup"]);

    // A human-output command: the answer as usual on stdout, one note on stderr.
    let out = reader.board(&["ready"]).ok();
    assert!(out.stdout.contains("something to do"), "{out:?}");
    assert!(
        out.stderr
            .contains("2 unread messages (from sender, operator): `board inbox` reads them"),
        "{out:?}"
    );
    // --json: the field in the result, and in an error's data too.
    let v = reader.json(&["ready"]);
    assert_eq!(
        v["inbox"],
        json!({"unread": 2, "from": ["sender", "operator"], "read_with": "board inbox"})
    );
    let err = reader.board_json(&["show", "99"]).expect_code(6).json();
    assert_eq!(err["data"]["inbox"]["unread"], 2, "{err}");
    // `board json`: the response line carries it.
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"ready"}"#;
    let out = reader.sh(&format!("echo '{line}' | board json")).ok();
    let resp: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(resp["result"]["inbox"]["unread"], 2, "{resp}");
    // Someone else is not told about it.
    assert!(sender.json(&["ready"]).get("inbox").is_none());

    // Read once, oldest first; the text shown inert in human output.
    let out = reader.board(&["inbox"]).ok();
    assert!(
        out.stdout.contains("from sender") && out.stdout.contains("please look at the parser"),
        "{out:?}"
    );
    assert!(
        !out.stdout.contains('\u{1b}'),
        "escape sequences are inert: {out:?}"
    );
    assert!(!out.stderr.contains("unread"), "{out:?}");
    let again = reader.json(&["inbox"]);
    assert_eq!(again["messages"], json!([]), "each message is read once");
    assert!(reader.json(&["ready"]).get("inbox").is_none());
    assert!(!reader.board(&["ready"]).ok().stderr.contains("unread"));

    // The log has both messages.
    let logged: Vec<Value> = b.log_kind("message");
    assert_eq!(logged.len(), 2, "{logged:?}");
    assert!(logged[0]["reason"]
        .as_str()
        .unwrap()
        .contains("sender → reader: please look at the parser"));
}

#[test]
fn messages_find_their_recipient_by_name_and_refuse_unknown_ones() {
    let b = TestBoard::start();
    let mut twins = b.agents(&["twin", "twin", "twin"]);
    twins.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(b.json(&["send", "twin", "you"])["message"]["to"], "twin");
    // Once `twin` has ended, nobody has its name: the refusal says it ended.
    twins[0].exit_with(0);
    twins[0].wait_launcher();
    let out = b
        .board_json(&["send", "twin", "anyone?"])
        .expect_code(6)
        .json();
    assert!(out["message"].as_str().unwrap().contains("ended"), "{out}");
    // A restarted `twin` takes the name back under a new id, and the name reaches it.
    let back = b.agent("twin");
    assert_eq!(back.id, "twin-4");
    assert_eq!(
        b.json(&["send", "twin", "welcome back"])["message"]["to"],
        "twin-4"
    );
    // A name wins over an id: restarted `x` is session x-2, and the slot named `x-2` (session
    // x-2-2) is the one `x-2` reaches.
    let mut x = b.agent("x");
    x.exit_with(0);
    x.wait_launcher();
    let x_again = b.agent("x");
    assert_eq!(x_again.id, "x-2");
    let slot = b.agent("x-2");
    assert_eq!(slot.id, "x-2-2");
    assert_eq!(b.json(&["send", "x-2", "you"])["message"]["to"], "x-2-2");
    assert_eq!(b.json(&["send", "x", "you"])["message"]["to"], "x-2");
    let mut one = twins.remove(1);
    let out = b
        .board_json(&["send", "nobody", "hello?"])
        .expect_code(6)
        .json();
    assert!(out["message"].as_str().unwrap().contains("nobody"), "{out}");
    b.board_json(&["send", "twin", ""]).expect_code(2);
    // An agent can write to the operator, who reads it with `board inbox`.
    one.json(&["send", "operator", "done with the parser"]);
    let op = b.json(&["inbox"]);
    assert_eq!(op["messages"][0]["from"], one.id.as_str());
    assert_eq!(op["messages"][0]["text"], "done with the parser");
}

#[test]
fn an_mcp_tool_result_says_there_are_unread_messages() {
    let p = TestBoard::builder().unserved();
    let (_, code) = p.board_json(&["add", "first"]).json_and_code();
    assert_eq!(code, 0);
    let mut c = Mcp::spawn(p.board_cmd(&["run", "--name", "mcp-reader", "--", "board", "mcp"]));
    c.initialize();
    let quiet = c.call("board_ready", json!({}));
    assert_eq!(quiet["content"].as_array().unwrap().len(), 1, "{quiet}");

    let (sent, code) = p
        .board_json(&["send", "mcp-reader", "the schema changed"])
        .json_and_code();
    assert_eq!(code, 0, "{sent}");
    check("results/send", &sent);
    let told = c.call("board_ready", json!({}));
    assert_eq!(told["structuredContent"]["inbox"]["unread"], 1, "{told}");
    check("results/ready", &told["structuredContent"]);
    let text = told["content"][1]["text"].as_str().unwrap();
    assert!(
        text.contains("1 unread message(s) from operator") && text.contains("board_inbox"),
        "{text}"
    );
    let read = c.call("board_inbox", json!({}));
    check("results/inbox", &read["structuredContent"]);
    assert_eq!(
        read["structuredContent"]["messages"][0]["text"],
        "the schema changed"
    );
    let after = c.call("board_ready", json!({}));
    assert!(after["structuredContent"].get("inbox").is_none(), "{after}");
}
