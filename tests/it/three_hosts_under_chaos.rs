//! Three hosts under chaos: boards A, B and C, each in its own network namespace, share one
//! PostgreSQL store; agents under `board run` on each host work a growing backlog while a chaos
//! loop SIGKILLs and SIGSTOPs agents, `kill -9`s a board (its agents' next call starts it
//! again), freezes a board past the host TTL, cuts a host's link past the TTL, restarts the
//! server, and makes the whole store refuse connections for a few TTLs. Then an invariant
//! checker reads the store's event log and the agents' own records: never two live holders of a
//! task; generations strictly increase; every `done` answered 0 was applied, by the holder at
//! its generation; every refusal (exit 5) came from a session whose claim had ended; every task
//! is done exactly once; no `internal` (exit 1) ever; a store-wide outage ends no host.
//! `BOARD_CHAOS_SECS` sets the chaos time (default 25 s; e.g. 1800 for a long run).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::os::unix::process::CommandExt;
use std::process::Child;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::a_cut_host_holding_the_write_lock::{host_in, netns_store};
use crate::harness::events::soak_secs;
use crate::harness::netns::{Link, Store};
use crate::harness::postgres::psql;
use crate::harness::test_board::TestBoard;
use crate::harness::{poll, poll_until, STEP};
use crate::hosts_share_one_store::HostSettings;

const SETTINGS: HostSettings = HostSettings {
    lease: "2s",
    sweep: "500ms",
    ttl: "3s",
    heartbeat: "200ms",
};
const TTL: Duration = Duration::from_secs(3);
const LEASE: Duration = Duration::from_secs(2);
const AGENTS_PER_HOST: usize = 2;
const DB: &str = "chaos";

/// The agent: claim; on an even task first try a stale generation (must be refused); work a
/// moment; `done` at the claim's generation, asked again while the store is unavailable. Every
/// outcome goes to `$LOGDIR/$BOARD_AGENT.log`. Exits once its session is ended (a claim answers
/// 5 or 7), or
/// when the run is over and nothing is left.
const AGENT: &str = r#"
log="$LOGDIR/$BOARD_AGENT.log"
while :; do
  out=$(board --json claim 2>>"$LOGDIR/stderr.log"); code=$?
  echo "claimed $code" >> "$log"
  if [ $code -eq 3 ]; then
    if [ -e "$LOGDIR/over" ]; then
      case "$out" in *'"remaining":0'*) exit 0;; esac
    fi
    sleep 0.1; continue
  fi
  # 5 or 7: this session was ended (its host was declared lost); a new agent takes over.
  { [ $code -eq 5 ] || [ $code -eq 7 ]; } && exit 7
  [ $code -eq 0 ] || { sleep 0.1; continue; }
  task=$(printf '%s' "$out" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  gen=$(printf '%s' "$out" | sed -n 's/.*"generation":\([0-9]*\).*/\1/p')
  echo "claim $task $gen" >> "$log"
  if [ $((task % 2)) -eq 0 ]; then
    board --json done "$task" --generation $((gen - 1)) > /dev/null 2>>"$LOGDIR/stderr.log"
    echo "stale $task $((gen - 1)) $?" >> "$log"
  fi
  sleep 0.$(( $$ % 3 + 1 ))
  tries=0
  while :; do
    board --json done "$task" --generation "$gen" > /dev/null 2>>"$LOGDIR/stderr.log"; code=$?
    [ $code -eq 8 ] && [ $tries -lt 100 ] || break
    echo "unavailable $task $gen" >> "$log"
    tries=$((tries + 1)); sleep 0.2
  done
  echo "done $task $gen $code" >> "$log"
  [ $code -eq 7 ] && exit 7
done
"#;

/// One host: its link, its board, its agents' launchers.
struct Host {
    name: &'static str,
    link: Link,
    board: TestBoard,
    agents: Vec<Option<Child>>,
    spawned: usize,
}

impl Host {
    fn logs(&self) -> std::path::PathBuf {
        self.board.root().join("logs")
    }

    /// Starts agents in the empty or exited slots (those that exited 0 only before `over`).
    fn fill(&mut self, over: bool) {
        for i in 0..self.agents.len() {
            let exited = match self.agents[i].as_mut() {
                None => true,
                Some(c) => match c.try_wait() {
                    Ok(Some(st)) => !(over && st.success()),
                    _ => false,
                },
            };
            if exited {
                self.spawned += 1;
                let name = format!("{}{i}n{}", self.name, self.spawned);
                let out = fs::File::create(self.board.root().join(format!("{name}.out"))).unwrap();
                let child = self
                    .link
                    .board_cmd(
                        &self.board,
                        &["run", "--name", &name, "--", "sh", "agent.sh"],
                    )
                    .env("LOGDIR", self.logs())
                    .stdout(out.try_clone().unwrap())
                    .stderr(out)
                    .process_group(0)
                    .spawn()
                    .expect("spawn board run");
                self.agents[i] = Some(child);
            }
        }
    }

    /// Whether every agent has exited 0.
    fn all_finished(&mut self) -> bool {
        self.agents.iter_mut().all(|a| {
            a.as_mut()
                .is_some_and(|c| matches!(c.try_wait(), Ok(Some(st)) if st.success()))
        })
    }

    /// The agent process under a running launcher (not a board it autostarted).
    fn agent_pid(&mut self, slot: usize) -> Option<i32> {
        let launcher = self.agents[slot].as_ref()?.id();
        let children = fs::read_to_string(format!("/proc/{launcher}/task/{launcher}/children"));
        children.ok()?.split_whitespace().find_map(|p| {
            let cmd = fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default();
            (!cmd.contains("serve")).then(|| p.parse().ok()).flatten()
        })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        for c in self.agents.iter_mut().flatten() {
            let _ = kill(Pid::from_raw(-(c.id() as i32)), Signal::SIGKILL);
            let _ = c.wait();
        }
    }
}

/// A small deterministic generator (the seed is printed).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[derive(Default, Debug)]
struct Counts {
    tasks: usize,
    grants: usize,
    dones: usize,
    refusals: usize,
    chaos: BTreeMap<&'static str, usize>,
    exits: BTreeMap<String, usize>,
}

/// The chaos store's database URL (the test's private socket).
fn db_url(store: &Store) -> String {
    store.pg.url_for(DB)
}

/// `psql` rows as `|`-separated fields; an empty list when the database refuses.
fn rows(store: &Store, sql: &str) -> Vec<Vec<String>> {
    let text = psql(&db_url(store), sql);
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split('|').map(String::from).collect())
        .collect()
}

