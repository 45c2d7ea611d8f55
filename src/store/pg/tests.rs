//! Tests of what only the PostgreSQL store has: the private cluster, several hosts on one
//! database, a server that goes away, a new timeline. The store's contract (what both
//! backends do alike) is tested in `store::tests`.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::cluster::{skip_reason, Cluster};
use super::PgStore;
use crate::proto::error::ErrorKind;
use crate::store::{Generation, Lease, Store, TaskId, OPERATOR};

/// A new, empty database on the test process's shared cluster: its URL, and a directory for
/// the hosts' local files.
pub(crate) fn fresh_database() -> (String, tempfile::TempDir) {
    static N: AtomicUsize = AtomicUsize::new(0);
    let cluster = Cluster::shared().unwrap();
    let db = format!("t_{}", N.fetch_add(1, Ordering::Relaxed));
    let url = cluster.create_database(&db).unwrap();
    (url, tempfile::tempdir().unwrap())
}

macro_rules! need_postgres {
    () => {
        if let Some(why) = skip_reason() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

#[test]
fn a_private_cluster_answers_on_its_own_socket_and_is_removed_on_drop() {
    need_postgres!();
    let cluster = Cluster::start().unwrap();
    let mut client = postgres::Client::connect(&cluster.url(), postgres::NoTls).unwrap();
    let row = client
        .query_one(
            "SELECT current_setting('server_version_num')::int, \
             current_setting('listen_addresses'), current_user::text",
            &[],
        )
        .unwrap();
    let version: i32 = row.get(0);
    let listen: String = row.get(1);
    let user: String = row.get(2);
    assert!(version >= 130_000, "server version {version}");
    assert_eq!(listen, "", "no TCP listener");
    assert_eq!(user, "board");
    let pid = cluster.pid().unwrap();
    cluster.restart().unwrap();
    assert_ne!(cluster.pid(), Some(pid), "restarted: a new postmaster");
    assert!(
        client.simple_query("SELECT 1").is_err(),
        "the old session is gone"
    );
    let mut client = postgres::Client::connect(&cluster.url(), postgres::NoTls).unwrap();
    client.simple_query("SELECT 1").unwrap();
    let dir = cluster.dir().to_path_buf();
    drop(client);
    drop(cluster);
    assert!(!dir.exists(), "the cluster's directory is removed");
}

#[test]
fn two_hosts_racing_for_one_task_get_one_winner() {
    need_postgres!();
    let (url, dir) = fresh_database();
    let mut a = PgStore::connect(&url, "host-a", &dir.path().join("a.hwm")).unwrap();
    let mut b = PgStore::connect(&url, "host-b", &dir.path().join("b.hwm")).unwrap();
    let agent_a = a
        .register_session("claude", "h", "boot-a", None, None, None)
        .unwrap()
        .0;
    let agent_b = b
        .register_session("claude", "h", "boot-b", None, None, None)
        .unwrap()
        .0;
    assert_eq!(agent_a, "claude");
    assert_eq!(agent_b, "claude-2", "session ids are unique across hosts");
    // Each host's connection names it and carries the store's timeouts.
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let named: i64 = admin
        .query_one(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'board host-a'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(named, 1);
    let timeout: String = a
        .read(|c| super::col(&c.one("SHOW statement_timeout", &[])?, 0))
        .unwrap();
    assert_eq!(timeout, "5s");
    for round in 0..20 {
        let (t, _) = a
            .add_task(&format!("t{round}"), "", 0, &[], OPERATOR, 0)
            .unwrap();
        let (ra, rb) = std::thread::scope(|s| {
            let ha = s.spawn(|| a.claim(&agent_a, None, Lease::until(0, 60_000)));
            let hb = s.spawn(|| b.claim(&agent_b, None, Lease::until(0, 60_000)));
            (ha.join().unwrap(), hb.join().unwrap())
        });
        let (c, loser, store, winner) = match (ra, rb) {
            (Ok((c, _)), Err(e)) => (c, e, &mut a, &agent_a),
            (Err(e), Ok((c, _))) => (c, e, &mut b, &agent_b),
            other => panic!("round {round}: not one winner: {other:?}"),
        };
        assert_eq!(loser.kind, ErrorKind::NoReadyTask);
        assert_eq!(c.claim.task, t.id);
        assert_eq!(c.claim.generation, Generation(1));
        store.done(winner, t.id, None, None, 0).unwrap();
    }
    // Each host sees only its own live sessions, but every host's for display.
    assert_eq!(a.live_sessions().unwrap().len(), 1);
    assert_eq!(b.sessions(Some(0), &|_| None).unwrap().len(), 2);
}

#[test]
fn a_dead_host_loses_its_sessions_and_claims_to_the_sweep_of_another() {
    need_postgres!();
    let (url, dir) = fresh_database();
    let mut a = PgStore::connect(&url, "host-a", &dir.path().join("a.hwm")).unwrap();
    let mut b = PgStore::connect(&url, "host-b", &dir.path().join("b.hwm")).unwrap();
    assert_eq!(a.host_beat(60_000, 30_000).unwrap().ended_by_others, None);
    b.host_beat(60_000, 30_000).unwrap();
    let agent = a
        .register_session("codex", "h", "boot-a", None, None, None)
        .unwrap()
        .0;
    let (t, _) = a.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
    a.claim(&agent, Some(t.id), Lease::until(0, 60_000))
        .unwrap();
    assert!(b.end_dead_hosts().unwrap().is_empty(), "host a is alive");
    // Its last beat gives it 150 ms.
    assert_eq!(a.host_beat(150, 75).unwrap().ended_by_others, None);
    // Host a stops beating: after its TTL (server clock), host b's sweep ends it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let ev = loop {
        let ev = b.end_dead_hosts().unwrap();
        if !ev.is_empty() {
            break ev;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "host a was never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let kinds: Vec<_> = ev.iter().map(|e| e.kind).collect();
    use crate::store::EventKind;
    assert_eq!(kinds, [EventKind::Expel, EventKind::SessionEnd], "{ev:?}");
    let why = ev[0].reason.clone().unwrap();
    assert!(why.contains("host host-a lost: no heartbeat for"), "{why}");
    let task = b.task(t.id, 0).unwrap();
    assert!(task.ready && task.holder.is_none(), "{task:?}");
    // The holder's write is fenced; its host learns on its next beat.
    let e = a.done(&agent, t.id, None, None, 0).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Lapsed);
    let beat = a.host_beat(60_000, 30_000).unwrap();
    assert!(beat.ended_by_others.unwrap().contains("no heartbeat"));
    assert_eq!(beat.events.len(), 1);
    let hosts = b.hosts().unwrap();
    assert_eq!(hosts.iter().filter(|h| h.ended_at.is_none()).count(), 2);
}

#[test]
fn a_restarted_server_is_unavailable_then_the_store_reconnects() {
    need_postgres!();
    let cluster = Cluster::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut s = PgStore::connect(&cluster.url(), "h", &dir.path().join("hwm")).unwrap();
    let (t, _) = s.add_task("survives", "", 0, &[], OPERATOR, 0).unwrap();
    cluster.stop().unwrap();
    let e = s.add_task("refused", "", 0, &[], OPERATOR, 0).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unavailable, "{e:?}");
    assert!(e.message.contains("PostgreSQL store at"), "{}", e.message);
    let e = s.task(t.id, 0).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unavailable, "{e:?}");
    cluster.start_again().unwrap();
    // Reconnects are spaced (100 ms doubling to 1 s): poll until the store answers again.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let back = loop {
        match s.task(t.id, 0) {
            Ok(v) => break v,
            Err(e) => assert_eq!(e.kind, ErrorKind::Unavailable, "{e:?}"),
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the store never reconnected"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(back.title, "survives");
    s.add_task("after", "", 0, &[], OPERATOR, 0).unwrap();
    assert_eq!(s.list_tasks(None, 0).unwrap().len(), 2);
}

#[test]
fn a_promoted_standby_opens_a_new_epoch_above_every_generation() {
    need_postgres!();
    let primary = Cluster::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hwm = dir.path().join("hwm");
    let mut s = PgStore::connect(&primary.url(), "h", &hwm).unwrap();
    let agent = s
        .register_session("a", "h", "boot", None, None, None)
        .unwrap()
        .0;
    let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
    let (c, _) = s
        .claim(&agent, Some(t.id), Lease::until(0, 600_000))
        .unwrap();
    assert_eq!(c.claim.generation, Generation(1));
    let standby = primary.standby().unwrap();
    // The standby has replayed the claim once it answers with it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut sb = postgres::Client::connect(&standby.url(), postgres::NoTls).unwrap();
    loop {
        let n: i64 = sb
            .query_one("SELECT COUNT(*) FROM claims", &[])
            .unwrap()
            .get(0);
        if n == 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the standby never caught up"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(sb);
    primary.crash().unwrap();
    standby.promote().unwrap();
    drop(s);
    let mut s = PgStore::connect(&standby.url(), "h", &hwm).unwrap();
    let ev = s.events(0, 100).unwrap();
    let epoch = ev.iter().find(|e| e.kind == crate::store::EventKind::Epoch);
    let epoch = epoch.unwrap_or_else(|| panic!("no epoch event: {ev:?}"));
    assert!(
        epoch.reason.as_deref().unwrap_or("").contains("timeline"),
        "{epoch:?}"
    );
    // The old claim ended; the next grant is far above generation 1.
    let e = s.done(&agent, t.id, None, None, 0).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Lapsed);
    let (c, _) = s
        .claim(&agent, Some(t.id), Lease::until(0, 600_000))
        .unwrap();
    assert!(
        c.claim.generation.0 > super::epoch::GAP,
        "{}",
        c.claim.generation
    );
    // Connecting again finds nothing new.
    drop(s);
    let s = PgStore::connect(&standby.url(), "h", &hwm).unwrap();
    let epochs = s
        .events(0, 100)
        .unwrap()
        .iter()
        .filter(|e| e.kind == crate::store::EventKind::Epoch)
        .count();
    assert_eq!(epochs, 1);
}

#[test]
fn a_database_restored_from_an_older_copy_opens_a_new_epoch() {
    need_postgres!();
    let (url, dir) = fresh_database();
    let hwm = dir.path().join("hwm");
    let db = url
        .split('/')
        .nth(3)
        .and_then(|s| s.split('?').next())
        .unwrap()
        .to_string();
    let mut s = PgStore::connect(&url, "h", &hwm).unwrap();
    let agent = s
        .register_session("a", "h", "boot", None, None, None)
        .unwrap()
        .0;
    let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
    drop(s);
    // The copy (same server, same timeline) is taken before the claim.
    let cluster = Cluster::shared().unwrap();
    let mut admin = postgres::Client::connect(&cluster.url(), postgres::NoTls).unwrap();
    let copy = format!("{db}_copy");
    admin
        .batch_execute(&format!("CREATE DATABASE {copy} TEMPLATE {db}"))
        .unwrap();
    let mut s = PgStore::connect(&url, "h", &hwm).unwrap();
    let (c, _) = s
        .claim(&agent, Some(t.id), Lease::until(0, 600_000))
        .unwrap();
    assert_eq!(c.claim.generation, Generation(1));
    s.mark_clean_stop().unwrap();
    drop(s);
    // The host comes back to the older copy: its last event is not there.
    let mut s = PgStore::connect(&cluster.url_for(&copy), "h", &hwm).unwrap();
    let ev = s.events(0, 100).unwrap();
    let epoch = ev.iter().find(|e| e.kind == crate::store::EventKind::Epoch);
    let epoch = epoch.unwrap_or_else(|| panic!("no epoch event: {ev:?}"));
    assert!(
        epoch
            .reason
            .as_deref()
            .unwrap_or("")
            .contains("does not have"),
        "{epoch:?}"
    );
    let (c, _) = s
        .claim(&agent, Some(t.id), Lease::until(0, 600_000))
        .unwrap();
    assert!(
        c.claim.generation.0 > super::epoch::GAP,
        "generation {} reused",
        c.claim.generation
    );
}

#[test]
fn restarts_under_load_lose_no_acknowledged_write_and_show_no_internal_error() {
    need_postgres!();
    let cluster = Cluster::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = cluster.url();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut st = PgStore::connect(&url, "h", &dir.path().join("hwm")).unwrap();
    let (acked, refused) = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let (mut acked, mut refused) = (Vec::new(), 0);
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                match st.add_task(&format!("t{i}"), "", 0, &[], OPERATOR, 0) {
                    Ok((t, _)) => acked.push(t.id),
                    Err(e) => {
                        assert_eq!(e.kind, ErrorKind::Unavailable, "{e:?}");
                        refused += 1;
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                }
            }
            (acked, refused)
        });
        for _ in 0..2 {
            std::thread::sleep(std::time::Duration::from_millis(300));
            cluster.restart().unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
        cluster.crash().unwrap();
        cluster.start_again().unwrap();
        // Writes resume after the last restart before the writer stops.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap()
    });
    assert!(refused > 0, "the restarts were seen");
    let st = PgStore::connect(&url, "h2", &dir.path().join("hwm2")).unwrap();
    let ids: std::collections::HashSet<TaskId> = st
        .list_tasks(None, 0)
        .unwrap()
        .iter()
        .map(|t| t.id)
        .collect();
    let lost: Vec<_> = acked.iter().filter(|id| !ids.contains(id)).collect();
    assert!(lost.is_empty(), "acknowledged but lost: {lost:?}");
    assert!(acked.len() > 10, "only {} writes acknowledged", acked.len());
    // No epoch: nothing acknowledged was lost, the timeline did not change.
    let epochs = st
        .events(0, 100_000)
        .unwrap()
        .iter()
        .filter(|e| e.kind == crate::store::EventKind::Epoch)
        .count();
    assert_eq!(epochs, 0);
}

