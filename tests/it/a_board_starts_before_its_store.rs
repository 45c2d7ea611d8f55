//! A board on a shared PostgreSQL store starts while the store is down, says what it knows
//! while it cannot reach it, and works again from the first call the store answers; a board
//! the store refuses (a wrong password) has the server's refusal printed to whoever started it.

use serde_json::Value;

use crate::harness::postgres::psql;
use crate::harness::{poll, poll_until, STEP};
use crate::hosts_share_one_store::{cluster, host, host_on, JsonAgent, QUICK};

/// `board --json status` of `board`, which must answer (exit 0).
fn status(board: &crate::harness::test_board::TestBoard) -> Value {
    board.json(&["status"])
}

/// A board started with the server stopped serves `status` (its pid, socket, store and why it
/// cannot reach it), refuses writes naming the store and the reason (exit 8), and takes the
/// first write once the server is up.
#[test]
fn a_board_started_with_its_store_down_serves_status_and_writes_once_the_store_comes() {
    let Some(pg) = cluster() else { return };
    pg.stop().expect("stop the server");
    let mut a = host_on(&pg.url(), "a", &QUICK).unserved();
    let pid = a.serve();

    let s = status(&a);
    assert_eq!(s["pid"], pid, "{s}");
    assert!(s["socket"].as_str().is_some_and(|p| !p.is_empty()), "{s}");
    assert_eq!(s["store"]["kind"], "postgres", "{s}");
    let why = s["store_unreachable"].as_str().unwrap_or_default();
    assert!(
        why.contains("PostgreSQL store at"),
        "status names the store: {s}"
    );
    assert!(s["store_unreachable_since"].is_string(), "{s}");
    assert_eq!(s["store_last_contact"], Value::Null, "never reached: {s}");
    let human = a.board(&["status"]);
    assert_eq!(human.code, 0, "{human:?}");
    assert!(
        human.stdout.contains("STORE UNREACHABLE since"),
        "{human:?}"
    );

    let add = a.board(&["add", "while down"]);
    assert_eq!(add.code, 8, "{add:?}");
    assert!(add.stderr.contains("PostgreSQL store at"), "{add:?}");
    // The reason, not only that an attempt failed: the socket of the stopped server is gone.
    assert!(
        add.stderr.contains("No such file or directory") || add.stderr.contains("refused"),
        "the refusal says why: {add:?}"
    );
    let log = std::fs::read_to_string(a.root().join(".board/board.log")).unwrap_or_default();
    assert!(log.contains("the store is unreachable at start"), "{log}");

    pg.start_again().expect("start the server");
    let reached = poll_until(STEP, || status(&a)["store_unreachable"].is_null());
    assert!(
        reached,
        "the board never reached the store after it started"
    );
    let add = a.board(&["add", "after"]);
    assert_eq!(add.code, 0, "the first write after the store came: {add:?}");
    let s = status(&a);
    assert!(s["store_last_contact"].is_string(), "{s}");
    assert_eq!(s["unfinished_tasks"], 1, "{s}");
    assert!(
        s["hosts"]
            .as_array()
            .is_some_and(|h| h.iter().any(|h| h["name"] == "a")),
        "{s}"
    );
}

/// During an outage `board status` still shows the board's pid, socket, configuration, the
/// hosts and agents as last known, and when and why the store was lost; the first call the
/// store answers again clears the outage at once.
#[test]
fn status_during_an_outage_says_what_the_board_last_knew_and_clears_at_the_first_success() {
    let Some(pg) = cluster() else { return };
    let a = host(&pg, "a", &QUICK);
    let _agent = JsonAgent::start(&a, "w0");
    a.board(&["add", "one"]).ok();
    let before = status(&a);
    assert_eq!(before["live_sessions"], 1, "{before}");

    pg.stop().expect("stop the server");
    let s = poll(STEP, || {
        let s = status(&a);
        s["store_unreachable"].is_string().then_some(s)
    })
    .expect("status says the store is unreachable");
    assert_eq!(s["pid"], before["pid"], "{s}");
    assert_eq!(s["socket"], before["socket"], "{s}");
    assert_eq!(s["lease"], before["lease"], "{s}");
    assert_eq!(s["live_sessions"], 1, "as last known: {s}");
    assert_eq!(s["unfinished_tasks"], 1, "as last known: {s}");
    assert_eq!(s["hosts"], before["hosts"], "as last known: {s}");
    assert!(s["store_unreachable_since"].is_string(), "{s}");
    assert!(s["store_last_contact"].is_string(), "{s}");
    let human = a.board(&["status"]);
    assert!(human.stdout.contains("as last known"), "{human:?}");

    pg.start_again().expect("start the server");
    let back = poll_until(STEP, || a.board(&["add", "two"]).code == 0);
    assert!(back, "no write succeeded after the store came back");
    let s = status(&a);
    assert_eq!(
        s["store_unreachable"],
        Value::Null,
        "the first success ends the outage: {s}"
    );
}

/// A board autostarted with a wrong password in its store URL: the client prints the server's
/// refusal, and `board.log` has it.
#[test]
fn an_autostart_with_a_wrong_password_prints_the_servers_refusal() {
    let Some(pg) = cluster() else { return };
    let url = pg.url();
    psql(&url, "CREATE ROLE guarded LOGIN PASSWORD 'right'");
    let hba = psql(&url, "SHOW hba_file");
    let rules = std::fs::read_to_string(&hba).expect("pg_hba.conf");
    std::fs::write(&hba, format!("local all guarded scram-sha-256\n{rules}")).expect("hba");
    psql(&url, "SELECT pg_reload_conf()");
    let wrong = url.replacen("://board@", "://guarded:wrong@", 1);
    assert_ne!(wrong, url, "the URL names the user: {url}");
    let a = host_on(&wrong, "a", &QUICK).unserved();
    let add = a.board(&["add", "refused"]);
    assert_ne!(add.code, 0, "{add:?}");
    assert!(
        add.stderr.contains("password authentication failed"),
        "the client prints the server's refusal: {add:?}"
    );
    let log = std::fs::read_to_string(a.root().join(".board/board.log")).unwrap_or_default();
    assert!(log.contains("password authentication failed"), "{log}");
}

/// A board that cannot start at all (a store URL that does not parse), started by a client
/// command: the command prints why, and `board.log` has it.
#[test]
fn an_autostarted_board_that_cannot_start_says_why_to_the_command() {
    let url = "host=/nonexistent port=notanumber dbname=board";
    let a = host_on(url, "a", &QUICK).unserved();
    let add = a.board(&["add", "never"]);
    assert_eq!(add.code, 8, "{add:?}");
    assert!(
        add.stderr
            .contains("could not start: the PostgreSQL store URL does not parse"),
        "the command prints why the board it started exited: {add:?}"
    );
    let log = std::fs::read_to_string(a.root().join(".board/board.log")).unwrap_or_default();
    assert!(log.contains("the board cannot start"), "{log}");
}
