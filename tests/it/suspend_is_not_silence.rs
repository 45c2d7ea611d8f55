//! Suspend is not silence: when the board itself was not running (here: SIGSTOP of the board
//! and of every agent for three leases, as a laptop lid or a stopped team would do), that time
//! does not count against any lease. No claim lapses because of the stall, and a session that
//! waits for a human keeps its claims.

use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

use crate::harness::events::*;
use crate::harness::test_board::TestBoard;

#[test]
fn stopping_the_board_and_all_agents_for_three_leases_lapses_nothing() {
    let b = TestBoard::builder()
        .lease("1s")
        .sweep("100ms")
        .liveness("activity")
        .start();
    b.add_tasks(2);
    let mut ev = b.subscribe();
    let worker = b.run_agent(
        "worker",
        "board claim 1 >/dev/null || exit 9
         while :; do board renew >/dev/null 2>&1; sleep 0.1; done",
    );
    let asker = b.run_agent(
        "asker",
        "board claim 2 >/dev/null || exit 9
         board wait 'which database?' >/dev/null || exit 9
         exec sleep 300",
    );
    ev.wait(STEP_WAIT, is("grant", "worker"))
        .expect("worker claimed");
    ev.wait(STEP_WAIT, is("question", "asker"))
        .expect("asker waits for a human");

    let board_pid = Pid::from_raw(b.serve_pid().expect("serving"));
    let groups = [worker.launcher_pid(), asker.launcher_pid()].map(Pid::from_raw);
    kill(board_pid, Signal::SIGSTOP).unwrap();
    for g in groups {
        killpg(g, Signal::SIGSTOP).unwrap();
    }
    // The stall itself: three leases during which nothing of the board or the team runs.
    std::thread::sleep(Duration::from_millis(3000));
    kill(board_pid, Signal::SIGCONT).unwrap();
    for g in groups {
        killpg(g, Signal::SIGCONT).unwrap();
    }
    let resumed = Instant::now();

    // Two more leases after the resume: nothing lapses, nobody is expelled.
    while resumed.elapsed() < Duration::from_millis(2000) {
        let bad = ev.wait(Duration::from_millis(100), |e| {
            matches!(e["kind"].as_str(), Some("lapse" | "expel"))
        });
        assert!(bad.is_none(), "the stall cost a claim: {bad:?}");
    }
    let (_, stall) = ev
        .wait(STEP_WAIT, |e| e["kind"] == "stall")
        .expect("the board noticed it had not run");
    println!("{}", stall["reason"]);
    assert_eq!(b.show(1)["task"]["holder"], "worker");
    assert_eq!(b.show(2)["task"]["holder"], "asker");
    assert_eq!(b.session("asker").unwrap()["state"], "waiting");
}

const STEP_WAIT: Duration = Duration::from_secs(10);
