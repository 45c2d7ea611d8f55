//! The TUI's state ([`App`]) and the pure functions that change it.
//!
//! Nothing here does I/O or reads a clock: the event loop in [`super`] feeds in what happened
//! (a key, a snapshot of the board, the answer to a call, a connection change, the time) and
//! carries out the [`Effect`]s the update functions return. That keeps every screen reproducible
//! from fixed data, which the snapshot tests and the render benchmark rely on. The updates are
//! split by what drives them: [`super::snapshot`] (a refresh), [`super::keys`] (the keyboard and
//! paste), [`super::form`] (a form dialog).

use crossterm::event::{KeyEvent, KeyEventKind};
use serde_json::{json, Value};

use super::form::Form;
use super::input::Input;
use super::snapshot::{inert_line, AgentItem, EventItem, Row, TaskItem};
use crate::proto::error::BoardError;
use crate::proto::glossary::{AgentState, TaskState};
use crate::proto::sanitize::{one_line, truncate_width};
use crate::proto::{EventView, GoalView, NoteView, TaskView};

/// How long a status message stays in the footer, in ms.
pub const FLASH_MS: u64 = 6000;
/// The connection to the board as the event stream sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conn {
    /// Starting up.
    Connecting,
    /// Subscribed to the event stream.
    Live,
    /// The board went away (restarting, stopped, crashed); retrying with backoff.
    Reconnecting {
        /// Attempts so far.
        attempt: u32,
        /// The last failure, inert.
        error: String,
    },
}

/// Which panel the movement keys act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The task list.
    Backlog,
    /// The agents panel.
    Agents,
}

/// A yes/no question before a destructive action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    /// What happens on yes.
    pub action: Action,
    /// The question (inert).
    pub question: String,
}

/// Destructive actions that need a confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// End the task's claim, whoever holds it (`release` with `force`).
    ForceRelease(i64),
    /// Cancel the task.
    Cancel(i64),
}

/// The answer of `show`.
#[derive(Debug, Clone, PartialEq)]
pub struct ShowData {
    /// The task.
    pub task: TaskView,
    /// Its notes, oldest first.
    pub notes: Vec<NoteView>,
    /// Its history, oldest first.
    pub events: Vec<EventView>,
}

/// The details dialog of one task.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    /// Task id.
    pub task: i64,
    /// What `show` answered (None until it did).
    pub data: Option<ShowData>,
    /// First line shown.
    pub scroll: usize,
    /// Why `show` failed (inert).
    pub error: Option<String>,
    /// For a task in review: `git diff --stat --patch BASE...COMMIT` as the app loop fetched it
    /// (raw; made inert line by line when drawn), or why it could not.
    pub diff: Option<Result<String, String>>,
}

impl Detail {
    /// The details of task `task`, nothing fetched yet.
    pub fn of(task: i64) -> Detail {
        Detail {
            task,
            data: None,
            scroll: 0,
            error: None,
            diff: None,
        }
    }
}

/// What the screen is doing besides showing the board.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// Browsing.
    Normal,
    /// The key help.
    Help,
    /// Typing the filter.
    Filter,
    /// A form dialog.
    Form(Form),
    /// A confirmation dialog.
    Confirm(Confirm),
    /// A task's details.
    Detail(Box<Detail>),
    /// The needs-you list: everything waiting for a person; the selected item's index.
    NeedsYou(usize),
    /// The operator's messages just read (`inbox`).
    Inbox(Box<super::needs::Inbox>),
}

/// A status message in the footer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    /// The message (inert).
    pub text: String,
    /// Shown as an error.
    pub error: bool,
    /// When it was set ([`App::now_ms`] clock).
    pub at_ms: u64,
}

