//! Restarting the board (`board stop`, then any command) keeps tasks, notes,
//! generations and the event log. At start it expels the claims of sessions whose processes are
//! gone (here: an agent killed, with its launcher, while the board was stopped) and keeps those
//! of living sessions.

use crate::harness::{test_board::frozen, test_board::TestBoard};
use serde_json::{json, Value};

#[test]
fn a_restart_keeps_the_board_and_expels_sessions_that_died_meanwhile() {
    let mut board = TestBoard::start();
    let shipped = board.add("ship the release");
    let orphaned = board.add("held by an agent that dies while the board is down");
    let kept = board.add("held by an agent that lives through the restart");
    board
        .board(&["note", &shipped.to_string(), "operator: ship on friday"])
        .ok();

    let mut finisher = board.agent("finisher");
    assert_eq!(finisher.claim(shipped), 1);
    finisher
        .board(&["note", &shipped.to_string(), "tagged v1.0"])
        .ok();
    finisher
        .board(&["done", &shipped.to_string(), "--note", "released"])
        .ok();
    let mut victim = board.agent("victim");
    assert_eq!(victim.claim(orphaned), 1);
    let mut survivor = board.agent("survivor");
    assert_eq!(survivor.claim(kept), 1);

    let tasks_before = board.json(&["list"])["tasks"].clone();
    let notes_before = board.show(shipped)["notes"].clone();
    let log_before = board.log();

    board.stop();
    // While the board is down, the victim's launcher and agent die without a word.
    victim.kill_silently();

    // Any command starts the board again.
    let tasks_after = board.json(&["list"])["tasks"].clone();

    let log_after = board.log();
    assert!(
        log_after.len() > log_before.len(),
        "the log goes on after the restart"
    );
    assert_eq!(
        log_after[..log_before.len()],
        log_before[..],
        "the event log is kept as it was"
    );
    let new_events = &log_after[log_before.len()..];
    assert!(
        new_events.iter().any(|e| e["kind"] == "board_start"),
        "the restart is in the log: {new_events:?}"
    );

    let by_id = |tasks: &Value, id: i64| {
        tasks
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("task {id} missing from {tasks}"))
    };
    assert_eq!(
        frozen(&by_id(&tasks_after, shipped)),
        frozen(&by_id(&tasks_before, shipped))
    );
    assert_eq!(by_id(&tasks_after, shipped)["state"], "done");
    assert_eq!(
        frozen(&by_id(&tasks_after, kept)),
        frozen(&by_id(&tasks_before, kept)),
        "a living session keeps its claim"
    );
    assert_eq!(by_id(&tasks_after, kept)["holder"], survivor.id.as_str());
    let orphan = by_id(&tasks_after, orphaned);
    assert_eq!(
        orphan["state"], "open",
        "the dead session's claim was expelled"
    );
    assert_eq!(orphan["holder"], Value::Null);
    assert_eq!(orphan["generation"], 1, "the generation is kept");
    assert_eq!(board.show(shipped)["notes"], notes_before, "notes are kept");

    let expels: Vec<&Value> = new_events.iter().filter(|e| e["kind"] == "expel").collect();
    assert_eq!(
        expels.len(),
        1,
        "only the dead session is expelled: {new_events:?}"
    );
    assert_eq!(expels[0]["task"], orphaned);
    assert_eq!(expels[0]["agent"], victim.id.as_str());
    assert_eq!(expels[0]["generation"], 1);
    let reason = expels[0]["reason"].as_str().unwrap();
    assert!(reason.contains("found at board start"), "{reason}");
    let agents = board.json(&["agents", "--all"]);
    let victim_row = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == victim.id.as_str())
        .cloned()
        .expect("the victim's session is listed with --all");
    assert_eq!(victim_row["end_reason"], json!(reason));

    // Generations go on from where they were; the survivor's identity still works.
    survivor.board(&["done", &kept.to_string()]).ok();
    assert_eq!(survivor.claim(orphaned), 2, "a generation is never reused");
}

#[test]
fn an_agent_killed_while_the_board_is_down_loses_its_claim_when_the_board_is_back() {
    let mut board = TestBoard::start();
    let task = board.add("held by an agent killed while the board is down");
    let mut victim = board.agent("victim");
    assert_eq!(victim.claim(task), 1);

    board.stop();
    // Its launcher lives: it sees the agent die and reports it, starting the board if need be.
    victim.kill_agent();
    assert_eq!(victim.wait_launcher(), 128 + 9, "board run reports SIGKILL");

    let t = board.task(task);
    assert_eq!(t["state"], "open", "the claim was expelled: {t}");
    assert_eq!(t["generation"], 1);
    let expel = board.log_of("expel", task);
    assert_eq!(expel.len(), 1, "{expel:?}");
    assert_eq!(expel[0]["agent"], victim.id.as_str());
    let reason = expel[0]["reason"].as_str().unwrap();
    eprintln!("expel reason: {reason}");
    assert!(
        reason == "killed by SIGKILL" || reason.contains("found at board start"),
        "{reason}"
    );
    let mut next = board.agent("next");
    assert_eq!(next.claim(task), 2);
}
