//! Generations never go backwards, not even across a restored backup: the board keeps a
//! high-water mark beside its database (`.board/generation.hwm`). A restored older `board.db`
//! opens a new epoch (no generation issued before is issued again, every old claim ends, a
//! stale generation is refused); a 0-byte or missing database of a board that existed and a
//! foreign SQLite file are refused with a message naming the file.

use std::fs;

use serde_json::Value;

use crate::harness::test_board::{Builder, TestBoard};

use crate::harness::*;

fn project() -> Builder {
    TestBoard::builder()
        .lease("60s")
        .sweep("1s")
        .liveness("process")
}

fn serve_refused(b: &TestBoard) -> String {
    let out = b.board(&["serve"]);
    assert!(!out.success(), "board serve started on a bad database");
    out.stderr
}

fn grant_generations(b: &TestBoard) -> Vec<i64> {
    b.json(&["log", "--limit", "100000"])["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "grant")
        .filter_map(|e| e["generation"].as_i64())
        .collect()
}

#[test]
fn a_restored_older_database_opens_a_new_epoch_and_refuses_stale_generations() {
    let mut b = project().start();
    b.add_tasks(1);
    let _a = b.run_agent(
        "alice",
        "board claim 1 >/dev/null && board release 1 >/dev/null && exec sleep 300",
    );
    assert!(poll_until(STEP_WAIT, || b.show(1)["task"]["generation"]
        == 1
        && b.show(1)["task"]["state"] == "open"));
    b.kill_serve(nix::sys::signal::Signal::SIGTERM);
    let backup = b.root().join("backup.db");
    fs::copy(b.db(), &backup).unwrap();

    // The board goes on: generation 4 is reached and held by bob.
    b.serve();
    let _bob = b.run_agent(
        "bob",
        "for i in 1 2; do board claim 1 >/dev/null && board release 1 >/dev/null; done
         board claim 1 >/dev/null && exec sleep 300",
    );
    assert!(poll_until(STEP_WAIT, || b.show(1)["task"]["generation"]
        == 4
        && b.show(1)["task"]["holder"] == "bob"));
    let before: Vec<i64> = grant_generations(&b);
    b.kill_serve(nix::sys::signal::Signal::SIGTERM);

    // Restore yesterday's copy (generation 1), as an operator would.
    fs::copy(&backup, b.db()).unwrap();
    let _ = fs::remove_file(b.db().with_extension("db-wal"));
    let _ = fs::remove_file(b.db().with_extension("db-shm"));
    b.serve();
    let log = b.json(&["log", "--limit", "100000"]);
    let epoch = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "epoch")
        .cloned()
        .unwrap_or_else(|| panic!("no epoch event: {log}"));
    assert!(
        epoch["reason"].as_str().unwrap().contains("restored"),
        "{epoch}"
    );
    // A stale generation from before the restore is refused, and nothing issued before is
    // issued again.
    let _carol = b.run_agent(
        "carol",
        "board --json done 1 --generation 4 > stale.json; echo $? > stale.code
         board --json claim 1 > claim.json; exec sleep 300",
    );
    assert!(poll_until(STEP_WAIT, || b
        .root()
        .join("claim.json")
        .exists()
        && fs::read_to_string(b.root().join("claim.json"))
            .is_ok_and(|s| !s.is_empty())));
    assert_eq!(
        fs::read_to_string(b.root().join("stale.code"))
            .unwrap()
            .trim(),
        "5"
    );
    let claim: Value =
        serde_json::from_str(&fs::read_to_string(b.root().join("claim.json")).unwrap()).unwrap();
    let g = claim["generation"].as_i64().unwrap();
    assert!(
        before.iter().all(|old| g > *old),
        "generation {g} was issued before the restore ({before:?})"
    );
    println!("before the restore: {before:?}; after: {g}");
}

#[test]
fn an_empty_or_missing_database_of_a_board_that_existed_is_refused() {
    let mut b = project().start();
    b.add_tasks(1);
    b.kill_serve(nix::sys::signal::Signal::SIGTERM);
    fs::write(b.db(), b"").unwrap();
    let err = serve_refused(&b);
    assert!(err.contains("board.db") && err.contains("empty"), "{err}");
    fs::remove_file(b.db()).unwrap();
    let err = serve_refused(&b);
    assert!(err.contains("board.db") && err.contains("missing"), "{err}");
    assert!(!b.db().exists(), "a refused start created the database");
}

#[test]
fn a_foreign_sqlite_file_is_refused_and_left_unchanged() {
    let b = project().unserved();
    fs::create_dir_all(b.db().parent().unwrap()).unwrap();
    {
        let c = rusqlite::Connection::open(b.db()).unwrap();
        c.execute_batch("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount INTEGER);")
            .unwrap();
    }
    let before = fs::read(b.db()).unwrap();
    let err = serve_refused(&b);
    assert!(
        err.contains("board.db") && err.contains("not a board's database"),
        "{err}"
    );
    assert!(err.contains("invoices"), "says what was found: {err}");
    assert_eq!(
        fs::read(b.db()).unwrap(),
        before,
        "the foreign file was changed"
    );
    fs::write(b.db(), b"not a database at all, just text").unwrap();
    let err = serve_refused(&b);
    assert!(err.contains("not a board's database"), "{err}");
}

const STEP_WAIT: std::time::Duration = std::time::Duration::from_secs(15);
