//! Hosts sharing one PostgreSQL store ride out what happens to it: an outage answers
//! `unavailable` (exit 8) naming the store, whatever the server says while it refuses
//! connections; a setting to fix is a usage error (exit 2) naming what is wrong; a restore, a
//! lost host and an ended agent session are told as what they are.

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::harness::postgres::psql;
use crate::harness::postgres::Cluster;
use crate::harness::test_board::TestBoard;
use crate::harness::{poll_until, STEP};
use crate::hosts_share_one_store::{cluster, host, host_on, HostSettings, JsonAgent, QUICK};

/// While the store's database refuses connections (`ALLOW_CONNECTIONS false`: SQLSTATE 55000
/// on connect) every call answers `unavailable` (exit 8) naming the store, never `internal`;
/// once it accepts them again, calls succeed.
#[test]
fn a_database_refusing_connections_answers_unavailable_naming_the_store() {
    let Some(pg) = cluster() else { return };
    let url = pg.create_database("refusing").expect("a database");
    let a = host_on(&url, "a", &QUICK).start();
    a.add("before the outage");
    psql(&pg.url(), "ALTER DATABASE refusing ALLOW_CONNECTIONS false");
    psql(
        &pg.url(),
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'refusing'",
    );
    let mut codes = Vec::new();
    let mut refused_now = false;
    for _ in 0..20 {
        let out = a.board_json(&["list"]);
        let (v, code) = out.json_and_code();
        assert_eq!(
            code, 8,
            "a call while the database refuses connections: {out:?}"
        );
        assert_eq!(v["data"]["kind"], "unavailable", "{v}");
        let message = v["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("PostgreSQL store at postgres://board@"),
            "the message names the store: {message}"
        );
        refused_now |= v["data"]["sqlstate"] == "55000";
        codes.push(code);
        std::thread::sleep(Duration::from_millis(150));
    }
    assert!(
        refused_now,
        "no call met the refusal itself (55000): exits {codes:?}"
    );
    psql(&pg.url(), "ALTER DATABASE refusing ALLOW_CONNECTIONS true");
    let back = poll_until(STEP, || a.board(&["list"]).success());
    assert!(back, "calls succeed once the database accepts connections");
}

/// Replaces the cluster's client authentication: the test's superuser `board` keeps trust,
/// role `pw` (password `right`) must give its password.
fn require_passwords(pg: &Cluster) {
    psql(&pg.url(), "CREATE ROLE pw LOGIN PASSWORD 'right'");
    psql(&pg.url(), "CREATE DATABASE pwdb OWNER pw");
    let hba = pg.dir().join("data").join("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all board trust\nlocal all pw scram-sha-256\nhost all all 127.0.0.1/32 scram-sha-256\n",
    )
    .expect("write pg_hba.conf");
    assert_eq!(psql(&pg.url(), "SELECT pg_reload_conf()"), "t");
}

/// `board serve` with a store setting to fix exits 2 and names what is wrong: a URL that does
/// not parse names the option, a URL without the password the server asks for says so, a
/// refused password or a missing database names the refusal. None says "unreachable".
#[test]
fn store_settings_to_fix_are_usage_errors_naming_what_is_wrong() {
    let Some(pg) = cluster() else { return };
    require_passwords(&pg);
    let base = pg.url_for("pwdb");
    let cases = [
        ("postgres://board@localhost:notaport/db".to_string(), "port"),
        ("host=/tmp port=abc".to_string(), "port"),
        (base.replace("board@", "pw@"), "password"),
        (base.replace("board@", "pw:wrong@"), "password is refused"),
        (pg.url_for("nosuchdb"), "database does not exist"),
    ];
    for (url, names) in cases {
        let b = host_on(&url, "a", &QUICK).unserved();
        let out = b.board(&["serve"]);
        assert_eq!(out.code, 2, "serve on {url}: {out:?}");
        assert!(out.stderr.contains(names), "serve on {url}: {out:?}");
        assert!(
            !out.stderr.contains("unreachable"),
            "serve on {url}: {out:?}"
        );
        assert!(
            !out.stderr.contains("wrong"),
            "the password is shown: {out:?}"
        );
    }
    // The right password in the URL: the board serves.
    let mut ok = host_on(&base.replace("board@", "pw:right@"), "a", &QUICK).unserved();
    ok.serve();
    assert!(ok.board(&["list"]).success());
}

