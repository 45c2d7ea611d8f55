//! The torture test: agents under `board run` work a backlog while a chaos loop SIGKILLs agents
//! and launchers, SIGSTOPs agents past their lease (and SIGCONTs them), closes a tmux pane
//! (a private tmux server), and stops or `kill -9`s the board (the agents' next calls start it
//! again). Then an invariant checker reads the event log, the agents' own logs and the store:
//! never two live claims on a task; generations strictly increase; every accepted write came
//! from the live holder at the current generation; every rejected write came from a session
//! whose claim had ended, and that end is logged before the refusal; no acknowledged write is
//! missing; every task is done exactly once; integrity is ok; no client saw "database is
//! locked". `BOARD_TORTURE_SECS` sets the chaos time (default 15 s; e.g. 1800 for a long run).

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::harness::events::soak_secs;
use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;

use crate::harness::*;

const TASKS: usize = 40;
const AGENTS: usize = 4;

/// The agent: claim, sometimes try a stale generation first (must be refused), work a moment,
/// `done` at the claim's generation. Every outcome goes to `$LOGDIR/$BOARD_AGENT.log`.
const AGENT: &str = r#"
log="$LOGDIR/$BOARD_AGENT.log"
while :; do
  out=$(board --json claim 2>>"$LOGDIR/stderr.log"); code=$?
  if [ $code -eq 3 ]; then
    case "$out" in *'"remaining":0'*) exit 0;; esac
    sleep 0.05; continue
  fi
  [ $code -eq 0 ] || { sleep 0.05; continue; }
  task=$(printf '%s' "$out" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  gen=$(printf '%s' "$out" | sed -n 's/.*"generation":\([0-9]*\).*/\1/p')
  echo "claim $task $gen" >> "$log"
  if [ $((task % 2)) -eq 0 ]; then
    board --json done "$task" --generation $((gen - 1)) > /dev/null 2>>"$LOGDIR/stderr.log"
    echo "stale $task $((gen - 1)) $?" >> "$log"
  fi
  sleep 0.$(( $$ % 4 + 2 ))
  board --json done "$task" --generation "$gen" > /dev/null 2>>"$LOGDIR/stderr.log"
  echo "done $task $gen $?" >> "$log"
done
"#;

struct Team {
    procs: Vec<(String, Child)>,
    next: usize,
}

fn spawn_agent(b: &TestBoard, name: &str) -> Child {
    let out = fs::File::create(b.root().join(format!("{name}.out"))).unwrap();
    b.board_cmd(&["run", "--name", name, "--", "sh", "agent.sh"])
        .env("LOGDIR", b.root().join("logs"))
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .process_group(0)
        .spawn()
        .expect("spawn board run")
}

/// The agent process (the launcher's child) of a launcher.
/// The agent under launcher `pid`: its first descendant that is not a board the launcher
/// adopted (a board autostarted inside the agent's tree is reparented to the launcher, its
/// child subreaper; stopping it would be a board stall, not an agent's).
fn child_of(pid: i32) -> Option<i32> {
    board::os::procfs::descendants_pruned(pid, board::os::procfs::is_board_daemon)
        .first()
        .copied()
}

#[derive(Default, Debug)]
struct Counts {
    grants: usize,
    expels: BTreeMap<String, usize>,
    lapses: usize,
    rejects: usize,
    restarts: usize,
    stale_refused: usize,
    chaos: BTreeMap<&'static str, usize>,
}

/// Checks every invariant; returns the violations (empty when all hold).
fn check(b: &TestBoard, counts: &mut Counts) -> Vec<String> {
    let mut bad = Vec::new();
    let events: Vec<Value> = {
        let conn = rusqlite_ro(&b.db());
        let mut st = conn
            .prepare(
                "SELECT id, kind, task_id, session_id, generation, reason FROM events ORDER BY id",
            )
            .unwrap();
        st.query_map([], |r| {
            Ok(json!({
                "id": r.get::<_, i64>(0)?, "kind": r.get::<_, String>(1)?,
                "task": r.get::<_, Option<i64>>(2)?, "agent": r.get::<_, Option<String>>(3)?,
                "generation": r.get::<_, Option<i64>>(4)?, "reason": r.get::<_, Option<String>>(5)?,
            }))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    // task -> (agent, generation) of its live claim, replayed from the log.
    let mut live: HashMap<i64, (String, i64)> = HashMap::new();
    let mut last_gen: HashMap<i64, i64> = HashMap::new();
    let mut ended: HashMap<(i64, String, i64), i64> = HashMap::new();
    let mut granted: HashMap<(i64, String, i64), i64> = HashMap::new();
    let mut dones: HashMap<i64, Vec<(String, i64)>> = HashMap::new();
    for e in &events {
        let id = e["id"].as_i64().unwrap_or(0);
        let kind = e["kind"].as_str().unwrap_or("");
        let (Some(task), Some(agent), Some(g)) = (
            e["task"].as_i64(),
            e["agent"].as_str(),
            e["generation"].as_i64(),
        ) else {
            if kind == "board_start" {
                counts.restarts += 1;
            }
            continue;
        };
        let key = (task, agent.to_string(), g);
        match kind {
            "grant" => {
                counts.grants += 1;
                if let Some(h) = live.get(&task) {
                    bad.push(format!(
                        "event {id}: task {task} granted to {agent} while {h:?} held it"
                    ));
                }
                if last_gen.get(&task).is_some_and(|prev| g <= *prev) {
                    bad.push(format!(
                        "event {id}: task {task} generation {g} after {:?}",
                        last_gen[&task]
                    ));
                }
                last_gen.insert(task, g);
                live.insert(task, (agent.to_string(), g));
                granted.insert(key, id);
            }
            "done" | "release" | "expel" | "lapse" => {
                match kind {
                    "expel" => {
                        let r = e["reason"].as_str().unwrap_or("").to_string();
                        let r = r.split(" (").next().unwrap_or("").to_string();
                        *counts.expels.entry(r).or_default() += 1;
                    }
                    "lapse" => counts.lapses += 1,
                    _ => {}
                }
                if live.get(&task) != Some(&(agent.to_string(), g)) {
                    bad.push(format!(
                        "event {id}: {kind} of task {task} by {agent} at generation {g}, but the live claim is {:?}",
                        live.get(&task)
                    ));
                }
                live.remove(&task);
                ended.insert(key, id);
                if kind == "done" {
                    dones.entry(task).or_default().push((agent.to_string(), g));
                }
            }
            "reject" => {
                counts.rejects += 1;
                if live.get(&task) == Some(&(agent.to_string(), g)) {
                    bad.push(format!("event {id}: a write of the live holder {agent} at the current generation {g} of task {task} was rejected"));
                }
                if granted.contains_key(&key)
                    && !ended.contains_key(&key)
                    && live.get(&task) != Some(&(agent.to_string(), g))
                {
                    // Granted, never ended, not live: impossible by the replay above.
                    bad.push(format!("event {id}: rejection cites a claim with no end"));
                }
                if granted.contains_key(&key) && live.get(&task) == Some(&(agent.to_string(), g)) {
                    bad.push(format!("event {id}: rejection of {agent} on task {task} generation {g} logged before that claim's end"));
                }
            }
            _ => {}
        }
    }
    // The store: every task done exactly once, as the log says; integrity.
    let conn = rusqlite_ro(&b.db());
    let tasks: Vec<(i64, String, Option<String>, Option<i64>)> = {
        let mut st = conn
            .prepare("SELECT id, state, done_by, done_generation FROM tasks ORDER BY id")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    for (id, state, by, g) in &tasks {
        let d = dones.get(id).cloned().unwrap_or_default();
        if state != "done" || d.len() != 1 {
            bad.push(format!(
                "task {id} is {state}, done {} times in the log",
                d.len()
            ));
        } else if d[0] != (by.clone().unwrap_or_default(), g.unwrap_or(-1)) {
            bad.push(format!(
                "task {id}: the store says done by {by:?}/{g:?}, the log {:?}",
                d[0]
            ));
        }
    }
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    if ok != "ok" {
        bad.push(format!("integrity_check: {ok}"));
    }
    // The agents' logs: every acknowledged done is in the store; every stale write refused.
    for entry in fs::read_dir(b.root().join("logs")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(agent) = name.strip_suffix(".log") else {
            continue;
        };
        if agent == "stderr" {
            let text = fs::read_to_string(entry.path()).unwrap_or_default();
            if text.contains("database is locked") {
                bad.push("a client saw \"database is locked\"".into());
            }
            continue;
        }
        for line in fs::read_to_string(entry.path()).unwrap_or_default().lines() {
            let w: Vec<&str> = line.split(' ').collect();
            let num = |i: usize| w.get(i).and_then(|x| x.parse::<i64>().ok()).unwrap_or(-1);
            match (w.first().copied(), num(3)) {
                (Some("done"), 0) => {
                    let (task, g) = (num(1), num(2));
                    let t = tasks.iter().find(|t| t.0 == task);
                    if t.map(|t| (t.2.clone(), t.3)) != Some((Some(agent.to_string()), Some(g))) {
                        bad.push(format!("{agent}'s acknowledged done of task {task} at generation {g} is not in the store ({t:?})"));
                    }
                }
                (Some("stale"), 0) => bad.push(format!(
                    "{agent}'s done of task {} at the stale generation {} was accepted",
                    num(1),
                    num(2)
                )),
                (Some("stale"), _) => counts.stale_refused += 1,
                _ => {}
            }
        }
    }
    bad
}

#[allow(clippy::disallowed_methods)] // a read-only look at the store the board wrote
fn rusqlite_ro(db: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

#[test]
fn agents_under_chaos_never_break_the_fence() {
    Tmux::require();
    let secs = soak_secs("BOARD_TORTURE_SECS", 15);
    let mut b = TestBoard::builder()
        .lease("1s")
        .sweep("100ms")
        .liveness("process")
        .start();
    fs::create_dir_all(b.root().join("logs")).unwrap();
    fs::write(b.root().join("agent.sh"), AGENT).unwrap();
    // A backlog that lasts the chaos: about one task per agent-second (each takes 0.2–0.5 s).
    let tasks = TASKS.max(secs as usize * AGENTS);
    for i in 1..=tasks {
        b.json(&["add", &format!("task {i}")]);
    }
    let mut team = Team {
        procs: Vec::new(),
        next: 0,
    };
    for _ in 0..AGENTS {
        team.next += 1;
        let name = format!("a{}", team.next);
        let c = spawn_agent(&b, &name);
        team.procs.push((name, c));
    }
    let root = b.root().to_path_buf();
    let path = crate::harness::path_env();
    let pane_cmd = |n: usize| {
        format!(
            "cd {} && PATH={path} LOGDIR={}/logs exec board run --name p{n} -- sh agent.sh",
            root.display(),
            root.display()
        )
    };
    let mut panes = 0;
    let mut new_pane = |b: &mut TestBoard| -> String {
        panes += 1;
        b.tmux().run(&[
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-s",
            &format!("t{panes}"),
            &pane_cmd(panes),
        ])
    };
    let mut pane = new_pane(&mut b);
    let mut counts = Counts::default();
    let mut stopped: Vec<(i32, Instant)> = Vec::new();
    let mut rng: u64 = 0x9E37_79B9_7F4A_7C15 ^ std::process::id() as u64;
    let mut rand = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(150 + rand(250)));
        stopped.retain(|(pid, at)| {
            let due = at.elapsed() > Duration::from_millis(1500);
            if due {
                let _ = kill(Pid::from_raw(*pid), Signal::SIGCONT);
            }
            !due
        });
        let i = rand(team.procs.len() as u64) as usize;
        let launcher = team.procs[i].1.id() as i32;
        let action = match rand(10) {
            0 | 1 => {
                if let Some(a) = child_of(launcher) {
                    let _ = kill(Pid::from_raw(a), Signal::SIGKILL);
                }
                "kill -9 agent"
            }
            2 => {
                let _ = kill(Pid::from_raw(launcher), Signal::SIGKILL);
                "kill -9 launcher"
            }
            3 | 4 => {
                if let Some(a) = child_of(launcher) {
                    let _ = kill(Pid::from_raw(a), Signal::SIGSTOP);
                    stopped.push((a, Instant::now()));
                }
                "SIGSTOP agent past its lease"
            }
            5 => {
                // The pane may be gone already (its agent found the backlog finished).
                let _ = b
                    .tmux()
                    .cmd()
                    .args(["kill-pane", "-t", &pane])
                    .stderr(Stdio::null())
                    .status();
                pane = new_pane(&mut b);
                "close the pane"
            }
            6 => {
                let _ = b
                    .board_cmd(&["stop"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
                "board stop"
            }
            7 => {
                if let Some(p) = b.board_pid() {
                    let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
                }
                "kill -9 board"
            }
            _ => "nothing",
        };
        *counts.chaos.entry(action).or_default() += 1;
        // Replace agents that are gone.
        for (name, c) in team.procs.iter_mut() {
            if matches!(c.try_wait(), Ok(Some(_))) {
                team.next += 1;
                *name = format!("a{}", team.next);
                *c = spawn_agent(&b, name);
            }
        }
    }
    for (pid, _) in &stopped {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGCONT);
    }
    // Calm: the team finishes the backlog.
    let finished = poll_until(Duration::from_secs(120), || {
        for (name, c) in team.procs.iter_mut() {
            if matches!(c.try_wait(), Ok(Some(st)) if !st.success()) {
                team.next += 1;
                *name = format!("a{}", team.next);
                *c = spawn_agent(&b, name);
            }
        }
        let done: i64 = rusqlite_ro(&b.db())
            .query_row("SELECT COUNT(*) FROM tasks WHERE state = 'done'", [], |r| {
                r.get(0)
            })
            .unwrap_or(0);
        done as usize == tasks
    });
    let _ = b.tmux().cmd().arg("kill-server").status();
    for (_, c) in team.procs.iter_mut() {
        let _ = nix::sys::signal::killpg(Pid::from_raw(c.id() as i32), Signal::SIGKILL);
        let _ = c.wait();
    }
    assert!(
        finished,
        "the backlog was not finished: {}",
        b.json(&["list", "--state", "open"])
    );
    let violations = check(&b, &mut counts);
    println!(
        "torture {secs} s, {tasks} tasks: {} grants, expels {:?}, {} lapses, {} rejected writes ({} stale generations refused), {} board starts; chaos {:?}",
        counts.grants, counts.expels, counts.lapses, counts.rejects, counts.stale_refused, counts.restarts, counts.chaos
    );
    assert!(
        violations.is_empty(),
        "{} violations:\n{}",
        violations.len(),
        violations.join("\n")
    );
}
