//! Lost answers are asked again: every write a client sends carries an `op_id` of its own, and
//! an answer lost because the board was killed (SIGKILL) or stopped (`board stop`) in the middle
//! of a request is asked for again with that `op_id` until a board answers. Eight agents under
//! `board run` claim (and finish every other task) while a chaos loop kills or stops the board
//! at random moments (their next call starts it again); afterwards every claim each agent sent
//! has an outcome it was told, and the store holds no claim whose holder was not told about it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::harness::agent::Agent;
use crate::harness::events::soak_secs;
use crate::harness::mcp::Mcp;
use crate::harness::rpc;
use crate::harness::test_board::TestBoard;
use crate::harness::*;

const AGENTS: usize = 8;

/// Claims until `$LOGDIR/stop` exists: logs `send N` before each call and `answer N CODE JSON`
/// after it; finishes each even-numbered task it was granted (`done N CODE`). Then it idles, so
/// its session (and the claims it holds) stay as they are for the check.
const AGENT: &str = r#"
log="$LOGDIR/$BOARD_AGENT.log"
n=0
while [ ! -e "$LOGDIR/stop" ]; do
  n=$((n + 1))
  echo "send $n" >> "$log"
  out=$(board --json claim 2>>"$LOGDIR/$BOARD_AGENT.err"); code=$?
  echo "answer $n $code $out" >> "$log"
  [ $code -eq 0 ] || { sleep 0.02; continue; }
  task=$(printf '%s' "$out" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  gen=$(printf '%s' "$out" | sed -n 's/.*"generation":\([0-9]*\).*/\1/p')
  if [ $((task % 2)) -eq 0 ]; then
    out=$(board --json done "$task" --generation "$gen" 2>>"$LOGDIR/$BOARD_AGENT.err")
    echo "done $task $? $gen $out" >> "$log"
  fi
done
echo end >> "$log"
exec sleep 600
"#;

/// What one agent was told, from its log.
#[derive(Default, Debug)]
struct Told {
    sent: usize,
    /// (task, generation) of each granted claim, in order.
    granted: Vec<(i64, i64)>,
    no_ready: usize,
    /// Claims whose outcome the agent did not learn (exit code, output).
    unknown: Vec<String>,
    /// (task, exit code, generation) of each `done`.
    dones: Vec<(i64, i64, i64)>,
    /// The `done`s that did not succeed, with their output.
    failed_dones: Vec<String>,
    ended: bool,
}

fn told(log: &str) -> Told {
    let mut t = Told::default();
    for line in log.lines() {
        let mut w = line.splitn(4, ' ');
        match (w.next(), w.next(), w.next(), w.next()) {
            (Some("send"), _, _, _) => t.sent += 1,
            (Some("answer"), Some(_), Some("0"), Some(out)) => {
                let v: Value = serde_json::from_str(out).unwrap_or(Value::Null);
                match (v["task"]["id"].as_i64(), v["generation"].as_i64()) {
                    (Some(task), Some(g)) => t.granted.push((task, g)),
                    _ => t.unknown.push(format!("exit 0 without a claim: {out}")),
                }
            }
            (Some("answer"), Some(_), Some("3"), Some(out)) if out.contains("no_ready_task") => {
                t.no_ready += 1
            }
            (Some("answer"), Some(n), code, out) => t
                .unknown
                .push(format!("claim {n}: exit {code:?} {}", out.unwrap_or(""))),
            (Some("done"), Some(task), Some(code), Some(rest)) => {
                let (g, out) = rest.split_once(' ').unwrap_or((rest, ""));
                if code != "0" {
                    t.failed_dones
                        .push(format!("done of task {task}: exit {code} {out}"));
                }
                t.dones.push((
                    task.parse().unwrap_or(-1),
                    code.parse().unwrap_or(-1),
                    g.parse().unwrap_or(-1),
                ));
            }
            (Some("end"), _, _, _) => t.ended = true,
            _ => {}
        }
    }
    t
}

#[test]
fn every_claim_outcome_reaches_its_agent_while_the_board_is_killed_at_random() {
    let secs = soak_secs("BOARD_LOST_ANSWER_SECS", 10);
    // A lease no claim outlives by accident: every end of a claim here is one an agent asked for.
    let mut b = TestBoard::builder()
        .lease("120s")
        .sweep("1s")
        .liveness("process")
        .start();
    let logs = b.root().join("logs");
    fs::create_dir_all(&logs).unwrap();
    fs::write(b.root().join("agent.sh"), AGENT).unwrap();
    let backlog: String = (1..=2000).map(|i| format!("- [ ] task {i}\n")).collect();
    fs::write(b.root().join("backlog.md"), backlog).unwrap();
    b.json(&["import", "backlog.md"]);
    // From now on the agents' calls start every board (as after a crash, nobody serves it).
    b.kill_serve(nix::sys::signal::Signal::SIGTERM);
    let agents: Vec<Agent> = (1..=AGENTS)
        .map(|i| {
            b.run_agent_with(
                &format!("c{i}"),
                "exec sh \"$ROOT/agent.sh\"",
                &[],
                // Room for a board restart on a loaded machine.
                &[
                    ("LOGDIR", &logs),
                    ("ROOT", b.root()),
                    ("BOARD_TIMEOUT", Path::new("20s")),
                ],
            )
        })
        .collect();
    // The launchers' own calls (`session.register`) are not asked again: the chaos starts once
    // every agent runs and has sent its first claim.
    let names: Vec<String> = (1..=AGENTS).map(|i| format!("c{i}")).collect();
    let started = poll_until(Duration::from_secs(60), || {
        names.iter().all(|n| {
            fs::read_to_string(logs.join(format!("{n}.log"))).is_ok_and(|l| l.contains("answer 1 "))
        })
    });
    assert!(started, "not every agent started");
    let mut rng: u64 = 0x2545_F491_4F6C_DD1D ^ u64::from(std::process::id());
    let mut rand = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let mut chaos: BTreeMap<&str, usize> = BTreeMap::new();
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100 + rand(400)));
        let action = if rand(2) == 0 {
            match b.board_pid() {
                Some(p) => {
                    let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
                    "kill -9 board"
                }
                None => "no board to kill",
            }
        } else {
            let _ = b
                .board_cmd(&["stop"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            "board stop"
        };
        *chaos.entry(action).or_default() += 1;
    }
    fs::write(logs.join("stop"), "").unwrap();
    let all_ended = poll_until(Duration::from_secs(60), || {
        names.iter().all(|n| {
            fs::read_to_string(logs.join(format!("{n}.log"))).is_ok_and(|l| l.ends_with("end\n"))
        })
    });
    assert!(all_ended, "not every agent finished its last claim");

    let db = b.read_db();
    let claims: Vec<(i64, String, i64, Option<String>)> = db
        .prepare("SELECT task_id, session_id, generation, end_kind FROM claims ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let starts: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM events WHERE kind = 'board_start'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut bad = Vec::new();
    let (mut sent, mut granted, mut no_ready, mut dones) = (0, 0, 0, 0);
    for name in &names {
        let t = told(&fs::read_to_string(logs.join(format!("{name}.log"))).unwrap());
        sent += t.sent;
        granted += t.granted.len();
        no_ready += t.no_ready;
        dones += t.dones.len();
        if t.granted.len() + t.no_ready + t.unknown.len() != t.sent {
            bad.push(format!(
                "{name} sent {} claims, got {} answers",
                t.sent,
                t.granted.len() + t.no_ready + t.unknown.len()
            ));
        }
        for u in t.unknown.iter().chain(&t.failed_dones) {
            bad.push(format!("{name} did not learn the outcome of its {u}"));
        }
        let told_set: BTreeSet<(i64, i64)> = t.granted.iter().copied().collect();
        if told_set.len() != t.granted.len() {
            bad.push(format!(
                "{name} was told one grant for two claims: {:?}",
                t.granted
            ));
        }
        let store_set: BTreeSet<(i64, i64)> = claims
            .iter()
            .filter(|c| &c.1 == name)
            .map(|c| (c.0, c.2))
            .collect();
        for g in store_set.difference(&told_set) {
            bad.push(format!(
                "{name} was granted task {} at generation {} without being told",
                g.0, g.1
            ));
        }
        for g in told_set.difference(&store_set) {
            bad.push(format!(
                "{name} was told of a grant of task {} at generation {} the store never made",
                g.0, g.1
            ));
        }
        for (task, code, g) in &t.dones {
            let ended = claims
                .iter()
                .find(|c| (c.0, c.2) == (*task, *g) && &c.1 == name)
                .and_then(|c| c.3.clone());
            if *code != 0 || ended.as_deref() != Some("done") {
                bad.push(format!("{name}'s done of task {task} (generation {g}) exited {code}; the claim ended {ended:?}"));
            }
        }
    }
    // Each claim the store holds now is one its holder was told about (checked above) and
    // still has: it ended only through the agent's own `done`.
    for (task, who, g, end) in &claims {
        if end.as_deref().is_some_and(|e| e != "done") {
            bad.push(format!(
                "the claim of {who} on task {task} (generation {g}) ended by {end:?}"
            ));
        }
    }
    println!(
        "{secs} s, {} agents: {sent} claims sent, {granted} granted, {no_ready} no ready task, {dones} done; {} claims in the store; {starts} board starts; chaos {chaos:?}",
        AGENTS,
        claims.len()
    );
    drop(agents);
    if !bad.is_empty() {
        for name in &names {
            let err = fs::read_to_string(logs.join(format!("{name}.err"))).unwrap_or_default();
            bad.push(format!("--- {name}'s stderr:\n{err}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} violations:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// `board json` adds an `op_id` to each write line that has none and asks again with it when
/// the board is killed under the request: every line gets its result and every task is added
/// once.
#[test]
fn board_json_asks_again_with_the_op_id_it_added() {
    use std::io::{BufRead, BufReader, Write};
    const LINES: usize = 150;
    let mut b = TestBoard::builder().lease("60s").sweep("1s").start();
    b.kill_serve(nix::sys::signal::Signal::SIGTERM);
    let mut json_cli = b
        .board_cmd(&["json"])
        .env("BOARD_TIMEOUT", "20s")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = json_cli.stdin.take().unwrap();
    let output = json_cli.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(output)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<String>>()
    });
    let writer = std::thread::spawn(move || {
        for i in 1..=LINES {
            let line = json!({"jsonrpc": "2.0", "id": i, "method": "add",
                "params": {"title": format!("j{i}")}});
            input.write_all(format!("{line}\n").as_bytes()).unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let mut kills = 0;
    while !writer.is_finished() {
        std::thread::sleep(Duration::from_millis(150));
        if let Some(p) = b.board_pid() {
            let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
            kills += 1;
        }
    }
    writer.join().unwrap();
    let answers = reader.join().unwrap();
    let _ = json_cli.wait();
    let mut bad = Vec::new();
    for a in &answers {
        let v: Value = serde_json::from_str(a).unwrap();
        if v.get("result").is_none() {
            bad.push(format!("line {} was answered {v}", v["id"]));
        }
    }
    if answers.len() != LINES {
        bad.push(format!("{} answers to {LINES} lines", answers.len()));
    }
    let db = b.read_db();
    for i in 1..=LINES {
        let n: i64 = db
            .query_row(
                "SELECT COUNT(*) FROM tasks WHERE title = ?1",
                [format!("j{i}")],
                |r| r.get(0),
            )
            .unwrap();
        if n != 1 {
            bad.push(format!("task j{i} is in the store {n} times"));
        }
    }
    println!(
        "`board json`: {LINES} adds, {kills} kill -9 of the board, {} answers",
        answers.len()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `board mcp` under `board run`: `board_claim` tool calls while the board is killed at random
/// moments each return the claim they made (the tool call's request carries an `op_id` that
/// the server reuses when it asks again), and the store holds exactly the claims the agent was
/// told about.
#[test]
fn mcp_claims_learn_their_outcome_while_the_board_is_killed() {
    use crate::harness::test_board::TestBoard;
    const CLAIMS: usize = 40;
    let p = TestBoard::builder().unserved();
    let tasks: String = (1..=CLAIMS).map(|i| format!("- [ ] task {i}\n")).collect();
    std::fs::write(p.root().join("backlog.md"), tasks).unwrap();
    assert!(p.board(&["import", "backlog.md"]).success());
    let mut cmd = p.board_cmd(&["run", "--name", "m", "--", "board", "mcp"]);
    cmd.env("BOARD_TIMEOUT", "20s");
    let mut c = Mcp::spawn(cmd);
    c.initialize();
    let socket = p.root().join(".board/board.sock");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let killer = {
        let (stop, socket) = (std::sync::Arc::clone(&stop), socket.clone());
        std::thread::spawn(move || {
            let mut kills = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(120));
                let pid = rpc::call(&socket, "hello", json!({}))
                    .ok()
                    .and_then(|v| v["pid"].as_i64());
                if let Some(pid) = pid {
                    let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                    kills += 1;
                }
            }
            kills
        })
    };
    let mut told = BTreeSet::new();
    let mut bad = Vec::new();
    for i in 0..CLAIMS {
        // Spread over a few seconds, so the kills land before, during and after calls.
        std::thread::sleep(Duration::from_millis(60));
        let r = c.call("board_claim", json!({}));
        let v = &r["structuredContent"];
        match (
            r["isError"].as_bool(),
            v["task"]["id"].as_i64(),
            v["generation"].as_i64(),
        ) {
            (Some(false), Some(task), Some(g)) => {
                told.insert((task, g));
            }
            _ => bad.push(format!("claim {i} was answered {r}")),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let kills = killer.join().unwrap();
    let db = p.read_db();
    let held: BTreeSet<(i64, i64)> = db
        .prepare("SELECT task_id, generation FROM claims WHERE session_id = 'm'")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    if held != told {
        bad.push(format!(
            "the store granted {held:?}, the agent was told {told:?}"
        ));
    }
    println!(
        "`board mcp`: {CLAIMS} board_claim calls, {kills} kill -9 of the board, {} told",
        told.len()
    );
    drop(c);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
