//! Stopping drains: requests in flight when the board stops are answered, either finished or
//! `unavailable` with `data.stopping` (nothing applied, so the client asks again with its
//! `op_id`), never an internal error; and clients that ask again lose nothing.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::test_board::TestBoard;
use crate::harness::*;

const CONNECTIONS: usize = 8;
const RAW_CONNECTIONS: usize = 32;
const PIPELINED: usize = 60;

#[allow(clippy::disallowed_methods)] // a read-only look at the store the board wrote
fn titles(db: &std::path::Path) -> BTreeMap<String, i64> {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut st = c
        .prepare("SELECT title, COUNT(*) FROM tasks GROUP BY title")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn requests_in_flight_when_the_board_stops_are_answered_never_failed() {
    let mut b = TestBoard::builder().lease("60s").sweep("1s").start();
    // 32 connections, each with 60 writes sent at once: the board is busy with them when it is
    // told to stop, with more requests waiting for a thread than it has threads.
    let conns: Vec<(UnixStream, BufReader<UnixStream>)> = (0..RAW_CONNECTIONS)
        .map(|c| {
            let s = UnixStream::connect(b.socket()).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            let mut batch = String::new();
            for i in 0..PIPELINED {
                let req = json!({"jsonrpc": "2.0", "id": i, "method": "add",
                    "params": {"title": format!("c{c}-{i}"), "op_id": format!("op-{c}-{i}")}});
                batch.push_str(&format!("{req}\n"));
            }
            (&s).write_all(batch.as_bytes()).unwrap();
            let r = BufReader::new(s.try_clone().unwrap());
            (s, r)
        })
        .collect();
    let stop = b.board(&["stop"]);
    assert!(stop.success(), "board stop: {stop:?}");
    let mut answers: BTreeMap<&str, usize> = BTreeMap::new();
    let mut bad = Vec::new();
    let mut applied = Vec::new();
    let mut refused = Vec::new();
    for (c, (_s, mut r)) in conns.into_iter().enumerate() {
        let mut line = String::new();
        while r.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            let v: Value = serde_json::from_str(&line).unwrap();
            let i = v["id"].as_u64().unwrap();
            let title = format!("c{c}-{i}");
            if v.get("result").is_some() {
                *answers.entry("done").or_default() += 1;
                applied.push(title);
            } else if v["error"]["data"]["stopping"] == true
                && v["error"]["data"]["kind"] == "unavailable"
            {
                *answers.entry("unavailable (stopping)").or_default() += 1;
                refused.push(title);
            } else {
                bad.push(format!("request {title} was answered {v}"));
            }
            line.clear();
        }
        *answers.entry("connections closed").or_default() += 1;
    }
    b.kill_serve(nix::sys::signal::Signal::SIGKILL);
    let have = titles(&b.db());
    for t in &applied {
        if have.get(t) != Some(&1) {
            bad.push(format!(
                "{t} was answered done but the store has it {:?} times",
                have.get(t)
            ));
        }
    }
    // A write the board applied was in flight when it stopped: its answer must have come.
    for t in have.keys() {
        if !applied.contains(t) {
            bad.push(format!("{t} was applied but its answer never came"));
        }
    }
    for t in &refused {
        if have.contains_key(t) {
            bad.push(format!("{t} was answered `stopping` but was applied"));
        }
    }
    println!(
        "{} writes sent on {RAW_CONNECTIONS} connections, then `board stop`: {answers:?}",
        RAW_CONNECTIONS * PIPELINED
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(
        answers.get("done").copied().unwrap_or(0) > 0,
        "nothing was answered: {answers:?}"
    );
}

/// Eight writers that each add tasks one CLI call at a time while the board is stopped five
/// times: every call succeeds (a lost or `stopping` answer is asked again with the call's
/// `op_id`, of the board the next call starts) and every task is in the store once.
#[test]
fn writers_lose_nothing_when_the_board_stops_under_them() {
    let b = TestBoard::builder().lease("60s").sweep("1s").start();
    let script = r#"i=0; while [ $i -lt 40 ]; do i=$((i+1)); board add "$1-$i" >/dev/null 2>>"$1.err" || echo "$1-$i exit $?" >> failures; done"#;
    let mut writers: Vec<std::process::Child> = (0..CONNECTIONS)
        .map(|w| spawn_sh(&b, script, &format!("w{w}")))
        .collect();
    let mut stops = 0;
    while stops < 5 {
        std::thread::sleep(Duration::from_millis(300));
        let _ = b
            .board_cmd(&["stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        stops += 1;
    }
    for w in writers.iter_mut() {
        let st = poll(Duration::from_secs(120), || w.try_wait().unwrap());
        assert!(st.is_some(), "a writer did not finish");
    }
    let failures = std::fs::read_to_string(b.root().join("failures")).unwrap_or_default();
    let have = titles(&b.db());
    let mut bad: Vec<String> = failures.lines().map(str::to_string).collect();
    for w in 0..CONNECTIONS {
        for i in 1..=40 {
            let t = format!("w{w}-{i}");
            if have.get(&t) != Some(&1) {
                bad.push(format!("{t} is in the store {:?} times", have.get(&t)));
            }
        }
    }
    let starts = b.json(&["log", "--limit", "100000"])["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "board_start")
        .count();
    println!(
        "{} adds by {CONNECTIONS} writers, {stops} stops, {starts} board starts",
        CONNECTIONS * 40
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `sh -c SCRIPT sh ARG` in the project, with the board binary on PATH and no identity.
fn spawn_sh(b: &TestBoard, script: &str, arg: &str) -> std::process::Child {
    let mut sh = std::process::Command::new("sh");
    scrub(&mut sh)
        .args(["-c", script, "sh", arg])
        .current_dir(b.root())
        // Room for a board restart on a loaded machine.
        .env("BOARD_TIMEOUT", "20s")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}
