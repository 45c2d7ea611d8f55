//! Hosts on one PostgreSQL store: where people look, each agent shows with its host, and a
//! clean `board stop` on one host ends its host session at once, so its agents' tasks go to
//! other hosts' agents without waiting out `host_ttl`.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{poll_until, STEP};
use crate::hosts_share_one_store::{cluster, host, HostSettings, JsonAgent, QUICK};

/// A host TTL far above how long the test lets a stopped host's task take to free.
const LONG_TTL: HostSettings = HostSettings {
    lease: "60s",
    sweep: "1s",
    ttl: "60s",
    heartbeat: "200ms",
};

/// `board agents` on either of two hosts lists both hosts' agents, each as `name@host`.
#[test]
fn board_agents_on_either_host_shows_every_agent_with_its_host() {
    let Some(pg) = cluster() else { return };
    let a = host(&pg, "alpha", &QUICK);
    let b = host(&pg, "beta", &QUICK);
    let _ra = JsonAgent::start(&a, "ra");
    let _rb = JsonAgent::start(&b, "rb");
    for board in [&a, &b] {
        let out = board.board(&["agents"]).ok();
        let text = out.stdout.clone();
        assert!(text.contains("ra@alpha"), "{text}");
        assert!(text.contains("rb@beta"), "{text}");
        assert!(
            text.lines().all(|l| l.chars().count() <= 80),
            "a line wider than 80 columns:\n{text}"
        );
    }
}

#[test]
fn board_list_and_show_on_either_host_name_a_holder_as_name_at_host() {
    let Some(pg) = cluster() else { return };
    let a = host(&pg, "alpha", &QUICK);
    let b = host(&pg, "beta", &QUICK);
    let task = b.add("held on alpha");
    let mut ra = JsonAgent::start(&a, "ra");
    let claimed = ra.call("claim", json!({"task": task}));
    assert!(claimed.get("result").is_some(), "{claimed}");
    for board in [&a, &b] {
        let list = board.board(&["list"]).ok().stdout;
        assert!(list.contains("[claimed by ra@alpha g1"), "{list}");
        let shown = board.board(&["show", &task.to_string()]).ok().stdout;
        assert!(shown.contains("[claimed by ra@alpha g1"), "{shown}");
    }
}

/// Host A's board stopped with `board stop` while its agent holds a task: A's host session,
/// agent session and claim end at once (the reason names the stop), B's agent claims the task
/// well before `host_ttl`, `board status` on B lists A as ended, and A's agent, still running,
/// is refused its `done` as `lapsed`, naming the stop.
#[test]
fn board_stop_ends_its_host_session_and_frees_its_tasks_at_once() {
    let Some(pg) = cluster() else { return };
    let mut a = host(&pg, "alpha", &LONG_TTL);
    let b = host(&pg, "beta", &LONG_TTL);
    let task = b.add("held on alpha");
    let mut holder = JsonAgent::start(&a, "holder");
    let claimed = holder.call("claim", json!({"task": task}));
    let generation = claimed["result"]["generation"].clone();
    assert!(generation.is_i64(), "{claimed}");
    let mut taker = JsonAgent::start(&b, "taker");

    let t0 = Instant::now();
    a.stop();
    let mut took = taker.call("claim", json!({"task": task}));
    let freed = poll_until(STEP, || {
        took = taker.call("claim", json!({"task": task}));
        took.get("result").is_some()
    });
    let waited = t0.elapsed();
    assert!(freed, "b's agent never got the task: {took}");
    assert!(
        waited < Duration::from_secs(10),
        "the task waited {waited:?} (host_ttl 60 s)"
    );

    let status = b.call("status", json!({})).expect("status on b");
    let hosts = status["hosts"].as_array().cloned().unwrap_or_default();
    let alpha = hosts
        .iter()
        .find(|h| h["name"] == "alpha")
        .unwrap_or_else(|| panic!("alpha in status: {status}"));
    assert!(!alpha["ended_at"].is_null(), "alpha still live: {alpha}");
    let reason = alpha["end_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("board stop"), "{alpha}");

    let log = b.json(&["log", "--limit", "1000"]);
    let expelled = log["events"].as_array().is_some_and(|evs| {
        evs.iter().any(|e| {
            e["kind"] == "expel"
                && e["task"] == task
                && e["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("host alpha stopped by `board stop`"))
        })
    });
    assert!(expelled, "no expel naming the stop: {log}");

    let refused = holder.call("done", json!({"task": task, "generation": generation}));
    assert_eq!(refused["error"]["data"]["kind"], "lapsed", "{refused}");
    let said = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(said.contains("board stop"), "{refused}");
    eprintln!("`board stop` on host alpha → task claimed on host beta after {waited:?}");
}
