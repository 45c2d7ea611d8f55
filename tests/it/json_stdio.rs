//! `board json` under a thousand mixed lines, and the printed schema against
//! every request and response of the run.

use crate::harness::schema::check;
use crate::harness::schema::matches;
use crate::harness::test_board::TestBoard;
use serde_json::{json, Value};

/// What a line must get back.
#[derive(Debug)]
enum Expect {
    /// A result of this method.
    Ok(&'static str),
    /// An error with this id (`null` when none could be read) and JSON-RPC code.
    Err(Value, i64),
}

/// One input line: bytes, expected answer, and whether it is a well-formed request (`Some(true)`),
/// JSON that the request schema must reject (`Some(false)`), or not JSON at all (`None`).
struct Case {
    bytes: Vec<u8>,
    expect: Expect,
    request: Option<bool>,
}

fn req(id: &Value, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

fn ok(bytes: Vec<u8>, method: &'static str) -> Case {
    Case {
        bytes,
        expect: Expect::Ok(method),
        request: Some(true),
    }
}

fn bad(bytes: Vec<u8>, id: Value, code: i64, request: Option<bool>) -> Case {
    Case {
        bytes,
        expect: Expect::Err(id, code),
        request,
    }
}

/// Small deterministic generator (no dependency, same mix on every run).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn cases(n: usize) -> (Vec<Case>, Vec<String>) {
    let mut rng = Lcg(7);
    let mut out = Vec::new();
    let mut titles = Vec::new();
    for i in 1..=n {
        // Numbers and strings as ids, so the echo of both is checked.
        let id = if i % 2 == 0 {
            json!(i)
        } else {
            json!(format!("s{i}"))
        };
        let r = rng.next();
        let case = match i {
            1 => {
                titles.push(format!("t{i}"));
                ok(req(&id, "add", json!({"title": format!("t{i}")})), "add")
            }
            // One 2 MiB line: a well-formed add that must be refused unread and not applied.
            500 => {
                let big = "x".repeat(2 << 20);
                bad(
                    req(&id, "add", json!({ "title": big })),
                    Value::Null,
                    -32600,
                    None,
                )
            }
            // The agent's own work at the end: claim, check, note, finish.
            _ if i == n - 4 => ok(req(&id, "claim", json!({"task": 1})), "claim"),
            _ if i == n - 3 => ok(req(&id, "check", json!({"task": 1})), "check"),
            _ if i == n - 2 => ok(
                req(&id, "note", json!({"task": 1, "text": "found it"})),
                "note",
            ),
            _ if i == n - 1 => ok(
                req(&id, "done", json!({"task": 1, "generation": 1})),
                "done",
            ),
            _ if i == n => ok(req(&id, "status", json!({})), "status"),
            _ => match r % 12 {
                0..=3 => {
                    let title = format!("t{i} \u{1b}[31mred\u{1b}[0m ünï");
                    titles.push(title.clone());
                    let params = json!({"title": title, "priority": (r % 5) as i64 - 2});
                    ok(req(&id, "add", params), "add")
                }
                4 => match r % 9 {
                    0 => ok(req(&id, "list", json!({})), "list"),
                    1 => ok(req(&id, "ready", Value::Null), "ready"),
                    2 => ok(req(&id, "status", json!({})), "status"),
                    3 => ok(req(&id, "goal", json!({})), "goal"),
                    4 => ok(req(&id, "hello", json!({})), "hello"),
                    5 => ok(req(&id, "log", json!({"limit": 3})), "log"),
                    6 => ok(req(&id, "agents", json!({"all": true})), "agents"),
                    7 => ok(req(&id, "show", json!({"task": 1})), "show"),
                    _ => ok(req(&id, "renew", json!({})), "renew"),
                },
                5 => {
                    let junk: &[&[u8]] = &[
                        b"not json",
                        b"{",
                        b"}",
                        b"null",
                        b"42",
                        b"\"just a string\"",
                        b"{\"jsonrpc\":\"2.0\",",
                        b"\x00\x01\x02",
                    ];
                    let pick = junk[(r as usize / 12) % junk.len()];
                    let code = if serde_json::from_slice::<Value>(pick).is_ok() {
                        -32600
                    } else {
                        -32700
                    };
                    bad(pick.to_vec(), Value::Null, code, None)
                }
                6 => {
                    let full = req(&id, "add", json!({"title": format!("cut {i}")}));
                    let cut = 1 + (r as usize) % (full.len() - 2);
                    bad(full[..cut].to_vec(), Value::Null, -32700, None)
                }
                7 => match r % 8 {
                    0 => bad(
                        req(&id, "add", json!({"title": 5})),
                        id.clone(),
                        -32602,
                        Some(false),
                    ),
                    1 => bad(
                        req(&id, "show", json!({"task": "one"})),
                        id.clone(),
                        -32602,
                        Some(false),
                    ),
                    2 => bad(
                        req(&id, "add", json!({"title": "x", "after": "3"})),
                        id.clone(),
                        -32602,
                        Some(false),
                    ),
                    3 => bad(
                        json!({"jsonrpc": "2.0", "id": id, "method": "add", "params": [1, 2]})
                            .to_string()
                            .into_bytes(),
                        id.clone(),
                        -32602,
                        Some(false),
                    ),
                    4 => bad(
                        json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "add", "params": {"title": "x"}})
                            .to_string()
                            .into_bytes(),
                        Value::Null,
                        -32600,
                        Some(false),
                    ),
                    5 => bad(
                        json!({"jsonrpc": "2.0", "id": id, "method": 5}).to_string().into_bytes(),
                        id.clone(),
                        -32600,
                        Some(false),
                    ),
                    6 => bad(
                        json!({"jsonrpc": "1.0", "id": id, "method": "add", "params": {"title": "x"}})
                            .to_string()
                            .into_bytes(),
                        id.clone(),
                        -32600,
                        Some(false),
                    ),
                    _ => bad(
                        req(&id, "goal", json!({"text": 5})),
                        id.clone(),
                        -32602,
                        Some(false),
                    ),
                },
                8 => bad(
                    req(&id, &format!("nuke{i}"), json!({})),
                    id.clone(),
                    -32601,
                    Some(false),
                ),
                9 => {
                    // Invalid UTF-8 inside an otherwise well-formed add (its id is still
                    // read), or raw high bytes.
                    if r.is_multiple_of(2) {
                        let mut l = format!(
                            r#"{{"jsonrpc":"2.0","id":{i},"method":"add","params":{{"title":""#
                        )
                        .into_bytes();
                        l.extend_from_slice(b"\xff\xfe bad");
                        l.extend_from_slice(br#""}}"#);
                        bad(l, json!(i), -32700, None)
                    } else {
                        bad(b"\xc3\x28\xa0\xa1".to_vec(), Value::Null, -32700, None)
                    }
                }
                10 => {
                    let blank: &[u8] = if r.is_multiple_of(2) { b"" } else { b"   \t" };
                    bad(blank.to_vec(), Value::Null, -32700, None)
                }
                _ => {
                    let (method, params) = if r.is_multiple_of(2) {
                        ("subscribe", json!({}))
                    } else {
                        ("session.register", json!({"name": "sneaky"}))
                    };
                    Case {
                        bytes: req(&id, method, params),
                        expect: Expect::Err(id.clone(), -32001),
                        request: Some(true),
                    }
                }
            },
        };
        out.push(case);
    }
    (out, titles)
}

