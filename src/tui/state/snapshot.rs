//! What the TUI shows of the board: a [`Snapshot`] of one refresh, taken in with its agent text
//! made inert ([`crate::proto::sanitize::one_line`]), and the backlog rows built from it.
//!
//! Text written by agents is untrusted. It is made inert when a snapshot is taken in, so the view
//! only ever sees text without control characters.

use crate::proto::client::Answer;
use crate::proto::glossary::{AgentState, EventKind, TaskState};
use crate::proto::methods::{AgentsResult, GoalResult, LogResult, StatusResult, TasksResult};
use crate::proto::sanitize::{one_line, truncate_width};
use crate::proto::{EventView, GoalView, SessionView, TaskView};

/// Longest text kept for display in one line, in columns (no terminal is wider).
const LINE_COLS: usize = 1000;
/// How long the last ended session of a name no live session has stays on the agents panel
/// (ms), as in `board agents`.
pub(crate) const GONE_FOR_MS: i64 = crate::proto::views::RECENT_ENDED_MS;

/// Everything the TUI fetches from the board in one refresh.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// The board's name (`[board] name` in `board.toml`), from `status`.
    pub board_name: Option<String>,
    /// A `board.toml` error the board reported (previous settings stay in force).
    pub config_error: Option<String>,
    /// Lease duration in force, ms (to colour countdowns that run low).
    pub lease_ms: Option<i64>,
    /// The current goal.
    pub goal: Option<GoalView>,
    /// Every task (`list`).
    pub tasks: Vec<TaskView>,
    /// Agent sessions, live and ended (`agents` with `all`).
    pub agents: Vec<SessionView>,
    /// Recent events, oldest first (`log`).
    pub events: Vec<EventView>,
    /// The operator's unread messages (`inbox` of the `status` answer).
    pub unread: Unread,
}

/// Unread messages to the operator.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unread {
    /// How many.
    pub count: i64,
    /// Their senders (session ids or `operator`), raw.
    pub from: Vec<String>,
}

impl Snapshot {
    /// Builds a snapshot from the answers of `status` (with the operator's unread messages
    /// beside its result), `goal`, `list`, `agents` and `log`.
    pub fn from_results(
        status: Answer<StatusResult>,
        goal: GoalResult,
        list: TasksResult,
        agents: AgentsResult,
        log: LogResult,
    ) -> Snapshot {
        let unread = status.inbox.map_or_else(Unread::default, |n| Unread {
            count: n.unread,
            from: n.from,
        });
        Snapshot {
            board_name: Some(status.result.name),
            config_error: status.result.config_error,
            lease_ms: Some(status.result.lease.duration_ms),
            goal: goal.goal,
            tasks: list.tasks,
            agents: agents.agents,
            events: log.events,
            unread,
        }
    }
}

/// The backlog's sections, in the order they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// Open, every dependency done.
    Ready,
    /// Open, waiting for unfinished dependencies.
    Blocked,
    /// Held by an agent session.
    Claimed,
    /// Finished with a commit that waits for a person's accept or reject.
    Review,
    /// Finished.
    Done,
    /// Cancelled (shown only on request).
    Cancelled,
}

impl Group {
    /// All groups in display order.
    pub const ALL: [Group; 6] = [
        Group::Ready,
        Group::Blocked,
        Group::Claimed,
        Group::Review,
        Group::Done,
        Group::Cancelled,
    ];

