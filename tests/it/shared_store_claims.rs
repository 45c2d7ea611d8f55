//! A claim of the best ready task through a board on PostgreSQL takes the store's one-round-trip
//! path (the server function `board_claim_next`): its answer, its retry under the same `op_id`,
//! and the notices added to it must be what the general path gives on the embedded store.

use serde_json::{json, Value};

use crate::harness::test_board::{frozen, TestBoard};
use crate::hosts_share_one_store::{cluster, host, JsonAgent, QUICK};

/// `result` of a claim answer without what differs between two boards and two moments: the
/// times and the time left.
fn comparable(answer: &Value) -> Value {
    let mut r = answer["result"].clone();
    let m = r.as_object_mut().expect("a result object");
    m.remove("expires_in_ms");
    if let Some(task) = m.get_mut("task") {
        let mut t = frozen(task);
        for k in ["created_at", "updated_at", "done_at"] {
            t.as_object_mut().expect("task object").remove(k);
        }
        *task = t;
    }
    r
}

/// The same scene on one board: a waiting task behind the best one, an agent claiming next with
/// a fixed `op_id`, then the same request again. Answers: the claim, its retry; and the agent,
/// whose claim lasts as long as it does.
fn claim_next_twice(board: &TestBoard) -> (Value, Value, JsonAgent) {
    let first = board.json(&[
        "add",
        "first <\u{1b}[31m> \"quoted\" ünïcode",
        "--priority",
        "2",
    ]);
    let first = first["task"]["id"].as_i64().expect("task id");
    board.json(&["add", "after first", "--after", &first.to_string()]);
    board.json(&["add", "lower", "--priority", "1"]);
    let mut agent = JsonAgent::start(board, "solo");
    let claim = agent.call("claim", json!({"op_id": "claim-once"}));
    let again = agent.call("claim", json!({"op_id": "claim-once"}));
    (claim, again, agent)
}

#[test]
fn a_claim_of_the_next_task_answers_on_postgres_as_on_the_embedded_store() {
    let Some(pg) = cluster() else { return };
    let on_pg = host(&pg, "a", &QUICK);
    let on_sqlite = TestBoard::start();
    let (pg_claim, pg_again, _pg_agent) = claim_next_twice(&on_pg);
    let (sqlite_claim, sqlite_again, _sqlite_agent) = claim_next_twice(&on_sqlite);
    assert!(pg_claim.get("result").is_some(), "{pg_claim}");
    assert_eq!(comparable(&pg_claim), comparable(&sqlite_claim));
    // The retry is answered as saved: the same claim, not a second grant.
    assert_eq!(pg_again["result"], pg_claim["result"]);
    assert_eq!(comparable(&pg_again), comparable(&sqlite_again));
    let task = pg_claim["result"]["task"]["id"].as_i64().expect("task id");
    let shown = on_pg.task(task);
    assert_eq!(shown["generation"], 1, "one grant only: {shown}");
    assert_eq!(frozen(&shown), frozen(&pg_claim["result"]["task"]));
    let events = on_pg.show(task)["events"].clone();
    let grants = events
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["kind"] == "grant")
        .count();
    assert_eq!(grants, 1, "{events}");
}

#[test]
fn a_claim_of_the_next_task_on_postgres_tells_lost_claims_and_unread_messages() {
    let Some(pg) = cluster() else { return };
    let board = host(&pg, "a", &QUICK);
    let first = board.add("first");
    board.add("second");
    let mut agent = JsonAgent::start(&board, "solo");
    let r = agent.call("claim", json!({}));
    assert_eq!(r["result"]["task"]["id"], first, "{r}");
    board.json(&["release", "--force", &first.to_string()]);
    board.json(&["send", &agent.id, "look at the second one"]);
    let r = agent.call("claim", json!({}));
    let result = &r["result"];
    assert_eq!(
        result["task"]["id"], first,
        "the released task is ready again: {r}"
    );
    assert_eq!(result["generation"], 2, "{r}");
    assert_eq!(result["lost"][0]["task"], first, "{r}");
    assert_eq!(result["lost"][0]["generation"], 1, "{r}");
    assert_eq!(result["inbox"]["unread"], 1, "{r}");
    assert_eq!(result["inbox"]["from"], json!(["operator"]), "{r}");
    // Told once: the next answer names no lost claim, the message stays unread until read.
    let r = agent.call("claim", json!({}));
    assert!(r["result"].get("lost").is_none(), "{r}");
    assert_eq!(r["result"]["inbox"]["unread"], 1, "{r}");
}

/// The same scene on one board: the agent claims a task and finishes it with a fixed `op_id`,
/// asks again with that `op_id`, finishes it again under a new one, and then tries to finish a
/// task it does not hold. Answers, in that order.
fn done_four_ways(board: &TestBoard) -> Vec<Value> {
    board.add("to finish");
    let other = board.add("someone else's");
    let mut agent = JsonAgent::start(board, "finisher");
    let claim = agent.call("claim", json!({}));
    let task = claim["result"]["task"]["id"].clone();
    let generation = claim["result"]["generation"].clone();
    let params = json!({"task": task, "generation": generation, "op_id": "done-once"});
    vec![
        agent.call("done", params.clone()),
        agent.call("done", params),
        agent.call("done", json!({"task": task, "generation": generation})),
        agent.call("done", json!({"task": other, "generation": 1})),
    ]
}

/// `result` or `error` of an answer without the times.
fn comparable_answer(answer: &Value) -> Value {
    if answer.get("result").is_some() {
        return comparable(answer);
    }
    let mut e = answer["error"].clone();
    e.as_object_mut()
        .expect("an error object")
        .remove("message");
    e
}

#[test]
fn a_done_on_postgres_answers_as_on_the_embedded_store() {
    let Some(pg) = cluster() else { return };
    let on_pg = host(&pg, "a", &QUICK);
    let on_sqlite = TestBoard::start();
    let pg_answers = done_four_ways(&on_pg);
    let sqlite_answers = done_four_ways(&on_sqlite);
    for (p, s) in pg_answers.iter().zip(&sqlite_answers) {
        assert_eq!(comparable_answer(p), comparable_answer(s), "{p}\n{s}");
    }
    let [done, again, repeated, refused] = &pg_answers[..] else {
        panic!("four answers")
    };
    assert_eq!(done["result"]["task"]["state"], "done", "{done}");
    assert_eq!(done["result"]["already"], false, "{done}");
    assert_eq!(
        again["result"], done["result"],
        "a retry is answered as saved"
    );
    assert_eq!(repeated["result"]["already"], true, "{repeated}");
    assert!(refused.get("error").is_some(), "{refused}");
    let task = done["result"]["task"]["id"].as_i64().expect("task id");
    let dones = on_pg.show(task)["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["kind"] == "done")
        .count();
    assert_eq!(dones, 1, "one done event");
}

#[test]
fn status_on_a_shared_store_names_the_store_as_its_database_not_a_local_file() {
    let Some(pg) = cluster() else { return };
    let board = host(&pg, "a", &QUICK);
    let status = board.json(&["status"]);
    assert_eq!(status["store"]["kind"], "postgres", "{status}");
    assert_eq!(status["db"], status["store"]["location"], "{status}");
    let db = status["db"].as_str().expect("db");
    assert!(db.starts_with("postgres"), "{status}");
    assert!(!db.contains("board.db"), "{status}");
}
