//! Hard signals expel at once (ARCHITECTURE.md rule 4), and `board run` cleans up
//! helpers after reporting the exit (rule 13).
//!
//! These boards use a long lease and a long sweep (30 s / 10 s, `process` liveness) on purpose:
//! neither a lapse nor the sweep can end a claim during a test, so every expulsion measured here
//! comes from a hard signal (the launcher's exit report, a pidfd watcher, the pane's SIGHUP), and
//! its reason says which.
//!
//! `BOARD_MEASURE=1 cargo test --test it expel_on_hard_signals -- --nocapture` runs 20 deaths of each kind
//! and prints median/min/max.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::harness::agent::Agent;
use crate::harness::events::*;
use crate::harness::process::*;
use crate::harness::test_board::{Builder, TestBoard};

use crate::harness::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

fn hard_only() -> Builder {
    TestBoard::builder()
        .lease("30s")
        .sweep("10s")
        .liveness("process")
}

const SLEEPER: &str = r#"description = "Claims a task, then sleeps (a test agent)"
command = ["sh", "-c", "board claim && exec sleep 300"]
"#;

/// The most a hard signal may take to free a task in these tests (the design's target is 100 ms;
/// this leaves room for a loaded 2-core CI).
const LIMIT: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Death {
    KillLauncher,
    KillAgent,
    ExitZero,
    KillPane,
}

impl Death {
    fn label(self) -> &'static str {
        match self {
            Death::KillLauncher => "kill -9 launcher",
            Death::KillAgent => "kill -9 agent",
            Death::ExitZero => "agent exits 0",
            Death::KillPane => "tmux kill-pane",
        }
    }

    fn reason_ok(self, reason: &str) -> bool {
        match self {
            Death::KillLauncher => reason == "launcher (board run) exited",
            Death::KillAgent => reason == "killed by SIGKILL",
            Death::ExitZero => reason == "exited (status 0)",
            Death::KillPane => reason.starts_with("pane closed"),
        }
    }
}

fn board_for(death: Death) -> TestBoard {
    let extra = if death == Death::KillPane {
        "[[agents]]\nname = \"sleeper\"\nprofile = \"sleeper\"\n"
    } else {
        ""
    };
    let mut b = hard_only().config(extra).unserved();
    b.write_profile("sleeper", SLEEPER);
    b.serve();
    if death == Death::KillPane {
        b.tmux();
    }
    b.add_tasks(1);
    b
}

/// Kills one holder of task 1 the given way; returns the time from the kill to the `expel` event
/// reaching a subscriber, and the reason.
fn one_death(b: &mut TestBoard, ev: &mut Events, death: Death, i: usize) -> (Duration, String) {
    ev.clear();
    let (id, agent, fifo) = if death == Death::KillPane {
        let up = b.json(&["up"]);
        let pane = up["panes"][0]["pane"].as_str().unwrap().to_string();
        let s = poll(Duration::from_secs(10), || {
            b.json(&["agents"])["agents"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["pane"] == pane.as_str())
                .cloned()
        })
        .expect("the pane's agent registered");
        (s["id"].as_str().unwrap().to_string(), None, None)
    } else {
        let name = format!("{}{i}", format!("{death:?}").to_lowercase());
        let fifo = b.fifo(&format!("{name}.fifo"));
        let script = match death {
            Death::ExitZero => format!("board claim 1 && read x < {name}.fifo; exit 0"),
            _ => "board claim 1 && exec sleep 300".to_string(),
        };
        let a = b.run_agent(&name, &script);
        (name, Some(a), Some(fifo))
    };
    let s = b.wait_working(&id);
    assert_eq!(s["claims"], serde_json::json!([1]), "{s}");
    let pid = s["pid"].as_i64().unwrap() as i32;
    let launcher = s["launcher_pid"].as_i64().unwrap() as i32;
    if death != Death::ExitZero {
        // The agent finished `board claim` (its answer printed) and now only sleeps.
        wait_exec(pid, "sleep");
    }

    // The exit case: the agent is blocked reading its FIFO before the clock starts.
    let mut writer = fifo
        .as_deref()
        .filter(|_| death == Death::ExitZero)
        .map(fifo_writer);
    let t0 = Instant::now();
    match death {
        Death::KillLauncher => kill(Pid::from_raw(launcher), Signal::SIGKILL).unwrap(),
        Death::KillAgent => kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap(),
        Death::ExitZero => writer.take().unwrap().write_all(b"go\n").unwrap(),
        Death::KillPane => {
            let pane = s["pane"].as_str().unwrap().to_string();
            b.tmux().run(&["kill-pane", "-t", &pane]);
        }
    }
    let (t1, e) = ev
        .wait(Duration::from_secs(10), is("expel", &id))
        .unwrap_or_else(|| panic!("{}: no expel event for {id}", death.label()));
    let delay = t1 - t0;
    assert_eq!(e["task"], 1, "{e}");
    assert!(b.ready_ids().contains(&1), "task 1 is ready again");
    let ended = b.session(&id).unwrap();
    assert!(ended["ended_at"].is_string(), "session ended: {ended}");
    if death == Death::KillPane {
        b.json(&["down"]);
    }
    drop(agent);
    (delay, e["reason"].as_str().unwrap_or_default().to_string())
}

