//! A host whose network link is cut while its board holds the shared store's write lock looks,
//! to the server, like a host that vanished: no reset, just silence. The server ends that
//! host's transaction within the bound the README states (an idle transaction lives 10 s; the
//! server's keepalives and `tcp_user_timeout` notice a dead peer sooner), so the other hosts'
//! writes resume, no other host session is ended, and no healthy client is told `unavailable`
//! (exit 8) past that bound.

use std::time::{Duration, Instant};

use crate::harness::netns::{skip_reason, Link, Store};
use crate::harness::postgres::psql;
use crate::harness::test_board::TestBoard;
use crate::harness::{poll_until, STEP};
use crate::hosts_share_one_store::{host_on, HostSettings};

/// The README's bound on how long a vanished board can hold the write lock.
const BOUND: Duration = Duration::from_secs(10);

/// Slack on top of [`BOUND`] for a loaded 2-core machine.
const SLACK: Duration = Duration::from_secs(3);

/// Short leases and host sessions, as the chaos tests use.
const SHORT: HostSettings = HostSettings {
    lease: "60s",
    sweep: "1s",
    ttl: "3s",
    heartbeat: "200ms",
};

/// The store and a link per host, or None with why this machine cannot run the test.
pub(crate) fn netns_store() -> Option<Store> {
    if let Some(why) = crate::harness::postgres::skip_reason() {
        eprintln!("skipped: {why}");
        return None;
    }
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return None;
    }
    Some(Store::start().unwrap_or_else(|e| panic!("a private PostgreSQL cluster: {e}")))
}

/// Whether host `name`'s board holds the store's write lock now (a backend of
/// `application_name = board NAME` with a granted advisory lock).
pub(crate) fn holds_write_lock(store: &Store, name: &str) -> bool {
    psql(
        &store.pg.url(),
        &format!(
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) \
             WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = 'board {name}'"
        ),
    ) != "0"
}

/// Host `name`'s board in `link`'s namespace on database `db`, served.
pub(crate) fn host_in(
    store: &Store,
    link: &Link,
    db: &str,
    name: &str,
    s: &HostSettings,
) -> TestBoard {
    let mut b = host_on(&store.url_from(link, db), name, s).unserved();
    link.serve(&mut b);
    b
}

/// The hosts the store has ended (`ended_at` set), as `board status` on `board` tells them.
fn ended_hosts(board: &TestBoard) -> Vec<String> {
    let v = board
        .call("status", serde_json::json!({}))
        .unwrap_or_default();
    v["hosts"]
        .as_array()
        .map(|hs| {
            hs.iter()
                .filter(|h| !h["ended_at"].is_null())
                .filter_map(|h| h["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_host_cut_off_holding_the_write_lock_stops_other_writes_for_a_bounded_time() {
    let Some(store) = netns_store() else { return };
    store.pg.create_database("cut").expect("a database");
    let links: Vec<Link> = (0..3)
        .map(|_| Link::new().unwrap_or_else(|e| panic!("a link: {e}")))
        .collect();
    let a = host_in(&store, &links[0], "cut", "a", &SHORT);
    let b = host_in(&store, &links[1], "cut", "b", &SHORT);
    let c = host_in(&store, &links[2], "cut", "c", &SHORT);
    assert!(b.board(&["add", "before the cut"]).success());
    let plan = a.root().join("plan.md");
    let lines: String = (0..4000).map(|i| format!("- [ ] imported {i}\n")).collect();
    std::fs::write(&plan, lines).expect("plan.md");
    let mut import = a
        .board_cmd(&["import", plan.to_str().expect("utf-8 path")])
        .env("BOARD_TIMEOUT", "60s")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("board import");
    let caught = poll_until(STEP, || holds_write_lock(&store, "a"));
    assert!(caught, "host a's import never held the write lock");
    links[0].cut();
    let cut_at = Instant::now();
    let still = holds_write_lock(&store, "a");
    // Both healthy hosts write in turn until well past the bound; every answer is recorded.
    let mut answers: Vec<(Duration, &str, i32, String)> = Vec::new();
    let mut first_through: Option<Duration> = None;
    while cut_at.elapsed() < BOUND + SLACK + Duration::from_secs(4) {
        for (name, h) in [("b", &b), ("c", &c)] {
            let out = h.board_json(&["add", &format!("written by {name}")]);
            let at = cut_at.elapsed();
            if out.success() && first_through.is_none() {
                first_through = Some(at);
            }
            answers.push((at, name, out.code, out.stderr.clone()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let ended = ended_hosts(&b);
    links[0].restore();
    let _ = import.kill();
    let _ = import.wait();
    assert!(
        still,
        "host a's transaction ended before the link was cut: nothing to test"
    );
    let took = first_through.unwrap_or_else(|| panic!("no write went through: {answers:?}"));
    assert!(
        took <= BOUND + SLACK,
        "the healthy hosts' writes waited {took:?} (bound {BOUND:?})"
    );
    let late: Vec<_> = answers
        .iter()
        .filter(|(at, _, code, _)| *code != 0 && *at > BOUND + SLACK)
        .collect();
    assert!(
        late.is_empty(),
        "healthy clients failed past the bound: {late:?}"
    );
    let internal: Vec<_> = answers.iter().filter(|a| a.2 == 1).collect();
    assert!(internal.is_empty(), "internal errors: {internal:?}");
    let wrong: Vec<&String> = ended.iter().filter(|h| *h != "a").collect();
    assert!(wrong.is_empty(), "healthy hosts were ended: {ended:?}");
    let imported: usize = b.json(&["list", "--limit", "5000"])["tasks"]
        .as_array()
        .map_or(0, |t| {
            t.iter()
                .filter(|t| {
                    t["title"]
                        .as_str()
                        .is_some_and(|s| s.starts_with("imported"))
                })
                .count()
        });
    assert!(
        imported == 0 || imported == 4000,
        "the import was applied in part: {imported} tasks"
    );
    let codes: Vec<i32> = answers.iter().map(|a| a.2).collect::<Vec<_>>();
    let failed = codes.iter().filter(|c| **c != 0).count();
    eprintln!(
        "host a cut off holding the write lock: writes went through after {took:?}; \
         {failed} of {} calls failed before that; ended hosts {ended:?}",
        codes.len()
    );
}
