//! Claim→done throughput: 16 agent sessions (each a `board run` with this program as its agent),
//! each on one persistent connection, claiming the best ready task and finishing it in a loop;
//! against the baseline of the board's own store doing the same statements from one thread of
//! this process (raw SQLite through rusqlite, WAL, `synchronous = NORMAL`, as the board opens it).
//!
//! Run: `cargo bench --bench throughput`. One operation is one request (a claim or a done); a
//! cycle is a claim and its done.
//!
//! `cargo bench --bench throughput -- postgres`: the same 16 sessions spread over three boards
//! ("hosts") sharing one private PostgreSQL cluster (fsync and synchronous commit on), beside
//! the engine's own limit measured in the same run: `pgbench`, 16 clients, running the bare
//! claim statement (`UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED) RETURNING`) on a
//! table of the board's shape with its partial index on open tasks; then the latency one claim
//! and one done add on PostgreSQL over the embedded SQLite store (one session, medians). The
//! sessions first only claim (as the engine's statement does), then claim and finish. Last,
//! with the boards stopped, `pgbench` calls the boards' own claim statement (the server
//! function `board_claim_next`) and its grant alone on their store: what the store allows a
//! board at most.

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

#[path = "../src/store/pg/cluster.rs"]
mod cluster;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use board::proto::client::{Client, Target};
use board::store::{Lease, SqliteStore, Store, OPERATOR};
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

/// What each agent of a run does per cycle.
#[derive(Clone, Copy, PartialEq)]
enum Cycle {
    /// Claims the best ready task and finishes it.
    ClaimDone,
    /// Claims the best ready task and keeps it (what the engine's bare claim statement does).
    ClaimOnly,
}

/// One agent: connect, say ready, wait for `go`, run `cycles` cycles, print
/// `first_ns last_ns ops claim_median_us done_median_us` (done 0 for claims only).
fn worker(socket: &Path, dir: &Path, k: usize, cycles: usize, mode: Cycle) {
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
    let (mut claims, mut dones) = (Vec::new(), Vec::new());
    for _ in 0..cycles {
        let t = Instant::now();
        let r = c.call_raw("claim", json!({})).expect("claim");
        claims.push(t.elapsed());
        let task = r["task"]["id"].as_i64().expect("task id");
        let generation = r["generation"].as_i64().expect("generation");
        if mode == Cycle::ClaimOnly {
            ops += 1;
            continue;
        }
        let t = Instant::now();
        c.call_raw("done", json!({ "task": task, "generation": generation }))
            .expect("done");
        dones.push(t.elapsed());
        ops += 2;
    }
    let median_us = |mut v: Vec<Duration>| {
        v.sort();
        v.get(v.len() / 2).map(|d| d.as_micros()).unwrap_or(0)
    };
    println!(
        "{first} {} {ops} {} {}",
        wall_ns(),
        median_us(claims),
        median_us(dones)
    );
}

/// What the workers of one run did: ops per second over the whole run, and the medians of
/// their per-worker median claim and done latencies (ms).
struct Run {
    rate: f64,
    claim_ms: f64,
    done_ms: f64,
}

/// Starts `workers` sessions spread over `boards` (round robin), each running `cycles` cycles
/// once all are connected; waits for them.
fn run_workers(boards: &[&Bench], workers: usize, cycles: usize) -> Run {
    run_workers_doing(boards, workers, cycles, Cycle::ClaimDone)
}

