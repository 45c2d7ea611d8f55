//! The demo's summary: the outcome checked from the board's own records (its task list and
//! event log) and from the git repository of the ending, printed with ✓ / ✗ marks.

use std::collections::BTreeMap;
use std::time::Instant;

use super::land::Ending;
use super::setup::{operator, PAUSER};
use super::timeline::mark;
use crate::proto::client::Target;
use crate::proto::error::BoardResult;
use crate::proto::glossary::{EventKind, TaskId, TaskState};
use crate::proto::methods::{Call, ListParams, LogParams};
use crate::proto::methods::{LogResult, TasksResult};
use crate::proto::sanitize::one_line;
use crate::proto::EventView;

/// What the board's records say about the backlog part of the demo.
struct Backlog {
    done: usize,
    total: usize,
    all_done: bool,
    once: bool,
    expels: Vec<EventView>,
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
    titles: &BTreeMap<TaskId, String>,
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
        let title = x
            .task
            .and_then(|t| titles.get(&t))
            .map(String::as_str)
            .unwrap_or("");
        println!(
            "    #{} {} from {}: {}",
            x.task.map_or_else(|| "null".to_string(), |t| t.to_string()),
            one_line(title),
            one_line(x.agent.as_deref().unwrap_or("?")),
            one_line(x.reason.as_deref().unwrap_or(""))
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
fn backlog(target: &Target, titles: &BTreeMap<TaskId, String>) -> BoardResult<Backlog> {
    let mut c = operator(target)?;
    let mine = |task: Option<TaskId>| task.is_none_or(|t| titles.contains_key(&t));
    let mut tasks = c
        .ask::<TasksResult>(Call::List(ListParams::default()))?
        .result
        .tasks;
    tasks.retain(|t| mine(Some(t.id)));
    let all = LogParams {
        after: Some(0),
        limit: Some(100_000),
    };
    let mut events = c.ask_raw::<LogResult>(Call::Log(all))?.result.events;
    events.retain(|e| mine(e.task));
    let done = tasks.iter().filter(|t| t.state == TaskState::Done).count();
    let mut b = judge(&events, titles);
    b.done = done;
    b.total = tasks.len();
    b.all_done = done == tasks.len();
    Ok(b)
}

/// What the event log says: each task done once, expulsions and lapses and who finished those
/// tasks, the paused agent's rejected writes. (`done`, `total` and `all_done` are left for the
/// task list.)
fn judge(events: &[EventView], titles: &BTreeMap<TaskId, String>) -> Backlog {
    let of =
        |kind: EventKind| -> Vec<&EventView> { events.iter().filter(|e| e.kind == kind).collect() };
    let dones = of(EventKind::Done);
    let mut done_per_task: BTreeMap<TaskId, usize> = BTreeMap::new();
    let mut per_agent: BTreeMap<String, usize> = BTreeMap::new();
    for e in &dones {
        *done_per_task.entry(e.task.unwrap_or_default()).or_default() += 1;
        *per_agent
            .entry(e.agent.as_deref().unwrap_or("?").to_string())
            .or_default() += 1;
    }
    // Whether another agent than `e`'s finished `e`'s task.
    let finished_by_other =
        |e: &EventView| dones.iter().any(|d| d.task == e.task && d.agent != e.agent);
    let expels: Vec<EventView> = of(EventKind::Expel).into_iter().cloned().collect();
    let reclaimed = expels.iter().all(finished_by_other);
    let pauser = format!("agent-{PAUSER}");
    let by_pauser = |e: &&EventView| e.agent.as_deref() == Some(pauser.as_str());
    let lapsed: Vec<&EventView> = of(EventKind::Lapse).into_iter().filter(by_pauser).collect();
    let taken_over = lapsed.iter().any(|l| finished_by_other(l));
    let rejects = of(EventKind::Reject);
    let stale = rejects.iter().filter(|e| by_pauser(e)).count();
    Backlog {
        done: 0,
        total: 0,
        all_done: false,
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
    }
}
