//! `board mcp` spoken to by hand, as an MCP client would: initialize,
//! notifications/initialized, tools/list, tools/call — under `board run`, so the tools act with
//! the agent identity of the environment.

use crate::harness::mcp::{ok_result, Mcp};
use crate::harness::schema::check;
use crate::harness::test_board::TestBoard;
use serde_json::json;

/// `board run --name NAME -- board mcp` in the project.
pub(crate) fn start(p: &TestBoard, name: &str) -> Mcp {
    Mcp::spawn(p.board_cmd(&["run", "--name", name, "--", "board", "mcp"]))
}

#[test]
fn an_agent_claims_and_finishes_a_task_through_mcp_tools() {
    let p = TestBoard::builder().unserved();
    let (_, code) = p
        .board_json(&["add", "first", "--body", "do the first thing"])
        .json_and_code();
    assert_eq!(code, 0);

    let mut c = start(&p, "mcp-agent");
    let init = c.request(
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "board-test", "version": "0"}
        }),
    );
    let info = &init["result"];
    assert_eq!(info["serverInfo"]["name"], "board", "{init}");
    assert!(info["capabilities"]["tools"].is_object(), "{init}");
    assert!(info["instructions"]
        .as_str()
        .is_some_and(|s| s.contains("board claim")));
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = c.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "board_accept",
            "board_add",
            "board_agents",
            "board_answer",
            "board_check",
            "board_claim",
            "board_done",
            "board_edit",
            "board_goal",
            "board_inbox",
            "board_list",
            "board_note",
            "board_ready",
            "board_reject",
            "board_release",
            "board_renew",
            "board_resume",
            "board_send",
            "board_show",
            "board_status",
            "board_wait"
        ]
    );
    for t in tools {
        assert!(
            t["description"].as_str().is_some_and(|d| d.len() > 40),
            "{t}"
        );
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
    }
    let done_tool = tools.iter().find(|t| t["name"] == "board_done").unwrap();
    assert_eq!(done_tool["inputSchema"]["required"], json!(["task"]));
    assert!(done_tool["inputSchema"]["properties"]["generation"]["description"].is_string());

    let added = c.call(
        "board_add",
        json!({"title": "second", "priority": 5, "after": [1]}),
    );
    check("results/add", ok_result(&added));
    let ready = c.call("board_ready", json!({}));
    let ready = ok_result(&ready);
    check("results/ready", ready);
    assert_eq!(ready["tasks"].as_array().unwrap().len(), 1, "2 waits for 1");

    let claimed = c.call("board_claim", json!({}));
    let claim = ok_result(&claimed).clone();
    check("results/claim", &claim);
    assert_eq!(claim["task"]["id"], 1);
    let holder = claim["task"]["holder"].as_str().unwrap().to_string();
    let generation = claim["generation"].as_i64().unwrap();

    // The holder is the agent session of the environment `board run` gave the server.
    let (agents, _) = p.board_json(&["agents"]).json_and_code();
    let me = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "mcp-agent")
        .unwrap_or_else(|| panic!("{agents}"))
        .clone();
    assert_eq!(me["id"], json!(holder));
    assert_eq!(me["claims"], json!([1]));
    let (shown, _) = p.board_json(&["show", "1"]).json_and_code();
    assert_eq!(shown["task"]["holder"], json!(holder));

    let noted = c.call("board_note", json!({"task": 1, "text": "halfway"}));
    check("results/note", ok_result(&noted));
    let status = c.call("board_status", json!({}));
    check("results/status", ok_result(&status));

    // A refusal is a tool error carrying the kind and code.
    let taken = c.call("board_claim", json!({"task": 99}));
    assert_eq!(taken["isError"], json!(true), "{taken}");
    let text = taken["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("not_found (-32002): "), "{text}");
    check("error", &taken["structuredContent"]);
    let stale = c.call(
        "board_done",
        json!({"task": 1, "generation": generation + 1}),
    );
    assert_eq!(stale["isError"], json!(true), "{stale}");
    assert!(
        stale["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("lapsed (-32005): "),
        "{stale}"
    );

    let done = c.call(
        "board_done",
        json!({"task": 1, "generation": generation, "note": "did it"}),
    );
    let done = ok_result(&done);
    check("results/done", done);
    assert_eq!(done["task"]["state"], "done");
    assert_eq!(done["task"]["done_by"], json!(holder));

    let show = c.call("board_show", json!({"task": 1}));
    let show = ok_result(&show);
    check("results/show", show);
    assert_eq!(show["notes"].as_array().unwrap().len(), 2);

    // Wrong argument types never reach the board: the MCP layer refuses them.
    let bad = c.request(
        "tools/call",
        json!({"name": "board_show", "arguments": {"task": "one"}}),
    );
    assert!(
        bad.get("error").is_some() || bad["result"]["isError"] == json!(true),
        "{bad}"
    );

    // Closing stdin ends the server; `board run` exits with its status.
    let status = c
        .close(std::time::Duration::from_secs(10))
        .expect("board mcp to exit did not happen in time");
    assert!(status.success(), "{status:?}");
    let (agents, _) = p.board_json(&["agents"]).json_and_code();
    assert!(
        agents["agents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["name"] == "mcp-agent")
            .all(|s| s["ended_at"].is_string() && s["state"] == "gone"),
        "the session ended with the server: {agents}"
    );
}

#[test]
fn without_an_agent_identity_claims_are_tool_errors() {
    let p = TestBoard::builder().unserved();
    let mut c = Mcp::spawn(p.board_cmd(&["mcp"]));
    c.initialize();
    let r = c.call("board_claim", json!({}));
    assert_eq!(r["isError"], json!(true), "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("unauthorized (-32006): "), "{text}");
    let status = c
        .close(std::time::Duration::from_secs(10))
        .expect("board mcp to exit did not happen in time");
    assert!(status.success());
}

#[test]
fn an_initialized_notification_before_initialize_still_gets_the_handshake_answered() {
    let p = TestBoard::builder().unserved();
    let mut c = Mcp::spawn(p.board_cmd(&["mcp"]));
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let init = c.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "board-test", "version": "0"}}),
    );
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    let tools = c.request("tools/list", json!({}));
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{tools}"
    );
    let status = c
        .close(std::time::Duration::from_secs(10))
        .expect("board mcp to exit did not happen in time");
    assert!(status.success());
}

#[test]
fn a_request_id_beyond_every_integer_type_comes_back_exactly_as_sent() {
    let p = TestBoard::builder().unserved();
    let mut c = Mcp::spawn(p.board_cmd(&["mcp"]));
    c.initialize();
    c.send_line(r#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/list"}"#);
    let line = c.read_raw();
    assert!(
        line.contains(r#""id":18446744073709551617"#),
        "the id as sent, not as a float: {line}"
    );
    let status = c
        .close(std::time::Duration::from_secs(10))
        .expect("board mcp to exit did not happen in time");
    assert!(status.success());
}

#[test]
fn an_operators_release_without_force_over_mcp_names_the_tools_force_argument() {
    let p = TestBoard::builder().unserved();
    let (_, code) = p.board_json(&["add", "held by nobody"]).json_and_code();
    assert_eq!(code, 0);
    let mut c = Mcp::spawn(p.board_cmd(&["mcp"]));
    c.initialize();
    let r = c.call("board_release", json!({"task": 1}));
    assert_eq!(r["isError"], json!(true), "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"force\": true"), "{text}");
    let status = c
        .close(std::time::Duration::from_secs(10))
        .expect("board mcp to exit did not happen in time");
    assert!(status.success());
}