/// [`run_workers`] with each cycle doing `mode`.
fn run_workers_doing(boards: &[&Bench], workers: usize, cycles: usize, mode: Cycle) -> Run {
    let me = std::env::current_exe().expect("bench path");
    let go_dir = boards[0].root();
    let children: Vec<Child> = (0..workers)
        .map(|k| {
            let b = boards[k % boards.len()];
            b.cmd(&["run", "--name", &format!("w{k}"), "--"])
                .arg(&me)
                .arg("--worker")
                .arg(b.socket())
                .arg(go_dir)
                .arg(k.to_string())
                .arg(cycles.to_string())
                .arg(if mode == Cycle::ClaimOnly {
                    "claim-only"
                } else {
                    "claim-done"
                })
                .stdout(Stdio::piped())
                .spawn()
                .expect("board run")
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while (0..workers).any(|k| !go_dir.join(format!("ready.{k}")).exists()) {
        assert!(Instant::now() < deadline, "workers did not start");
        std::thread::sleep(Duration::from_millis(2));
    }
    std::fs::write(go_dir.join("go"), b"").expect("go file");
    let (mut first, mut last, mut ops) = (u128::MAX, 0u128, 0u64);
    let (mut claims, mut dones) = (Vec::new(), Vec::new());
    for c in children {
        let out = c.wait_with_output().expect("worker");
        assert!(out.status.success(), "a worker failed");
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Vec<u128> = text
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        assert_eq!(v.len(), 5, "worker output: {text}");
        first = first.min(v[0]);
        last = last.max(v[1]);
        ops += v[2] as u64;
        claims.push(v[3]);
        dones.push(v[4]);
    }
    std::fs::remove_file(go_dir.join("go")).expect("go file");
    for k in 0..workers {
        let _ = std::fs::remove_file(go_dir.join(format!("ready.{k}")));
    }
    claims.sort_unstable();
    dones.sort_unstable();
    Run {
        rate: ops as f64 / ((last - first) as f64 / 1e9),
        claim_ms: claims[claims.len() / 2] as f64 / 1000.0,
        done_ms: dones[dones.len() / 2] as f64 / 1000.0,
    }
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
    let run = run_workers(&[&b], WORKERS, CYCLES_PER_WORKER);
    println!(
        "board, {WORKERS} sessions on persistent connections: {:.0} ops/s ({:.0} cycles/s); load average {}",
        run.rate,
        run.rate / 2.0,
        load()
    );
    run.rate
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
        let (c, _) = s.claim(a, None, Lease::until(0, 120_000)).expect("claim");
        s.done(a, c.task.id, Some(c.claim.generation), None, 0)
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
            args[pos + 4].parse().unwrap_or(CYCLES_PER_WORKER),
            if args.get(pos + 5).map(String::as_str) == Some("claim-only") {
                Cycle::ClaimOnly
            } else {
                Cycle::ClaimDone
            },
        );
        return;
    }
    support::require_bin();
    if args.iter().any(|a| a == "postgres") {
        postgres_figures();
        return;
    }
    let raw = raw_figure();
    let board = board_figure();
    println!(
        "board / raw = {:.0} % (targets: ≥ 10 000 ops/s and ≥ 50 %)",
        100.0 * board / raw
    );
}

/// `[store]` of a board on the cluster, as host `host`.
fn pg_store_toml(url: &str, host: &str) -> String {
    format!("[store]\nkind = \"postgres\"\nurl = \"{url}\"\nhost = \"{host}\"\n")
}

fn postgres_figures() {
    if let Some(why) = cluster::skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let pg = cluster::Cluster::start_with(cluster::Options {
        fsync: true,
        ..Default::default()
    })
    .expect("a private PostgreSQL cluster");
    let engine = engine_claims_per_s(&pg);
    let url = pg.url();
    let hosts: Vec<Bench> = ["a", "b", "c"]
        .iter()
        .map(|h| Bench::start(&pg_store_toml(&url, h)))
        .collect();
    let t = Instant::now();
    hosts[0].fill(2 * TASKS + 1000);
    println!(
        "shared store of {} tasks filled in {:.1} s; load average {}",
        2 * TASKS + 1000,
        t.elapsed().as_secs_f64(),
        load()
    );
    let boards: Vec<&Bench> = hosts.iter().collect();
    let claims = run_workers_doing(&boards, WORKERS, CYCLES_PER_WORKER, Cycle::ClaimOnly);
    println!(
        "boards on PostgreSQL, {WORKERS} sessions over 3 hosts, claims only: {:.0} claims/s = {:.0} % of the bare claim statement (target ≥ 50 %); median claim {:.3} ms; load average {}",
        claims.rate,
        100.0 * claims.rate / engine,
        claims.claim_ms,
        load()
    );
    let run = run_workers(&boards, WORKERS, CYCLES_PER_WORKER);
    println!(
        "boards on PostgreSQL, {WORKERS} sessions over 3 hosts: {:.0} ops/s = {:.0} claims/s; load average {}",
        run.rate,
        run.rate / 2.0,
        load()
    );
    println!(
        "claims through the boards / the bare claim statement = {:.0} % (target ≥ 50 %)",
        100.0 * (run.rate / 2.0) / engine
    );
    drop(hosts);
    let statement = board_statement_claims_per_s(&pg);
    println!(
        "claims through the boards / the board's own claim statement: claims only {:.0} %, claim → done {:.0} %",
        100.0 * claims.rate / statement,
        100.0 * (run.rate / 2.0) / statement
    );
    let one_pg = Bench::start(&pg_store_toml(&url, "solo"));
    one_pg.fill(600);
    let pg_run = run_workers(&[&one_pg], 1, 500);
    let one_sqlite = Bench::start("");
    one_sqlite.fill(600);
    let sqlite_run = run_workers(&[&one_sqlite], 1, 500);
    println!(
        "one session, median claim / done: SQLite {:.3} / {:.3} ms, PostgreSQL {:.3} / {:.3} ms: the network store adds {:.3} / {:.3} ms",
        sqlite_run.claim_ms,
        sqlite_run.done_ms,
        pg_run.claim_ms,
        pg_run.done_ms,
        pg_run.claim_ms - sqlite_run.claim_ms,
        pg_run.done_ms - sqlite_run.done_ms
    );
}

