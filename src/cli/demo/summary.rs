//! The demo's summary: the outcome checked from the board's own records (its task list and
//! event log) and from the git repository of the ending, printed with ✓ / ✗ marks.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::Value;

use super::land::Ending;
use super::{mark, operator, PAUSER};
use crate::proto::client::Target;
use crate::proto::error::BoardResult;
use crate::proto::glossary::{EventKind, TaskState};
use crate::proto::methods::{Call, ListParams, LogParams};
use crate::proto::sanitize::one_line;

/// What the board's records say about the backlog part of the demo.
struct Backlog {
    done: usize,
    total: usize,
    all_done: bool,
    once: bool,
    expels: Vec<Value>,
    reclaimed: bool,
    pauser: String,
    lapsed: usize,
    taken_over: bool,
    stale: usize,
    grants: usize,
    rejects: usize,
    per_agent: BTreeMap<String, usize>,
}

/// Checks the outcome from the board's own records and prints the summary; whether it holds.
/// `titles` are the backlog's tasks (the ending's tasks are judged by `ending`).
pub(super) fn print(
    target: &Target,
    titles: &BTreeMap<i64, String>,
    ending: &Ending,
    start: Instant,
) -> BoardResult<bool> {
    let b = backlog(target, titles)?;
    let fenced = b.lapsed > 0 && b.taken_over && b.stale >= 1;
    let ok = b.all_done && b.once && b.expels.len() == 1 && b.reclaimed && fenced && ending.holds();
    println!("\nsummary after {:.1} s", start.elapsed().as_secs_f64());
    println!(
        "  backlog done:      {}/{} {}",
        b.done,
        b.total,
        mark(b.all_done)
    );
    println!("  each done once:    {} {}", yes(b.once), mark(b.once));
    let one_expel = b.expels.len() == 1;
    println!(
        "  expulsions:        {} {}",
        b.expels.len(),
        mark(one_expel)
    );
    for x in &b.expels {
        let title = x["task"]
            .as_i64()
            .and_then(|t| titles.get(&t))
            .map(String::as_str)
            .unwrap_or("");
        println!(
            "    #{} {} from {}: {}",
            x["task"],
            one_line(title),
            one_line(x["agent"].as_str().unwrap_or("?")),
            one_line(x["reason"].as_str().unwrap_or(""))
        );
    }
    println!(
        "  expelled task finished by another agent: {} {}",
        yes(b.reclaimed),
        mark(b.reclaimed)
    );
    println!(
        "  paused past its lease: {}, claim lapsed {} time(s), its task finished by another: {} {}",
        b.pauser,
        b.lapsed,
        yes(b.taken_over),
        mark(b.lapsed > 0 && b.taken_over)
    );
    println!(
        "  rejected stale writes of the paused agent: {} {}",
        b.stale,
        mark(b.stale >= 1)
    );
    ending.print_summary();
    println!("  claims granted:    {}", b.grants);
    println!("  rejected writes:   {}", b.rejects);
    let per = b
        .per_agent
        .iter()
        .map(|(a, n)| format!("{a} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    println!("  backlog per agent: {per}");
    println!("{}", if ok { "demo OK" } else { "demo FAILED" });
    Ok(ok)
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Reads the task list and the event log, keeping the backlog's tasks (and task-less events).
fn backlog(target: &Target, titles: &BTreeMap<i64, String>) -> BoardResult<Backlog> {
    let mut c = operator(target)?;
    let mine = |v: &Value, key: &str| v[key].as_i64().is_none_or(|t| titles.contains_key(&t));
    let tasks: Vec<Value> = c.send(Call::List(ListParams::default()))?["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|t| mine(t, "id"))
        .collect();
    let all = LogParams {
        after: Some(0),
        limit: Some(100_000),
    };
    let events: Vec<Value> = c.send_raw(Call::Log(all))?["events"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|e| mine(e, "task"))
        .collect();
    let of = |kind: EventKind| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["kind"] == kind.as_str())
            .collect()
    };
    let dones = of(EventKind::Done);
    let mut done_per_task: BTreeMap<i64, usize> = BTreeMap::new();
    let mut per_agent: BTreeMap<String, usize> = BTreeMap::new();
    for e in &dones {
        *done_per_task
            .entry(e["task"].as_i64().unwrap_or(0))
            .or_default() += 1;
        *per_agent
            .entry(e["agent"].as_str().unwrap_or("?").to_string())
            .or_default() += 1;
    }
    // Whether another agent than `agent` finished `task`.
    let finished_by_other = |task: &Value, agent: &Value| {
        dones
            .iter()
            .any(|e| &e["task"] == task && &e["agent"] != agent)
    };
    let expels: Vec<Value> = of(EventKind::Expel).into_iter().cloned().collect();
    let reclaimed = expels
        .iter()
        .all(|x| finished_by_other(&x["task"], &x["agent"]));
    let pauser = format!("agent-{PAUSER}");
    let lapsed: Vec<&Value> = of(EventKind::Lapse)
        .into_iter()
        .filter(|e| e["agent"] == pauser.as_str())
        .collect();
    let taken_over = lapsed
        .iter()
        .any(|l| finished_by_other(&l["task"], &l["agent"]));
    let rejects = of(EventKind::Reject);
    let stale = rejects
        .iter()
        .filter(|e| e["agent"] == pauser.as_str())
        .count();
    let done = tasks
        .iter()
        .filter(|t| t["state"] == TaskState::Done.as_str())
        .count();
    Ok(Backlog {
        done,
        total: tasks.len(),
        all_done: done == tasks.len(),
        once: titles.keys().all(|id| done_per_task.get(id) == Some(&1)),
        reclaimed,
        lapsed: lapsed.len(),
        taken_over,
        stale,
        grants: of(EventKind::Grant).len(),
        rejects: rejects.len(),
        expels,
        pauser,
        per_agent,
    })
}
