//! Claims per second with two hosts on one PostgreSQL store (a private cluster, fsync and
//! synchronous commit on), four figures in one run, each over the same window:
//!
//! - `CLI agents`: 16 agent sessions over 2 boards (hosts `a` and `b`), each a `board run`
//!   whose agent is a shell loop of `board claim` and `board done` (a process per call, as an
//!   agent's tool calls are);
//! - `board json agents`: 16 sessions over the same 2 hosts, each a `board run -- board json`
//!   on one persistent connection, fed claim and done lines by this program;
//! - `pgbench, bare claim statement`: 16 clients running the engine's claim statement alone
//!   (`UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED) RETURNING`) on a table of the
//!   board's shape;
//! - `pgbench, the board's claim + done`: 16 clients calling the server functions the
//!   PostgreSQL store calls for an agent's claim of the best ready task and its done
//!   (`board_claim_next`, then `board_done_at_once`), with the boards stopped.
//!
//! A claim here is one claim and its done (the pgbench bare statement only claims). Counted by
//! the store: tasks done during the window (the agents), pgbench's transactions per second.
//!
//! Run: `cargo bench --bench hosts_throughput` (needs PostgreSQL installed).
//! `BENCH_SECONDS=N` sets the window (default 15 s).

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

#[path = "../src/store/pg/cluster.rs"]
mod cluster;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use support::{load, Bench};

const AGENTS: usize = 16;
/// Open tasks put in the store before the agents' runs: more than both runs can finish.
const TASKS: i64 = 200_000;

/// The agent of a CLI session: claim the best ready task, finish it, again, until killed.
const CLI_LOOP: &str = r#"while :; do
  set -- $(board claim | sed -n 's/^claimed #\([0-9]*\) generation \([0-9]*\) .*/\1 \2/p')
  [ -n "$1" ] || exit 1
  board done "$1" --generation "$2" >/dev/null || exit 1
done"#;

fn window() -> Duration {
    let s = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    Duration::from_secs(s)
}

fn main() {
    support::require_bin();
    if let Some(why) = cluster::skip_reason() {
        println!("skipped: {why}");
        return;
    }
    println!("load average before: {}", load());
    let pg = cluster::Cluster::start_with(cluster::Options {
        fsync: true,
        ..Default::default()
    })
    .expect("a private PostgreSQL cluster");
    let url = pg.url();
    let hosts: Vec<Bench> = ["a", "b"]
        .iter()
        .map(|h| {
            Bench::start(&format!(
                "[store]\nkind = \"postgres\"\nurl = \"{url}\"\nhost = \"{h}\"\n"
            ))
        })
        .collect();
    psql(
        &pg,
        "postgres",
        &format!(
            "INSERT INTO tasks (title, priority, created_at, updated_at) \
             SELECT 'task ' || i, i % 5, board_wall(), board_wall() \
             FROM generate_series(1, {TASKS}) i"
        ),
    );
    psql(&pg, "postgres", "VACUUM ANALYZE tasks");
    let cli = cli_agents(&pg, &hosts);
    println!(
        "CLI agents ({AGENTS} `board run` sessions over 2 hosts, a shell loop of `board claim` + `board done`): {cli:.0} claims/s; load average {}",
        load()
    );
    let json = json_agents(&pg, &hosts);
    println!(
        "board json agents ({AGENTS} sessions over 2 hosts, persistent connections, claim + done lines): {json:.0} claims/s; load average {}",
        load()
    );
    drop(hosts);
    let bare = bare_claims_per_s(&pg);
    println!(
        "pgbench, bare claim statement ({AGENTS} clients, claim only): {bare:.0} claims/s; load average {}",
        load()
    );
    let board = board_claim_done_per_s(&pg);
    println!(
        "pgbench, the board's claim + done (board_claim_next + board_done_at_once, {AGENTS} clients): {board:.0} claims/s; load average {}",
        load()
    );
    println!(
        "CLI agents / board json agents / the board's statements / bare statement = {:.0} / {:.0} / {:.0} / 100 %",
        100.0 * cli / bare,
        100.0 * json / bare,
        100.0 * board / bare
    );
}

/// Tasks done in the store so far.
fn done_count(pg: &cluster::Cluster) -> i64 {
    psql_value(
        pg,
        "postgres",
        "SELECT count(*) FROM tasks WHERE state = 'done'",
    )
    .parse()
    .expect("a count")
}

/// 16 `board run` sessions over `hosts`, each running [`CLI_LOOP`], for the window: tasks done
/// per second.
fn cli_agents(pg: &cluster::Cluster, hosts: &[Bench]) -> f64 {
    let bin_dir = support::board_bin()
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let before = done_count(pg);
    let t0 = Instant::now();
    let mut agents: Vec<Child> = (0..AGENTS)
        .map(|k| {
            hosts[k % hosts.len()]
                .cmd(&[
                    "run",
                    "--name",
                    &format!("cli{k}"),
                    "--",
                    "sh",
                    "-c",
                    CLI_LOOP,
                ])
                .env("PATH", &path)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("board run")
        })
        .collect();
    std::thread::sleep(window());
    let after = done_count(pg);
    let secs = t0.elapsed().as_secs_f64();
    for a in &mut agents {
        let _ = kill(Pid::from_raw(a.id() as i32), Signal::SIGTERM);
    }
    for a in &mut agents {
        let _ = a.wait();
    }
    (after - before) as f64 / secs
}