/// Ids of the host sessions live with a fresh heartbeat now.
fn fresh_hosts(store: &Store) -> HashSet<String> {
    rows(
        store,
        "SELECT id FROM hosts WHERE ended_at IS NULL AND expires_ms > board_now_ms()",
    )
    .into_iter()
    .map(|r| r[0].clone())
    .collect()
}

/// The whole store refuses connections for `secs`, every board's backend terminated; returns
/// the host sessions that were live before and were ended by it.
fn outage(store: &Store, length: Duration) -> Vec<String> {
    let before = fresh_hosts(store);
    psql(
        &store.pg.url(),
        &format!("ALTER DATABASE {DB} ALLOW_CONNECTIONS false"),
    );
    psql(
        &store.pg.url(),
        &format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '{DB}'"
        ),
    );
    std::thread::sleep(length);
    psql(
        &store.pg.url(),
        &format!("ALTER DATABASE {DB} ALLOW_CONNECTIONS true"),
    );
    // Give every board time to reconnect and its peers time to (wrongly) reap it.
    std::thread::sleep(TTL * 2);
    let ended: HashSet<String> = rows(
        store,
        "SELECT id || ' ' || name || ': ' || end_reason FROM hosts WHERE ended_at IS NOT NULL",
    )
    .into_iter()
    .map(|r| r.join("|"))
    .collect();
    ended
        .into_iter()
        .filter(|e| before.contains(e.split(' ').next().unwrap_or("")))
        .collect()
}

/// SIGSTOP `pid` for `d`, then SIGCONT.
fn freeze(pid: i32, d: Duration) {
    if kill(Pid::from_raw(pid), Signal::SIGSTOP).is_ok() {
        std::thread::sleep(d);
        let _ = kill(Pid::from_raw(pid), Signal::SIGCONT);
    }
}

