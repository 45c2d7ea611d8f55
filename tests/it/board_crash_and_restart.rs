//! The board process dies or restarts under load, and what it finds at start.
//! Claims, generations and sessions are durable; an acknowledged write is never lost; a session
//! is recognised by pid *and* start time.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::harness::agent::Agent;
use crate::harness::test_board::TestBoard;

use crate::harness::*;
use nix::sys::signal::Signal;
use rusqlite::{params, Connection};
use serde_json::json;

use board::store::Store;

const AGENTS: usize = 8;
const TASKS: usize = 2000;

/// Each agent loops claim → done over the backlog, appending every acknowledged claim and done
/// (task and generation) to `$BOARD_AGENT.log`; at its first failed call it logs the failure and
/// stays alive (holding whatever it holds).
const CLAIM_LOOP: &str = r#"L="$BOARD_AGENT.log"
while :; do
  out=$(board claim 2>/dev/null) || { echo "err claim $?" >> "$L"; break; }
  set -- $out
  t=${2#\#}; g=$4
  echo "claim $t $g" >> "$L"
  board done "$t" --generation "$g" >/dev/null 2>&1 || { echo "err done $t $g $?" >> "$L"; break; }
  echo "done $t $g" >> "$L"
done
exec sleep 300"#;

#[derive(Debug, Default)]
struct AgentLog {
    claims: Vec<(i64, i64)>,
    dones: Vec<(i64, i64)>,
    /// The last acknowledged claim not followed by an acknowledged done.
    holding: Option<(i64, i64)>,
    ended: Option<String>,
}

fn read_log(b: &TestBoard, agent: &str) -> AgentLog {
    let text = std::fs::read_to_string(b.root().join(format!("{agent}.log"))).unwrap_or_default();
    let mut log = AgentLog::default();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["claim", t, g] => {
                let c = (t.parse().unwrap(), g.parse().unwrap());
                log.claims.push(c);
                log.holding = Some(c);
            }
            ["done", t, g] => {
                let d = (t.parse().unwrap(), g.parse().unwrap());
                log.dones.push(d);
                assert_eq!(log.holding, Some(d), "{agent}: done without its claim");
                log.holding = None;
            }
            ["err", ..] => log.ended = Some(line.to_string()),
            _ => panic!("{agent}: bad log line {line:?}"),
        }
    }
    log
}

