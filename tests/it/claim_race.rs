//! Sixteen agents race `board claim T` for the same task, twenty times over.
//! Exactly one wins each race (exit 0); the fifteen others get a conflict (exit 4) that names the
//! winner; the event log holds one grant per task.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use crate::harness::process::{fifo_rw, mkfifo};
use crate::harness::test_board::TestBoard;
use crate::harness::{poll_until, STEP};

const AGENTS: usize = 16;
const TASKS: usize = 20;

/// Each racer loops over the tasks: it says it has arrived at task T's barrier, blocks on the
/// barrier (a FIFO the test writes one newline per racer into), claims T, and records the exit
/// code and stderr of its claim. At the end it waits at a last barrier, so its claims stay live
/// until the test has looked at them.
const RACER: &str = r#"
d="$1"; shift
for t in "$@"; do
    : > "$d/arrived.$t.$BOARD_AGENT"
    read _ < "$d/go.$t"
    board claim "$t" > /dev/null 2> "$d/err.$t.$BOARD_AGENT"
    echo "$?" > "$d/code.$t.$BOARD_AGENT"
done
: > "$d/arrived.end.$BOARD_AGENT"
read _ < "$d/go.end"
"#;

#[test]
fn sixteen_agents_race_for_each_of_twenty_tasks_and_exactly_one_wins_each() {
    let board = TestBoard::start();
    let tasks: Vec<String> = (1..=TASKS)
        .map(|i| board.add(&format!("contested task {i}")).to_string())
        .collect();

    // One barrier per task: a FIFO held open read-write by the test, so racers block in `read`
    // until the test writes their newlines, all at once. The shell's `read` takes a pipe one
    // byte at a time, so each racer consumes exactly one newline.
    let d = board.scratch().join("race");
    std::fs::create_dir_all(&d).unwrap();
    let mut barriers = BTreeMap::new();
    for t in tasks.iter().chain(&["end".to_string()]) {
        let f = fifo_rw(&mkfifo(d.join(format!("go.{t}"))));
        barriers.insert(t.clone(), f);
    }

    let mut args = vec![d.to_str().unwrap()];
    args.extend(tasks.iter().map(String::as_str));
    let mut racers: Vec<_> = (0..AGENTS)
        .map(|_| board.run_agent_with("racer", RACER, &args, &[]))
        .collect();

    for t in &tasks {
        let all_arrived = poll_until(STEP, || arrivals(&d, t) == AGENTS);
        assert!(
            all_arrived,
            "only {} of {AGENTS} racers reached the barrier of task {t}",
            arrivals(&d, t)
        );
        // Release the barrier: one newline per racer, in one write.
        barriers
            .get_mut(t)
            .unwrap()
            .write_all(&[b'\n'; AGENTS])
            .unwrap();
    }
    assert!(
        poll_until(STEP, || arrivals(&d, "end") == AGENTS),
        "every racer finishes its claims"
    );

    let events = board.log();
    let mut wins: BTreeMap<String, usize> = BTreeMap::new();
    for t in &tasks {
        let results = results(&d, t);
        assert_eq!(results.len(), AGENTS, "task {t}: a racer left no result");
        let winners: Vec<&String> = results
            .iter()
            .filter(|(_, (code, _))| *code == 0)
            .map(|(agent, _)| agent)
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "task {t}: exactly one claim must win: {results:#?}"
        );
        let winner = winners[0];
        *wins.entry(winner.clone()).or_default() += 1;
        for (agent, (code, stderr)) in results.iter().filter(|(a, _)| *a != winner) {
            assert_eq!(*code, 4, "task {t}: {agent} lost, so must get a conflict");
            assert!(
                stderr.contains(&format!("held by {winner}")),
                "task {t}: {agent}'s conflict must name the holder {winner}: {stderr:?}"
            );
        }
        let grants: Vec<_> = events
            .iter()
            .filter(|e| e["kind"] == "grant" && e["task"].as_i64() == t.parse().ok())
            .collect();
        assert_eq!(
            grants.len(),
            1,
            "task {t}: one grant in the log: {grants:?}"
        );
        assert_eq!(
            grants[0]["agent"],
            winner.as_str(),
            "task {t}: the grant names the winner"
        );
        assert_eq!(grants[0]["generation"], 1);
        let task = board.task(t.parse().unwrap());
        assert_eq!(
            task["holder"],
            winner.as_str(),
            "task {t}: the winner holds it"
        );
    }

    eprintln!("races won per agent: {wins:?}");

    barriers
        .get_mut("end")
        .unwrap()
        .write_all(&[b'\n'; AGENTS])
        .unwrap();
    for r in &mut racers {
        assert_eq!(r.wait_launcher(), 0, "a racer's board run failed");
    }
}

fn arrivals(d: &Path, task: &str) -> usize {
    let prefix = format!("arrived.{task}.");
    std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .count()
}

/// Per racer for `task`: (exit code, stderr) of its claim.
fn results(d: &Path, task: &str) -> BTreeMap<String, (i32, String)> {
    let prefix = format!("code.{task}.");
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(agent) = name.strip_prefix(&prefix) else {
            continue;
        };
        let code = std::fs::read_to_string(e.path()).unwrap();
        let stderr = std::fs::read_to_string(d.join(format!("err.{task}.{agent}"))).unwrap();
        out.insert(
            agent.to_string(),
            (code.trim().parse().expect("exit code"), stderr),
        );
    }
    out
}