/// Host A's board frozen past its TTL: host B ends it, B's agent takes the task and finishes
/// it. A's agent, whose session ended with its host, then tries `done`: refused (exit 5)
/// saying the task is done and by whom, and the refusal is logged as a `reject` event.
#[test]
fn a_lost_hosts_agent_is_told_its_task_was_done_and_the_refusal_is_logged() {
    let Some(pg) = cluster() else { return };
    let mut a = host(&pg, "a", &QUICK);
    let b = host(&pg, "b", &QUICK);
    let task = a.add("finished elsewhere");
    let mut old = a.agent("old");
    let generation = old.claim(task);
    let board_a = a.serve_pid().expect("host a served");
    kill(Pid::from_raw(board_a), Signal::SIGSTOP).expect("SIGSTOP host a's board");
    let freed = poll_until(STEP, || b.ready_ids().contains(&task));
    let mut new = b.agent("new");
    if freed {
        let g = new.claim(task);
        new.board(&["done", &task.to_string(), "--generation", &g.to_string()])
            .ok();
    }
    kill(Pid::from_raw(board_a), Signal::SIGCONT).expect("SIGCONT host a's board");
    assert!(freed, "host a's claim never ended");
    let refused = old.board(&[
        "done",
        &task.to_string(),
        "--generation",
        &generation.to_string(),
    ]);
    assert_eq!(refused.code, 5, "{refused:?}");
    let said = format!("task {task} is done (by {})", new.id);
    assert!(refused.stderr.contains(&said), "{refused:?}");
    let rejected = poll_until(STEP, || {
        let log = b.json(&["log", "--limit", "1000"]);
        log["events"].as_array().is_some_and(|evs| {
            evs.iter().any(|e| {
                e["kind"] == "reject" && e["task"] == task && e["agent"] == old.id.as_str()
            })
        })
    });
    assert!(rejected, "no reject event for the ended session's done");
    a.stop();
}

/// Host sessions that outlive a server restart: the TTL is well above the outage.
const PATIENT: HostSettings = HostSettings {
    lease: "60s",
    sweep: "1s",
    ttl: "15s",
    heartbeat: "200ms",
};

/// `cp -a FROM TO` (ownership and modes kept).
fn copy_dir(from: &Path, to: &Path) {
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp");
    assert!(st.success(), "cp -a {} {}", from.display(), to.display());
}

/// Runs `board ARGS` on `board` until the store answers (it may be reconnecting).
fn once_back(board: &TestBoard, args: &[&str]) -> Value {
    let mut last = None;
    let ok = poll_until(STEP, || {
        let out = board.board_json(args);
        let done = out.success();
        last = Some(out);
        done
    });
    let out = last.expect("ran");
    assert!(ok, "{out:?}");
    out.json()
}

