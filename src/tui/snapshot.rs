//! What the TUI shows of the board: a [`Snapshot`] of one refresh, taken in with its agent text
//! made inert ([`crate::proto::sanitize::one_line`]), and the backlog rows built from it.
//!
//! Text written by agents is untrusted. It is made inert when a snapshot is taken in, so the view
//! only ever sees text without control characters.

use serde_json::Value;

use super::app::{show_call, App, Effect, Mode};
use crate::proto::error::BoardError;
use crate::proto::glossary::{AgentState, EventKind, TaskState};
use crate::proto::sanitize::{one_line, truncate_width};
use crate::proto::{EventView, GoalView, SessionView, TaskView};

/// Longest text kept for display in one line, in columns (no terminal is wider).
const LINE_COLS: usize = 1000;
/// How long the last ended session of a name no live session has stays on the agents panel
/// (ms), as in `board agents`.
const GONE_FOR_MS: i64 = crate::proto::views::RECENT_ENDED_MS;

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
    /// Builds a snapshot from the results of `status`, `goal`, `list`, `agents` and `log`.
    /// Errors: `internal` when a result does not have the documented shape.
    pub fn from_results(
        status: &Value,
        goal: &Value,
        list: &Value,
        agents: &Value,
        log: &Value,
    ) -> Result<Snapshot, BoardError> {
        fn field<T: serde::de::DeserializeOwned>(v: &Value, key: &str) -> Result<T, BoardError> {
            serde_json::from_value(v.get(key).cloned().unwrap_or(Value::Null)).map_err(|e| {
                BoardError::internal(format!("the board sent an unexpected `{key}`: {e}"))
            })
        }
        Ok(Snapshot {
            board_name: status.get("name").and_then(Value::as_str).map(String::from),
            config_error: status
                .get("config_error")
                .and_then(Value::as_str)
                .map(String::from),
            lease_ms: status["lease"]["duration_ms"].as_i64(),
            goal: field(goal, "goal")?,
            tasks: field(list, "tasks")?,
            agents: field(agents, "agents")?,
            events: field(log, "events")?,
            unread: Unread {
                count: status["inbox"]["unread"].as_i64().unwrap_or(0),
                from: status["inbox"]["from"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(String::from)
                            .collect()
                    })
                    .unwrap_or_default(),
            },
        })
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

    fn index(self) -> usize {
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
    title_lower: String,
}

impl TaskItem {
    /// The display item of `task`, reusing the strings of `prev` (the same task in the previous
    /// snapshot) where their source text did not change; `shown` names a session as people
    /// know it (inert).
    fn new(task: TaskView, prev: Option<TaskItem>, shown: &dyn Fn(&str) -> String) -> TaskItem {
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
    /// A task, by index into [`App::tasks`].
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

fn parse_ms(s: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339_weak(s).ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_millis()).ok()
}

pub(super) fn inert_line(s: &str) -> String {
    truncate_width(&one_line(s), LINE_COLS)
}

impl App {
    /// Takes in a new snapshot fetched at `fetched_ms` (monotonic clock).
    pub fn on_snapshot(&mut self, snap: Snapshot, fetched_ms: u64) -> Vec<Effect> {
        self.loaded = true;
        self.fetched_ms = fetched_ms;
        self.board_name = snap
            .board_name
            .as_deref()
            .map(inert_line)
            .unwrap_or_default();
        self.config_error = snap.config_error.as_deref().map(inert_line);
        self.store_error = None;
        self.lease_ms = snap.lease_ms;
        self.goal_text = snap
            .goal
            .as_ref()
            .map(|g| inert_line(&g.text))
            .unwrap_or_default();
        self.goal = snap.goal;
        // Most tasks are unchanged from one refresh to the next: keep their display strings
        // instead of making every title inert and lower-cased again (most of the cost of taking
        // in a 10 000-task snapshot). Tasks come in id order, as `list` sends them.
        let mut old = std::mem::take(&mut self.tasks).into_iter().peekable();
        let mut tasks = Vec::with_capacity(snap.tasks.len());
        // Holders and the feed name an agent as people know it, even a session no longer
        // listed on the agents panel.
        let names: std::collections::HashMap<String, String> = snap
            .agents
            .iter()
            .map(|v| (v.id.clone(), v.name.clone()))
            .collect();
        let shown = |id: &str| inert_line(names.get(id).map_or(id, String::as_str));
        for task in snap.tasks {
            while old.next_if(|o| o.task.id < task.id).is_some() {}
            let prev = old.next_if(|o| o.task.id == task.id);
            tasks.push(TaskItem::new(task, prev, &shown));
        }
        self.tasks = tasks;
        self.totals = [0; 6];
        for t in &self.tasks {
            self.totals[t.group.index()] += 1;
        }
        self.take_agents(snap.agents);
        self.unread = snap.unread;
        super::agents::check_stopping(self);
        self.events = snap
            .events
            .into_iter()
            .rev()
            .map(|e| EventItem {
                time: e
                    .at
                    .get(11..19)
                    .filter(|t| t.bytes().all(|b| b.is_ascii_digit() || b == b':'))
                    .map(String::from)
                    .unwrap_or_else(|| truncate_width(&one_line(&e.at), 8)),
                kind: e.kind,
                agent: e.agent.as_deref().map(shown).unwrap_or_default(),
                reason: e.reason.as_deref().map(inert_line).unwrap_or_default(),
                view: e,
            })
            .collect();
        self.rebuild();
        match &self.mode {
            Mode::Detail(d) => vec![show_call(d.task)],
            _ => Vec::new(),
        }
    }

