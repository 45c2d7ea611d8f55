//! Claim→done throughput: 16 agent sessions (each a `board run` with this program as its agent),
//! each on one persistent connection, claiming the best ready task and finishing it in a loop;
//! against the baseline of the board's own store doing the same statements from one thread of
//! this process (raw SQLite through rusqlite, WAL, `synchronous = NORMAL`, as the board opens it).
//!
//! Run: `cargo bench --bench throughput`. One operation is one request (a claim or a done); a
//! cycle is a claim and its done.

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use board::proto::client::{Client, Target};
use board::store::{Generation, SqliteStore, Store, TaskId, OPERATOR};
use serde_json::json;
use support::{load, Bench};

const WORKERS: usize = 16;
const CYCLES_PER_WORKER: usize = 400;
const TASKS: usize = WORKERS * CYCLES_PER_WORKER + 100;

fn wall_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// One agent: connect, say ready, wait for `go`, run the cycles, print `first_ns last_ns ops`.
fn worker(socket: &Path, dir: &Path, k: usize) {
    let target = Target::new(socket.to_path_buf());
    let mut c = Client::connect(&target, false).expect("connect");
    c.call("hello", json!({})).expect("hello");
    std::fs::write(dir.join(format!("ready.{k}")), b"").expect("ready file");
    let go = dir.join("go");
    while !go.exists() {
        std::thread::sleep(Duration::from_micros(200));
    }
    let first = wall_ns();
    let mut ops = 0;
    for _ in 0..CYCLES_PER_WORKER {
        let r = c.call_raw("claim", json!({})).expect("claim");
        let task = r["task"]["id"].as_i64().expect("task id");
        let generation = r["generation"].as_i64().expect("generation");
        c.call_raw("done", json!({ "task": task, "generation": generation }))
            .expect("done");
        ops += 2;
    }
    println!("{first} {} {ops}", wall_ns());
}

fn board_figure() -> f64 {
    let b = Bench::start("");
    let t = Instant::now();
    b.fill(TASKS);
    println!(
        "board of {TASKS} tasks filled in {:.1} s; load average {}",
        t.elapsed().as_secs_f64(),
        load()
    );
    let me = std::env::current_exe().expect("bench path");
    let socket = b.socket();
    let children: Vec<Child> = (0..WORKERS)
        .map(|k| {
            b.cmd(&["run", "--name", &format!("w{k}"), "--"])
                .arg(&me)
                .arg("--worker")
                .arg(&socket)
                .arg(b.root())
                .arg(k.to_string())
                .stdout(Stdio::piped())
                .spawn()
                .expect("board run")
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while (0..WORKERS).any(|k| !b.root().join(format!("ready.{k}")).exists()) {
        assert!(Instant::now() < deadline, "workers did not start");
        std::thread::sleep(Duration::from_millis(2));
    }
    std::fs::write(b.root().join("go"), b"").expect("go file");
    let (mut first, mut last, mut ops) = (u128::MAX, 0u128, 0u64);
    for c in children {
        let out = c.wait_with_output().expect("worker");
        assert!(out.status.success(), "a worker failed");
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Vec<u128> = text
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        assert_eq!(v.len(), 3, "worker output: {text}");
        first = first.min(v[0]);
        last = last.max(v[1]);
        ops += v[2] as u64;
    }
    let secs = (last - first) as f64 / 1e9;
    let rate = ops as f64 / secs;
    println!(
        "board, {WORKERS} sessions on persistent connections: {ops} ops in {:.3} s = {rate:.0} ops/s ({:.0} cycles/s); load average {}",
        secs,
        rate / 2.0,
        load()
    );
    rate
}

fn raw_figure() -> f64 {
    let dir = tempfile::tempdir().expect("tempdir");
    let path: PathBuf = dir.path().join("board.db");
    let mut s = SqliteStore::open(&path).expect("store");
    for i in 1..=TASKS {
        s.add_task(&format!("task {i}"), "", (i % 5) as i64, &[], OPERATOR, 0)
            .expect("add");
    }
    let agents: Vec<String> = (0..WORKERS)
        .map(|k| {
            s.register_session(&format!("w{k}"), "h", "boot", None, None, None)
                .expect("session")
                .0
        })
        .collect();
    let n = WORKERS * CYCLES_PER_WORKER;
    let t = Instant::now();
    for i in 0..n {
        let a = &agents[i % WORKERS];
        let (c, _) = s.claim(a, None, 0, 120_000).expect("claim");
        s.done(
            a,
            TaskId(c.task.id),
            Some(Generation(c.claim.generation)),
            None,
            0,
        )
        .expect("done");
    }
    let secs = t.elapsed().as_secs_f64();
    let rate = (2 * n) as f64 / secs;
    println!(
        "raw SQLite (the board's store in this process, one thread, synchronous=NORMAL): {} ops in {secs:.3} s = {rate:.0} ops/s",
        2 * n
    );
    rate
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--worker") {
        worker(
            Path::new(&args[pos + 1]),
            Path::new(&args[pos + 2]),
            args[pos + 3].parse().unwrap_or(0),
        );
        return;
    }
    support::require_bin();
    let raw = raw_figure();
    let board = board_figure();
    println!(
        "board / raw = {:.0} % (targets: ≥ 10 000 ops/s and ≥ 50 %)",
        100.0 * board / raw
    );
}