fn deaths(death: Death) {
    let mut b = board_for(death);
    let mut ev = b.subscribe();
    let mut delays = Vec::new();
    for i in 0..iterations(3) {
        let (delay, reason) = one_death(&mut b, &mut ev, death, i);
        println!(
            "{}: expelled after {:.1} ms ({reason})",
            death.label(),
            delay.as_secs_f64() * 1000.0
        );
        assert!(
            death.reason_ok(&reason),
            "{}: unexpected expel reason {reason:?}",
            death.label()
        );
        assert!(
            delay < LIMIT,
            "{}: the claim was expelled only after {delay:?}",
            death.label()
        );
        delays.push(delay);
    }
    let (median, min, max) = stats(&delays);
    println!(
        "{}: {} runs, expel delay median {median:.1} ms, min {min:.1} ms, max {max:.1} ms",
        death.label(),
        delays.len()
    );
}

#[test]
fn kill_9_launcher_expels_at_once() {
    deaths(Death::KillLauncher);
}

#[test]
fn kill_9_agent_expels_at_once() {
    deaths(Death::KillAgent);
}

#[test]
fn agent_exit_0_expels_at_once() {
    deaths(Death::ExitZero);
}

#[test]
fn tmux_kill_pane_expels_at_once() {
    deaths(Death::KillPane);
}

#[test]
fn tmux_kill_window_with_four_agent_panes_expels_all_four_within_1s() {
    let mut b = hard_only()
        .config("[[agents]]\nname = \"w\"\nprofile = \"sleeper\"\ncount = 4\n")
        .unserved();
    b.write_profile("sleeper", SLEEPER);
    b.serve();
    b.tmux();
    b.add_tasks(4);
    let mut ev = b.subscribe();
    let up = b.json(&["up"]);
    assert_eq!(up["panes"].as_array().unwrap().len(), 4, "{up}");
    let working = poll(Duration::from_secs(15), || {
        let v = b.json(&["agents"]);
        let agents: Vec<Value> = v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["pane"].is_string() && a["claims"].as_array().unwrap().len() == 1)
            .cloned()
            .collect();
        (agents.len() == 4).then_some(agents)
    })
    .expect("four agents in panes each hold a claim");
    for a in &working {
        wait_exec(a["pid"].as_i64().unwrap() as i32, "sleep");
    }
    assert!(b.ready_ids().is_empty());
    // The board relies on no tmux hook: closing panes is seen through their processes.
    let hooks = b.tmux().run(&["show-hooks", "-g"]);
    assert!(!hooks.contains("board"), "unexpected tmux hooks: {hooks}");

    let t0 = Instant::now();
    let window = format!("={}:agents", up["session"].as_str().unwrap());
    b.tmux().run(&["kill-window", "-t", &window]);
    for a in &working {
        let id = a["id"].as_str().unwrap();
        let (t1, e) = ev
            .wait(Duration::from_secs(5), is("expel", id))
            .unwrap_or_else(|| panic!("{id} was not expelled"));
        let reason = e["reason"].as_str().unwrap();
        println!(
            "kill-window: {id} expelled after {:.1} ms ({reason})",
            (t1 - t0).as_secs_f64() * 1000.0
        );
        assert!(reason.starts_with("pane closed"), "{id}: {reason:?}");
        assert!(t1 - t0 < Duration::from_secs(1), "{id} took {:?}", t1 - t0);
    }
    let mut ready = b.ready_ids();
    ready.sort();
    assert_eq!(ready, vec![1, 2, 3, 4], "all four tasks are ready again");
}