/// Two hosts wrote after the copy their store is then restored to: the first to notice opens
/// one epoch, the other finds its loss covered by it (generations jump once, not once per
/// host); an agent whose session began after the copy is told the store was restored and to
/// start again, not that it runs outside `board run`.
#[test]
fn a_restore_two_hosts_notice_opens_one_epoch_and_tells_newer_agents_why() {
    let Some(pg) = cluster() else { return };
    let a = host(&pg, "a", &PATIENT);
    let b = host(&pg, "b", &PATIENT);
    let task = a.add("claimed after the copy");
    let data = pg.dir().join("data");
    let copy = pg.dir().join("data.copy");
    pg.stop().expect("stop the server");
    copy_dir(&data, &copy);
    pg.start_again().expect("start the server");
    once_back(&a, &["list"]);
    once_back(&b, &["list"]);
    let mut late = JsonAgent::start(&b, "late");
    let mut highest = 0;
    for agent in [&mut late, &mut JsonAgent::start(&a, "early")] {
        for _ in 0..3 {
            let mut r = Value::Null;
            let granted = poll_until(STEP, || {
                r = agent.call("claim", json!({"task": task}));
                r.get("result").is_some()
            });
            assert!(granted, "{r}");
            let g = r["result"]["generation"].as_i64().expect("generation");
            highest = highest.max(g);
            let r = agent.call("release", json!({"task": task, "generation": g}));
            assert!(r.get("result").is_some(), "{r}");
        }
    }
    pg.stop().expect("stop the server");
    std::fs::remove_dir_all(&data).expect("remove the data directory");
    std::fs::rename(&copy, &data).expect("restore the copy");
    pg.start_again().expect("start the restored server");
    once_back(&a, &["add", "after the restore, on a"]);
    once_back(&b, &["add", "after the restore, on b"]);
    // Every connection of both boards has checked the epoch by now (heartbeats reconnect
    // theirs every 200 ms): wait a few beats more.
    std::thread::sleep(Duration::from_millis(1000));
    let log = once_back(&b, &["log", "--limit", "1000"]);
    let epochs: Vec<&Value> = log["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["kind"] == "epoch")
        .collect();
    assert_eq!(epochs.len(), 1, "one restore, one epoch: {epochs:?}");
    let mut fresh = JsonAgent::start(&b, "fresh");
    let r = fresh.call("claim", json!({"task": task}));
    let g = r["result"]["generation"]
        .as_i64()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(
        g > highest && g <= highest + 1_000_000 + 10,
        "generation {g} after the restore; {highest} was issued before it"
    );
    let r = late.call("note", json!({"task": task, "text": "still here?"}));
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(r["error"]["data"]["kind"], "unauthorized", "{r}");
    assert!(
        message.contains("restored") && message.contains("board run"),
        "the late agent is told what happened: {message}"
    );
}

/// The board's log (`.board/board.log`).
fn board_log(board: &TestBoard) -> String {
    std::fs::read_to_string(board.root().join(".board").join("board.log")).unwrap_or_default()
}

/// A second board under a host name in use takes it over; the first stops and its log says
/// why in one clean sentence. Connecting never logs the server's notice about
/// `schema_migrations` (it exists already for every board but the first).
#[test]
fn a_taken_host_name_is_said_cleanly_and_connects_log_no_schema_notice() {
    let Some(pg) = cluster() else { return };
    let first = host(&pg, "same", &QUICK);
    let pid = first.serve_pid().expect("served");
    let second = host(&pg, "same", &QUICK);
    let stopped = poll_until(STEP, || {
        kill(Pid::from_raw(pid), None).is_err()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    });
    assert!(stopped, "the first board stops");
    let log = board_log(&first);
    let start = log.find("another board").expect("the reason is logged");
    let end = log[start..].find("[store] host").expect("the advice") + start;
    let sentence = &log[start..end];
    assert!(!sentence.contains("  "), "runs of spaces: {sentence:?}");
    assert!(second.board(&["list"]).success());
    for b in [&first, &second] {
        let log = board_log(b);
        assert!(
            !log.contains("schema_migrations"),
            "a connect logged the schema notice:\n{log}"
        );
    }
}

/// `board log --follow` rides out a store outage longer than any client timeout: it says on
/// stderr that the store is unreachable, keeps running, and shows what happens once it is
/// back.
#[test]
fn log_follow_rides_out_a_store_outage_of_any_length() {
    let Some(pg) = cluster() else { return };
    let a = host(&pg, "a", &PATIENT);
    a.add("before the outage");
    let out = a.root().join("follow.out");
    let err = a.root().join("follow.err");
    let mut follow = a
        .board_cmd(&["log", "--follow"])
        .env("BOARD_TIMEOUT", "1s")
        .stdout(std::fs::File::create(&out).expect("follow.out"))
        .stderr(std::fs::File::create(&err).expect("follow.err"))
        .spawn()
        .expect("board log --follow");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    assert!(poll_until(STEP, || read(&out).contains("before the outage")));
    pg.stop().expect("stop the server");
    // Several client timeouts and more than the board's own 10 s wait for a board.
    let told = poll_until(STEP, || read(&err).contains("unreachable"));
    std::thread::sleep(Duration::from_secs(12));
    let running = follow.try_wait().expect("wait").is_none();
    pg.start_again().expect("start the server");
    assert!(running, "board log --follow exited: {}", read(&err));
    assert!(
        told,
        "stderr says the store is unreachable: {}{}",
        read(&err),
        read(&out)
    );
    once_back(&a, &["add", "after the outage"]);
    let shown = poll_until(STEP, || read(&out).contains("after the outage"));
    let _ = follow.kill();
    let _ = follow.wait();
    assert!(shown, "the event after the outage is shown: {}", read(&out));
}

/// Whether the board of host `name` holds the store's write lock now (a backend of
/// `application_name = board NAME` with a granted advisory lock).
fn holds_write_lock(pg: &Cluster, name: &str) -> bool {
    psql(
        &pg.url(),
        &format!(
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) \
             WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = 'board {name}'"
        ),
    ) != "0"
}

