//! `board run` supervising a real agent: every catchable signal a user sends to the launcher
//! reaches the agent (in a tmux pane too) and the launcher survives it; an agent that ignores the
//! hangup of its closed pane is ended within the grace + 2 s; a helper the agent double-forked
//! is reaped as soon as it exits, while the agent runs.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::events::*;
use crate::harness::process::*;
use crate::harness::test_board::{Builder, TestBoard};

use crate::harness::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

fn project() -> Builder {
    TestBoard::builder()
        .lease("30s")
        .sweep("10s")
        .liveness("process")
}

/// The signals a user may send, in the order the tests send them (HUP last: it is a hangup).
const SIGNALS: [(Signal, &str); 8] = [
    (Signal::SIGINT, "INT"),
    (Signal::SIGTERM, "TERM"),
    (Signal::SIGQUIT, "QUIT"),
    (Signal::SIGUSR1, "USR1"),
    (Signal::SIGUSR2, "USR2"),
    (Signal::SIGWINCH, "WINCH"),
    (Signal::SIGCONT, "CONT"),
    (Signal::SIGHUP, "HUP"),
];

/// An agent that records every signal it gets (one name a line in `got-NAME`) and never exits
/// on one. `board claim` first, so the session shows as working.
fn recorder(name: &str) -> String {
    let traps: String = SIGNALS
        .iter()
        .map(|(_, s)| format!("trap 'echo {s} >> got-{name}' {s}; "))
        .collect();
    format!(
        "{traps} board claim >/dev/null; echo $$ > agent-{name}.pid; while :; do sleep 0.05; done"
    )
}

fn got(root: &Path, name: &str) -> Vec<String> {
    fs::read_to_string(root.join(format!("got-{name}")))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// Sends each signal to `launcher` in turn and waits until the agent recorded it; the launcher
/// must still be running after each.
fn send_all(b: &TestBoard, name: &str, launcher: i32, signals: &[(Signal, &str)]) {
    for (i, (sig, label)) in signals.iter().enumerate() {
        kill(Pid::from_raw(launcher), *sig).unwrap();
        let seen = poll_until(Duration::from_secs(10), || got(b.root(), name).len() > i);
        assert!(
            seen,
            "{label} never reached the agent: {:?}",
            got(b.root(), name)
        );
        assert_eq!(got(b.root(), name)[i], *label, "{:?}", got(b.root(), name));
        assert!(running(launcher), "the launcher died of {label}");
    }
}

#[test]
fn every_catchable_signal_sent_to_the_launcher_reaches_the_agent() {
    let b = project().config("[run]\nhangup_grace = \"60s\"\n").start();
    b.add_tasks(1);
    let mut a = b.run_agent("rec", &recorder("rec"));
    b.wait_working("rec");
    send_all(&b, "rec", a.launcher_pid(), &SIGNALS);
    assert_eq!(got(b.root(), "rec").len(), SIGNALS.len());
    assert!(
        a.launcher.try_wait().unwrap().is_none(),
        "the launcher survived"
    );
}

#[test]
fn in_a_tmux_pane_directed_signals_reach_the_agent_once_and_ctrl_c_once() {
    let mut b = project().config("[run]\nhangup_grace = \"60s\"\n").start();
    b.add_tasks(1);
    let script = recorder("pane");
    let s = b.run_in_pane("pane", &script);
    let launcher = s["launcher_pid"].as_i64().unwrap() as i32;
    assert!(s["pane"].is_string(), "the agent runs in a pane: {s}");
    // All but HUP (a hangup) as directed kills; each arrives exactly once.
    send_all(&b, "pane", launcher, &SIGNALS[..7]);

    // Ctrl-C typed in the pane reaches the agent through the terminal, and only once: the USR1
    // sent after it is recorded after any INT the launcher would have forwarded.
    let pane = s["pane"].as_str().unwrap().to_string();
    b.tmux().run(&["send-keys", "-t", &pane, "C-c"]);
    assert!(
        poll_until(Duration::from_secs(10), || got(b.root(), "pane").len() > 7),
        "Ctrl-C never reached the agent"
    );
    kill(Pid::from_raw(launcher), Signal::SIGUSR1).unwrap();
    assert!(poll_until(Duration::from_secs(10), || {
        got(b.root(), "pane").last().is_some_and(|l| l == "USR1") && got(b.root(), "pane").len() > 8
    }));
    assert_eq!(&got(b.root(), "pane")[7..], ["INT", "USR1"]);
    assert!(running(launcher));
}

#[test]
fn an_agent_that_ignores_the_hangup_is_ended_within_the_grace() {
    let grace = Duration::from_secs(1);
    let mut b = project().config("[run]\nhangup_grace = \"1s\"\n").start();
    b.add_tasks(1);
    let mut ev = b.subscribe();
    // The agent ignores SIGHUP (as Gemini does, idle at its prompt); its helper ignores SIGTERM
    // as well, so only SIGKILL ends it.
    let script = "trap '' HUP; board claim >/dev/null; \
                  sh -c 'trap \"\" HUP TERM; echo $$ > helper.pid; while :; do sleep 0.05; done' & \
                  while :; do sleep 0.05; done";
    let s = b.run_in_pane("deaf", script);
    let (agent, launcher) = (
        s["pid"].as_i64().unwrap() as i32,
        s["launcher_pid"].as_i64().unwrap() as i32,
    );
    let helper: i32 = b.pid_in("helper.pid");

    let t0 = Instant::now();
    b.tmux()
        .run(&["kill-pane", "-t", s["pane"].as_str().unwrap()]);
    let (_, e) = ev
        .wait(Duration::from_secs(5), is("expel", "deaf"))
        .expect("the claim was expelled at the hangup");
    assert!(
        e["reason"].as_str().unwrap().starts_with("pane closed"),
        "{e}"
    );
    let gone = poll_until(grace + Duration::from_secs(2), || {
        !running(agent) && !running(helper) && !running(launcher)
    });
    let took = t0.elapsed();
    assert!(
        gone,
        "still running {took:?} after the pane closed: agent {}, helper {}, launcher {}",
        running(agent),
        running(helper),
        running(launcher)
    );
    eprintln!("agent, helper and launcher gone {took:?} after the pane closed (grace {grace:?})");
}

#[test]
fn a_double_forked_helper_that_exits_is_reaped_while_the_agent_runs() {
    let b = project().start();
    b.add_tasks(1);
    let fifo = b.fifo("done.fifo");
    let a = b.run_agent(
        "forks",
        "board claim >/dev/null; (sh -c 'echo $$ > helper.pid; read x < done.fifo' &); \
         while :; do sleep 0.05; done",
    );
    b.wait_working("forks");
    let helper: i32 = b.pid_in("helper.pid");
    assert_eq!(
        parent_of(helper),
        a.launcher_pid(),
        "the helper was adopted by the launcher"
    );

    poke(&fifo);
    let reaped = poll_until(Duration::from_secs(10), || {
        !Path::new(&format!("/proc/{helper}")).exists()
    });
    assert!(
        reaped,
        "the helper stayed a zombie: state {:?}",
        proc_state(helper)
    );
    let s: Value = b.session("forks").unwrap();
    assert!(
        running(s["pid"].as_i64().unwrap() as i32),
        "the agent still runs"
    );
}