/// Which request a call's answer belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `add` from the add form.
    Add,
    /// `edit` of a task.
    Edit(i64),
    /// `goal` with text.
    Goal,
    /// `release` with `force`.
    Release(i64),
    /// `cancel`.
    Cancel(i64),
    /// `show` for the details dialog.
    Show(i64),
    /// `send` from the message form.
    Send,
    /// Typing an answer into an agent's tmux pane.
    TypeIntoPane,
    /// `inbox`: reading the operator's messages.
    Inbox,
    /// `session.stop` of the agent in [`App::stopping`].
    StopAgent,
    /// The diff of a task in review, for its details dialog.
    Diff(i64),
    /// `accept` of a task in review.
    Accept(i64),
    /// `reject` of a task in review.
    Reject(i64),
}

/// A request for the board.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// What the answer is for.
    pub purpose: Purpose,
    /// JSON-RPC method.
    pub method: &'static str,
    /// Its params.
    pub params: Value,
}

/// What the event loop must do after an update.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Fetch a new snapshot.
    Refresh,
    /// Send a request; hand the answer to [`App::on_call_result`].
    Call(Call),
    /// Type `text` into tmux pane `pane` and press Enter; the outcome comes back as a
    /// [`Purpose::TypeIntoPane`] call result.
    TypeIntoPane {
        /// tmux pane id (`%3`).
        pane: String,
        /// Already made safe for a terminal ([`super::messages::pane_text`]).
        text: String,
    },
    /// Leave the TUI.
    Quit,
    /// Start, go to, restart or stop an agent (see [`super::agents`]).
    Team(super::agents::TeamOp),
    /// Fetch the diff of task `task`'s `commit` against the base branch (git, in the project);
    /// the text comes back as a [`Purpose::Diff`] call result.
    Diff {
        /// Task id.
        task: i64,
        /// The commit under review (full id).
        commit: String,
    },
}

/// The whole state of the TUI.
#[derive(Debug, Clone)]
pub struct App {
    /// Use colours (false when `NO_COLOR` is set).
    pub color: bool,
    /// Board name, inert.
    pub board_name: String,
    /// A `board.toml` error the board reported, inert.
    pub config_error: Option<String>,
    /// Why the board cannot reach its shared store (the last refresh failed for that), inert:
    /// writes fail closed until it is back.
    pub store_error: Option<String>,
    /// Lease duration in force, ms.
    pub lease_ms: Option<i64>,
    /// The current goal.
    pub goal: Option<GoalView>,
    /// The goal's text, inert.
    pub goal_text: String,
    /// All tasks, in the board's order.
    pub tasks: Vec<TaskItem>,
    /// The backlog as shown: filtered, grouped, sorted.
    pub rows: Vec<Row>,
    /// Tasks per group before filtering ([`super::snapshot::Group::ALL`] order).
    pub totals: [usize; 6],
    /// Agents to show: live ones in start order, then recently ended ones.
    pub agents: Vec<AgentItem>,
    /// The feed, newest first.
    pub events: Vec<EventItem>,
    /// Index into [`App::rows`] of the selected task (always a [`Row::Task`]).
    pub selected: Option<usize>,
    pub(super) selected_id: Option<i64>,
    /// Index into [`App::agents`] of the selected agent.
    pub agent_selected: usize,
    /// Session id of the selected agent: the selection follows it across refreshes.
    pub(super) agent_selected_id: Option<String>,
    /// The operator's unread messages, as the last refresh counted them.
    pub unread: super::snapshot::Unread,
    /// Event ids of claims expelled with their agent that the person dismissed from the
    /// needs-you list.
    pub dismissed: std::collections::BTreeSet<i64>,
    /// Where movement keys go.
    pub focus: Focus,
    /// The backlog filter.
    pub filter: Input,
    /// Show the cancelled section.
    pub show_cancelled: bool,
    /// Dialogs and prompts.
    pub mode: Mode,
    /// Connection state.
    pub conn: Conn,
    /// A snapshot has arrived at least once.
    pub loaded: bool,
    /// Monotonic clock (ms since the TUI started) when the snapshot was fetched.
    pub fetched_ms: u64,
    /// Monotonic clock now (ms since the TUI started).
    pub now_ms: u64,
    /// Wall clock now, ms since the Unix epoch (for "last heard").
    pub now_wall_ms: i64,
    /// Footer message.
    pub flash: Option<Flash>,
    /// Rows a page key moves (set from the terminal height).
    pub page: usize,
    /// Terminal size (columns, rows), for scrolling limits.
    pub size: (u16, u16),
    /// After the pending `send` succeeds, type this into the agent's pane (if it has one).
    pub type_after_send: Option<String>,
    /// A restart or stop of an agent waiting for y/n.
    pub team_pending: Option<super::agents::Pending>,
    /// An agent being stopped, until its session ends.
    pub stopping: Option<super::agents::Stopping>,
}

