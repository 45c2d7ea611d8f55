//! `board mcp` as every host can use it: a tool for every agent verb with annotations and input
//! schemas that are valid JSON Schema without `type` arrays or line breaks; argument errors that
//! name the argument; a JSON-RPC error with the request's id for every bad line (a parse error
//! with id null for a line that is not JSON); the first call after a board restart succeeds; and
//! the real MCP Python SDK, started inside an agent with only HOME and PATH, claims and finishes a
//! task as that agent and can match every error it receives.

use std::path::PathBuf;

use crate::harness::sh_quote;

use crate::harness::mcp::Mcp;
use crate::harness::test_board::TestBoard;
use serde_json::{json, Value};

const VERBS: [&str; 21] = [
    "board_status",
    "board_goal",
    "board_ready",
    "board_list",
    "board_show",
    "board_claim",
    "board_renew",
    "board_check",
    "board_done",
    "board_release",
    "board_note",
    "board_add",
    "board_edit",
    "board_wait",
    "board_resume",
    "board_agents",
    "board_send",
    "board_inbox",
    "board_answer",
    "board_accept",
    "board_reject",
];

const READ_ONLY: [&str; 6] = [
    "board_status",
    "board_ready",
    "board_list",
    "board_show",
    "board_check",
    "board_agents",
];

/// `board mcp` as an operator in the project, initialized.
fn operator_mcp(p: &TestBoard) -> Mcp {
    let mut c = Mcp::spawn(p.board_cmd(&["mcp"]));
    let init = c.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "board", "{init}");
    c
}

/// Every `type` in `v` is a single type name and no description has a line break.
fn assert_host_friendly(v: &Value, at: &str) {
    match v {
        Value::Object(m) => {
            if let Some(t) = m.get("type") {
                assert!(t.is_string(), "{at}: type {t}");
            }
            if let Some(d) = m.get("description") {
                assert!(!d.as_str().unwrap_or("").contains('\n'), "{at}: {d}");
            }
            for (k, c) in m {
                assert_host_friendly(c, &format!("{at}/{k}"));
            }
        }
        Value::Array(a) => a.iter().for_each(|c| assert_host_friendly(c, at)),
        _ => {}
    }
}

#[test]
fn tools_list_has_every_verb_with_annotations_and_host_friendly_schemas() {
    let p = TestBoard::builder().unserved();
    let mut c = operator_mcp(&p);
    let list = c.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools").clone();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    let mut want = VERBS.to_vec();
    want.sort();
    assert_eq!(names, want);
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        let schema = &t["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}");
        assert!(
            jsonschema::meta::is_valid(schema),
            "{name}: not valid JSON Schema: {schema}"
        );
        assert_host_friendly(t, name);
        let a = &t["annotations"];
        assert_eq!(a["readOnlyHint"], READ_ONLY.contains(&name), "{name}: {a}");
        assert_eq!(a["openWorldHint"], false, "{name}: {a}");
        if !READ_ONLY.contains(&name) {
            assert!(a["destructiveHint"].is_boolean(), "{name}: {a}");
            assert!(a["idempotentHint"].is_boolean(), "{name}: {a}");
        }
    }
    let by = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
    assert_eq!(by("board_release")["annotations"]["destructiveHint"], true);
    assert!(by("board_release")["inputSchema"]["properties"]["force"].is_object());
    assert!(by("board_claim")["inputSchema"]["properties"]["wait_s"].is_object());
    assert_eq!(by("board_add")["annotations"]["destructiveHint"], false);
    for (tool, arg) in [
        ("board_claim", "label"),
        ("board_add", "labels"),
        ("board_add", "for"),
        ("board_add", "review"),
        ("board_edit", "labels"),
        ("board_edit", "for"),
        ("board_edit", "review"),
    ] {
        let props = &by(tool)["inputSchema"]["properties"];
        assert!(props[arg].is_object(), "{tool} takes {arg}: {props}");
    }
    assert_eq!(
        by("board_list")["inputSchema"]["properties"]["state"]["type"],
        "array"
    );
}