/// One `board run -- board json` session: its launcher and its agent's lines.
struct JsonAgent {
    launcher: Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl JsonAgent {
    fn start(host: &Bench, name: &str) -> JsonAgent {
        let mut launcher = host
            .cmd(&["run", "--name", name, "--"])
            .arg(&host.bin)
            .arg("json")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("board run -- board json");
        let input = launcher.stdin.take().expect("stdin");
        let output = BufReader::new(launcher.stdout.take().expect("stdout"));
        let mut a = JsonAgent {
            launcher,
            input,
            output,
            next: 1,
        };
        a.call("hello", json!({}));
        a
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let req = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        self.next += 1;
        writeln!(self.input, "{req}").expect("write to board json");
        let mut line = String::new();
        self.output.read_line(&mut line).expect("read board json");
        let v: Value = serde_json::from_str(&line).expect("a JSON answer");
        assert!(v.get("result").is_some(), "{method}: {v}");
        v["result"].clone()
    }

    /// Claims the best ready task and finishes it.
    fn cycle(&mut self) {
        let c = self.call("claim", json!({}));
        let (task, generation) = (c["task"]["id"].clone(), c["generation"].clone());
        self.call("done", json!({"task": task, "generation": generation}));
    }
}

impl Drop for JsonAgent {
    fn drop(&mut self) {
        let _ = self.launcher.kill();
        let _ = self.launcher.wait();
    }
}

/// 16 `board json` sessions over `hosts`, each cycling claim + done from a thread of its own
/// for the window: tasks done per second.
fn json_agents(pg: &cluster::Cluster, hosts: &[Bench]) -> f64 {
    let agents: Vec<JsonAgent> = (0..AGENTS)
        .map(|k| JsonAgent::start(&hosts[k % hosts.len()], &format!("json{k}")))
        .collect();
    let before = done_count(pg);
    let t0 = Instant::now();
    let until = t0 + window();
    std::thread::scope(|s| {
        for mut a in agents {
            s.spawn(move || {
                while Instant::now() < until {
                    a.cycle();
                }
            });
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    (done_count(pg) - before) as f64 / secs
}

/// `psql -Atc SQL` on database `db`: its output, trimmed; panics naming the statement if it
/// fails.
fn psql_value(pg: &cluster::Cluster, db: &str, sql: &str) -> String {
    let out = std::process::Command::new("psql")
        .args([
            &pg.url_for(db),
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-Atc",
            sql,
        ])
        .output()
        .expect("psql");
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn psql(pg: &cluster::Cluster, db: &str, sql: &str) {
    psql_value(pg, db, sql);
}

/// `pgbench -n -M prepared -c 16 -j 2 -T WINDOW` running `script` on database `db`:
/// transactions per second.
fn pgbench(pg: &cluster::Cluster, db: &str, script: &str) -> f64 {
    let file = tempfile::NamedTempFile::new().expect("pgbench script");
    std::fs::write(file.path(), script).expect("pgbench script");
    let pgbench = cluster::find_bin()
        .expect("PostgreSQL binaries")
        .join("pgbench");
    let out = std::process::Command::new(pgbench)
        .args(["-n", "-M", "prepared", "-c", &AGENTS.to_string(), "-j", "2"])
        .args(["-T", &window().as_secs().to_string(), "-f"])
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

/// The engine's own limit: the bare claim statement on a table of the board's shape (200 000
/// open tasks, the partial index on open tasks). Claims per second.
fn bare_claims_per_s(pg: &cluster::Cluster) -> f64 {
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
    pgbench(
        pg,
        "engine",
        "UPDATE tasks SET state = 'claimed', generation = generation + 1 \
         WHERE id = (SELECT id FROM tasks WHERE state = 'open' \
         ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, generation;\n",
    )
}

/// The board's claim + done as the PostgreSQL store runs them for an agent on a persistent
/// connection: `board_claim_next` (the op lookup, the write lock, the grant with its claim row
/// and event, the saved answer), then `board_done_at_once` with the task and generation it
/// granted, each under an `op_id` of its own, for 16 live sessions of a host of their own on
/// the boards' store. No board, no agent process. Claims (each with its done) per second.
fn board_claim_done_per_s(pg: &cluster::Cluster) -> f64 {
    psql(
        pg,
        "postgres",
        "INSERT INTO sessions (id, host, name, token_hash, boot_id, started_at) \
         SELECT 'pgbench-' || i, 'pgbench', 'pgbench-' || i, '', '', board_wall() \
         FROM generate_series(1, 16) i",
    );
    // The store's write lock (`WRITE_LOCK` in src/store/pg/transactions.rs) and a lease.
    let lock = 0x0062_6F61_7264_i64;
    pgbench(
        pg,
        "postgres",
        &format!(
            "\\set op random(1, 1000000000000)\n\
             SELECT out_task AS task, out_generation AS generation FROM board_claim_next(\
             'pgbench-' || :client_id + 1, 'c' || :client_id || '-' || :op, \
             'pgbench-' || :client_id + 1, 120000, {lock}) \\gset\n\
             SELECT out_generation FROM board_done_at_once('pgbench-' || :client_id + 1, \
             'd' || :client_id || '-' || :op, 'pgbench-' || :client_id + 1, :task, :generation, \
             {lock});\n"
        ),
    )
}
