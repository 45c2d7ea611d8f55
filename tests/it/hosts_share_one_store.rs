//! Boards on several hosts share one PostgreSQL store: the same lease rules and fences hold
//! across hosts. Each "host" is a `board serve` with its own data directory and host name,
//! all pointed at one private PostgreSQL cluster the test starts; a frozen host is a board
//! stopped with SIGSTOP.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::harness::postgres::psql;
use crate::harness::postgres::Cluster;
use crate::harness::test_board::{Builder, TestBoard};
use crate::harness::{poll, poll_until, BOARD, STEP};

/// A host's board on the shared store: lease `lease`, sweep `sweep`, host session TTL
/// `ttl` renewed every `heartbeat`.
pub(crate) struct HostSettings {
    pub(crate) lease: &'static str,
    pub(crate) sweep: &'static str,
    pub(crate) ttl: &'static str,
    pub(crate) heartbeat: &'static str,
}

pub(crate) const QUICK: HostSettings = HostSettings {
    lease: "60s",
    sweep: "1s",
    ttl: "2s",
    heartbeat: "200ms",
};

/// Starts host `name`'s board on `pg`.
pub(crate) fn host(pg: &Cluster, name: &str, s: &HostSettings) -> TestBoard {
    host_on(&pg.url(), name, s).start()
}

/// Host `name`'s board on the store at `url`, not served yet.
pub(crate) fn host_on(url: &str, name: &str, s: &HostSettings) -> Builder {
    TestBoard::builder()
        .lease(s.lease)
        .sweep(s.sweep)
        .config(&format!(
            "[store]\nkind = \"postgres\"\nurl = \"{url}\"\nhost = \"{name}\"\n\
         host_ttl = \"{}\"\nheartbeat = \"{}\"\n",
            s.ttl, s.heartbeat
        ))
}

/// The cluster, or None with the reason printed (PostgreSQL not installed here).
pub(crate) fn cluster() -> Option<Cluster> {
    if let Some(why) = crate::harness::postgres::skip_reason() {
        eprintln!("skipped: {why}");
        return None;
    }
    Some(Cluster::start().unwrap_or_else(|e| panic!("a private PostgreSQL cluster: {e}")))
}

/// An agent session whose agent is `board json`: the test writes JSON-RPC lines to it, as
/// an agent's tooling would, with the session's identity.
pub(crate) struct JsonAgent {
    pub(crate) id: String,
    launcher: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
}

impl JsonAgent {
    pub(crate) fn start(board: &TestBoard, name: &str) -> JsonAgent {
        JsonAgent::start_via(board, name, &[])
    }

    /// Starts `WRAPPER… board run --name NAME -- board json` (e.g. `nsenter` into the board's
    /// time namespace, so both read the same process start times).
    fn start_via(board: &TestBoard, name: &str, wrapper: &[&str]) -> JsonAgent {
        let mut cmd = match wrapper.split_first() {
            None => board.command(BOARD),
            Some((program, args)) => {
                let mut c = board.command(program);
                c.args(args).arg(BOARD);
                c
            }
        };
        cmd.args(["run", "--name", name, "--", "board", "json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut launcher = cmd.spawn().expect("spawn board run");
        let input = launcher.stdin.take().expect("stdin");
        let output = BufReader::new(launcher.stdout.take().expect("stdout"));
        let mut a = JsonAgent {
            id: String::new(),
            launcher,
            input,
            output,
            next: 1,
        };
        let hello = a.call("hello", json!({}));
        a.id = hello["result"]["caller"]
            .as_str()
            .unwrap_or_else(|| panic!("hello without an agent: {hello}"))
            .to_string();
        a
    }

    pub(crate) fn send(&mut self, method: &str, params: Value) {
        let req = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        self.next += 1;
        writeln!(self.input, "{req}").expect("write to board json");
    }

    pub(crate) fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.output.read_line(&mut line).expect("read board json");
        assert!(n > 0, "board json of {} closed its output", self.id);
        serde_json::from_str(&line).expect("a JSON answer")
    }

    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params);
        self.recv()
    }

    /// The pid of the agent process (`board json`, the launcher's child).
    fn agent_pid(&self) -> i32 {
        let children = format!("/proc/{0}/task/{0}/children", self.launcher.id());
        let pid = poll(STEP, || {
            std::fs::read_to_string(&children)
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse().ok())
        });
        pid.expect("board run has its agent child")
    }
}