#[test]
fn a_thousand_mixed_lines_get_a_thousand_answers_in_order() {
    const N: usize = 1000;
    let p = TestBoard::builder().unserved();
    let (cases, titles) = cases(N);
    let mut input = Vec::new();
    for c in &cases {
        input.extend_from_slice(&c.bytes);
        input.push(b'\n');
    }
    std::fs::write(p.root().join("in.jsonl"), &input).unwrap();

    let agent = "board json < in.jsonl > out.jsonl 2> err.txt; echo $? > rc.txt";
    let out = p.board(&["run", "--name", "json-agent", "--", "sh", "-c", agent]);
    assert!(out.success(), "board run: {out:?}");
    let rc = std::fs::read_to_string(p.root().join("rc.txt")).unwrap();
    assert_eq!(rc.trim(), "0", "board json exit code");
    let stderr = std::fs::read_to_string(p.root().join("err.txt")).unwrap();
    assert!(stderr.is_empty(), "board json wrote to stderr: {stderr}");

    let text = std::fs::read_to_string(p.root().join("out.jsonl")).unwrap();
    assert!(text.ends_with('\n'));
    let answers: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(answers.len(), N, "one answer per line");

    let mut agent = None;
    for (i, (c, a)) in cases.iter().zip(&answers).enumerate() {
        let line = i as u64 + 1;
        // Every response matches the printed schema …
        check("response", a);
        if let Some(valid) = c.request {
            let sent: Value = serde_json::from_slice(&c.bytes).unwrap();
            assert_eq!(matches("request", &sent), valid, "request schema on {sent}");
        }
        match &c.expect {
            Expect::Ok(method) => {
                let sent: Value = serde_json::from_slice(&c.bytes).unwrap();
                assert_eq!(a["id"], sent["id"], "line {line}: {a}");
                let result = a
                    .get("result")
                    .unwrap_or_else(|| panic!("line {line} ({method}) failed: {a}"));
                // … and each result matches its own method's result schema.
                check(&format!("results/{method}"), result);
                if *method == "claim" {
                    agent = result["task"]["holder"].as_str().map(String::from);
                }
            }
            Expect::Err(id, code) => {
                assert_eq!(&a["id"], id, "line {line}: {a}");
                assert_eq!(a["error"]["code"], json!(code), "line {line}: {a}");
                assert_eq!(a["error"]["data"]["line"], json!(line), "line {line}: {a}");
                let kind = if *code == -32001 { "usage" } else { "invalid" };
                assert_eq!(a["error"]["data"]["kind"], json!(kind), "line {line}: {a}");
                check("error", &a["error"]);
            }
        }
    }

    // The claim was the environment's agent session's.
    let (agents, _) = p.board_json(&["agents", "--all"]).json_and_code();
    let ids: Vec<&str> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "json-agent")
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(agent.as_deref(), ids.first().copied());

    // Valid requests were all applied, invalid ones changed nothing.
    let (list, code) = p.board_json(&["list"]).json_and_code();
    assert_eq!(code, 0);
    let got: Vec<&str> = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect();
    assert_eq!(got, titles.iter().map(String::as_str).collect::<Vec<_>>());
    let (goal, _) = p.board_json(&["goal"]).json_and_code();
    assert_eq!(
        goal["goal"],
        Value::Null,
        "the wrong-typed goal was not set"
    );
    let (show, _) = p.board_json(&["show", "1"]).json_and_code();
    assert_eq!(show["task"]["state"], "done");
    assert_eq!(show["notes"].as_array().unwrap().len(), 1);
    check("results/show", &show);
}