#[test]
fn sigkill_of_the_board_during_8_claim_loops_loses_no_acknowledged_write() {
    // The lease must outlast the board's downtime (the loops noticing the kill, two integrity
    // checks, the restart): a claim whose stored expiry passes while the board is down lapses
    // at the first sweep after the restart (ARCHITECTURE.md rule 8), and the checks below would then see
    // lapses instead of held claims. 3 s was too short for a loaded 2-core machine.
    let mut b = TestBoard::builder()
        .lease("15s")
        .sweep("100ms")
        .liveness("process")
        .unserved();
    {
        let mut store = board::store::SqliteStore::open(&b.db()).unwrap();
        for i in 1..=TASKS {
            store
                .add_task(&format!("task {i}"), "", 0, &[], board::store::OPERATOR, 0)
                .unwrap();
        }
    }
    let good_config = std::fs::read_to_string(b.root().join("board.toml")).unwrap();
    b.serve();
    // One more living holder that makes no call after its claim.
    let _keeper = b.run_agent("keeper", "board claim 1 >/dev/null && exec sleep 300");
    b.wait_working("keeper");
    let names: Vec<String> = (1..=AGENTS).map(|i| format!("w{i}")).collect();
    let _agents: Vec<Agent> = names.iter().map(|n| b.run_agent(n, CLAIM_LOOP)).collect();

    // Let them work up a history, then kill the board in the middle of it.
    let busy = poll_until(Duration::from_secs(30), || {
        names
            .iter()
            .map(|n| read_log(&b, n).claims.len())
            .sum::<usize>()
            >= 80
            && names.iter().all(|n| !read_log(&b, n).claims.is_empty())
    });
    assert!(busy, "the agents did not get going: {}", b.serve_output());
    // With board.toml unreadable no client can start a board on its own (autostart), so the
    // restart below is the only one; the running board keeps its settings meanwhile. Calls
    // that read the good file before the edit must finish first: wait for two more log lines
    // from every loop.
    let lines = |n: &str| {
        std::fs::read_to_string(b.root().join(format!("{n}.log")))
            .unwrap_or_default()
            .lines()
            .count()
    };
    b.write_config("[lease\n");
    let before: Vec<usize> = names.iter().map(|n| lines(n)).collect();
    assert!(poll_until(Duration::from_secs(10), || names
        .iter()
        .zip(&before)
        .all(|(n, &l)| lines(n) >= l + 2)));
    b.kill_serve(Signal::SIGKILL);
    let killed = Instant::now();

    // Every loop stops at its first failed call.
    let stopped = poll_until(Duration::from_secs(15), || {
        names.iter().all(|n| read_log(&b, n).ended.is_some())
    });
    assert!(stopped, "some claim loop never noticed the board was gone");
    println!("all loops stopped {:?} after the kill", killed.elapsed());
    let logs: BTreeMap<&str, AgentLog> = names
        .iter()
        .map(|n| (n.as_str(), read_log(&b, n)))
        .collect();
    let claims: usize = logs.values().map(|l| l.claims.len()).sum();
    let dones: usize = logs.values().map(|l| l.dones.len()).sum();
    println!("acknowledged before the kill: {claims} claims, {dones} dones");
    assert!(claims < TASKS, "the backlog must outlast the loops");

    assert_sound(&b.db(), "the database is sound after SIGKILL");

    b.write_config(&good_config);
    b.serve();
    let down = killed.elapsed();
    println!("the board was down for {down:?}");
    assert_sound(&b.db(), "the database is sound after the restart");

    let db = b.read_db();
    for (agent, log) in &logs {
        for &(t, g) in &log.claims {
            let n: i64 = db
                .query_row(
                    "SELECT COUNT(*) FROM claims WHERE task_id = ?1 AND session_id = ?2 AND generation = ?3",
                    params![t, agent, g],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(
                n, 1,
                "{agent}'s acknowledged claim of task {t} at generation {g} is lost"
            );
        }
        for &(t, g) in &log.dones {
            let (state, by, generation): (String, Option<String>, Option<i64>) = db
                .query_row(
                    "SELECT state, done_by, done_generation FROM tasks WHERE id = ?1",
                    [t],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .unwrap();
            assert_eq!(
                (state.as_str(), by.as_deref(), generation),
                ("done", Some(*agent), Some(g)),
                "{agent}'s acknowledged done of task {t} at generation {g} is lost"
            );
        }
    }

    // The new board renews the living holders: the keeper's expiry goes up again.
    let expiry = || b.show(1)["task"]["expires_in_ms"].as_i64();
    let mut lowest = expiry().expect("the keeper still holds task 1 after the restart");
    let renewed = poll_until(Duration::from_secs(5), || match expiry() {
        Some(e) if e > lowest + 50 => true,
        Some(e) => {
            lowest = lowest.min(e);
            false
        }
        None => false,
    });
    assert!(
        renewed,
        "the restarted board never renewed a living holder (down for {down:?}): {}",
        b.show(1)
    );
    let agents = b.json(&["agents"]);
    let live: BTreeMap<String, serde_json::Value> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["id"].as_str().unwrap().to_string(), a.clone()))
        .collect();
    let mut held = 0;
    for (agent, log) in &logs {
        let s = live
            .get(*agent)
            .unwrap_or_else(|| panic!("{agent} did not survive the restart: {agents}"));
        assert!(s["ended_at"].is_null());
        if let Some((t, g)) = log.holding {
            // Its done may have landed with the answer lost in the kill; otherwise it still
            // holds the claim.
            let (state, holder, done_by, generation): (String, Option<String>, Option<String>, i64) = db
                .query_row(
                    "SELECT t.state, c.session_id, t.done_by, COALESCE(c.generation, t.done_generation)
                     FROM tasks t LEFT JOIN claims c ON c.task_id = t.id AND c.ended_at IS NULL
                     WHERE t.id = ?1",
                    [t],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .unwrap();
            let kept = (state == "claimed" && holder.as_deref() == Some(*agent))
                || (state == "done" && done_by.as_deref() == Some(*agent));
            assert!(
                kept && generation == g,
                "{agent} held task {t} (generation {g}) before the kill; now {state} {holder:?} {done_by:?} {generation}"
            );
            if state == "claimed" {
                held += 1;
                assert!(s["claims"].as_array().unwrap().contains(&json!(t)), "{s}");
            }
        }
    }
    assert_eq!(live["keeper"]["claims"], json!([1]));
    println!("{held} loop claims and the keeper's held across the restart");
}

#[test]
fn a_session_whose_pid_was_reused_is_dead_at_restart() {
    let mut b = TestBoard::builder()
        .lease("30s")
        .sweep("100ms")
        .liveness("process")
        .start();
    b.add_tasks(2);
    let _reused = b.run_agent("reused", "board claim 1 >/dev/null && exec sleep 300");
    let _honest = b.run_agent("honest", "board claim 2 >/dev/null && exec sleep 300");
    let s = b.wait_working("reused");
    b.wait_working("honest");
    let pid = s["pid"].as_i64().unwrap();

    b.kill_serve(nix::sys::signal::Signal::SIGTERM);
    {
        // The same pid with another start time: as if the agent died and an unrelated process
        // got its pid while the board was down.
        let db = Connection::open(b.db()).unwrap();
        let n = db
            .execute(
                "UPDATE sessions SET pid_start = pid_start + 1 WHERE id = 'reused'",
                [],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    b.serve();

    let s = b.session("reused").unwrap();
    let reason = s["end_reason"].as_str().unwrap_or_default().to_string();
    assert!(s["ended_at"].is_string(), "{s}");
    assert!(
        reason.contains("another process") || reason.contains("gone"),
        "reason: {reason:?}"
    );
    assert!(
        reason.contains(&pid.to_string()),
        "the reason names the pid: {reason:?}"
    );
    let events = b.show(1)["events"].clone();
    let expel = events
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "expel")
        .unwrap_or_else(|| panic!("no expel event: {events}"));
    assert_eq!(expel["agent"], "reused");
    assert_eq!(expel["reason"], reason.as_str());
    assert!(b.ready_ids().contains(&1), "its task is ready again");

    // The other session, checked the same way, is alive and keeps its claim.
    let h = b.session("honest").unwrap();
    assert!(h["ended_at"].is_null(), "{h}");
    assert_eq!(h["claims"], json!([2]));
    assert_eq!(b.show(2)["task"]["holder"], "honest");
}

/// SQLite's own integrity check passes on the database at `db`.
fn assert_sound(db: &std::path::Path, when: &str) {
    let check = board::store::SqliteStore::open(db)
        .unwrap()
        .integrity_check()
        .unwrap();
    assert_eq!(check, "ok", "{when}");
}
