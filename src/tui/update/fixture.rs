//! Fixed boards for the TUI's snapshot tests and render benchmark: realistic data with fixed
//! timestamps and a fixed clock, so every frame drawn from them is reproducible. Compiled only
//! into the unit tests and into `benches/tui_render.rs` (by path), never into the library.

use crate::proto::glossary::{AgentState, EventKind, Generation, TaskId, TaskState};
use crate::proto::{EventView, GoalView, SessionView, TaskView};

use super::super::state::app::App;
use super::super::state::snapshot::Snapshot;

/// The fixed wall clock of the sample board: 2026-03-01T12:00:00Z, ms since the epoch.
pub const NOW_WALL_MS: i64 = 1_772_366_400_000;
/// The monotonic clock value at which the sample snapshot was fetched and drawn.
pub const FETCHED_MS: u64 = 60_000;

fn at(hms: &str) -> String {
    format!("2026-03-01T{hms}.000Z")
}

#[allow(clippy::too_many_arguments)]
fn task(
    id: i64,
    title: &str,
    priority: i64,
    state: TaskState,
    generation: i64,
    after: &[i64],
    blocked_by: &[i64],
    holder: Option<(&str, i64)>,
    done: Option<(&str, &str)>,
) -> TaskView {
    TaskView {
        id: TaskId(id),
        title: title.to_string(),
        body: String::new(),
        priority,
        state,
        generation: Generation(generation),
        after: after.iter().copied().map(TaskId).collect(),
        blocked_by: blocked_by.iter().copied().map(TaskId).collect(),
        ready: state == TaskState::Open && blocked_by.is_empty(),
        holder: holder.map(|(h, _)| h.to_string()),
        expires_in_ms: holder.map(|(_, ms)| ms),
        created_at: at("11:00:00"),
        updated_at: at("11:50:00"),
        done_by: done.map(|(d, _)| d.to_string()),
        done_at: done.map(|(_, t)| at(t)),
        commit: None,
        landed: None,
        labels: Vec::new(),
        meant_for: None,
        review: None,
    }
}

#[allow(clippy::too_many_arguments)]
fn session(
    id: &str,
    state: AgentState,
    pid: i64,
    pane: &str,
    claims: &[i64],
    question: Option<&str>,
    last_seen: &str,
    ended: Option<(&str, &str)>,
) -> SessionView {
    SessionView {
        id: id.to_string(),
        // Live sessions never share a name: each of these is its own.
        name: id.to_string(),
        pid: Some(pid),
        launcher_pid: Some(pid - 1),
        pane: Some(pane.to_string()),
        state,
        claims: claims.iter().copied().map(TaskId).collect(),
        waiting: None,
        question: question.map(String::from),
        started_at: at("11:00:00"),
        last_seen_at: Some(at(last_seen)),
        ended_at: ended.map(|(t, _)| at(t)),
        end_reason: ended.map(|(_, r)| r.to_string()),
        restarts: 0,
        branch: None,
        idle_since: None,
        attention: None,
        contacted_at: None,
        host: None,
    }
}

fn event(
    id: i64,
    hms: &str,
    kind: EventKind,
    task: Option<i64>,
    agent: Option<&str>,
    generation: Option<i64>,
    reason: &str,
) -> EventView {
    EventView {
        id,
        at: at(hms),
        kind,
        task: task.map(TaskId),
        agent: agent.map(String::from),
        generation: generation.map(Generation),
        reason: Some(reason.to_string()),
    }
}

/// A board in the middle of its work: 20 tasks (7 ready, 4 blocked, 4 claimed, 4 done,
/// 1 cancelled), 4 agents (two working, one waiting for a human, one gone), and a feed with an
/// expelled and a lapsed claim. One title carries terminal escape sequences, others wide and
/// combining characters.
pub fn sample_snapshot() -> Snapshot {
    Snapshot {
        board_name: Some("payments".into()),
        config_error: None,
        lease_ms: Some(120_000),
        goal: Some(GoalView {
            id: 2,
            text:
                "Ship payments v1.2: idempotent refunds, an audit log, and docs for the public API"
                    .into(),
            set_at: at("10:58:00"),
            set_by: "operator".into(),
        }),
        tasks: sample_tasks(),
        agents: sample_agents(),
        events: sample_events(),
        ..Snapshot::default()
    }
}

