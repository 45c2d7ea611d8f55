//! The TUI's state ([`App`]) and the enums it is made of: the mode, the focus, the details
//! dialog, the calls and effects the update functions return.
//!
//! Data only, and the read-only questions the screen asks of it: nothing here handles a key, a
//! snapshot or an answer, draws, does I/O or reads a clock. The event loop feeds in what
//! happened and carries out the [`Effect`]s; that keeps every screen reproducible from fixed
//! data, which the snapshot tests and the render benchmark rely on.

use super::agents::{Pending, Stopping, TeamOp};
use super::form::Form;
use super::input::Input;
use super::needs::Inbox;
use super::snapshot::{AgentItem, EventItem, Row, TaskItem, Unread};
use crate::proto::glossary::{AgentState, TaskId};
use crate::proto::methods::ShowResult;
use crate::proto::methods::{Call, ShowParams};
use crate::proto::sanitize::one_line;
use crate::proto::{GoalView, TaskView};

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
    ForceRelease(TaskId),
    /// Cancel the task.
    Cancel(TaskId),
}

/// The answer of `show`: the task, its notes and its history.
pub type ShowData = ShowResult;

/// The details dialog of one task.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    /// Task id.
    pub task: TaskId,
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
    pub fn of(task: TaskId) -> Detail {
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
    Inbox(Box<Inbox>),
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
    Edit(TaskId),
    /// `goal` with text.
    Goal,
    /// `release` with `force`.
    Release(TaskId),
    /// `cancel`.
    Cancel(TaskId),
    /// `show` for the details dialog.
    Show(TaskId),
    /// `send` from the message form.
    Send,
    /// Typing an answer into an agent's tmux pane.
    TypeIntoPane,
    /// `inbox`: reading the operator's messages.
    Inbox,
    /// `session.stop` of the agent in [`App::stopping`].
    StopAgent,
    /// The diff of a task in review, for its details dialog.
    Diff(TaskId),
    /// `accept` of a task in review.
    Accept(TaskId),
    /// `reject` of a task in review.
    Reject(TaskId),
}

/// A request for the board: a call of the method table, and what its answer is for.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// What the answer is for.
    pub purpose: Purpose,
    /// The method and its typed params.
    pub call: Call,
}

/// What the event loop must do after an update.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Fetch a new snapshot.
    Refresh,
    /// Send a request; hand the answer to [`App::on_call_result`].
    Call(Request),
    /// Type `text` into tmux pane `pane` and press Enter; the outcome comes back as a
    /// [`Purpose::TypeIntoPane`] call result.
    TypeIntoPane {
        /// tmux pane id (`%3`).
        pane: String,
        /// Already made safe for a terminal (`tmux::pane_text`).
        text: String,
    },
    /// Leave the TUI.
    Quit,
    /// Start, go to, restart or stop an agent (the agents panel's keys).
    Team(TeamOp),
    /// Fetch the diff of task `task`'s `commit` against the base branch (git, in the project);
    /// the text comes back as a [`Purpose::Diff`] call result.
    Diff {
        /// Task id.
        task: TaskId,
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
    pub(crate) selected_id: Option<TaskId>,
    /// Index into [`App::agents`] of the selected agent.
    pub agent_selected: usize,
    /// Session id of the selected agent: the selection follows it across refreshes.
    pub(crate) agent_selected_id: Option<String>,
    /// The operator's unread messages, as the last refresh counted them.
    pub unread: Unread,
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
    pub team_pending: Option<Pending>,
    /// An agent being stopped, until its session ends.
    pub stopping: Option<Stopping>,
}

/// The `show` call for the details dialog of task `id`.
pub(crate) fn show_call(id: TaskId) -> Effect {
    Effect::Call(Request {
        purpose: Purpose::Show(id),
        call: Call::Show(ShowParams { task: id }),
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
            unread: Unread::default(),
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
}