pub(super) fn press(key: &KeyEvent) -> bool {
    key.kind != KeyEventKind::Release
}

pub(super) fn show_call(id: i64) -> Effect {
    Effect::Call(Call {
        purpose: Purpose::Show(id),
        method: "show",
        params: json!({ "task": id }),
    })
}

/// The diff to fetch for a task in review that shows no diff yet.
fn review_diff(task: &TaskView, have: bool) -> Option<Effect> {
    match (&task.state, &task.commit, have) {
        (TaskState::Review, Some(c), false) => Some(Effect::Diff {
            task: task.id,
            commit: c.clone(),
        }),
        _ => None,
    }
}

fn parse_show(v: &Value) -> Result<ShowData, BoardError> {
    let bad = |e: serde_json::Error| BoardError::internal(format!("unexpected `show` answer: {e}"));
    Ok(ShowData {
        task: serde_json::from_value(v["task"].clone()).map_err(bad)?,
        notes: serde_json::from_value(v["notes"].clone()).map_err(bad)?,
        events: serde_json::from_value(v["events"].clone()).map_err(bad)?,
    })
}

impl App {
    /// An empty board, waiting for its first snapshot.
    pub fn new(color: bool) -> App {
        App {
            color,
            board_name: String::new(),
            config_error: None,
            store_error: None,
            lease_ms: None,
            goal: None,
            goal_text: String::new(),
            tasks: Vec::new(),
            rows: Vec::new(),
            totals: [0; 6],
            agents: Vec::new(),
            events: Vec::new(),
            selected: None,
            selected_id: None,
            agent_selected: 0,
            agent_selected_id: None,
            unread: super::snapshot::Unread::default(),
            dismissed: std::collections::BTreeSet::new(),
            focus: Focus::Backlog,
            filter: Input::default(),
            show_cancelled: false,
            mode: Mode::Normal,
            conn: Conn::Connecting,
            loaded: false,
            fetched_ms: 0,
            now_ms: 0,
            now_wall_ms: 0,
            flash: None,
            page: 10,
            size: (80, 24),
            type_after_send: None,
            team_pending: None,
            stopping: None,
        }
    }

    /// Sets the clocks: monotonic ms since the TUI started, and wall-clock ms since the epoch.
    pub fn set_clock(&mut self, now_ms: u64, now_wall_ms: i64) {
        self.now_ms = now_ms;
        self.now_wall_ms = now_wall_ms;
    }

    /// Records the terminal size (for page movement and scrolling limits).
    pub fn set_size(&mut self, cols: u16, rows: u16) {
        self.size = (cols, rows);
        self.page = usize::from(rows / 2).max(1);
    }

    /// The selected task, if any.
    pub fn selected_task(&self) -> Option<&TaskItem> {
        match self.selected.and_then(|i| self.rows.get(i)) {
            Some(Row::Task(t)) => self.tasks.get(*t),
            _ => None,
        }
    }

    /// Milliseconds left on a task's lease now: what the board said at fetch time minus the
    /// time since.
    pub fn remaining_ms(&self, t: &TaskView) -> Option<i64> {
        let elapsed = i64::try_from(self.now_ms.saturating_sub(self.fetched_ms)).unwrap_or(0);
        t.expires_in_ms.map(|ms| ms - elapsed)
    }

    /// The live agents with an open question for a person.
    pub fn waiting(&self) -> impl Iterator<Item = &AgentItem> {
        self.agents
            .iter()
            .filter(|a| a.question.is_some() && a.view.ended_at.is_none())
    }

