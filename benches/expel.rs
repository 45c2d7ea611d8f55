//! Expel delay at 200 live agent sessions: the time from `kill -9` of an agent's process to the
//! `expel` event of its task (the task is ready again in the same transaction), seen by a
//! subscriber on the board's socket. Every session is a real `board run` whose agent claimed one
//! task and then became `sleep`.
//!
//! Run: `cargo bench --bench expel`. Baseline in the same run: the time from `kill -9` of a
//! plain child `sleep` to this program seeing it exit (`waitpid` polling every 100 µs).

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use support::{load, report, Bench, Kids};

const SESSIONS: usize = 200;
const KILLS: usize = 60;

fn main() {
    let b = Bench::start("");
    // Every twentieth task of `fill` waits for the one before it: claim only the others.
    b.fill(SESSIONS * 2);
    let free: Vec<usize> = (1..=SESSIONS * 2).filter(|i| i % 20 != 0).collect();
    let bin = b.bin.to_string_lossy().to_string();
    let t = Instant::now();
    let kids = Kids(
        (0..SESSIONS)
            .map(|k| {
                let script = format!("{bin} claim {} >/dev/null && exec sleep 600", free[k]);
                b.cmd(&["run", "--name", &format!("e{k}"), "--", "sh", "-c", &script])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("board run")
            })
            .collect(),
    );
    let mut c = b.client();
    let deadline = Instant::now() + Duration::from_secs(120);
    let agents = loop {
        let v = c.call_raw("agents", json!({})).expect("agents");
        let list = v["agents"].as_array().cloned().unwrap_or_default();
        let working: Vec<Value> = list
            .into_iter()
            .filter(|a| a["claims"].as_array().is_some_and(|c| c.len() == 1))
            .collect();
        if working.len() == SESSIONS {
            break working;
        }
        assert!(
            Instant::now() < deadline,
            "only {} of {SESSIONS} sessions hold their claim",
            working.len()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    println!(
        "{SESSIONS} live sessions with one claim each, started in {:.1} s; load average {}",
        t.elapsed().as_secs_f64(),
        load()
    );
    let (tx, rx) = mpsc::channel::<(i64, Instant)>();
    let sub = b.client();
    std::thread::spawn(move || {
        let _ = sub.follow(None, |e| {
            if e["kind"] == "expel" {
                if let Some(t) = e["task"].as_i64() {
                    return tx.send((t, Instant::now())).is_ok();
                }
            }
            true
        });
    });
    // Let the subscription settle before the first kill.
    std::thread::sleep(Duration::from_millis(200));
    let mut delays = Vec::new();
    for a in agents.iter().take(KILLS) {
        let pid = a["pid"].as_i64().expect("agent pid") as i32;
        let task = a["claims"][0].as_i64().expect("claim");
        let t = Instant::now();
        kill(Pid::from_raw(pid), Signal::SIGKILL).expect("kill");
        loop {
            let (got, at) = rx
                .recv_timeout(Duration::from_secs(10))
                .expect("expel event");
            if got == task {
                delays.push(at - t);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut base = Vec::new();
    for _ in 0..KILLS {
        let mut s = Command::new("sleep").arg("600").spawn().expect("sleep");
        let t = Instant::now();
        let _ = s.kill();
        while s.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_micros(100));
        }
        base.push(t.elapsed());
    }
    report("baseline: kill -9 child → seen exited", base);
    let s = report(
        &format!("kill -9 agent → expel event ({SESSIONS} live)"),
        delays,
    );
    println!(
        "target: p99 ≤ 20 ms; p99 {:.3} ms; load average {}",
        s.p99,
        load()
    );
    drop(kids);
}
