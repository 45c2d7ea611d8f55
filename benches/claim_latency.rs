//! Benchmark: wall time of `board claim` and `board done` as whole processes, as an agent calls
//! them from its shell tool, against a real board in a temporary directory.
//!
//! Run: `cargo bench --bench claim_latency` (builds the release binary first). Prints min,
//! median, p95 and max over 100 runs of each command.

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 100;

fn board_bin() -> PathBuf {
    // benches run from target/release/deps; the binary is in target/release.
    let exe = std::env::current_exe().expect("bench path");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    dir.join("board")
}

fn stats(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name:<14} n={:<4} min {:>6.2} ms  median {:>6.2} ms  p95 {:>6.2} ms  max {:>6.2} ms",
        v.len(),
        ms(v[0]),
        ms(v[v.len() / 2]),
        ms(v[v.len() * 95 / 100]),
        ms(v[v.len() - 1])
    );
}

fn run(bin: &Path, dir: &Path, args: &[&str]) -> (Duration, bool) {
    let t = Instant::now();
    let ok = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    (t.elapsed(), ok)
}

/// Inside the agent session: claim and finish RUNS tasks, timing each process.
fn inner(dir: &Path) {
    let bin = board_bin();
    let (mut claims, mut dones) = (Vec::new(), Vec::new());
    for i in 1..=RUNS {
        let (d, ok) = run(&bin, dir, &["claim", &i.to_string()]);
        assert!(ok, "claim {i} failed");
        claims.push(d);
        let (d, ok) = run(&bin, dir, &["done", &i.to_string()]);
        assert!(ok, "done {i} failed");
        dones.push(d);
    }
    stats("board claim", claims);
    stats("board done", dones);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--inner") {
        inner(Path::new(&args[pos + 1]));
        return;
    }
    let bin = board_bin();
    if !bin.exists() {
        eprintln!(
            "skipped: {} not built (run `cargo build --release` first)",
            bin.display()
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    assert!(Command::new(&bin)
        .arg("init")
        .current_dir(dir)
        .output()
        .expect("init")
        .status
        .success());
    let mut serve = Command::new(&bin)
        .arg("serve")
        .current_dir(dir)
        .spawn()
        .expect("serve");
    let mut reads = Vec::new();
    for i in 1..=RUNS {
        let (_, ok) = run(&bin, dir, &["add", &format!("task {i}")]);
        assert!(ok, "add failed");
    }
    for _ in 0..RUNS {
        reads.push(run(&bin, dir, &["ready", "--json"]).0);
    }
    stats("board ready", reads);
    let me = std::env::current_exe().expect("exe");
    let status = Command::new(&bin)
        .args(["run", "--name", "bench", "--"])
        .arg(me)
        .arg("--inner")
        .arg(dir)
        .current_dir(dir)
        .status()
        .expect("board run");
    assert!(status.success());
    let _ = Command::new(&bin).arg("stop").current_dir(dir).output();
    let _ = serve.wait();
}