#[test]
fn bad_lines_get_json_rpc_errors_carrying_the_request_id() {
    let p = TestBoard::builder().unserved();
    let mut c = operator_mcp(&p);
    let mut raw = |line: &str| -> Value {
        c.send_line(line);
        c.read()
    };
    let cases: [(&str, Value, i64); 6] = [
        ("this is not json", Value::Null, -32700),
        ("[1, 2]", Value::Null, -32600),
        (r#"{"id": 11, "method": "tools/list"}"#, json!(11), -32600),
        (
            r#"{"jsonrpc": "2.0", "id": "q", "method": "tools/call"}"#,
            json!("q"),
            -32602,
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 13, "method": "tools/list", "params": 7}"#,
            json!(13),
            -32602,
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 14, "method": "no/such"}"#,
            json!(14),
            -32601,
        ),
    ];
    for (line, id, code) in cases {
        let r = raw(line);
        assert!(r.as_object().unwrap().contains_key("id"), "{line}: {r}");
        assert_eq!(r["id"], id, "{line}: {r}");
        assert_eq!(r["error"]["code"], code, "{line}: {r}");
    }
    // An argument error is the board's own tool error, naming the argument.
    let r = c.call("board_show", json!({"task": "one"}));
    assert_eq!(r["isError"], true, "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("invalid (-32602): bad argument `task`"),
        "{text}"
    );
    assert_eq!(r["structuredContent"]["data"]["argument"], "task", "{r}");
    let r = c.call("board_done", json!({"task": 1, "genration": 3}));
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("unknown field `genration`"),
        "{r}"
    );
    // The server still works after all that.
    let ok = c.call("board_status", json!({}));
    assert_eq!(ok["isError"], false, "{ok}");
}

#[test]
fn the_first_call_after_a_board_restart_succeeds() {
    let p = TestBoard::builder().unserved();
    let mut c = operator_mcp(&p);
    let first = c.call("board_status", json!({}));
    assert_eq!(first["isError"], false, "{first}");
    let pid = first["structuredContent"]["pid"].as_i64().unwrap();
    let stopped = p.board(&["stop"]);
    assert!(stopped.success(), "{stopped:?}");
    let again = c.call("board_status", json!({}));
    assert_eq!(
        again["isError"], false,
        "the first call after the restart: {again}"
    );
    assert_ne!(
        again["structuredContent"]["pid"].as_i64().unwrap(),
        pid,
        "a new board"
    );
    let goal = c.call("board_goal", json!({"text": "ship it"}));
    assert_eq!(goal["isError"], false, "{goal}");
    let _ = p.board(&["stop"]);
}

#[test]
fn an_operator_force_releases_a_claim_through_mcp() {
    let board = TestBoard::start();
    let t = board.add("stuck");
    let mut a = board.agent("holder");
    a.claim(t);
    let mut c = operator_mcp(&board);
    let plain = c.call("board_release", json!({"task": t}));
    assert_eq!(
        plain["isError"], true,
        "an operator holds no claim: {plain}"
    );
    let forced = c.call(
        "board_release",
        json!({"task": t, "force": true, "note": "stuck"}),
    );
    assert_eq!(forced["isError"], false, "{forced}");
    assert_eq!(board.task(t)["state"], "open");
}

#[test]
fn an_agent_adds_edits_and_claims_by_label_through_mcp() {
    let board = TestBoard::start();
    let mut op = operator_mcp(&board);
    let added = op.tool(
        "board_add",
        json!({"title": "fix the parser", "priority": 9, "labels": ["parser"], "for": "coder",
               "review": true}),
    );
    let id = added["task"]["id"].as_i64().unwrap();
    assert_eq!(added["task"]["labels"], json!(["parser"]), "{added}");
    assert_eq!(added["task"]["for"], "coder", "{added}");
    assert_eq!(added["task"]["review"], true, "{added}");
    board.add("a chore without a label");
    let edited = op.tool(
        "board_edit",
        json!({"task": id, "labels": ["parser", "ui"], "for": "", "review": false}),
    );
    assert_eq!(
        edited["task"]["labels"],
        json!(["parser", "ui"]),
        "{edited}"
    );
    assert_eq!(
        edited["task"]["for"],
        Value::Null,
        "for anyone again: {edited}"
    );
    assert_eq!(edited["task"]["review"], false, "{edited}");
    let bad = op.call("board_edit", json!({"task": id, "labels": ["two words"]}));
    assert_eq!(bad["isError"], true, "{bad}");
    assert_eq!(
        board.task(id)["labels"],
        json!(["parser", "ui"]),
        "nothing changed"
    );

    let mut agent = Mcp::spawn(board.board_cmd(&["run", "--name", "m", "--", "board", "mcp"]));
    agent.initialize();
    let none = agent.call("board_claim", json!({"label": "docs"}));
    assert_eq!(none["isError"], true, "no task carries docs: {none}");
    let got = agent.tool("board_claim", json!({"label": "ui"}));
    assert_eq!(got["task"]["id"], id, "{got}");
    assert_eq!(board.task(id)["state"], "claimed");
}

