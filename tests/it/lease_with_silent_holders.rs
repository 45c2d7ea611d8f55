//! Leases and fencing with living-but-silent holders — SIGSTOP, no CPU, waiting
//! for a human, and restarts of the board — on 1–2 s leases and 100 ms sweeps.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::harness::agent::Agent;
use crate::harness::events::*;
use crate::harness::process::*;
use crate::harness::test_board::{Builder, TestBoard};

use crate::harness::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

const SWEEP_MS: i64 = 100;

fn lease(duration: &str, liveness: &str) -> Builder {
    TestBoard::builder()
        .lease(duration)
        .sweep(&format!("{SWEEP_MS}ms"))
        .liveness(liveness)
}

/// `key=value` lines an agent script appended to `file`.
fn results(b: &TestBoard, file: &str) -> BTreeMap<String, String> {
    std::fs::read_to_string(b.root().join(file))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_sigstopped_holder_lapses_and_every_late_write_is_fenced() {
    // `process` liveness: a living idle holder would be renewed forever; only the stop lets its
    // lease run out.
    let b = lease("1s", "process").start();
    b.add_tasks(1);
    let mut ev = b.subscribe();
    let fifo = b.fifo("a.fifo");
    let mut a = b.run_agent(
        "a",
        "board claim 1 >/dev/null || exit 9
         read x < a.fifo
         board done 1 --note 'done by A'; echo done=$? >> a.results
         board done 1 --generation 1; echo done_gen=$? >> a.results
         board note 1 'note from A'; echo note=$? >> a.results
         board release 1; echo release=$? >> a.results
         board renew; echo renew=$? >> a.results
         board check 1; echo check=$? >> a.results",
    );
    let s = b.wait_working("a");
    let pid = s["pid"].as_i64().unwrap() as i32;
    let granted = ev.wait(Duration::from_secs(5), is("grant", "a")).unwrap();
    assert_eq!(granted.1["generation"], 1);

    kill(Pid::from_raw(pid), Signal::SIGSTOP).unwrap();
    let stopped = Instant::now();
    assert!(poll_until(Duration::from_secs(2), || proc_state(pid) == Some('T')));
    let (t, lapse) = ev
        .wait(Duration::from_secs(5), is("lapse", "a"))
        .expect("the stopped holder's claim lapsed");
    println!("lapsed {:?} after SIGSTOP", t - stopped);
    assert_eq!(lapse["task"], 1);
    assert_eq!(lapse["generation"], 1);
    assert!(t - stopped <= Duration::from_millis(1000 + 2 * SWEEP_MS as u64 + 400));
    assert!(b.ready_ids().contains(&1));

    // B takes the task at generation 2 and finishes it, with a note.
    let mut bee = b.run_agent(
        "b",
        "set -e
         out=$(board claim 1); set -- $out; echo gen=$4 >> b.results
         board note 1 'note from B'
         board done 1 --generation $4 --note 'done by B'
         echo ok=1 >> b.results",
    );
    assert!(
        bee.launcher.wait().unwrap().success(),
        "B finished its task"
    );
    assert_eq!(results(&b, "b.results")["gen"], "2");

    // A wakes up and tries every write: all rejected with exit 5 (lapsed).
    kill(Pid::from_raw(pid), Signal::SIGCONT).unwrap();
    poke(&fifo);
    assert!(a.launcher.wait().unwrap().success());
    let r = results(&b, "a.results");
    for w in ["done", "done_gen", "note", "release", "renew", "check"] {
        assert_eq!(
            r.get(w).map(String::as_str),
            Some("5"),
            "A's late `{w}` must exit 5: {r:?}"
        );
    }

    let show = b.show(1);
    assert_eq!(show["task"]["state"], "done");
    assert_eq!(show["task"]["done_by"], "b");
    assert_eq!(show["task"]["generation"], 2);
    let notes: Vec<(&str, &str)> = show["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["author"].as_str().unwrap(), n["text"].as_str().unwrap()))
        .collect();
    assert!(notes.contains(&("b", "note from B")), "{notes:?}");
    assert!(notes.contains(&("b", "done by B")), "{notes:?}");
    assert!(notes.iter().all(|(a, _)| *a == "b"), "{notes:?}");
    // Every rejected write is in the log, with its reason.
    let rejects: Vec<String> = show["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "reject" && e["agent"] == "a")
        .map(|e| e["reason"].as_str().unwrap().to_string())
        .collect();
    for w in ["done", "note", "release"] {
        assert!(
            rejects
                .iter()
                .any(|r| r.starts_with(&format!("{w} rejected"))),
            "no reject event for A's {w}: {rejects:?}"
        );
    }
}

/// An agent that claims task 1 and then sleeps without CPU or board calls. Returns the events
/// stream, the time of the grant, and the agent (kept alive by the caller).
fn silent_holder(b: &TestBoard) -> (Events, Instant, Agent) {
    let mut ev = b.subscribe();
    let a = b.run_agent("quiet", "board claim 1 >/dev/null && exec sleep 300");
    let (granted, _) = ev
        .wait(Duration::from_secs(5), is("grant", "quiet"))
        .expect("claimed");
    b.wait_working("quiet");
    (ev, granted, a)
}

#[test]
fn activity_mode_lapses_a_silent_idle_holder() {
    let b = lease("1s", "activity").start();
    b.add_tasks(1);
    let (mut ev, granted, _a) = silent_holder(&b);
    let (t, e) = ev
        .wait(Duration::from_secs(5), is("lapse", "quiet"))
        .expect("the silent claim lapsed");
    let after = t - granted;
    println!("activity mode: lapsed {after:?} after the grant");
    assert_eq!(e["task"], 1);
    // Never before a whole lease; within a lease plus two sweeps (the grant's own CPU may earn
    // one renewal) and some slack.
    assert!(
        after >= Duration::from_millis(900),
        "lapsed early: {after:?}"
    );
    assert!(after <= Duration::from_millis(1000 + 2 * SWEEP_MS as u64 + 500));
    // Lapsed, not expelled: the agent is alive and its session goes on.
    let s = b.session("quiet").unwrap();
    assert!(s["ended_at"].is_null(), "{s}");
    assert_eq!(s["state"], "idle");
    assert!(b.ready_ids().contains(&1));
}

#[test]
fn process_mode_keeps_a_silent_idle_holder() {
    let b = lease("1s", "process").start();
    b.add_tasks(1);
    let (mut ev, granted, _a) = silent_holder(&b);
    // Watch for 3.5 leases: no lapse, no expel, and the claim stays held throughout.
    let end = granted + Duration::from_millis(3500);
    while Instant::now() < end {
        let e = ev.wait(Duration::from_millis(250), |e| {
            (e["kind"] == "lapse" || e["kind"] == "expel") && e["agent"] == "quiet"
        });
        assert!(e.is_none(), "process mode ended the claim: {e:?}");
        let t = b.show(1)["task"].clone();
        assert_eq!(t["holder"], "quiet", "{t}");
        assert!(t["expires_in_ms"].as_i64().unwrap() > 0, "{t}");
    }
}

#[test]
fn waiting_for_a_human_keeps_the_claim_and_resume_then_silence_lapses_it() {
    let b = lease("1s", "activity").start();
    b.add_tasks(1);
    let mut ev = b.subscribe();
    let fifo = b.fifo("answer.fifo");
    let _a = b.run_agent(
        "asker",
        "board claim 1 >/dev/null || exit 9
         board wait 'which database?' >/dev/null || exit 9
         read x < answer.fifo
         board resume >/dev/null || exit 9
         exec sleep 300",
    );
    let (waiting, _) = ev
        .wait(Duration::from_secs(5), is("question", "asker"))
        .expect("the agent is waiting for a human");
    assert_eq!(b.session("asker").unwrap()["state"], "waiting");
    // Blocked on a read: no CPU, no board call, for 3.5 leases.
    let end = waiting + Duration::from_millis(3500);
    while Instant::now() < end {
        let e = ev.wait(Duration::from_millis(250), |e| {
            (e["kind"] == "lapse" || e["kind"] == "expel") && e["agent"] == "asker"
        });
        assert!(e.is_none(), "a waiting agent lost its claim: {e:?}");
        assert_eq!(b.show(1)["task"]["holder"], "asker");
    }

    poke(&fifo);
    let (resumed, _) = ev
        .wait(Duration::from_secs(5), is("resume", "asker"))
        .expect("resumed");
    let (t, e) = ev
        .wait(Duration::from_secs(5), is("lapse", "asker"))
        .expect("silence after resume lapses the claim");
    let after = t - resumed;
    println!("lapsed {after:?} after resume");
    assert_eq!(e["task"], 1);
    assert!(
        after >= Duration::from_millis(800),
        "lapsed early: {after:?}"
    );
    assert!(after <= Duration::from_millis(1000 + 2 * SWEEP_MS as u64 + 500));
    assert!(b.session("asker").unwrap()["ended_at"].is_null());
}

#[test]
fn restarting_the_board_every_2s_does_not_keep_a_stopped_holders_claim_alive() {
    let mut b = lease("2s", "process").start();
    b.add_tasks(1);
    let a = b.run_agent("held", "board claim 1 >/dev/null && exec sleep 300");
    let s = b.wait_working("held");
    let pid = s["pid"].as_i64().unwrap() as i32;
    kill(Pid::from_raw(pid), Signal::SIGSTOP).unwrap();
    let stopped = Instant::now();
    assert!(poll_until(Duration::from_secs(2), || proc_state(pid) == Some('T')));
    // The expiry set by the last renewal: the deadline it implies (wall clock) stops moving once
    // no sweep renews the stopped holder any more (a sweep may have started before the stop).
    let reading = || {
        let t = b.show(1)["task"].clone();
        let left = t["expires_in_ms"].as_i64().expect("claimed");
        assert!(left > 0 && left <= 2000, "{t}");
        wall_ms() + left
    };
    let mut prev = reading();
    let deadline = poll(Duration::from_secs(2), || {
        std::thread::sleep(Duration::from_millis(2 * SWEEP_MS as u64));
        let d = reading();
        let stable = (d - prev).abs() <= 30;
        prev = d;
        stable.then_some(d)
    })
    .expect("the stopped holder's expiry kept moving");

    // Restart every 2 s, the first one inside the lease, alternating SIGTERM and SIGKILL, until
    // the lapse is in the log and one more restart has happened after it.
    let mut lapse: Option<Value> = None;
    let mut restarts = 0;
    let mut next = stopped + Duration::from_millis(1000);
    let give_up = stopped + Duration::from_secs(9);
    loop {
        let wait = next.saturating_duration_since(Instant::now());
        std::thread::sleep(wait);
        let sig = if restarts % 2 == 0 {
            Signal::SIGTERM
        } else {
            Signal::SIGKILL
        };
        b.kill_serve(sig);
        b.serve();
        restarts += 1;
        println!(
            "restart {restarts} ({sig}) at {:?} after SIGSTOP",
            stopped.elapsed()
        );
        if lapse.is_some() {
            break;
        }
        // Any lapse so far, as the log of the new board process says.
        let found = poll(Duration::from_millis(1900), || {
            b.json(&["log", "--limit", "1000"])["events"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["kind"] == "lapse" && e["agent"] == "held")
                .cloned()
        });
        if found.is_some() {
            lapse = found;
        }
        assert!(
            Instant::now() < give_up,
            "no lapse after {restarts} restarts"
        );
        next += Duration::from_secs(2);
    }
    let lapse = lapse.unwrap();
    let late = event_ms(&lapse) - deadline;
    println!("lapse at {late} ms from the expiry set by the last renewal");
    assert!(
        late <= SWEEP_MS + 300,
        "the lapse came {late} ms after the expiry (one sweep is {SWEEP_MS} ms)"
    );
    assert!(late >= -50, "the lapse came {late} ms before the expiry");
    assert!(restarts >= 2);
    // Still lapsed after the last restart: free, same generation, the session lives on.
    let t = b.show(1)["task"].clone();
    assert_eq!(t["state"], "open", "{t}");
    assert_eq!(t["generation"], 1);
    assert!(b.session("held").unwrap()["ended_at"].is_null());
    kill(Pid::from_raw(pid), Signal::SIGCONT).unwrap();
    drop(a);
}