/// One chaos step on `hosts`; returns what it did, and host sessions a store-wide outage ended.
fn chaos_step(store: &Store, hosts: &mut [Host], rng: &mut Rng) -> (&'static str, Vec<String>) {
    let h = rng.below(hosts.len() as u64) as usize;
    let slot = rng.below(AGENTS_PER_HOST as u64) as usize;
    let host = &mut hosts[h];
    match rng.below(10) {
        0..=2 => {
            if let Some(pid) = host.agent_pid(slot) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            ("agent killed", vec![])
        }
        3..=4 => {
            if let Some(pid) = host.agent_pid(slot) {
                freeze(pid, LEASE + Duration::from_millis(1500));
            }
            ("agent stopped past its lease", vec![])
        }
        5 => {
            if let Some(pid) = host.board.board_pid() {
                if Some(pid) == host.board.serve_pid() {
                    host.board.kill_serve(Signal::SIGKILL);
                } else {
                    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                }
            }
            // Its agents' next calls start it again (in the host's namespace).
            host.fill(false);
            poll_until(STEP, || host.board.board_pid().is_some());
            ("board killed", vec![])
        }
        6 => {
            if let Some(pid) = host.board.board_pid() {
                freeze(pid, TTL + Duration::from_millis(1500));
            }
            ("board stopped past host_ttl", vec![])
        }
        7 => {
            host.link.cut();
            std::thread::sleep(TTL + Duration::from_secs(2));
            host.link.restore();
            ("link cut past host_ttl", vec![])
        }
        8 => {
            store.restart().expect("restart the server");
            ("server restarted", vec![])
        }
        _ => {
            let secs = 2 + rng.below(2);
            ("store-wide outage", outage(store, TTL * secs as u32))
        }
    }
}

/// Adds `n` tasks through some host that answers; failures (an outage) are fine.
fn add_tasks(hosts: &[Host], rng: &mut Rng, n: usize) {
    let h = &hosts[rng.below(hosts.len() as u64) as usize];
    for i in 0..n {
        let _ = h.board.board_json(&["add", &format!("chaos task {i}")]);
    }
}

#[test]
fn three_hosts_under_chaos_keep_every_lease_rule() {
    let Some(store) = netns_store() else { return };
    store.pg.create_database(DB).expect("a database");
    let mut hosts: Vec<Host> = ["a", "b", "c"]
        .into_iter()
        .map(|name| {
            let link = Link::new().unwrap_or_else(|e| panic!("a link: {e}"));
            let board = host_in(&store, &link, DB, name, &SETTINGS);
            fs::write(board.root().join("agent.sh"), AGENT).unwrap();
            fs::create_dir_all(board.root().join("logs")).unwrap();
            Host {
                name,
                link,
                board,
                agents: (0..AGENTS_PER_HOST).map(|_| None).collect(),
                spawned: 0,
            }
        })
        .collect();
    let secs = soak_secs("BOARD_CHAOS_SECS", 25);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    eprintln!("three hosts under chaos: {secs} s, seed {seed}");
    let mut rng = Rng(seed);
    add_tasks(&hosts, &mut rng, 12);
    for h in hosts.iter_mut() {
        h.fill(false);
    }
    let mut counts = Counts::default();
    let mut bad = Vec::new();
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(300 + rng.below(700)));
        let (what, ended) = chaos_step(&store, &mut hosts, &mut rng);
        *counts.chaos.entry(what).or_default() += 1;
        for e in ended {
            bad.push(format!("a store-wide outage ended host session {e}"));
        }
        for h in hosts.iter_mut() {
            h.fill(false);
        }
        add_tasks(&hosts, &mut rng, 3);
    }
    for h in hosts.iter_mut() {
        fs::write(h.logs().join("over"), "").unwrap();
    }
    let drained = poll_until(Duration::from_secs(240), || {
        for h in hosts.iter_mut() {
            h.fill(true);
        }
        hosts.iter_mut().all(Host::all_finished)
    });
    bad.extend(check(&store, &hosts, &mut counts));
    eprintln!("three hosts under chaos: {counts:#?}");
    assert!(drained, "the agents did not finish the backlog");
    assert!(bad.is_empty(), "violations:\n{}", bad.join("\n"));
}