/// The venv `.ci/run` installs the MCP Python SDK into.
fn sdk_python() -> Option<PathBuf> {
    let py = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci/cache/mcp-sdk/venv/bin/python");
    let ok = std::process::Command::new(&py)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(py)
}

#[test]
fn the_mcp_python_sdk_inside_an_agent_claims_as_that_agent_and_matches_every_error() {
    let Some(py) = sdk_python() else {
        eprintln!(
            "SKIPPED: the MCP Python SDK is not installed in .ci/cache/mcp-sdk/venv \
             (run `bash .ci/install-mcp-sdk`; .ci/run does)"
        );
        return;
    };
    let board = TestBoard::start();
    let t = board.add("for the sdk");
    let mut a = board.agent("sdk-agent");
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/assets/mcp_sdk_client.py");
    let report = board.scratch().join("sdk-report.json");
    let (rc, log) = (
        board.scratch().join("sdk.rc"),
        board.scratch().join("sdk.log"),
    );
    // In the background of the agent's shell (so still in its tree): Python and the SDK can take
    // long to start on a loaded machine, longer than one agent line may.
    a.sh(&format!(
        "(env -i HOME=\"$HOME\" PATH=\"$PATH\" {} {} {} {} > {} 2>&1; echo $? > {}) &",
        sh_quote(py.to_str().unwrap()),
        sh_quote(script.to_str().unwrap()),
        sh_quote(crate::harness::BOARD),
        sh_quote(report.to_str().unwrap()),
        sh_quote(log.to_str().unwrap()),
        sh_quote(rc.to_str().unwrap())
    ))
    .ok();
    let code = crate::harness::poll(std::time::Duration::from_secs(180), || {
        std::fs::read_to_string(&rc)
            .ok()?
            .trim()
            .parse::<i32>()
            .ok()
    });
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(code, Some(0), "the SDK client failed:\n{log}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["server"], "board");
    assert_eq!(r["tools"].as_array().unwrap().len(), VERBS.len());
    let claim = &r["claim"]["structuredContent"];
    assert_eq!(claim["task"]["id"], t, "{r}");
    assert_eq!(
        claim["task"]["holder"],
        a.id.as_str(),
        "claimed as the agent: {r}"
    );
    for step in ["check", "wait", "resume", "renew", "done"] {
        assert_eq!(r[step]["isError"], false, "{step}: {}", r[step]);
    }
    assert_eq!(
        r["done"]["structuredContent"]["task"]["done_by"],
        a.id.as_str()
    );
    assert_eq!(board.task(t)["state"], "done");
    for bad in ["bad_argument", "unknown_argument"] {
        assert_eq!(r[bad]["isError"], true, "{bad}: {}", r[bad]);
        assert!(
            r[bad]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("invalid (-32602): bad argument `"),
            "{bad}: {}",
            r[bad]
        );
    }
    // A protocol error reached the SDK as an error for its own request (an unmatched id would
    // have been a read timeout instead).
    let errors = r["errors"].as_array().unwrap();
    let unknown = errors.iter().find(|e| e["name"] == "unknown tool").unwrap();
    assert_eq!(unknown["code"], -32602, "{unknown}");
    let nothing = errors
        .iter()
        .find(|e| e["name"] == "claim nothing ready")
        .unwrap();
    assert_eq!(nothing["result"]["isError"], true, "{nothing}");
}