/// Runs `sql` with `psql` on database `db` of the cluster; panics naming the statement if it
/// fails.
fn psql(pg: &cluster::Cluster, db: &str, sql: &str) {
    let ok = std::process::Command::new("psql")
        .args([&pg.url_for(db), "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "psql: {sql}");
}

/// `pgbench -n -M prepared -c 16 -j 2 -T 10` running `script` on database `db`: transactions
/// per second.
fn pgbench(pg: &cluster::Cluster, db: &str, script: &str) -> f64 {
    let file = tempfile::NamedTempFile::new().expect("pgbench script");
    std::fs::write(file.path(), script).expect("pgbench script");
    let pgbench = cluster::find_bin()
        .expect("PostgreSQL binaries")
        .join("pgbench");
    let out = std::process::Command::new(pgbench)
        .args([
            "-n", "-M", "prepared", "-c", "16", "-j", "2", "-T", "10", "-f",
        ])
        .arg(file.path())
        .arg(pg.url_for(db))
        .output()
        .expect("pgbench");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pgbench: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2)?.parse::<f64>().ok())
        .expect("pgbench tps")
}

/// The engine's own limit: `pgbench`, 16 clients, 10 s, the bare claim statement on a table of
/// the board's shape (200 000 open tasks, the partial index on open tasks), synchronous commit
/// on. Claims per second.
fn engine_claims_per_s(pg: &cluster::Cluster) -> f64 {
    psql(pg, "postgres", "CREATE DATABASE engine");
    psql(
        pg,
        "engine",
        "CREATE TABLE tasks (id bigserial PRIMARY KEY, state text NOT NULL DEFAULT 'open', \
         priority bigint NOT NULL DEFAULT 0, generation bigint NOT NULL DEFAULT 0); \
         CREATE INDEX tasks_open ON tasks (priority DESC, id) WHERE state = 'open'; \
         INSERT INTO tasks (priority) SELECT i % 5 FROM generate_series(1, 200000) i",
    );
    psql(pg, "engine", "VACUUM ANALYZE tasks");
    let tps = pgbench(
        pg,
        "engine",
        "UPDATE tasks SET state = 'claimed', generation = generation + 1 \
         WHERE id = (SELECT id FROM tasks WHERE state = 'open' \
         ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, generation;\n",
    );
    println!(
        "engine limit: the bare claim statement, pgbench 16 clients, 10 s, synchronous commit on: {tps:.0} claims/s; load average {}",
        load()
    );
    tps
}

/// The limit of the board's own claim statement: `pgbench`, 16 clients, 10 s, calling the
/// server function a board calls for an agent's claim of the best ready task
/// (`board_claim_next`: the op lookup, the lock, the grant with its claim row and event, the
/// saved answer) on the boards' store, for 16 live sessions of a host of its own, with 120 000
/// more open tasks. No board, no agent process: what the store alone allows. Claims per second.
/// Also printed: the grant alone (`board_grant_next`), on the tasks left.
fn board_statement_claims_per_s(pg: &cluster::Cluster) -> f64 {
    psql(
        pg,
        "postgres",
        "INSERT INTO sessions (id, host, name, token_hash, boot_id, started_at) \
         SELECT 'pgbench-' || i, 'pgbench', 'pgbench-' || i, '', '', board_wall() \
         FROM generate_series(1, 16) i; \
         INSERT INTO tasks (title, priority, created_at, updated_at) \
         SELECT 'pgbench ' || i, i % 5, board_wall(), board_wall() FROM generate_series(1, 120000) i",
    );
    psql(pg, "postgres", "VACUUM ANALYZE tasks");
    let tps = pgbench(
        pg,
        "postgres",
        "\\set op random(1, 1000000000000)\n\
         SELECT out_task FROM board_claim_next('pgbench-' || :client_id + 1, :client_id || '-' || :op, \
         'pgbench-' || :client_id + 1, 120000, 422775452260);\n",
    );
    println!(
        "the board's claim statement (board_claim_next), pgbench 16 clients, 10 s, no board: {tps:.0} claims/s; load average {}",
        load()
    );
    let grant = pgbench(
        pg,
        "postgres",
        "SELECT granted_task FROM board_grant_next('pgbench-' || :client_id + 1, 120000);\n",
    );
    println!(
        "its grant alone (board_grant_next: the task, the claim row and the event; no lock, no saved answer): {grant:.0} claims/s; load average {}",
        load()
    );
    tps
}
