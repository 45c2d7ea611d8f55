//! Messages reach an agent that finished its turn, without waiting for its next board call:
//! a turn-end hook that can continue its CLI's turn (Claude Code's `Stop`) answers with the
//! messages as Claude Code's block decision; an agent idle at its prompt in a board pane sees a
//! line in that pane, never while a person is typing there; and an agent that said its turn
//! finished while holding a claim is nudged once, is no longer renewed by CPU alone, and loses
//! the claim one lease later unless it acts.

use serde_json::{json, Value};

use crate::harness::agent::Agent;
use crate::harness::sh_quote;
use crate::harness::test_board::TestBoard;

/// Claude Code's documented `Stop` payload.
fn stop_payload(stop_hook_active: bool) -> Value {
    json!({"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
           "hook_event_name": "Stop", "stop_hook_active": stop_hook_active})
}

/// Runs `board hook claude Stop` inside `agent` with the payload on stdin; the hook always
/// exits 0 and writes nothing to stderr. Its stdout.
fn stop_hook(agent: &mut Agent, stop_hook_active: bool) -> String {
    let out = agent.sh(&format!(
        "printf '%s' {} | board hook claude Stop",
        sh_quote(&stop_payload(stop_hook_active).to_string())
    ));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stderr, "", "{out:?}");
    out.stdout
}

#[test]
fn claudes_stop_hook_continues_the_turn_with_unread_messages_once() {
    let board = TestBoard::start();
    let mut a = board.agent("claude");
    let mut other = board.agent("codex");
    // A holder, so that "idle" means its turn finished (an agent holding nothing shows idle).
    let task = board.add("Pick the store");
    a.claim(task);

    // Nothing unread: the hook prints nothing (the turn ends) and the agent is idle.
    assert_eq!(stop_hook(&mut a, false), "");
    assert_eq!(board.session(&a.id).unwrap()["state"], "idle");

    board
        .board(&["send", &a.id, "Use SQLite, not Postgres"])
        .ok();
    other.board(&["send", &a.id, "I rebased main"]).ok();
    let printed = stop_hook(&mut a, false);
    let decision: Value = serde_json::from_str(printed.trim())
        .unwrap_or_else(|e| panic!("not one JSON decision ({e}): {printed:?}"));
    assert_eq!(decision["decision"], "block", "{decision}");
    let reason = decision["reason"].as_str().unwrap();
    assert!(
        reason.contains("from operator: Use SQLite, not Postgres"),
        "{reason}"
    );
    assert!(
        reason.contains(&format!("from {}: I rebased main", other.id)),
        "{reason}"
    );
    // Delivered: marked read, and the agent's turn goes on (not idle).
    assert_eq!(a.json(&["inbox"])["messages"], json!([]));
    assert_eq!(board.session(&a.id).unwrap()["state"], "working");

    // Claude stops again with stop_hook_active: nothing new, so nothing continues the turn.
    assert_eq!(stop_hook(&mut a, true), "");
    assert_eq!(board.session(&a.id).unwrap()["state"], "idle");
}