    /// The live agents stopped at their CLI's permission prompt.
    pub fn at_permission_prompt(&self) -> impl Iterator<Item = &AgentItem> {
        self.agents
            .iter()
            .filter(|a| a.permission.is_some() && a.view.ended_at.is_none())
    }

    /// The live agents that never reached their prompt (needs attention).
    pub fn needing_attention(&self) -> impl Iterator<Item = &AgentItem> {
        self.agents
            .iter()
            .filter(|a| a.state == AgentState::NeedsAttention && a.view.ended_at.is_none())
    }

    /// The footer message, if still current.
    pub fn current_flash(&self) -> Option<&Flash> {
        self.flash
            .as_ref()
            .filter(|f| self.now_ms.saturating_sub(f.at_ms) < FLASH_MS)
    }

    /// Shows `text` in the footer for a moment (`error`: in red).
    pub fn say(&mut self, text: impl Into<String>, error: bool) {
        self.flash = Some(Flash {
            text: one_line(&text.into()),
            error,
            at_ms: self.now_ms,
        });
    }

    /// Moves the selection `delta` tasks down (negative: up), stopping at the ends.
    pub(super) fn move_by(&mut self, delta: isize) {
        if self.focus == Focus::Agents {
            let n = self.agents.len();
            if n > 0 {
                let to = self.agent_selected as isize + delta;
                self.agent_selected = to.clamp(0, n as isize - 1) as usize;
                self.remember_agent();
            }
            return;
        }
        let Some(mut at) = self.selected else {
            self.selected = self.nearest_task_row(0);
            self.remember_selection();
            return;
        };
        let step: isize = if delta < 0 { -1 } else { 1 };
        let mut left = delta.unsigned_abs();
        while left > 0 {
            let mut i = at as isize + step;
            let found = loop {
                if i < 0 || i as usize >= self.rows.len() {
                    break None;
                }
                if matches!(self.rows[i as usize], Row::Task(_)) {
                    break Some(i as usize);
                }
                i += step;
            };
            match found {
                Some(f) => at = f,
                None => break,
            }
            left -= 1;
        }
        self.selected = Some(at);
        self.remember_selection();
    }

    pub(super) fn move_to_end(&mut self, last: bool) {
        if self.focus == Focus::Agents {
            self.agent_selected = if last {
                self.agents.len().saturating_sub(1)
            } else {
                0
            };
            self.remember_agent();
            return;
        }
        self.selected = if last {
            self.nearest_task_row(self.rows.len().saturating_sub(1))
        } else {
            self.nearest_task_row(0)
        };
        self.remember_selection();
    }

    /// The event stream connected (or reconnected).
    pub fn on_connected(&mut self) -> Vec<Effect> {
        if matches!(self.conn, Conn::Reconnecting { .. }) {
            self.say("reconnected to the board", false);
        }
        self.conn = Conn::Live;
        vec![Effect::Refresh]
    }

    /// The event stream broke or could not connect; `attempt` counts failures in a row.
    pub fn on_disconnected(&mut self, attempt: u32, error: &str) {
        self.conn = Conn::Reconnecting {
            attempt,
            error: inert_line(error),
        };
    }

    /// A snapshot could not be fetched.
    pub fn on_fetch_error(&mut self, e: &BoardError) {
        // The board answers, but not from its store: say so until a refresh succeeds.
        if e.data.contains_key(crate::proto::error::STORE_DOWN) {
            self.store_error = Some(inert_line(&e.message));
            return;
        }
        if self.conn == Conn::Live {
            self.say(format!("refresh failed: {}", e.message), true);
        }
    }

