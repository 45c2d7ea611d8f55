//! When the agent under `board run` exits (status 3), its claims are expelled at
//! once: the task is ready again within 500 ms of the exit, and the expel event says
//! `exited (status 3)`.

use std::time::{Duration, Instant};

use crate::harness::poll_until;

use crate::harness::{queries::ready_ids, test_board::TestBoard};
use serde_json::json;

#[test]
fn an_agent_that_exits_loses_its_claims_at_once() {
    // A long lease: only the exit can free the task within the test.
    let board = TestBoard::start();
    let task = board.add("migrate the schema");
    let mut quitter = board.agent("quitter");
    assert_eq!(quitter.claim(task), 1);
    assert!(
        !board.ready_ids().contains(&task),
        "a claimed task is not ready"
    );

    let mut rpc = board.rpc();
    let exited_at = Instant::now();
    quitter.exit_with(3);
    let ready_again = poll_until(Duration::from_secs(5), || {
        ready_ids(&rpc.result("ready", json!({}))).contains(&task)
    });
    let delay = exited_at.elapsed();
    println!("expel delay: {} ms", delay.as_millis());
    eprintln!("expel delay: {} ms", delay.as_millis());
    assert!(ready_again, "the task never became ready again");
    assert!(
        delay < Duration::from_millis(500),
        "the task was ready again only {delay:?} after the agent exited"
    );

    assert_eq!(
        quitter.wait_launcher(),
        3,
        "board run exits with the agent's status"
    );
    let expel = board.log_of("expel", task);
    assert_eq!(expel.len(), 1, "one expel event: {expel:?}");
    assert_eq!(expel[0]["agent"], quitter.id.as_str());
    assert_eq!(expel[0]["generation"], 1);
    assert_eq!(expel[0]["reason"], "exited (status 3)");
    assert!(
        board.log_of("lapse", task).is_empty(),
        "expelled, not lapsed"
    );
    let t = board.task(task);
    assert_eq!(t["state"], "open");
    assert_eq!(t["holder"], serde_json::Value::Null);
    assert_eq!(t["generation"], 1, "the generation is kept");
}

#[test]
fn each_expulsion_names_its_agents_exit_status_even_with_a_busy_sweep() {
    // A sweep every 20 ms runs often between an agent's exit and its launcher's report; it must
    // not expel first with a vaguer reason ("process gone").
    let board = TestBoard::builder().lease("60s").sweep("20ms").start();
    let mut agents = board.agents(&["quitter"; 8]);
    let mut expected = Vec::new();
    for (i, agent) in agents.iter_mut().enumerate() {
        let task = board.add(&format!("task {i}"));
        assert_eq!(agent.claim(task), 1);
        expected.push((task, agent.id.clone(), 10 + i as i32));
    }
    for (agent, (_, _, status)) in agents.iter_mut().zip(&expected) {
        agent.exit_with(*status);
    }
    for (agent, (_, _, status)) in agents.iter_mut().zip(&expected) {
        assert_eq!(agent.wait_launcher(), *status);
    }
    let all_expelled = poll_until(Duration::from_secs(5), || {
        expected
            .iter()
            .all(|(task, _, _)| !board.log_of("expel", *task).is_empty())
    });
    assert!(all_expelled, "every exit expels its agent's claim");
    for (task, agent, status) in &expected {
        let expel = board.log_of("expel", *task);
        assert_eq!(expel.len(), 1, "{expel:?}");
        assert_eq!(expel[0]["agent"], agent.as_str());
        assert_eq!(
            expel[0]["reason"],
            format!("exited (status {status})"),
            "task {task}"
        );
    }
}
