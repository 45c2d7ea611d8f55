//! The wire is strict: unknown or mistyped parameters are `invalid` and name the parameter (a
//! misspelt `generation` never turns a fenced write into an unfenced one), fences given as
//! parameters are honoured by every write that takes one, request ids come back exactly as sent,
//! and a retry with the same `op_id` is applied once even when both attempts race.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Barrier};

use crate::harness::{sh_quote, STEP};

use crate::harness::{agent::Agent, test_board::frozen, test_board::TestBoard};
use serde_json::{json, Value};

/// Sends `line` (plus a newline) on a new connection and returns the raw answer line.
fn raw_exchange(board: &TestBoard, line: &str) -> String {
    let mut s = UnixStream::connect(board.socket()).expect("connect");
    s.set_read_timeout(Some(STEP)).unwrap();
    s.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut r = BufReader::new(s);
    let mut out = String::new();
    r.read_line(&mut out).expect("an answer");
    out.trim_end().to_string()
}

/// One request through `board json` inside `agent`; returns the response object.
fn json_line(agent: &mut Agent, method: &str, params: Value) -> Value {
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let out = agent.sh(&format!(
        "printf '%s\\n' {} | board json",
        sh_quote(&req.to_string())
    ));
    assert_eq!(out.code, 0, "board json: {out:?}");
    serde_json::from_str(out.stdout.trim()).expect("one JSON answer")
}

#[test]
fn a_misspelt_generation_is_refused_naming_it_and_the_claim_stands() {
    let board = TestBoard::start();
    let task = board.add("fenced work");
    let mut agent = board.agent("typo");
    assert_eq!(agent.claim(task), 1);
    let before = board.task(task);

    let resp = json_line(&mut agent, "done", json!({"task": task, "genration": 999}));
    let err = &resp["error"];
    assert_eq!(err["data"]["kind"], "invalid", "{resp}");
    assert_eq!(err["code"], -32602, "{resp}");
    assert!(
        err["message"].as_str().unwrap().contains("`genration`"),
        "the message names the parameter: {resp}"
    );
    assert_eq!(
        frozen(&board.task(task)),
        frozen(&before),
        "nothing changed"
    );
    assert!(board.log_of("done", task).is_empty());
}

#[test]
fn unknown_and_mistyped_parameters_of_any_method_are_invalid_and_named() {
    let board = TestBoard::start();
    let cases = [
        ("add", json!({"title": "x", "colour": "red"}), "`colour`"),
        ("list", json!({"states": ["open"]}), "`states`"),
        ("log", json!({"limit": "ten"}), "`limit`"),
        ("claim", json!({"task": 1.5}), "`task`"),
        ("release", json!({"task": 1, "force": "yes"}), "`force`"),
        ("hello", json!({"verbose": true}), "`verbose`"),
    ];
    for (method, params, named) in cases {
        let line = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let resp: Value = serde_json::from_str(&raw_exchange(&board, &line.to_string())).unwrap();
        assert_eq!(resp["id"], 7, "{resp}");
        assert_eq!(resp["error"]["data"]["kind"], "invalid", "{method}: {resp}");
        assert_eq!(resp["error"]["code"], -32602, "{method}: {resp}");
        let msg = resp["error"]["message"].as_str().unwrap();
        assert!(msg.contains(named), "{method}: {msg} names {named}");
    }
    assert!(board.json(&["list"])["tasks"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[test]
fn a_holders_note_with_a_stale_generation_is_refused() {
    let board = TestBoard::start();
    let (task, mut agent) = board.reclaimed("notes are writes too", "noter");
    let t = task.to_string();

    let stale = agent
        .board_json(&["note", &t, "from an old claim", "--generation", "1"])
        .expect_code(5)
        .json();
    assert_eq!(stale["data"]["kind"], "lapsed", "{stale}");
    assert_eq!(stale["data"]["generation"], 2, "{stale}");
    assert!(board.show(task)["notes"].as_array().unwrap().is_empty());

    // The same through the wire, and at the current generation it is accepted.
    let resp = json_line(
        &mut agent,
        "note",
        json!({"task": task, "text": "old", "generation": 1}),
    );
    assert_eq!(resp["error"]["data"]["kind"], "lapsed", "{resp}");
    let ok = agent.json(&["note", &t, "current", "--generation", "2"]);
    assert_eq!(ok["note"]["generation"], 2);
}

#[test]
fn force_release_honours_the_generation_it_is_given() {
    let board = TestBoard::start();
    let (task, agent) = board.reclaimed("contested", "holder");
    let t = task.to_string();

    let out = board
        .board_json(&["release", &t, "--force", "--generation", "1"])
        .expect_code(5);
    let e = out.json();
    assert_eq!(e["data"]["kind"], "lapsed", "{e}");
    assert_eq!(e["data"]["generation"], 2, "{e}");
    assert_eq!(e["data"]["holder"], agent.id.as_str(), "{e}");
    let still = board.task(task);
    assert_eq!(still["state"], "claimed");
    assert_eq!(still["holder"], agent.id.as_str());

    let done = board.json(&["release", &t, "--force", "--generation", "2"]);
    assert_eq!(done["task"]["state"], "open");
}

#[test]
fn request_ids_come_back_exactly_as_sent() {
    let board = TestBoard::start();
    for id in [
        "123456789012345678901234567890",
        "-98765432109876543210",
        "18446744073709551616",
        "1.0",
        "2.5e-3",
        "1e400",
        "\"abc\"",
        "\"\"",
        "0",
        "null",
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"hello"}}"#);
        let answer = raw_exchange(&board, &line);
        assert!(
            answer.contains(&format!(r#""id":{id},"#))
                || answer.contains(&format!(r#""id":{id}}}"#)),
            "id {id} echoed as sent: {answer}"
        );
        // Errors too.
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"show","params":{{"task":"x"}}}}"#);
        let answer = raw_exchange(&board, &line);
        assert!(answer.contains("\"error\""), "{answer}");
        assert!(
            answer.contains(&format!(r#""id":{id},"#))
                || answer.contains(&format!(r#""id":{id}}}"#)),
            "id {id} echoed in an error: {answer}"
        );
    }
}

#[test]
fn two_connections_racing_one_op_id_make_one_task_each_round() {
    const ROUNDS: usize = 200;
    let board = TestBoard::start();
    let socket = board.socket();
    for round in 0..ROUNDS {
        let op = format!("race-{round}");
        let barrier = Arc::new(Barrier::new(2));
        let handles: Vec<_> = (0..2)
            .map(|side| {
                let barrier = Arc::clone(&barrier);
                let socket = socket.clone();
                let op = op.clone();
                std::thread::spawn(move || {
                    let mut s = UnixStream::connect(&socket).expect("connect");
                    s.set_read_timeout(Some(STEP)).unwrap();
                    let line = json!({"jsonrpc": "2.0", "id": side, "method": "add",
                        "params": {"title": format!("round {round}"), "op_id": op}});
                    barrier.wait();
                    s.write_all(format!("{line}\n").as_bytes()).unwrap();
                    let mut answer = String::new();
                    BufReader::new(s).read_line(&mut answer).unwrap();
                    let v: Value = serde_json::from_str(&answer).unwrap();
                    v["result"]["task"]["id"].as_i64().expect("a task id")
                })
            })
            .collect();
        let ids: Vec<i64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(ids[0], ids[1], "round {round}: both answers name one task");
        assert_eq!(ids[0], round as i64 + 1, "round {round}: one new task");
    }
    let tasks = board.json(&["list"])["tasks"].as_array().unwrap().len();
    assert_eq!(tasks, ROUNDS, "one task per round");
}