#[test]
fn end_of_input_ends_it_and_a_board_that_is_gone_is_an_error_per_line() {
    let p = TestBoard::builder().unserved();
    // Operator requests; `stop` ends the board mid-stream, and `board json` reconnects (restarting
    // it) for the next request instead of dying.
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"add","params":{"title":"a"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"claim"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"stop"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"list"}"#,
    ]
    .join("\n");
    let out = p
        .command(crate::harness::BOARD)
        .arg("json")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(input.as_bytes())?;
            drop(stdin);
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert!(answers[0]["result"]["task"].is_object());
    assert_eq!(answers[1]["error"]["data"]["kind"], "unauthorized");
    assert_eq!(answers[1]["error"]["data"]["line"], 2);
    assert_eq!(answers[2]["result"]["stopping"], true);
    // After the stop the next request either reached a new board or says it could not.
    let last = &answers[3];
    assert_eq!(last["id"], 4);
    match last.get("result") {
        Some(r) => assert_eq!(r["tasks"].as_array().unwrap().len(), 1),
        None => assert_eq!(last["error"]["data"]["kind"], "unavailable"),
    }
    for a in &answers {
        check("response", a);
    }
}

#[test]
fn the_schema_is_strict_enough_to_catch_drift() {
    let p = TestBoard::builder().unserved();
    let (added, code) = p.board_json(&["add", "x"]).json_and_code();
    assert_eq!(code, 0);
    check("results/add", &added);
    let mut extra = added.clone();
    extra["task"]["colour"] = json!("red");
    assert!(
        !matches("results/add", &extra),
        "unknown members are caught"
    );
    let mut wrong = added.clone();
    wrong["task"]["generation"] = json!("1");
    assert!(!matches("results/add", &wrong), "wrong types are caught");
    let mut missing = added.clone();
    missing["task"].as_object_mut().unwrap().remove("holder");
    assert!(
        !matches("results/add", &missing),
        "missing members are caught"
    );
    let both = json!({"jsonrpc": "2.0", "id": 1, "result": added, "error": {
        "code": -32002, "message": "x", "data": {"kind": "not_found"}}});
    assert!(
        !matches("response", &both),
        "a response is a result or an error"
    );
    let (err, code) = p.board_json(&["show", "42"]).json_and_code();
    assert_eq!(code, 6);
    check("error", &err);
    let mut bad_kind = err.clone();
    bad_kind["data"]["kind"] = json!("oops");
    assert!(!matches("error", &bad_kind));
}