#[test]
fn skewed_host_clocks_do_not_move_a_lease() {
    need_postgres!();
    let (url, dir) = fresh_database();
    let mut ahead = PgStore::connect(&url, "ahead", &dir.path().join("a.hwm")).unwrap();
    let mut behind = PgStore::connect(&url, "behind", &dir.path().join("b.hwm")).unwrap();
    const HOUR: i64 = 3_600_000;
    let agent = ahead
        .register_session("a", "h", "boot", None, None, None)
        .unwrap()
        .0;
    let (t, _) = ahead.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
    // The host an hour ahead grants a 60 s lease on its clock: 60 s on the server's.
    let server = ahead.clock_ms().unwrap().unwrap();
    let (c, _) = ahead
        .claim(
            &agent,
            Some(t.id),
            Lease::until(server + HOUR, server + HOUR + 60_000),
        )
        .unwrap();
    let left = c.claim.expires_ms - server;
    // At least the lease, plus however long the claim took to arrive (generous: loaded CI).
    assert!(
        (60_000..=90_000).contains(&left),
        "expires in {left} ms on the server"
    );
    // The host an hour behind sweeps: nothing is due, whatever its clock says.
    assert!(!behind.any_due(server - HOUR).unwrap());
    assert!(behind
        .lapse_due(server + 10 * HOUR, 60_000)
        .unwrap()
        .is_empty());
    let v = behind.task(t.id, server - HOUR).unwrap();
    let shown = v.expires_in_ms.unwrap();
    assert!(
        (30_000..=90_000).contains(&shown),
        "shown expiry {shown} ms"
    );
    ahead
        .check(&agent, Some(t.id), None, server - 5 * HOUR)
        .unwrap();
}