    /// The answer to a [`Call`].
    pub fn on_call_result(
        &mut self,
        purpose: Purpose,
        result: Result<Value, BoardError>,
    ) -> Vec<Effect> {
        if purpose == Purpose::StopAgent {
            super::agents::on_stop_answer(self, result.map_err(|e| one_line(&e.message)));
            return vec![Effect::Refresh];
        }
        if let Purpose::Show(id) = purpose {
            if let Mode::Detail(d) = &mut self.mode {
                if d.task == id {
                    match result.and_then(|v| parse_show(&v)) {
                        Ok(data) => {
                            let diff = review_diff(&data.task, d.diff.is_some());
                            d.data = Some(data);
                            d.error = None;
                            return diff.into_iter().collect();
                        }
                        Err(e) => d.error = Some(one_line(&e.message)),
                    }
                }
            }
            return Vec::new();
        }
        if let Purpose::Diff(id) = purpose {
            if let Mode::Detail(d) = &mut self.mode {
                if d.task == id {
                    d.diff = Some(match result {
                        Ok(v) => Ok(v.as_str().unwrap_or_default().to_string()),
                        Err(e) => Err(one_line(&e.message)),
                    });
                }
            }
            return Vec::new();
        }
        let form_purpose = matches!(
            purpose,
            Purpose::Add
                | Purpose::Edit(_)
                | Purpose::Goal
                | Purpose::Send
                | Purpose::Accept(_)
                | Purpose::Reject(_)
        );
        let mut effects = vec![Effect::Refresh];
        match result {
            Ok(v) => {
                if form_purpose && matches!(self.mode, Mode::Form(_)) {
                    self.mode = Mode::Normal;
                }
                let task_id = v["task"]["id"].as_i64();
                let msg = match purpose {
                    Purpose::Add => {
                        if let Some(id) = task_id {
                            self.selected_id = Some(id);
                            self.focus = Focus::Backlog;
                        }
                        format!(
                            "added #{}: {}",
                            task_id.unwrap_or(0),
                            v["task"]["title"].as_str().unwrap_or("")
                        )
                    }
                    Purpose::Edit(id) => format!("edited #{id}"),
                    Purpose::Goal => "goal set".into(),
                    Purpose::Release(id) => format!("released #{id}: its claim ended"),
                    Purpose::Cancel(id) => format!("cancelled #{id}"),
                    Purpose::Show(_) | Purpose::StopAgent | Purpose::Diff(_) => String::new(),
                    Purpose::Accept(id) => match v["landed"].as_str() {
                        Some(l) => format!(
                            "accepted #{id}: landed on {}, now at {}",
                            v["base"].as_str().unwrap_or("the base"),
                            l.chars().take(12).collect::<String>()
                        ),
                        None => format!("accepted #{id}: done"),
                    },
                    Purpose::Reject(id) => format!("rejected #{id}: back to ready with the note"),
                    Purpose::Send => {
                        let typing = self.type_after_send.take();
                        let (text, typed) = super::messages::after_send(&v, typing);
                        effects.extend(typed);
                        text
                    }
                    Purpose::TypeIntoPane => "typed the answer into the agent's pane".into(),
                    Purpose::Inbox => {
                        self.mode = super::needs::read_inbox(&v);
                        self.unread = super::snapshot::Unread::default();
                        "messages read (marked read on the board)".into()
                    }
                };
                self.say(truncate_width(&one_line(&msg), 200), false);
                effects
            }
            Err(e) => {
                let what = match purpose {
                    Purpose::Add => "add".to_string(),
                    Purpose::Edit(id) => format!("edit #{id}"),
                    Purpose::Goal => "set goal".into(),
                    Purpose::Release(id) => format!("release #{id}"),
                    Purpose::Cancel(id) => format!("cancel #{id}"),
                    Purpose::Show(id) => format!("show #{id}"),
                    Purpose::Diff(id) => format!("diff of #{id}"),
                    Purpose::Accept(id) => format!("accept #{id}"),
                    Purpose::Reject(id) => format!("reject #{id}"),
                    Purpose::StopAgent => "stop".into(),
                    Purpose::Send => "send".into(),
                    Purpose::TypeIntoPane => "typing into the agent's pane".into(),
                    Purpose::Inbox => "reading your messages".into(),
                };
                let text = format!("{what} failed: {}", one_line(&e.message));
                match &mut self.mode {
                    Mode::Form(f) if form_purpose => {
                        f.pending = false;
                        f.error = Some(text);
                    }
                    _ => self.say(text, true),
                }
                Vec::new()
            }
        }
    }
}