/// Every invariant over the event log and the agents' records; the violations.
fn check(store: &Store, hosts: &[Host], counts: &mut Counts) -> Vec<String> {
    let mut bad = Vec::new();
    let events = poll(STEP, || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rows(
                store,
                "SELECT id, kind, coalesce(task_id, 0), coalesce(session_id, ''), \
                 coalesce(generation, 0) FROM events ORDER BY id",
            )
        }));
        r.ok()
    })
    .expect("the event log");
    let mut live: HashMap<i64, (String, i64)> = HashMap::new();
    let mut last_gen: HashMap<i64, i64> = HashMap::new();
    let mut ended: HashSet<(i64, String, i64)> = HashSet::new();
    let mut done_keys: HashSet<(i64, String, i64)> = HashSet::new();
    let mut dones: HashMap<i64, usize> = HashMap::new();
    for e in &events {
        let [id, kind, task, agent, g] = &e[..] else {
            continue;
        };
        let (task, g): (i64, i64) = (task.parse().unwrap_or(0), g.parse().unwrap_or(0));
        let key = (task, agent.clone(), g);
        match kind.as_str() {
            "grant" => {
                counts.grants += 1;
                if let Some(h) = live.get(&task) {
                    bad.push(format!(
                        "event {id}: task {task} granted to {agent} while {h:?} held it"
                    ));
                }
                if last_gen.get(&task).is_some_and(|&last| g <= last) {
                    bad.push(format!(
                        "event {id}: task {task} generation {g} not above {last_gen:?}"
                    ));
                }
                last_gen.insert(task, g);
                live.insert(task, (agent.clone(), g));
            }
            "done" | "release" | "expel" | "lapse" => {
                if live.get(&task) == Some(&(agent.clone(), g)) {
                    live.remove(&task);
                } else if kind == "done" {
                    bad.push(format!(
                        "event {id}: done of task {task} by {agent} at {g}, holder {:?}",
                        live.get(&task)
                    ));
                }
                if kind == "done" {
                    counts.dones += 1;
                    *dones.entry(task).or_default() += 1;
                    done_keys.insert(key);
                } else {
                    ended.insert(key);
                }
            }
            _ => {}
        }
    }
    for h in hosts {
        for entry in fs::read_dir(h.logs()).into_iter().flatten().flatten() {
            let agent = entry.file_name().to_string_lossy().replace(".log", "");
            if !entry.file_name().to_string_lossy().ends_with(".log") || agent == "stderr" {
                continue;
            }
            let text = fs::read_to_string(entry.path()).unwrap_or_default();
            for line in text.lines() {
                let w: Vec<&str> = line.split_whitespace().collect();
                if w.len() < 2 {
                    continue;
                }
                let code = w.last().copied().unwrap_or("");
                if matches!(w[0], "claimed" | "stale" | "done") {
                    *counts.exits.entry(format!("{} {code}", w[0])).or_default() += 1;
                }
                if code == "1" && matches!(w[0], "claimed" | "stale" | "done") {
                    bad.push(format!("{agent}: internal error: {line}"));
                }
                let key = |w: &[&str]| -> (i64, String, i64) {
                    (
                        w[1].parse().unwrap_or(0),
                        agent.clone(),
                        w[2].parse().unwrap_or(0),
                    )
                };
                match (w[0], code) {
                    ("stale", "0") => {
                        bad.push(format!("{agent}: a stale done was accepted: {line}"))
                    }
                    ("stale", _) => counts.refusals += 1,
                    ("done", "0") if w.len() == 4 && !done_keys.contains(&key(&w[..])) => {
                        bad.push(format!("{agent}: done answered 0 but not applied: {line}"))
                    }
                    ("done", "5") if w.len() == 4 => {
                        counts.refusals += 1;
                        if !ended.contains(&key(&w[..])) {
                            bad.push(format!(
                                "{agent}: refused though its claim never ended: {line}"
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    let tasks = rows(store, "SELECT id, state FROM tasks ORDER BY id");
    counts.tasks = tasks.len();
    for t in &tasks {
        let id: i64 = t[0].parse().unwrap_or(0);
        let n = dones.get(&id).copied().unwrap_or(0);
        if n != 1 || t[1] != "done" {
            bad.push(format!("task {id} is {} and done {n} times", t[1]));
        }
    }
    bad
}