/// A writer of its own on the store's database, holding a transaction open the way a slow
/// board would: its transaction id first, then an event.
fn slow_writer(url: &str, reason: &str) -> postgres::Client {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.batch_execute("BEGIN; SELECT pg_current_xact_id()")
        .unwrap();
    c.execute(
        "INSERT INTO events (at, kind, reason) VALUES (board_wall(), 'warn', $1)",
        &[&reason],
    )
    .unwrap();
    c
}

fn reasons(events: &[crate::proto::EventView]) -> Vec<String> {
    events.iter().filter_map(|e| e.reason.clone()).collect()
}

#[test]
fn an_event_committed_behind_a_slower_transaction_waits_for_it_then_both_come_in_id_order() {
    need_postgres!();
    let (url, dir) = fresh_database();
    let mut writer = PgStore::connect(&url, "host-a", &dir.path().join("a.hwm")).unwrap();
    let reader = PgStore::connect(&url, "host-r", &dir.path().join("r.hwm")).unwrap();
    writer
        .record(crate::store::EventKind::Warn, None, None, None, "first")
        .unwrap();
    let start = reader.last_event_id().unwrap();
    let mut slow = slow_writer(&url, "slow");
    writer
        .record(crate::store::EventKind::Warn, None, None, None, "fast")
        .unwrap();
    assert!(
        reader.events(start, 100).unwrap().is_empty(),
        "the fast event is held back behind the slow one's lower id"
    );
    assert!(reader.events_waiting());
    slow.batch_execute("COMMIT").unwrap();
    let seen = reader.events(start, 100).unwrap();
    assert_eq!(reasons(&seen), ["slow", "fast"]);
    assert!(seen.windows(2).all(|w| w[0].id < w[1].id));
    assert_eq!(reader.last_event_id().unwrap(), seen[1].id);
}