/// The sample board's 20 tasks; #14's title carries escape sequences, #12 and #13 wide and
/// combining characters.
fn sample_tasks() -> Vec<TaskView> {
    #[rustfmt::skip]
    let tasks = vec![
        task(1, "Sketch the refund state machine", 3, TaskState::Done, 1, &[], &[], None, Some(("claude-1", "11:20:00"))),
        task(2, "Idempotency keys on the refunds table (migration 0007)", 3, TaskState::Done, 1, &[], &[], None, Some(("codex-1", "11:31:00"))),
        task(3, "Wire the audit log writer into the payments service", 2, TaskState::Done, 1, &[1], &[], None, Some(("claude-2", "11:40:00"))),
        task(4, "Fix flaky test refunds::concurrent_partial_refunds", 1, TaskState::Done, 1, &[], &[], None, Some(("gemini-1", "11:45:00"))),
        task(5, "Refund API: POST /v1/refunds with an Idempotency-Key header", 3, TaskState::Claimed, 1, &[1, 2], &[], Some(("claude-1", 95_000)), None),
        task(6, "Audit log: retention job and admin export", 2, TaskState::Claimed, 3, &[3], &[], Some(("codex-1", 112_000)), None),
        task(7, "Retry webhooks with exponential backoff", 1, TaskState::Claimed, 1, &[], &[], Some(("codex-1", 112_000)), None),
        task(8, "Document refund error codes in the public API reference", 1, TaskState::Claimed, 2, &[], &[], Some(("gemini-1", 14_000)), None),
        task(9, "Partial refunds: rounding for currencies with 3 decimals", 3, TaskState::Open, 1, &[], &[], None, None),
        task(10, "Rate-limit the refund endpoint per merchant", 2, TaskState::Open, 0, &[], &[], None, None),
        task(11, "Prometheus metrics for refund latency", 1, TaskState::Open, 0, &[], &[], None, None),
        task(12, "Translate refund e-mails: 日本語, Español, franc\u{327}ais, re\u{301}sume\u{301}", 0, TaskState::Open, 0, &[], &[], None, None),
        task(13, "Receipts: emoji 🧾💳 render as tofu on old Android", 0, TaskState::Open, 0, &[], &[], None, None),
        task(14, "Strip ANSI colours (\u{1b}[31mred\u{1b}[0m) and \u{1b}]0;titles\u{7} from CI logs", 1, TaskState::Open, 0, &[], &[], None, None),
        task(15, "Remove the legacy /v0/refund endpoint", -1, TaskState::Open, 0, &[], &[], None, None),
        task(16, "Release notes for payments v1.2", 1, TaskState::Open, 0, &[5, 6, 7, 8], &[5, 6, 7, 8], None, None),
        task(17, "Canary deploy of payments v1.2 to 5% of traffic", 2, TaskState::Open, 0, &[16], &[16], None, None),
        task(18, "Dashboard: refunds by reason", 0, TaskState::Open, 0, &[11], &[11], None, None),
        task(19, "Runbook: what to do when refunds stall", 1, TaskState::Open, 0, &[6], &[6], None, None),
        task(20, "Migrate refunds to the new ledger (postponed to v1.3)", 0, TaskState::Cancelled, 0, &[], &[], None, None),
    ];
    tasks
}

/// The sample board's agents: two working, gemini-1 waiting on a question, claude-2 gone.
fn sample_agents() -> Vec<SessionView> {
    vec![
        session(
            "claude-1",
            AgentState::Working,
            41822,
            "%1",
            &[5],
            None,
            "11:59:57",
            None,
        ),
        session(
            "codex-1",
            AgentState::Working,
            41907,
            "%2",
            &[6, 7],
            None,
            "11:59:31",
            None,
        ),
        session(
            "gemini-1",
            AgentState::Waiting,
            42011,
            "%3",
            &[8],
            Some("Should refunds over $10k need a second approver?"),
            "11:54:00",
            None,
        ),
        session(
            "claude-2",
            AgentState::Gone,
            41850,
            "%4",
            &[],
            None,
            "11:56:02",
            Some(("11:56:10", "exited (status 3)")),
        ),
    ]
}

/// The sample feed: grants and dones, a question, an expelled and a lapsed claim, a rejected
/// done.
fn sample_events() -> Vec<EventView> {
    #[rustfmt::skip]
    let events = vec![
        event(40, "11:40:00", EventKind::Done, Some(3), Some("claude-2"), Some(1), "done"),
        event(41, "11:40:05", EventKind::Grant, Some(9), Some("claude-2"), Some(1), "claimed"),
        event(42, "11:45:00", EventKind::Done, Some(4), Some("gemini-1"), Some(1), "done"),
        event(43, "11:46:12", EventKind::Grant, Some(8), Some("gemini-1"), Some(2), "claimed"),
        event(44, "11:52:00", EventKind::Renew, None, None, None, "sweep renewed its claims (CPU)"),
        event(45, "11:54:00", EventKind::Question, None, Some("gemini-1"), None, "Should refunds over $10k need a second approver?"),
        event(46, "11:56:10", EventKind::Expel, Some(9), Some("claude-2"), Some(1), "exited (status 3)"),
        event(47, "11:56:10", EventKind::SessionEnd, None, Some("claude-2"), None, "exited (status 3)"),
        event(48, "11:57:30", EventKind::Lapse, Some(6), Some("codex-1"), Some(2), "lease expired (not renewed for 2m)"),
        event(49, "11:57:34", EventKind::Reject, Some(6), Some("codex-1"), Some(2), "done rejected: your claim on task 6 lapsed at generation 2"),
        event(50, "11:58:02", EventKind::Grant, Some(6), Some("codex-1"), Some(3), "claimed"),
    ];
    events
}

