//! Whole-process figures of client commands on a board of 10 000 tasks, as an agent's shell tool
//! runs them: each command is a fresh `board` process.
//!
//! Run: `cargo bench --bench cli` (cargo builds the release binary first).
//!
//! - `true` and the `sqlite3` CLI running the claim's UPDATE on a copy of the database are the
//!   baselines, timed interleaved with `board claim ID` / `board done ID` from inside a
//!   `board run` agent session (so identity and process-tree checks are included);
//! - `board ready --json --limit 50` and `board list --json` (all 10 000 tasks);
//! - the board's RSS with 10 000 tasks, after the full lists, and after a burst of 10 000
//!   requests over 16 connections;
//! - minor page faults and peak RSS of one client run, from `/usr/bin/time`.

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use support::{faults, load, report, rss_mib, time_process, time_runs, Bench};

const TASKS: usize = 10_000;
const RUNS: usize = 200;
const LIST_RUNS: usize = 20;
const BURST: usize = 10_000;
const BURST_CONNECTIONS: usize = 16;

/// Inside the agent session: `true`, sqlite3 and claim/done of task i, interleaved.
fn inner(bin: &Path, dir: &Path, copy: &Path) {
    let sqlite = Command::new("sqlite3").arg("-version").output().is_ok();
    let (mut t_true, mut t_sql, mut t_claim, mut t_done) = (vec![], vec![], vec![], vec![]);
    for i in 1..=RUNS {
        let id = i.to_string();
        t_true.push(time_process(&mut Command::new("true")).0);
        if sqlite {
            let stmt = format!(
                "PRAGMA synchronous=NORMAL; UPDATE tasks SET state = 'claimed', \
                 generation = generation + 1, updated_at = 'now' WHERE id = {id} AND state = 'open';"
            );
            let (d, ok) = time_process(Command::new("sqlite3").arg(copy).arg(stmt));
            assert!(ok, "sqlite3 failed");
            t_sql.push(d);
        }
        let (d, ok) = time_process(Command::new(bin).args(["claim", &id]).current_dir(dir));
        assert!(ok, "claim {id} failed");
        t_claim.push(d);
        let (d, ok) = time_process(Command::new(bin).args(["done", &id]).current_dir(dir));
        assert!(ok, "done {id} failed");
        t_done.push(d);
    }
    let t = report("true", t_true);
    if !t_sql.is_empty() {
        report("sqlite3 copy.db 'UPDATE tasks … WHERE id = ?'", t_sql);
    }
    let c = report("board claim ID", t_claim);
    let d = report("board done ID", t_done);
    println!(
        "target (median ≤ 1.5 × true + 0.5 ms = {:.3} ms): claim {:.3} ms, done {:.3} ms",
        1.5 * t.median + 0.5,
        c.median,
        d.median
    );
    let id = (RUNS + 1).to_string();
    for (name, prog, args) in [
        ("true", Path::new("true"), vec![]),
        ("board claim ID", bin, vec!["claim", id.as_str()]),
        ("board done ID", bin, vec!["done", id.as_str()]),
    ] {
        let prog = if name == "true" {
            Path::new("/bin/true")
        } else {
            prog
        };
        if let Some((minor, max_kib)) = faults(prog, &args, dir) {
            println!("{name:<44} minor page faults {minor:>5}   peak RSS {max_kib:>6} KiB");
        }
    }
}

fn burst(b: &Bench) {
    let per = BURST / BURST_CONNECTIONS;
    std::thread::scope(|s| {
        for k in 0..BURST_CONNECTIONS {
            s.spawn(move || {
                let mut c = b.client();
                for i in 0..per {
                    let n = k * per + i;
                    let (m, p) = match n % 100 {
                        0 => ("list", json!({})),
                        x if x % 3 == 0 => ("show", json!({ "task": (n % TASKS) as i64 + 1 })),
                        x if x % 3 == 1 => ("status", json!({})),
                        _ => ("ready", json!({ "limit": 50 })),
                    };
                    let _ = c.call_raw(m, p);
                }
            });
        }
    });
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--inner") {
        inner(
            Path::new(&args[pos + 1]),
            Path::new(&args[pos + 2]),
            Path::new(&args[pos + 3]),
        );
        return;
    }
    let b = Bench::start("");
    let idle = rss_mib(b.pid());
    b.fill(TASKS);
    println!(
        "board of {TASKS} tasks; load average {}; board RSS idle {idle:.1} MiB, after adding {:.1} MiB",
        load(),
        rss_mib(b.pid())
    );
    let limit = b
        .cmd(&["ready", "--json", "--limit", "50"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let ready_args: &[&str] = if limit {
        &["ready", "--json", "--limit", "50"]
    } else {
        &["ready", "--json"]
    };
    report("true", time_runs(RUNS, |_| Command::new("true")));
    report(
        &format!("board {}", ready_args.join(" ")),
        time_runs(RUNS, |_| b.cmd(ready_args)),
    );
    let list = time_runs(LIST_RUNS, |_| b.cmd(&["list", "--json"]));
    let bytes = b.cmd(&["list", "--json"]).output().map(|o| o.stdout.len());
    report("board list --json (all tasks)", list);
    println!(
        "list --json output {} bytes; board RSS after the lists {:.1} MiB",
        bytes.unwrap_or(0),
        rss_mib(b.pid())
    );
    for args in [ready_args, &["list", "--json"]] {
        if let Some((minor, max_kib)) = faults(&b.bin, args, b.root()) {
            println!(
                "board {:<38} minor page faults {minor:>5}   peak RSS {max_kib:>6} KiB",
                args.join(" ")
            );
        }
    }
    let t = std::time::Instant::now();
    burst(&b);
    let took = t.elapsed();
    std::thread::sleep(Duration::from_millis(200));
    println!(
        "burst of {BURST} requests over {BURST_CONNECTIONS} connections in {:.0} ms; board RSS after {:.1} MiB",
        took.as_secs_f64() * 1000.0,
        rss_mib(b.pid())
    );
    // A copy of the database for the sqlite3 baseline, taken through SQLite (WAL-safe).
    let copy = b.root().join("copy.db");
    let _ = Command::new("sqlite3")
        .arg(b.root().join(".board/board.db"))
        .arg(format!("VACUUM INTO '{}'", copy.display()))
        .output();
    let me = std::env::current_exe().expect("bench path");
    let status = b
        .cmd(&["run", "--name", "bench", "--"])
        .arg(me)
        .arg("--inner")
        .arg(&b.bin)
        .arg(b.root())
        .arg(&copy)
        .status()
        .expect("board run");
    assert!(status.success(), "the inner benchmark failed");
}