/// Host A's board freezes (SIGSTOP) in the middle of a long import, holding the store's
/// write lock: within the stated bound (an idle transaction lives 10 s) the server ends A's
/// transaction, B's writes go through, and B's host session is never ended; A's import is
/// applied all or nothing.
#[test]
fn a_host_frozen_holding_the_write_lock_stops_other_writes_for_a_bounded_time() {
    let Some(pg) = cluster() else { return };
    let url = pg.create_database("frozen").expect("a database");
    let settings = HostSettings {
        lease: "60s",
        sweep: "1s",
        ttl: "30s",
        heartbeat: "200ms",
    };
    let mut a = host_on(&url, "a", &settings).start();
    let b = host_on(&url, "b", &settings).start();
    let plan = a.root().join("plan.md");
    let lines: String = (0..4000).map(|i| format!("- [ ] imported {i}\n")).collect();
    std::fs::write(&plan, lines).expect("plan.md");
    let board_a = Pid::from_raw(a.serve_pid().expect("host a served"));
    let mut import = a
        .board_cmd(&["import", plan.to_str().expect("utf-8 path")])
        .env("BOARD_TIMEOUT", "60s")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("board import");
    let caught = poll_until(STEP, || holds_write_lock(&pg, "a"));
    assert!(caught, "host a's import never held the write lock");
    kill(board_a, Signal::SIGSTOP).expect("SIGSTOP host a's board");
    let still = holds_write_lock(&pg, "a");
    let t0 = std::time::Instant::now();
    let mut wrote = None;
    let through = poll_until(Duration::from_secs(20), || {
        let out = b.board_json(&["add", "written by b"]);
        let ok = out.success();
        wrote = Some(out);
        ok
    });
    let took = t0.elapsed();
    let (_, ended) = {
        let v = b.call("status", serde_json::json!({})).unwrap_or_default();
        let hosts = v["hosts"].as_array().cloned().unwrap_or_default();
        let live: Vec<Value> = hosts
            .iter()
            .filter(|h| h["ended_at"].is_null())
            .cloned()
            .collect();
        let ended: Vec<Value> = hosts
            .iter()
            .filter(|h| h["name"] == "b" && !h["ended_at"].is_null())
            .cloned()
            .collect();
        (live, ended)
    };
    kill(board_a, Signal::SIGCONT).expect("SIGCONT host a's board");
    let _ = import.wait();
    assert!(
        still,
        "host a's board was frozen after its transaction ended: nothing to test"
    );
    assert!(through, "b's write never went through: {wrote:?}");
    assert!(
        took <= Duration::from_secs(13),
        "b's write waited {took:?} (bound: 10 s idle transaction)"
    );
    assert!(ended.is_empty(), "host b was ended: {ended:?}");
    let imported: usize = b.json(&["list", "--limit", "5000"])["tasks"]
        .as_array()
        .map_or(0, |t| {
            t.iter()
                .filter(|t| {
                    t["title"]
                        .as_str()
                        .is_some_and(|s| s.starts_with("imported"))
                })
                .count()
        });
    assert!(
        imported == 0 || imported == 4000,
        "the import was applied in part: {imported} tasks"
    );
    eprintln!("host a frozen holding the write lock: b's write went through after {took:?}");
    a.stop();
}