    /// The section heading.
    pub fn label(self) -> &'static str {
        match self {
            Group::Ready => "READY",
            Group::Blocked => "BLOCKED",
            Group::Claimed => "CLAIMED",
            Group::Review => "REVIEW",
            Group::Done => "DONE",
            Group::Cancelled => "CANCELLED",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The group a task belongs to.
    pub fn of(t: &TaskView) -> Group {
        match t.state {
            TaskState::Claimed => Group::Claimed,
            TaskState::Review => Group::Review,
            TaskState::Done => Group::Done,
            TaskState::Cancelled => Group::Cancelled,
            TaskState::Open if t.ready => Group::Ready,
            TaskState::Open => Group::Blocked,
        }
    }
}

/// A task with its display text made inert.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskItem {
    /// The task as the board sent it (raw text; never draw these strings directly).
    pub task: TaskView,
    /// Title, one line, inert, at most `LINE_COLS` columns.
    pub title: String,
    /// Holder's session id, inert ("" when none).
    pub holder: String,
    /// Who finished it, inert ("" when not done).
    pub done_by: String,
    /// Its section.
    pub group: Group,
    /// Its labels joined by commas, inert ("" when none).
    pub labels: String,
    pub(crate) title_lower: String,
}

impl TaskItem {
    /// The display item of `task`, reusing the strings of `prev` (the same task in the previous
    /// snapshot) where their source text did not change; `shown` names a session as people
    /// know it (inert).
    pub(crate) fn new(
        task: TaskView,
        prev: Option<TaskItem>,
        shown: &dyn Fn(&str) -> String,
    ) -> TaskItem {
        let mut title = None;
        let mut holder = None;
        let mut done_by = None;
        if let Some(p) = prev {
            if p.task.title == task.title {
                title = Some((p.title, p.title_lower));
            }
            if p.task.holder == task.holder {
                holder = Some(p.holder);
            }
            if p.task.done_by == task.done_by {
                done_by = Some(p.done_by);
            }
        }
        let (title, title_lower) = title.unwrap_or_else(|| {
            let t = inert_line(&task.title);
            let lower = t.to_lowercase();
            (t, lower)
        });
        TaskItem {
            title_lower,
            title,
            holder: holder.unwrap_or_else(|| task.holder.as_deref().map(shown).unwrap_or_default()),
            done_by: done_by
                .unwrap_or_else(|| task.done_by.as_deref().map(shown).unwrap_or_default()),
            group: Group::of(&task),
            labels: inert_line(&task.labels.join(",")),
            task,
        }
    }
}

/// A filter term `label:NAME` shows only the tasks carrying label NAME.
pub const LABEL_TERM: &str = "label:";

/// One line of the backlog: a section heading or a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// A section heading with the number of tasks under it.
    Header(Group, usize),
    /// A task, by index into the app's `tasks`.
    Task(usize),
}

/// An agent session with its display text made inert.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentItem {
    /// The session as the board sent it.
    pub view: SessionView,
    /// Session id, inert.
    pub id: String,
    /// The name people see (the session's name, which a restarted agent takes back), inert.
    pub name: String,
    /// What it is doing.
    pub state: AgentState,
    /// tmux pane id, inert ("" when unknown).
    pub pane: String,
    /// The question it asked a person (`board wait`), open until answered; inert.
    pub question: Option<String>,
    /// What its CLI's permission prompt asks (its hooks said it waits), inert.
    pub permission: Option<String>,
    /// Why it ended, inert.
    pub end_reason: Option<String>,
    /// Why it needs attention (it never reached its prompt), inert.
    pub attention: Option<String>,
    /// When it last talked to the board (or started), ms since the Unix epoch.
    pub last_heard_ms: Option<i64>,
}

/// An event of the feed with its display text made inert.
#[derive(Debug, Clone, PartialEq)]
pub struct EventItem {
    /// The event as the board sent it.
    pub view: EventView,
    /// `HH:MM:SS` (UTC).
    pub time: String,
    /// Kind.
    pub kind: EventKind,
    /// Agent session id, inert ("" when none).
    pub agent: String,
    /// Reason, inert ("" when none).
    pub reason: String,
}

pub(crate) fn parse_ms(s: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339_weak(s).ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_millis()).ok()
}

pub(crate) fn inert_line(s: &str) -> String {
    truncate_width(&one_line(s), LINE_COLS)
}
