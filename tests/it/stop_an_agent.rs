//! `board stop --agent NAME` (the wire's `session.stop`, which the TUI's `K` sends): a person
//! stops one agent the way a closed pane ends it, and the board keeps running. An agent that
//! ignores SIGTERM gets SIGKILL after `[run] hangup_grace`; its claim ends with its session.
//! Only a person may stop an agent; an unknown or ended session is refused by name.

use std::time::Duration;

use crate::harness::test_board::TestBoard;

use crate::harness::*;

#[test]
fn board_stop_agent_ends_an_agent_that_ignores_sigterm_and_the_board_keeps_running() {
    let b = TestBoard::builder()
        .config("[run]\nhangup_grace = \"1s\"\n")
        .start();
    let task = b.add("held by the stubborn one");
    let _stubborn = b.run_agent(
        "stubborn",
        &format!("trap '' TERM; board claim {task} >/dev/null; while :; do sleep 1; done"),
    );
    assert!(
        poll_until(Duration::from_secs(10), || b.task(task)["holder"]
            == "stubborn"),
        "the agent claims the task: {}",
        b.task(task)
    );

    // Only a person stops an agent; an unknown one is refused by name.
    let mut other = b.agent("other");
    let refused = other
        .board_json(&["stop", "--agent", "stubborn"])
        .expect_code(7)
        .json();
    assert!(
        refused["message"].as_str().unwrap().contains("operator"),
        "{refused}"
    );
    let unknown = b
        .board_json(&["stop", "--agent", "nobody"])
        .expect_code(6)
        .json();
    assert!(
        unknown["message"].as_str().unwrap().contains("nobody"),
        "{unknown}"
    );

    let v = b.json(&["stop", "--agent", "stubborn"]);
    assert_eq!(v["session"], "stubborn", "{v}");
    assert_eq!(v["kill_after_ms"], 1000, "{v}");
    let ended = poll(Duration::from_secs(15), || {
        b.session("stubborn").filter(|s| s["ended_at"].is_string())
    })
    .unwrap_or_else(|| panic!("the agent was not stopped: {:?}", b.session("stubborn")));
    assert_eq!(ended["end_reason"], "killed by SIGKILL", "{ended}");
    let t = b.task(task);
    assert_eq!(t["state"], "open", "{t}");
    assert!(t["holder"].is_null(), "{t}");

    // Stopping it again says it has ended; the board is still there.
    let again = b
        .board_json(&["stop", "--agent", "stubborn"])
        .expect_code(2)
        .json();
    assert!(
        again["message"].as_str().unwrap().contains("ended already"),
        "{again}"
    );
    assert!(b.json(&["status"])["pid"].is_i64());
}

#[test]
fn on_a_shared_store_only_the_agents_own_host_stops_it() {
    use crate::hosts_share_one_store::{cluster, host, QUICK};
    let Some(pg) = cluster() else { return };
    let alpha = host(&pg, "alpha", &QUICK);
    let beta = host(&pg, "beta", &QUICK);
    let _far = alpha.run_agent("far", "exec sleep 300");
    let live = |b: &TestBoard| {
        b.session("far")
            .is_some_and(|s| s["ended_at"].is_null() && s["pid"].is_i64())
    };
    assert!(
        poll_until(Duration::from_secs(10), || live(&alpha)),
        "the agent runs on alpha: {:?}",
        alpha.session("far")
    );

    // beta sees the session in the shared store, but cannot signal alpha's processes.
    let refused = beta
        .board_json(&["stop", "--agent", "far"])
        .expect_code(2)
        .json();
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("another host"),
        "{refused}"
    );
    assert!(live(&alpha), "a refused stop changes nothing");

    alpha.json(&["stop", "--agent", "far"]);
    let ended = poll(Duration::from_secs(15), || {
        alpha.session("far").filter(|s| s["ended_at"].is_string())
    })
    .unwrap_or_else(|| panic!("not stopped: {:?}", alpha.session("far")));
    assert_eq!(ended["end_reason"], "killed by SIGTERM", "{ended}");
}

#[test]
fn a_name_wins_over_a_session_id_that_looks_like_it() {
    let b = TestBoard::start();
    let mut first = b.agent("sh");
    first.exit_with(0);
    first.wait_launcher();
    // The restarted `sh` gets a new id (`sh-2`); the agent configured as `sh-2` gets that name.
    let sh = b.agent("sh");
    let sh2 = b.agent("sh-2");
    assert_ne!(sh.id, "sh", "a restarted agent gets a new id");
    let v = b.json(&["stop", "--agent", "sh-2"]);
    assert_eq!(
        v["session"],
        sh2.id.as_str(),
        "the agent named sh-2 is stopped: {v}"
    );
    assert!(
        poll_until(Duration::from_secs(15), || b
            .session(&sh2.id)
            .is_some_and(|s| s["ended_at"].is_string())),
        "the agent named sh-2 ended"
    );
    let still = b.session(&sh.id).expect("sh's session");
    assert!(still["ended_at"].is_null(), "sh keeps running: {still}");
}
