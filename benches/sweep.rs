//! One sweep of a board with 10 000 tasks and 200 live agent sessions, each holding one claim,
//! each session's agent a real `sleep` process: the sweep reads their `/proc` entries, samples
//! the CPU time of their trees and renews or holds their claims.
//!
//! Run: `cargo bench --bench sweep`. Cases:
//! - `quiet`: nobody talked and no CPU moved, so every claim is held (reads only);
//! - `all talked`: every session made a request since the last sweep, so every claim is renewed.
//!
//! Baseline in the same run: reading `/proc/PID/stat` of the same 200 processes once each.

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use board::daemon::lease::BootClock;
use board::daemon::state::{Board, OffReactor};
use board::daemon::sweep::sweep_once;
use board::os::procfs;
use board::proto::config::{Config, Paths};
use board::store::{Lease, SqliteStore, Store, TaskId, OPERATOR};
use support::{load, report, thread_cpu, Kids};

const TASKS: usize = 10_000;
const SESSIONS: usize = 200;
const SWEEPS: usize = 30;

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = Config::default();
    let paths = Paths::new(dir.path(), &cfg);
    std::fs::create_dir_all(&paths.data_dir).expect("data dir");
    let mut store = SqliteStore::open(&paths.db).expect("store");
    for i in 1..=TASKS {
        store
            .add_task(&format!("task {i}"), "", 0, &[], OPERATOR, 0)
            .expect("add");
    }
    let boot = procfs::boot_id().unwrap_or_else(|_| "boot".into());
    let clock = BootClock;
    let now = board::daemon::lease::Clock::now_ms(&clock);
    let kids = Kids(
        (0..SESSIONS)
            .map(|_| {
                Command::new("sleep")
                    .arg("600")
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("sleep")
            })
            .collect(),
    );
    let mut ids = Vec::new();
    for (k, child) in kids.0.iter().enumerate() {
        let pid = child.id() as i32;
        let start = procfs::start_time(pid).expect("start time");
        let (id, _) = store
            .register_session(&format!("agent{k}"), "h", &boot, None, None, None)
            .expect("register");
        store
            .attach_session(&id, (pid, start), None)
            .expect("attach");
        store
            .claim(
                &id,
                Some(TaskId(k as i64 + 1)),
                Lease::until(now, now + 3_600_000),
            )
            .expect("claim");
        ids.push(id);
    }
    let board = Arc::new(Board::new(
        vec![Box::new(store)],
        Arc::new(BootClock),
        cfg,
        paths,
        boot,
        false,
    ));
    println!(
        "board of {TASKS} tasks, {SESSIONS} live sessions each with one claim; load average {}",
        load()
    );
    let pids: Vec<i32> = kids.0.iter().map(|c| c.id() as i32).collect();
    // The baseline reads the files the plain way (std::fs::read_to_string), independent of how
    // the board reads them.
    let mut base_cpu = Vec::new();
    let baseline: Vec<Duration> = (0..SWEEPS)
        .map(|_| {
            let (t, c) = (Instant::now(), thread_cpu());
            for p in &pids {
                let _ = std::fs::read_to_string(format!("/proc/{p}/stat"));
            }
            base_cpu.push(thread_cpu() - c);
            t.elapsed()
        })
        .collect();
    report("baseline: read /proc/PID/stat × 200", baseline);
    report("  its CPU time (user + system)", base_cpu);
    let board_reads: Vec<Duration> = (0..SWEEPS)
        .map(|_| {
            let t = Instant::now();
            for p in &pids {
                let _ = procfs::read_stat(*p);
            }
            t.elapsed()
        })
        .collect();
    report("procfs::read_stat × 200 (the board's reader)", board_reads);
    let procs = std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    e.file_name()
                        .to_str()
                        .is_some_and(|n| n.parse::<i32>().is_ok())
                })
                .count()
        })
        .unwrap_or(0);
    println!("processes on the machine: {procs}");
    let off = OffReactor::here().expect("no async runtime on this thread");
    let off = &off;
    // The first sweep only takes CPU samples.
    sweep_once(&board, off).expect("sweep");
    let mut cpu = Vec::new();
    let quiet: Vec<Duration> = (0..SWEEPS)
        .map(|_| {
            let (t, c) = (Instant::now(), thread_cpu());
            sweep_once(&board, off).expect("sweep");
            cpu.push(thread_cpu() - c);
            t.elapsed()
        })
        .collect();
    report("sweep, quiet (all held)", quiet);
    report("  its CPU time (user + system)", std::mem::take(&mut cpu));
    let talked: Vec<Duration> = (0..SWEEPS)
        .map(|_| {
            for id in &ids {
                // What a request with the agent's identity leaves for the sweep.
                mark_talked(&board, id);
            }
            let (t, c) = (Instant::now(), thread_cpu());
            sweep_once(&board, off).expect("sweep");
            cpu.push(thread_cpu() - c);
            t.elapsed()
        })
        .collect();
    report("sweep, all talked (all renewed)", talked);
    report("  its CPU time (user + system)", cpu);
    println!("target: ≤ 5 ms per sweep");
}

fn mark_talked(board: &Board, id: &str) {
    board.note_talked(id);
}
