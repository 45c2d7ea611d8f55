//! Subscribers receive events in id order with no gaps, however many threads commit at once,
//! and a follower that resumes with `after` = the last id it saw neither loses nor repeats one.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::STEP;

use crate::harness::driven::TestBoard;

/// A raw `subscribe` stream; `next_event` returns the next event's params.
struct Stream(BufReader<UnixStream>);

impl Stream {
    fn open(board: &TestBoard, after: Option<i64>) -> Stream {
        let mut s = UnixStream::connect(board.socket()).expect("connect");
        s.set_read_timeout(Some(STEP)).unwrap();
        let params = match after {
            Some(a) => json!({ "after": a }),
            None => json!({}),
        };
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": "subscribe", "params": params});
        s.write_all(format!("{req}\n").as_bytes()).unwrap();
        let mut r = BufReader::new(s);
        let mut ack = String::new();
        r.read_line(&mut ack).unwrap();
        assert!(ack.contains("subscribed"), "{ack}");
        Stream(r)
    }

    fn next_event(&mut self) -> Value {
        let mut line = String::new();
        let n = self
            .0
            .read_line(&mut line)
            .expect("an event within the deadline");
        assert!(n > 0, "the stream ended");
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["method"], "event", "{v}");
        v["params"].clone()
    }
}

#[test]
fn concurrent_writes_reach_subscribers_in_id_order_without_gaps() {
    let board = TestBoard::start();
    let first = board.rpc().result("log", json!({ "limit": 1 }))["events"][0]["id"]
        .as_i64()
        .unwrap_or(0);
    let mut live = Stream::open(&board, None);
    const THREADS: usize = 6;
    const EACH: usize = 60;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let board = &board;
            s.spawn(move || {
                let mut rpc = board.rpc();
                for i in 0..EACH {
                    rpc.result("add", json!({ "title": format!("t{t}-{i}") }));
                }
            });
        }
        let mut prev = first;
        let deadline = Instant::now() + Duration::from_secs(60);
        for n in 0..THREADS * EACH {
            let e = live.next_event();
            let id = e["id"].as_i64().unwrap();
            assert_eq!(
                id,
                prev + 1,
                "event {n}: id {id} after {prev} (out of order or a gap)"
            );
            prev = id;
            assert!(Instant::now() < deadline);
        }
    });

    // Resume in the middle: exactly the events after that id, in order, once each.
    let all = board.events();
    let mid = all[all.len() / 2]["id"].as_i64().unwrap();
    let mut resumed = Stream::open(&board, Some(mid));
    for want in all.iter().filter(|e| e["id"].as_i64().unwrap() > mid) {
        let got = resumed.next_event();
        assert_eq!(
            got["id"], want["id"],
            "resumed stream: {got} instead of {want}"
        );
    }
    board.add("one more");
    let got = resumed.next_event();
    assert_eq!(got["kind"], "add");
    assert_eq!(
        got["id"].as_i64(),
        all.last().and_then(|e| e["id"].as_i64()).map(|i| i + 1)
    );
}