#[test]
fn a_double_forked_helper_is_terminated_after_the_exit_was_reported() {
    let b = hard_only().start();
    b.add_tasks(1);
    let mut ev = b.subscribe();
    // On SIGTERM the helper asks the board how it sees its own session: the exit must already
    // be reported by then. A process in an ended session's tree is told its session ended
    // (never taken for the operator, whatever its environment).
    std::fs::write(
        b.root().join("helper.sh"),
        "trap 'env -u BOARD_AGENT -u BOARD_TOKEN board --json agents --all > at-term.json; exit 0' TERM\n\
         echo $$ > helper.pid\n\
         while :; do sleep 0.1; done\n",
    )
    .unwrap();
    let fifo = b.fifo("go.fifo");
    let mut agent = b.run_agent(
        "forker",
        "(sh helper.sh &) ; board claim 1 && read x < go.fifo; exit 0",
    );
    b.wait_working("forker");
    let helper: i32 = b.pid_in("helper.pid");
    assert!(running(helper));
    assert_eq!(
        parent_of(helper),
        agent.launcher_pid(),
        "the orphaned helper was re-parented to the launcher (a subreaper)"
    );

    poke(&fifo);
    let (_, e) = ev
        .wait(Duration::from_secs(5), is("expel", "forker"))
        .expect("expelled");
    assert_eq!(e["reason"], "exited (status 0)");
    assert!(
        poll_until(Duration::from_secs(5), || !running(helper)),
        "the helper outlived its agent"
    );
    let status = agent.launcher.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "board run exits with the agent's status"
    );
    let seen: Value = serde_json::from_str(
        &std::fs::read_to_string(b.root().join("at-term.json")).expect("the helper got SIGTERM"),
    )
    .unwrap();
    assert_eq!(seen["data"]["kind"], "lapsed", "{seen}");
    assert_eq!(
        seen["data"]["end_reason"], "exited (status 0)",
        "when the helper was terminated the board already knew: {seen}"
    );
    assert!(b.ready_ids().contains(&1));
}

#[test]
fn a_subscriber_sees_every_expel_when_eight_agents_die_at_once() {
    let b = hard_only().start();
    b.add_tasks(8);
    let mut ev = b.subscribe();
    let agents: Vec<Agent> = (1..=8)
        .map(|i| b.run_agent(&format!("d{i}"), "board claim >/dev/null && exec sleep 300"))
        .collect();
    for a in &agents {
        let s = b.wait_working(&a.id);
        wait_exec(s["pid"].as_i64().unwrap() as i32, "sleep");
    }
    let t0 = Instant::now();
    // Each launcher leads its process group: this kills launcher and agent together.
    drop(agents);
    for i in 1..=8 {
        let id = format!("d{i}");
        let (t1, e) = ev
            .wait(Duration::from_secs(5), is("expel", &id))
            .unwrap_or_else(|| panic!("the subscriber never saw {id} expelled"));
        assert!(t1 - t0 < LIMIT, "{id}: {:?}", t1 - t0);
        assert!(
            e["reason"] == "launcher (board run) exited" || e["reason"] == "killed by SIGKILL",
            "{e}"
        );
    }
    assert_eq!(b.ready_ids().len(), 8);
}

#[test]
fn a_launcher_hung_up_while_it_starts_reports_the_hangup() {
    let b = hard_only().start();
    let mut ev = b.subscribe();
    for i in 0..iterations(5) {
        let name = format!("early{i}");
        let mut a = b.run_agent(&name, "exec sleep 300");
        // Hang up the moment the session exists: the launcher is still starting its agent.
        ev.wait(Duration::from_secs(10), is("session_start", &name))
            .expect("registered");
        kill(Pid::from_raw(a.launcher_pid()), Signal::SIGHUP).unwrap();
        let (_, e) = ev
            .wait(Duration::from_secs(5), is("session_end", &name))
            .expect("the session ended");
        assert_eq!(e["reason"], "terminal closed (SIGHUP)", "{name}: {e}");
        let status = a.launcher.wait().unwrap();
        assert!(!status.success(), "{name}: the agent ended with the hangup");
        let s = b.session(&name).unwrap();
        if let Some(pid) = s["pid"].as_i64() {
            assert!(
                poll_until(Duration::from_secs(2), || !running(pid as i32)),
                "{name}: the agent outlived its launcher"
            );
        }
    }
}