impl Drop for JsonAgent {
    fn drop(&mut self) {
        let _ = self.launcher.kill();
        let _ = self.launcher.wait();
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// 16 agents on 3 hosts claim the same task at once, round after round: exactly one wins each
/// round and finishes it; then claim-next hands 16 agents 16 different tasks; no task is ever
/// done twice.
#[test]
fn sixteen_agents_on_three_hosts_race_and_one_wins_every_round() {
    let Some(pg) = cluster() else { return };
    let hosts: Vec<TestBoard> = ["a", "b", "c"]
        .iter()
        .map(|h| host(&pg, h, &QUICK))
        .collect();
    let mut agents: Vec<JsonAgent> = (0..16)
        .map(|i| JsonAgent::start(&hosts[i % 3], &format!("r{i}")))
        .collect();
    let mut operator = hosts[0].rpc();
    let rounds: usize = std::env::var("BOARD_RACE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    for round in 0..rounds {
        let task = operator.result("add", json!({"title": format!("round {round}")}))["task"]["id"]
            .as_i64()
            .expect("task id");
        for a in agents.iter_mut() {
            a.send("claim", json!({"task": task}));
        }
        let answers: Vec<Value> = agents.iter_mut().map(|a| a.recv()).collect();
        let winners: Vec<usize> = (0..answers.len())
            .filter(|&i| answers[i].get("result").is_some())
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {answers:?}");
        for (i, a) in answers.iter().enumerate() {
            if i != winners[0] {
                assert_eq!(a["error"]["data"]["kind"], "conflict", "round {round}: {a}");
            }
        }
        let w = &mut agents[winners[0]];
        let generation = answers[winners[0]]["result"]["generation"].clone();
        let done = w.call("done", json!({"task": task, "generation": generation}));
        assert!(done.get("result").is_some(), "round {round}: {done}");
    }
    let ids: Vec<i64> = (0..16)
        .map(|i| {
            operator.result("add", json!({"title": format!("next {i}")}))["task"]["id"]
                .as_i64()
                .expect("task id")
        })
        .collect();
    for a in agents.iter_mut() {
        a.send("claim", json!({}));
    }
    let mut got: Vec<i64> = agents
        .iter_mut()
        .map(|a| {
            let r = a.recv();
            r["result"]["task"]["id"]
                .as_i64()
                .unwrap_or_else(|| panic!("claim-next failed: {r}"))
        })
        .collect();
    got.sort_unstable();
    assert_eq!(got, ids, "claim-next handed out distinct tasks");
    let log = hosts[2].json(&["log", "--limit", "100000"]);
    let mut done_per_task = std::collections::BTreeMap::<i64, usize>::new();
    for e in log["events"].as_array().expect("events") {
        if e["kind"] == "done" {
            *done_per_task
                .entry(e["task"].as_i64().unwrap())
                .or_default() += 1;
        }
    }
    assert_eq!(done_per_task.len(), rounds, "every round's task done");
    assert!(
        done_per_task.values().all(|&n| n == 1),
        "a task done twice: {done_per_task:?}"
    );
    eprintln!("{rounds} rounds of 16 agents on 3 hosts: one winner each, no task done twice");
}

/// `kill -9` of an agent on host A: its claim is expelled at once through the store, so its
/// task is ready on host B moments later. Prints the latency over 20 kills.
#[test]
fn an_agent_killed_on_one_host_frees_its_task_on_another_at_once() {
    let Some(pg) = cluster() else { return };
    let a = host(&pg, "a", &QUICK);
    let b = host(&pg, "b", &QUICK);
    let mut samples = Vec::new();
    for i in 0..20 {
        let task = b.add(&format!("task {i}"));
        let mut agent = JsonAgent::start(&a, &format!("k{i}"));
        let r = agent.call("claim", json!({"task": task}));
        assert!(r.get("result").is_some(), "{r}");
        assert!(!b.ready_ids().contains(&task));
        let pid = agent.agent_pid();
        let t0 = Instant::now();
        kill(Pid::from_raw(pid), Signal::SIGKILL).expect("kill the agent");
        assert!(
            poll_until(STEP, || b.ready_ids().contains(&task)),
            "task {task} never became ready on host b"
        );
        samples.push(t0.elapsed());
    }
    samples.sort();
    eprintln!(
        "kill -9 on host a → task ready on host b: min {:.1} ms, median {:.1} ms, max {:.1} ms (20 kills, `board list` on b)",
        millis(samples[0]),
        millis(samples[10]),
        millis(samples[19])
    );
}

/// Host A's board frozen (SIGSTOP): host B ends A's host session after its TTL, with A's
/// agents' claims, so B's agent takes the task; after SIGCONT the old holder's `done` is
/// refused (exit 5) naming the new holder.
#[test]
fn a_frozen_host_loses_its_claims_and_its_old_holder_is_refused_after() {
    let Some(pg) = cluster() else { return };
    let mut a = host(&pg, "a", &QUICK);
    let b = host(&pg, "b", &QUICK);
    let task = a.add("contested");
    let mut old = a.agent("old");
    let generation = old.claim(task);
    let board_a = a.serve_pid().expect("host a served");
    kill(Pid::from_raw(board_a), Signal::SIGSTOP).expect("SIGSTOP host a's board");
    let t0 = Instant::now();
    let freed = poll_until(STEP, || b.ready_ids().contains(&task));
    let took = t0.elapsed();
    assert!(freed, "host a's claim never ended");
    // TTL 2 s + heartbeat 200 ms + 1 s.
    assert!(
        took <= Duration::from_millis(3200),
        "host a's claim ended only after {took:?}"
    );
    let mut new = b.agent("new");
    let new_generation = new.claim(task);
    assert!(new_generation > generation);
    kill(Pid::from_raw(board_a), Signal::SIGCONT).expect("SIGCONT host a's board");
    let refused = old.board(&[
        "done",
        &task.to_string(),
        "--generation",
        &generation.to_string(),
    ]);
    assert_eq!(refused.code, 5, "{refused:?}");
    assert!(refused.stderr.contains(&new.id), "{refused:?}");
    eprintln!(
        "host a frozen → its claim ended after {:.0} ms (TTL 2 s, heartbeat 200 ms); old holder's done: exit 5",
        millis(took)
    );
    a.stop();
}

/// A host whose board runs with its clocks an hour ahead (a time namespace) keeps leases of
/// the same length as the others: the store computes and compares expiries on its own clock.
#[test]
fn a_host_with_a_skewed_clock_keeps_the_same_lease_rules() {
    let Some(pg) = cluster() else { return };
    if !time_namespaces_work() {
        eprintln!("skipped: time namespaces (unshare --time) are not available here");
        return;
    }
    let short = HostSettings {
        lease: "2s",
        sweep: "100ms",
        ttl: "5s",
        heartbeat: "200ms",
    };
    let fair = host(&pg, "fair", &short);
    let skewed = host_in_time_namespace(&pg, "skewed", &short, 3600);
    let into_skewed = skewed.serve_pid().expect("served").to_string();
    let into_skewed = ["nsenter", "--time", "--target", into_skewed.as_str()];
    for (board, name, wrapper) in [
        (&fair, "on-fair", &[][..]),
        (&skewed, "on-skewed", &into_skewed[..]),
    ] {
        let task = fair.add(name);
        let mut agent = JsonAgent::start_via(board, name, wrapper);
        let r = agent.call("claim", json!({"task": task}));
        let left = r["result"]["expires_in_ms"]
            .as_i64()
            .unwrap_or_else(|| panic!("{r}"));
        assert!(
            // Shown on this board's estimate of the server's clock: a few ms either way.
            (1000..=2100).contains(&left),
            "a 2 s lease granted through {name} expires in {left} ms"
        );
        // Silence (the agent is stopped) lapses it after the lease, judged by the store.
        let pid = agent.agent_pid();
        kill(Pid::from_raw(pid), Signal::SIGSTOP).expect("stop the agent");
        let t0 = Instant::now();
        assert!(poll_until(STEP, || fair.ready_ids().contains(&task)));
        let took = t0.elapsed();
        let _ = kill(Pid::from_raw(pid), Signal::SIGCONT);
        assert!(
            took >= Duration::from_millis(900) && took <= Duration::from_secs(6),
            "through {name}: lapsed after {took:?}"
        );
        eprintln!(
            "lease through {name}: granted for {left} ms, lapsed after {:.0} ms",
            millis(took)
        );
    }
}

fn time_namespaces_work() -> bool {
    Command::new("unshare")
        .args(["--time", "--boottime", "3600", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

/// Like [`host`], but `board serve` runs in a new time namespace whose boot-time and
/// monotonic clocks are `ahead_s` seconds ahead.
fn host_in_time_namespace(pg: &Cluster, name: &str, s: &HostSettings, ahead_s: u64) -> TestBoard {
    let ahead = ahead_s.to_string();
    let mut b = host_on(&pg.url(), name, s).unserved();
    b.serve_via(&[
        "unshare",
        "--time",
        "--boottime",
        &ahead,
        "--monotonic",
        &ahead,
    ]);
    b
}

/// A claim made through host A reaches a subscriber of host B's board (what its TUI and
/// `board log --follow` read) moments later: NOTIFY wakes B, which reads the event table.
/// Prints the latency over 30 claims; then a TUI on host B shows a claim made on host A.
#[test]
fn a_claim_on_one_host_reaches_the_event_stream_and_the_tui_of_another() {
    let Some(pg) = cluster() else { return };
    let a = host(&pg, "a", &QUICK);
    let mut b = host(&pg, "b", &QUICK);
    let mut agent = JsonAgent::start(&a, "claimer");
    let mut stream = b.subscribe();
    let mut samples = Vec::new();
    for i in 0..30 {
        let task = a.add(&format!("task {i}"));
        stream.clear();
        let t0 = Instant::now();
        let r = agent.call("claim", json!({"task": task}));
        assert!(r.get("result").is_some(), "{r}");
        let seen = stream.wait(STEP, |e| e["kind"] == "grant" && e["task"] == json!(task));
        let (at, _) = seen.unwrap_or_else(|| panic!("host b never saw the grant of task {task}"));
        samples.push(at.duration_since(t0));
        let d = agent.call("done", json!({"task": task}));
        assert!(d.get("result").is_some(), "{d}");
    }
    samples.sort();
    eprintln!(
        "claim through host a → its grant event on host b's stream: min {:.1} ms, median {:.1} ms, max {:.1} ms (30 claims, from sending the claim)",
        millis(samples[0]),
        millis(samples[15]),
        millis(samples[29])
    );
    if crate::harness::tmux::Tmux::missing() {
        return;
    }
    let task = a.add("watched from host b");
    let tmux = crate::tui_in_tmux::start_tui(&mut b, "");
    crate::tui_in_tmux::wait_live(&tmux);
    let t0 = Instant::now();
    let r = agent.call("claim", json!({"task": task}));
    assert!(r.get("result").is_some(), "{r}");
    let mut last = String::new();
    let shown = poll_until(STEP, || {
        last = tmux.capture(crate::tui_in_tmux::TUI, &[]);
        crate::tui_in_tmux::section(&last, "CLAIMED")
            .iter()
            .any(|l| l.contains(&format!("#{task}")) && l.contains("claimer"))
    });
    assert!(shown, "host b's TUI never showed the claim:\n{last}");
    eprintln!(
        "host b's TUI showed host a's claim {:.0} ms after it was sent (screen polled every 5 ms)",
        millis(t0.elapsed())
    );
}

/// With the store down, a board's writes and `board check` fail closed (exit 8, naming the
/// store), its TUI says so, and everything works again once the store is back.
#[test]
fn writes_and_check_fail_closed_while_the_store_is_down() {
    let Some(pg) = cluster() else { return };
    let mut a = host(&pg, "a", &QUICK);
    let task = a.add("held");
    let mut holder = a.agent("holder");
    let generation = holder.claim(task);
    let tmux = (!crate::harness::tmux::Tmux::missing()).then(|| {
        let t = crate::tui_in_tmux::start_tui(&mut a, "");
        crate::tui_in_tmux::wait_live(&t);
        t
    });
    pg.stop().expect("stop the server");
    let check = holder.board(&["check", &task.to_string()]);
    assert_eq!(check.code, 8, "{check:?}");
    assert!(check.stderr.contains("PostgreSQL store"), "{check:?}");
    let add = a.board(&["add", "while down"]);
    assert_eq!(add.code, 8, "{add:?}");
    if let Some(t) = &tmux {
        let mut last = String::new();
        let banner = poll_until(STEP, || {
            last = t.capture(crate::tui_in_tmux::TUI, &[]);
            last.contains("STORE UNREACHABLE")
        });
        assert!(
            banner,
            "the TUI does not say the store is unreachable:\n{last}"
        );
    }
    pg.start_again().expect("start the server again");
    let back = poll_until(STEP, || {
        holder.board(&["check", &task.to_string()]).code == 0
    });
    assert!(back, "check never passed again after the store came back");
    let done = holder.board(&[
        "done",
        &task.to_string(),
        "--generation",
        &generation.to_string(),
    ]);
    assert_eq!(done.code, 0, "{done:?}");
    if let Some(t) = &tmux {
        let cleared = poll_until(STEP, || {
            !t.capture(crate::tui_in_tmux::TUI, &[])
                .contains("STORE UNREACHABLE")
        });
        assert!(cleared, "the TUI banner stays after the store is back");
    }
}

/// The server is down for longer than the hosts' TTL: once it is back, every host beats again
/// before any can be declared dead, so no agent session or claim ends for the outage.
#[test]
fn an_outage_longer_than_the_host_ttl_ends_no_host() {
    let Some(pg) = cluster() else { return };
    // The TTL stays above the store's longest wait between two reconnect attempts (1 s).
    let brief = HostSettings {
        lease: "60s",
        sweep: "1s",
        ttl: "2s",
        heartbeat: "100ms",
    };
    let a = host(&pg, "a", &brief);
    let b = host(&pg, "b", &brief);
    let task = a.add("held through the outage");
    let mut holder = JsonAgent::start(&a, "holder");
    let r = holder.call("claim", json!({"task": task}));
    assert!(r.get("result").is_some(), "{r}");
    pg.stop().expect("stop the server");
    std::thread::sleep(Duration::from_millis(3000));
    pg.start_again().expect("start the server again");
    let ok = poll_until(STEP, || {
        let v = b.call("status", json!({}));
        v.is_ok_and(|v| {
            v["hosts"]
                .as_array()
                .is_some_and(|hs| hs.iter().filter(|h| h["ended_at"].is_null()).count() == 2)
        })
    });
    assert!(ok, "both hosts beat again");
    // Nothing may happen now: wait three TTLs, by when a wrongful end would have come.
    std::thread::sleep(Duration::from_millis(6000));
    let r = holder.call("check", json!({"task": task}));
    assert!(
        r.get("result").is_some(),
        "the claim ended for the outage: {r}"
    );
}

/// The live host names in `board`'s status, and every ended host's reason.
fn hosts_seen(board: &TestBoard) -> (Vec<String>, Vec<String>) {
    let v = board.call("status", json!({})).unwrap_or_default();
    let hosts = v["hosts"].as_array().cloned().unwrap_or_default();
    let live = hosts
        .iter()
        .filter(|h| h["ended_at"].is_null())
        .filter_map(|h| h["name"].as_str().map(String::from))
        .collect();
    let ended = hosts
        .iter()
        .filter(|h| !h["ended_at"].is_null())
        .map(|h| format!("{}: {}", h["name"], h["end_reason"]))
        .collect();
    (live, ended)
}

/// A maintenance outage without a server restart: the database refuses connections
/// (`ALLOW_CONNECTIONS false`) and every board's backend is terminated, for three host TTLs.
/// Every board loses the store at once, so none may take another's silence for its death: no
/// host ends, every claim stands and its `done` succeeds afterwards.
#[test]
fn a_store_wide_outage_without_a_restart_ends_no_host() {
    let Some(pg) = cluster() else { return };
    let url = pg.create_database("maintained").expect("a database");
    let settings = HostSettings {
        lease: "60s",
        sweep: "1s",
        ttl: "2s",
        heartbeat: "100ms",
    };
    let a = host_on(&url, "a", &settings).start();
    let b = host_on(&url, "b", &settings).start();
    let (ta, tb) = (a.add("held on a"), a.add("held on b"));
    let mut on_a = JsonAgent::start(&a, "on-a");
    let mut on_b = JsonAgent::start(&b, "on-b");
    let ga = on_a.call("claim", json!({"task": ta}))["result"]["generation"].clone();
    let gb = on_b.call("claim", json!({"task": tb}))["result"]["generation"].clone();
    assert!(ga.is_i64() && gb.is_i64(), "both claims granted: {ga} {gb}");

    psql(
        &pg.url(),
        "ALTER DATABASE maintained ALLOW_CONNECTIONS false",
    );
    let terminated = psql(
        &pg.url(),
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'maintained'",
    );
    assert_ne!(terminated, "0", "the boards had backends to lose");
    // Three TTLs of outage: a board that took the others' silence for death would end them
    // the moment it is back.
    std::thread::sleep(Duration::from_millis(6000));
    psql(
        &pg.url(),
        "ALTER DATABASE maintained ALLOW_CONNECTIONS true",
    );

    let both = poll_until(Duration::from_secs(30), || {
        hosts_seen(&a).0.len() == 2 && hosts_seen(&b).0.len() == 2
    });
    assert!(both, "both hosts beat again: {:?}", hosts_seen(&a));
    // A wrongful end would come within one TTL of the first board's return: wait three.
    std::thread::sleep(Duration::from_millis(6000));
    let (live, ended) = hosts_seen(&b);
    assert_eq!(
        live.len(),
        2,
        "no host ended: live {live:?}, ended {ended:?}"
    );
    assert!(ended.is_empty(), "no host ended: {ended:?}");
    for (agent, task, generation) in [(&mut on_a, ta, ga), (&mut on_b, tb, gb)] {
        let r = agent.call("done", json!({"task": task, "generation": generation}));
        assert!(
            r.get("result").is_some(),
            "{} still holds #{task}: {r}",
            agent.id
        );
    }
}

/// The key of the store's write lock (`pg_advisory_xact_lock`), "board" in ASCII.
const WRITE_LOCK: i64 = 0x0062_6F61_7264;

/// Something holds the store's write lock for 2.5 host TTLs (here a session of the test's; in
/// life a board cut off mid-transaction): the heartbeats go on beside it, so no host's beat
/// grows older than its TTL, no host is ended, and writes go through once the lock is free.
#[test]
fn heartbeats_never_wait_behind_the_write_lock() {
    let Some(pg) = cluster() else { return };
    let url = pg.create_database("locked").expect("a database");
    let a = host_on(&url, "a", &QUICK).start();
    let b = host_on(&url, "b", &QUICK).start();
    let task = a.add("written after the lock");
    let mut holder = Command::new("psql")
        .args([
            url.as_str(),
            "-Atc",
            &format!(
                "BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK}); SELECT pg_sleep(5); COMMIT;"
            ),
        ])
        .stdout(Stdio::null())
        .spawn()
        .expect("psql");
    let held = poll_until(STEP, || {
        psql(
            &pg.url(),
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted",
        ) != "0"
    });
    assert!(held, "the test holds the write lock");
    let mut oldest_beat = 0;
    while holder.try_wait().expect("psql").is_none() {
        let v = b
            .call("status", json!({}))
            .expect("status answers during the lock");
        for h in v["hosts"].as_array().into_iter().flatten() {
            if h["ended_at"].is_null() {
                oldest_beat = oldest_beat.max(h["beat_age_ms"].as_i64().unwrap_or(0));
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        oldest_beat < 2000,
        "a host's last beat was {oldest_beat} ms old while the lock was held (TTL 2 s)"
    );
    let (live, ended) = hosts_seen(&b);
    assert_eq!((live.len(), ended), (2, vec![]), "no host ended");
    let mut agent = a.agent("after");
    agent.claim(task);
    eprintln!("write lock held 5 s: oldest heartbeat seen {oldest_beat} ms (TTL 2 s, beat 200 ms)");
}

/// A board reaches a server over TCP with TLS: every connection (the store's and the LISTEN
/// one) is encrypted and the server's certificate verified against the CA that
/// `PGSSLROOTCERT` names; without that CA, the board refuses the server it cannot verify.
#[test]
fn a_remote_store_is_reached_over_tls_with_its_certificate_verified() {
    if let Some(why) = crate::harness::postgres::skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let pg = Cluster::start_with(crate::harness::postgres::Options {
        tcp: true,
        tls: true,
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("a private PostgreSQL cluster with TLS: {e}"));
    let url = format!("{}?sslmode=require", pg.url());
    let untrusted = host_on(&url, "untrusted", &QUICK).unserved();
    let refused = untrusted.board(&["serve"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused.stderr.contains("certificate") || refused.stderr.contains("Certificate"),
        "{refused:?}"
    );
    let mut trusted = host_on(&url, "trusted", &QUICK).unserved();
    let ca = format!("PGSSLROOTCERT={}", pg.ca_file().display());
    trusted.serve_via(&["env", &ca]);
    let task = trusted.add("over TLS");
    assert!(trusted.ready_ids().contains(&task));
    let encrypted = poll_until(STEP, || {
        let out = Command::new("psql")
            .args([
                pg.url().as_str(),
                "-Atc",
                "SELECT count(*) FILTER (WHERE s.ssl), count(*) FROM pg_stat_ssl s \
                 JOIN pg_stat_activity a USING (pid) WHERE a.application_name LIKE 'board%'",
            ])
            .output()
            .expect("psql");
        // The store's connections (as many as requests needed) and the LISTEN connection,
        // every one over TLS.
        let text = String::from_utf8_lossy(&out.stdout);
        let counts: Vec<u32> = text
            .trim()
            .split('|')
            .filter_map(|n| n.parse().ok())
            .collect();
        matches!(counts[..], [ssl, all] if all >= 2 && ssl == all)
    });
    assert!(encrypted, "the board's connections are not all over TLS");
}