/// [`App`] showing [`sample_snapshot`] at the fixed clock, connected.
pub fn sample_app(color: bool) -> App {
    app_with(sample_snapshot(), color)
}

/// [`App`] showing `snap` at the fixed clock, connected.
pub fn app_with(snap: Snapshot, color: bool) -> App {
    let mut app = App::new(color);
    app.set_clock(FETCHED_MS, NOW_WALL_MS);
    let _ = app.on_connected();
    app.on_snapshot(snap, FETCHED_MS);
    app
}

/// A big board for the render benchmark: `tasks` tasks spread over every state, `agents` live
/// agents (every fifth waiting for a human), and 200 events.
pub fn large_snapshot(tasks: usize, agents: usize) -> Snapshot {
    Snapshot {
        board_name: Some("big".into()),
        config_error: None,
        lease_ms: Some(120_000),
        goal: Some(GoalView {
            id: 1,
            text: "A very large board".into(),
            set_at: at("10:00:00"),
            set_by: "operator".into(),
        }),
        tasks: (1..=tasks as i64)
            .map(|id| large_task(id, agents))
            .collect(),
        agents: (1..=agents).map(|i| large_agent(i, agents)).collect(),
        events: (1..=200).map(large_event).collect(),
        ..Snapshot::default()
    }
}

/// Task `id` of the big board: by `id % 5` done, claimed by one of the `agents`, blocked by the
/// task before it, or open (twice); titles of every width, some wide characters.
fn large_task(id: i64, agents: usize) -> TaskView {
    let words = [
        "refund", "ledger", "audit", "webhook", "retry", "docs", "metrics", "漢字", "résumé", "🧾",
    ];
    let agent_id = |i: usize| format!("agent-{}", i % agents.max(1) + 1);
    let n = id as usize;
    let title = format!(
        "Task {id}: {} the {} of {} ({})",
        words[n % words.len()],
        words[(n / 3) % words.len()],
        words[(n / 7) % words.len()],
        "x".repeat(n % 40)
    );
    match n % 5 {
        0 => task(
            id,
            &title,
            (n % 4) as i64,
            TaskState::Done,
            1,
            &[],
            &[],
            None,
            Some(("agent-1", "11:00:00")),
        ),
        1 => task(
            id,
            &title,
            (n % 4) as i64,
            TaskState::Claimed,
            1,
            &[],
            &[],
            Some((&agent_id(n), (n % 120_000) as i64)),
            None,
        ),
        2 => task(
            id,
            &title,
            (n % 4) as i64,
            TaskState::Open,
            0,
            &[id - 1],
            &[id - 1],
            None,
            None,
        ),
        _ => task(
            id,
            &title,
            (n % 4) as i64,
            TaskState::Open,
            0,
            &[],
            &[],
            None,
            None,
        ),
    }
}

/// Agent `i` of the big board's `agents`: three claims, waiting for a human when `i` is a
/// multiple of 5, working otherwise.
fn large_agent(i: usize, agents: usize) -> SessionView {
    let id = format!("agent-{i}");
    let claims: Vec<i64> = (0..3).map(|k| (i + k * agents.max(1)) as i64).collect();
    let waiting = i
        .is_multiple_of(5)
        .then_some("Which schema version should I target?");
    session(
        &id,
        if waiting.is_some() {
            AgentState::Waiting
        } else {
            AgentState::Working
        },
        10_000 + i as i64,
        &format!("%{i}"),
        &claims,
        waiting,
        "11:59:00",
        None,
    )
}

/// Event `i` of the big board's feed, its kind cycling through six.
fn large_event(i: i64) -> EventView {
    let kinds = [
        EventKind::Grant,
        EventKind::Done,
        EventKind::Renew,
        EventKind::Expel,
        EventKind::Lapse,
        EventKind::Reject,
    ];
    event(
        i,
        "11:59:00",
        kinds[i as usize % kinds.len()],
        Some(i),
        Some("agent-1"),
        Some(1),
        "because",
    )
}
