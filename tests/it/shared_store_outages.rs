//! The shared PostgreSQL store goes away and comes back: restarted or crashed under load, failed
//! over to a promoted standby, restored from an older copy. No acknowledged write is lost, no
//! client sees an internal error, and no generation is ever issued twice.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::postgres::psql;
use crate::harness::test_board::TestBoard;
use crate::harness::{poll_until, STEP};
use crate::hosts_share_one_store::{cluster, host, host_on, HostSettings, JsonAgent};

/// Host sessions that outlive a server restart: the TTL is well above the outage.
const PATIENT: HostSettings = HostSettings {
    lease: "60s",
    sweep: "1s",
    ttl: "15s",
    heartbeat: "200ms",
};

/// What one agent saw while working the backlog.
#[derive(Default)]
struct Seen {
    done: Vec<i64>,
    kinds: Vec<String>,
}

/// Sends `method` with `op_id` until it is answered by something else than `unavailable` (the
/// store is down): a write applied before its answer was lost is not applied twice. Records
/// every error kind seen in `kinds`.
fn ask(
    agent: &mut JsonAgent,
    method: &str,
    mut params: Value,
    op_id: &str,
    kinds: &mut Vec<String>,
) -> Value {
    params["op_id"] = json!(op_id);
    loop {
        let r = agent.call(method, params.clone());
        let kind = r["error"]["data"]["kind"].as_str().map(String::from);
        if let Some(k) = &kind {
            kinds.push(k.clone());
        }
        if kind.as_deref() != Some("unavailable") {
            return r;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Works the backlog until no task is left: claim the best ready task, finish it, each request
/// asked again with its `op_id` while the store is down.
fn work(agent: &mut JsonAgent, seen: &Mutex<Seen>, progress: &AtomicUsize) {
    let mut n = 0;
    let mut kinds = Vec::new();
    loop {
        n += 1;
        let op = format!("{}-{n}", agent.id);
        let r = ask(agent, "claim", json!({}), &op, &mut kinds);
        let Some(task) = r["result"]["task"]["id"].as_i64() else {
            if r["error"]["data"]["remaining"] == json!(0) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let generation = r["result"]["generation"].clone();
        let op = format!("{}-{n}-done", agent.id);
        let d = ask(
            agent,
            "done",
            json!({"task": task, "generation": generation}),
            &op,
            &mut kinds,
        );
        assert!(d.get("result").is_some(), "done of task {task}: {d}");
        seen.lock().unwrap().done.push(task);
        progress.fetch_add(1, Ordering::SeqCst);
    }
    seen.lock().unwrap().kinds.extend(kinds);
}

/// The server restarted (fast) and then crashed (immediate stop) while four agents on two hosts
/// work a backlog: every acknowledged `done` is still done after, each task is done once, no
/// request got `internal`, and the backlog is finished.
#[test]
fn the_store_restarted_and_crashed_under_load_loses_no_acknowledged_write() {
    let Some(pg) = cluster() else { return };
    const TASKS: usize = 120;
    let hosts = [host(&pg, "a", &PATIENT), host(&pg, "b", &PATIENT)];
    let mut operator = hosts[0].rpc();
    for i in 0..TASKS {
        operator.result("add", json!({"title": format!("task {i}")}));
    }
    let seen = Arc::new(Mutex::new(Seen::default()));
    let progress = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..4)
        .map(|i| {
            let mut agent = JsonAgent::start(&hosts[i % 2], &format!("w{i}"));
            let (seen, progress) = (Arc::clone(&seen), Arc::clone(&progress));
            std::thread::spawn(move || work(&mut agent, &seen, &progress))
        })
        .collect();
    let at = |n: usize| poll_until(STEP * 4, || progress.load(Ordering::SeqCst) >= n);
    assert!(at(20), "no progress before the restart");
    pg.restart().expect("restart the server");
    assert!(at(50), "no progress after the restart");
    pg.crash().expect("crash the server");
    std::thread::sleep(Duration::from_millis(300));
    pg.start_again().expect("start the server again");
    for w in workers {
        w.join().expect("an agent's worker");
    }
    let seen = seen.lock().unwrap();
    let mut done = seen.done.clone();
    done.sort_unstable();
    let before = done.len();
    done.dedup();
    assert_eq!(before, done.len(), "a task acknowledged done twice");
    assert_eq!(done.len(), TASKS, "every task acknowledged done once");
    let listed = hosts[1].json(&["list", "--state", "done"]);
    let stored: Vec<i64> = listed["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter_map(|t| t["id"].as_i64())
        .collect();
    for t in &done {
        assert!(
            stored.contains(t),
            "task {t} was acknowledged done but is not"
        );
    }
    assert!(
        !seen.kinds.iter().any(|k| k == "internal"),
        "a request got internal: {:?}",
        seen.kinds
    );
    let unavailable = seen.kinds.iter().filter(|k| *k == "unavailable").count();
    eprintln!(
        "{TASKS} tasks done once each across a restart and a crash of the server; {unavailable} requests answered unavailable while it was down, none internal"
    );
}

/// Claims and releases `task` `times` times through `agent` (asking again while the store is
/// down); returns the last generation.
fn churn(agent: &mut JsonAgent, task: i64, times: usize) -> i64 {
    let mut g = 0;
    let mut kinds = Vec::new();
    for i in 0..times {
        static OPS: AtomicUsize = AtomicUsize::new(0);
        let op = format!("churn-{task}-{i}-{}", OPS.fetch_add(1, Ordering::SeqCst));
        let r = ask(agent, "claim", json!({"task": task}), &op, &mut kinds);
        g = r["result"]["generation"]
            .as_i64()
            .unwrap_or_else(|| panic!("{r}"));
        let r = ask(
            agent,
            "release",
            json!({"task": task, "generation": g}),
            &format!("{op}-r"),
            &mut kinds,
        );
        assert!(r.get("result").is_some(), "{r}");
    }
    g
}

/// After the outage, `old`'s claim at `generation` must have ended (its `done` refused as
/// `lapsed`, exit 5), and a new claim of `churned` must be above `highest`.
fn assert_new_epoch(
    board: &TestBoard,
    old: &mut JsonAgent,
    task: i64,
    generation: i64,
    churned: i64,
    highest: i64,
) {
    let mut answer = Value::Null;
    let refused = poll_until(STEP * 2, || {
        answer = old.call("done", json!({"task": task, "generation": generation}));
        answer["error"]["data"]["kind"] == "lapsed"
    });
    assert!(refused, "the old holder's done after the outage: {answer}");
    let mut fresh = JsonAgent::start(board, "fresh");
    let r = fresh.call("claim", json!({"task": churned}));
    let g = r["result"]["generation"]
        .as_i64()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(
        g > highest,
        "generation {g} after the outage, {highest} was issued before"
    );
    let log = board.json(&["log", "--limit", "1000"]);
    assert!(
        log["events"]
            .as_array()
            .expect("events")
            .iter()
            .any(|e| e["kind"] == "epoch"),
        "an epoch event"
    );
    eprintln!("old claim refused as lapsed; next generation {g} > {highest}");
}

/// The primary crashes and its standby is promoted (a new timeline). Boards configured with
/// both servers move to the new primary; the claims of the old timeline end, and no generation
/// is issued twice, even one the standby never received.
#[test]
fn a_failover_to_a_promoted_standby_ends_older_claims_and_reuses_no_generation() {
    let Some(primary) = cluster() else { return };
    let standby = primary.standby().expect("a streaming standby");
    let both = format!(
        // The key/value form: a URL's `?host=` takes one socket directory only.
        "user={} dbname=postgres host={},{} target_session_attrs=read-write",
        crate::harness::postgres::USER,
        primary.dir().display(),
        standby.dir().display()
    );
    let a = host_on(&both, "a", &PATIENT).start();
    let t = a.add("held across the failover");
    let u = a.add("claimed many times");
    let mut old = JsonAgent::start(&a, "old");
    let held = old.call("claim", json!({"task": t}))["result"]["generation"]
        .as_i64()
        .expect("generation");
    let replicated = churn(&mut old, u, 5);
    let lsn = psql(&primary.url(), "SELECT pg_current_wal_lsn()");
    assert!(poll_until(STEP, || psql(
        &standby.url(),
        &format!("SELECT pg_last_wal_replay_lsn() >= '{lsn}'")
    ) == "t"));
    // Issued just before the crash: the standby may or may not have received them.
    let lost = churn(&mut old, u, 3);
    assert!(lost > replicated);
    primary.crash().expect("crash the primary");
    standby.promote().expect("promote the standby");
    assert_new_epoch(&a, &mut old, t, held, u, lost);
}

/// The store's database is replaced by an older copy of itself (same server identity and
/// timeline): the board sees the database behind the last event it wrote, opens a new epoch,
/// ends the claims of the copy and raises generations above everything issued since.
#[test]
fn a_store_restored_from_an_older_copy_opens_a_new_epoch() {
    let Some(pg) = cluster() else { return };
    let a = host(&pg, "a", &PATIENT);
    let t = a.add("held in the copy");
    let u = a.add("claimed after the copy");
    let mut old = JsonAgent::start(&a, "old");
    let held = old.call("claim", json!({"task": t}))["result"]["generation"]
        .as_i64()
        .expect("generation");
    let data = pg.dir().join("data");
    let copy = pg.dir().join("data.copy");
    pg.stop().expect("stop the server");
    copy_dir(&data, &copy);
    pg.start_again().expect("start the server");
    let issued = churn(&mut old, u, 4);
    pg.stop().expect("stop the server");
    std::fs::remove_dir_all(&data).expect("remove the data directory");
    std::fs::rename(&copy, &data).expect("restore the copy");
    pg.start_again().expect("start the restored server");
    assert_new_epoch(&a, &mut old, t, held, u, issued);
}

/// `cp -a`: ownership (the server's user) and modes are kept.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp");
    assert!(st.success(), "cp -a {} {}", from.display(), to.display());
}