    fn take_agents(&mut self, sessions: Vec<SessionView>) {
        let item = |v: SessionView| AgentItem {
            id: inert_line(&v.id),
            name: inert_line(if v.name.is_empty() { &v.id } else { &v.name }),
            state: v.state,
            pane: v.pane.as_deref().map(inert_line).unwrap_or_default(),
            question: v.question.as_deref().map(inert_line),
            permission: v.waiting.as_deref().map(inert_line),
            end_reason: v.end_reason.as_deref().map(inert_line),
            attention: v.attention.as_deref().map(inert_line),
            last_heard_ms: v
                .ended_at
                .as_deref()
                .or(v.last_seen_at.as_deref())
                .or(Some(v.started_at.as_str()))
                .and_then(parse_ms),
            view: v,
        };
        let (live, ended): (Vec<_>, Vec<_>) =
            sessions.into_iter().partition(|s| s.ended_at.is_none());
        // Of the ended ones, only the last session of a name no live session has, for a while.
        let mut last_of_name: Vec<SessionView> = Vec::new();
        for s in ended {
            if live.iter().any(|l| l.name == s.name) {
                continue;
            }
            match last_of_name.iter_mut().find(|l| l.name == s.name) {
                Some(l) if (&l.started_at, &l.id) < (&s.started_at, &s.id) => *l = s,
                Some(_) => {}
                None => last_of_name.push(s),
            }
        }
        let mut ended: Vec<AgentItem> = last_of_name
            .into_iter()
            .map(item)
            .filter(|a| {
                a.last_heard_ms
                    .is_some_and(|t| self.now_wall_ms - t <= GONE_FOR_MS)
            })
            .collect();
        ended.sort_by_key(|a| std::cmp::Reverse(a.last_heard_ms));
        self.agents = live.into_iter().map(item).chain(ended).collect();
        self.follow_agent();
    }

    /// Puts the agent selection back on the agent it was on (by session id), wherever its row
    /// moved; on the first live agent when that agent is no longer shown.
    pub(super) fn follow_agent(&mut self) {
        let by_id = self
            .agent_selected_id
            .as_ref()
            .and_then(|id| self.agents.iter().position(|a| &a.view.id == id));
        self.agent_selected = by_id.or_else(|| self.first_live_agent()).unwrap_or(0);
        self.remember_agent();
    }

    /// Row of the first live agent.
    pub(super) fn first_live_agent(&self) -> Option<usize> {
        self.agents.iter().position(|a| a.view.ended_at.is_none())
    }

    pub(super) fn remember_agent(&mut self) {
        self.agent_selected_id = self
            .agents
            .get(self.agent_selected)
            .map(|a| a.view.id.clone());
    }

