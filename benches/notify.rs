//! Whether notifications slow the board: `board claim ID` from inside a `board run` agent
//! session while events that make notices keep firing (the agent sends the operator a message
//! before every claim, and a second connection sends one every 5 ms), on a board whose
//! `[notify] command` hangs (`sleep 60`, killed after `command_timeout = "60s"`) beside the same
//! on a board without a notify command, in the same run, in alternating rounds.
//!
//! Run: `cargo bench --bench notify` (cargo builds the release binary first).

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use support::{load, report, time_process, Bench};

/// Claims per round; rounds per board.
const RUNS: usize = 100;
const ROUNDS: usize = 2;

/// Inside an agent session of the board in `dir`: before each claim a message to the operator
/// (a notice), then `board claim ID` (timed) and `board done ID`. Prints one duration in
/// microseconds a line.
fn inner(bin: &Path, dir: &Path, first: usize) {
    for i in first..first + RUNS {
        let id = i.to_string();
        let sent = Command::new(bin)
            .args(["send", "operator", &format!("progress on #{id}")])
            .current_dir(dir)
            .output()
            .expect("send");
        assert!(sent.status.success(), "send failed: {sent:?}");
        let (d, ok) = time_process(Command::new(bin).args(["claim", &id]).current_dir(dir));
        // A refused claim (the machine so loaded that an answer took longer than the client's
        // wait) is counted, not timed.
        if !ok {
            println!("failed");
            continue;
        }
        let _ = time_process(Command::new(bin).args(["done", &id]).current_dir(dir));
        println!("{}", d.as_micros());
    }
}

/// One round on board `b`: the inner loop in an agent session, while an operator connection
/// sends the operator a message every 5 ms (more `message` events, none of them a notice: only
/// an agent's message to the operator is; they keep the event bus busy).
fn round(b: &Bench, first: usize) -> Vec<Duration> {
    let me = std::env::current_exe().expect("bench path");
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut c = b.client();
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let _ = c.call_raw(
                    "send",
                    json!({"to": "operator", "text": format!("noise {n}")}),
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let out = b
            .cmd(&["run", "--name", "bench", "--"])
            .arg(&me)
            .arg("--inner")
            .arg(&b.bin)
            .arg(b.root())
            .arg(first.to_string())
            .output()
            .expect("board run");
        stop.store(true, Ordering::Relaxed);
        assert!(out.status.success(), "the inner benchmark failed: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let failed = text.lines().filter(|l| *l == "failed").count();
        if failed > 0 {
            println!("{failed} claims of this round failed");
        }
        text.lines()
            .filter_map(|l| l.trim().parse::<u64>().ok())
            .map(Duration::from_micros)
            .collect()
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--inner") {
        inner(
            Path::new(&args[pos + 1]),
            Path::new(&args[pos + 2]),
            args[pos + 3].parse().expect("first task"),
        );
        return;
    }
    let quiet = Bench::start("[notify]\nterminal = false\n");
    let hanging = Bench::start(
        "[notify]\nterminal = false\ncommand = [\"sleep\", \"60\"]\ncommand_timeout = \"60s\"\n",
    );
    for b in [&quiet, &hanging] {
        b.fill(RUNS * ROUNDS);
    }
    println!("load average {}", load());
    let (mut q, mut h) = (Vec::new(), Vec::new());
    for r in 0..ROUNDS {
        let first = r * RUNS + 1;
        q.extend(round(&quiet, first));
        h.extend(round(&hanging, first));
    }
    report("board claim ID, no notify command", q);
    report("board claim ID, notify command hangs (sleep 60)", h);
    let sleeps = Command::new("pgrep")
        .args(["-c", "-P", &hanging.pid().to_string(), "sleep"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!(
        "notify commands of the hanging board running at the end: {sleeps} (one at a time: what queues behind it is coalesced or dropped); load average {}",
        load()
    );
}