#[test]
fn a_gap_left_by_a_rolled_back_writer_is_passed_once_its_contemporaries_ended() {
    need_postgres!();
    let (url, dir) = fresh_database();
    let mut writer = PgStore::connect(&url, "host-a", &dir.path().join("a.hwm")).unwrap();
    let reader = PgStore::connect(&url, "host-r", &dir.path().join("r.hwm")).unwrap();
    let start = reader.last_event_id().unwrap();
    let mut gone = slow_writer(&url, "rolled back");
    writer
        .record(crate::store::EventKind::Warn, None, None, None, "after")
        .unwrap();
    assert!(reader.events(start, 100).unwrap().is_empty());
    gone.batch_execute("ROLLBACK").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let seen = loop {
        let seen = reader.events(start, 100).unwrap();
        if !seen.is_empty() || std::time::Instant::now() > deadline {
            break seen;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert_eq!(
        reasons(&seen),
        ["after"],
        "the rolled-back id never appears"
    );
    assert!(!reader.events_waiting());
}

#[test]
fn after_a_restart_every_store_of_a_pool_answers_on_a_new_connection_without_an_error() {
    need_postgres!();
    let cluster = Cluster::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let first = PgStore::connect(&cluster.url(), "h", &dir.path().join("hwm")).unwrap();
    let mut pool: Vec<PgStore> = (0..3).map(|_| first.sibling()).collect();
    for s in &pool {
        s.unfinished_count().unwrap();
    }
    cluster.restart().unwrap();
    // The server dropped every connection; nothing was sent on them since, so a read and a
    // transaction's BEGIN run again on a new one instead of answering `unavailable`.
    assert_eq!(first.unfinished_count().unwrap(), 0);
    for (i, s) in pool.iter_mut().enumerate() {
        s.add_task(&format!("after the restart {i}"), "", 0, &[], OPERATOR, 0)
            .unwrap();
    }
    assert_eq!(first.unfinished_count().unwrap(), 3);
}

#[test]
fn a_second_board_under_one_host_name_takes_it_and_the_first_gives_it_up() {
    need_postgres!();
    let (url, dir) = fresh_database();
    let mut first = PgStore::connect(&url, "same", &dir.path().join("a.hwm")).unwrap();
    let mut copy = PgStore::connect(&url, "same", &dir.path().join("b.hwm")).unwrap();
    first.host_beat(60_000, 30_000).unwrap();
    copy.host_beat(60_000, 30_000).unwrap();
    let e = first.host_beat(60_000, 30_000).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Usage, "{e:?}");
    assert!(
        e.data.contains_key("host_taken") && e.message.contains("[store] host"),
        "{e:?}"
    );
    for _ in 0..3 {
        assert_eq!(
            copy.host_beat(60_000, 30_000).unwrap().ended_by_others,
            None
        );
    }
    let live = copy
        .hosts()
        .unwrap()
        .into_iter()
        .filter(|h| h.ended_at.is_none())
        .count();
    assert_eq!(live, 1, "no ping-pong of host sessions");
}