    pub(super) fn matches(&self, t: &TaskItem, terms: &[String]) -> bool {
        terms.iter().all(|term| {
            if let Some(id) = term.strip_prefix('#') {
                return t.task.id.to_string() == id;
            }
            if let Some(label) = term.strip_prefix(LABEL_TERM) {
                return t.task.labels.iter().any(|l| l.eq_ignore_ascii_case(label));
            }
            t.title_lower.contains(term.as_str())
                || t.holder.to_lowercase().contains(term.as_str())
                || t.task.id.to_string() == *term
                || t.group.label().eq_ignore_ascii_case(term)
        })
    }

    /// The filter that shows only the tasks carrying the label after the one the filter
    /// shows now (labels of all tasks, sorted; the first when the filter shows no label), or
    /// None after the last: the `L` key's step through the board's labels.
    pub fn next_label_filter(&self) -> Option<String> {
        let labels: std::collections::BTreeSet<&str> = self
            .tasks
            .iter()
            .flat_map(|t| t.task.labels.iter().map(String::as_str))
            .collect();
        let now = self.filter.text().trim().strip_prefix(LABEL_TERM);
        let next = match now {
            Some(cur) => labels.into_iter().find(|l| *l > cur),
            None => labels.into_iter().next(),
        };
        next.map(|l| format!("{LABEL_TERM}{l}"))
    }

    /// Recomputes [`App::rows`] from the tasks, the filter and the cancelled toggle, keeping the
    /// selected task selected when it is still shown.
    pub fn rebuild(&mut self) {
        let terms: Vec<String> = self
            .filter
            .text()
            .to_lowercase()
            .split_whitespace()
            .map(String::from)
            .collect();
        let mut groups: [Vec<usize>; 6] = Default::default();
        for (i, t) in self.tasks.iter().enumerate() {
            if terms.is_empty() || self.matches(t, &terms) {
                groups[t.group.index()].push(i);
            }
        }
        let tasks = &self.tasks;
        for g in Group::ALL {
            let list = &mut groups[g.index()];
            match g {
                Group::Ready | Group::Blocked => list.sort_by_key(|&i| {
                    let t = &tasks[i].task;
                    (std::cmp::Reverse(t.priority), t.id)
                }),
                Group::Claimed | Group::Review => list.sort_by_key(|&i| tasks[i].task.id),
                Group::Done => list.sort_by(|&a, &b| {
                    let (a, b) = (&tasks[a].task, &tasks[b].task);
                    b.done_at.cmp(&a.done_at).then(b.id.cmp(&a.id))
                }),
                Group::Cancelled => list.sort_by_key(|&i| std::cmp::Reverse(tasks[i].task.id)),
            }
        }
        let mut rows = Vec::with_capacity(self.tasks.len() + Group::ALL.len());
        for g in Group::ALL {
            if g == Group::Cancelled && !self.show_cancelled {
                continue;
            }
            let list = &groups[g.index()];
            // Review is a section only on boards that review: shown while something waits.
            if g == Group::Review && list.is_empty() {
                continue;
            }
            rows.push(Row::Header(g, list.len()));
            rows.extend(list.iter().map(|&i| Row::Task(i)));
        }
        let old = self.selected;
        self.rows = rows;
        let by_id = self.selected_id.and_then(|id| {
            self.rows
                .iter()
                .position(|r| matches!(r, Row::Task(i) if self.tasks[*i].task.id == id))
        });
        self.selected = by_id.or_else(|| self.nearest_task_row(old.unwrap_or(0)));
        self.remember_selection();
    }

    pub(super) fn nearest_task_row(&self, from: usize) -> Option<usize> {
        let from = from.min(self.rows.len().saturating_sub(1));
        let is_task = |i: &usize| matches!(self.rows[*i], Row::Task(_));
        (from..self.rows.len())
            .find(is_task)
            .or_else(|| (0..from).rev().find(is_task))
    }

    pub(super) fn remember_selection(&mut self) {
        if let Some(t) = self.selected_task() {
            self.selected_id = Some(t.task.id);
        }
    }
}
