//! The TUI's state and the pure functions that change it.
//!
//! Nothing here does I/O or reads a clock: the event loop in [`super`] feeds in what happened
//! (a key, a snapshot of the board, the answer to a call, a connection change, the time) and
//! carries out the [`Effect`]s the update functions return. That keeps every screen reproducible
//! from fixed data, which the snapshot tests and the render benchmark rely on.
//!
//! Text written by agents is untrusted. It is made inert ([`crate::proto::sanitize::one_line`]) when a
//! snapshot is taken in, so the view only ever sees text without control characters.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde_json::{json, Value};
use unicode_width::UnicodeWidthChar;

use crate::proto::error::BoardError;
use crate::proto::sanitize::{one_line, truncate_width};
use crate::proto::{EventView, GoalView, NoteView, SessionView, TaskView};

/// Longest text kept for display in one line, in columns (no terminal is wider).
const LINE_COLS: usize = 1000;
/// How long a status message stays in the footer, in ms.
pub const FLASH_MS: u64 = 6000;
/// Ended agent sessions shown: at most this many …
const GONE_SHOWN: usize = 5;
/// … that ended at most this long ago (ms).
const GONE_FOR_MS: i64 = 15 * 60 * 1000;

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
    /// Finished.
    Done,
    /// Cancelled (shown only on request).
    Cancelled,
}

impl Group {
    /// All groups in display order.
    pub const ALL: [Group; 5] = [
        Group::Ready,
        Group::Blocked,
        Group::Claimed,
        Group::Done,
        Group::Cancelled,
    ];

    /// The section heading.
    pub fn label(self) -> &'static str {
        match self {
            Group::Ready => "READY",
            Group::Blocked => "BLOCKED",
            Group::Claimed => "CLAIMED",
            Group::Done => "DONE",
            Group::Cancelled => "CANCELLED",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The group a task belongs to.
    pub fn of(t: &TaskView) -> Group {
        match t.state.as_str() {
            "claimed" => Group::Claimed,
            "done" => Group::Done,
            "cancelled" => Group::Cancelled,
            _ if t.ready => Group::Ready,
            _ => Group::Blocked,
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
    title_lower: String,
}

impl TaskItem {
    /// The display item of `task`, reusing the strings of `prev` (the same task in the previous
    /// snapshot) where their source text did not change.
    fn new(task: TaskView, prev: Option<TaskItem>) -> TaskItem {
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
            holder: holder
                .unwrap_or_else(|| task.holder.as_deref().map(inert_line).unwrap_or_default()),
            done_by: done_by
                .unwrap_or_else(|| task.done_by.as_deref().map(inert_line).unwrap_or_default()),
            group: Group::of(&task),
            task,
        }
    }
}

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
    /// `working`, `idle`, `waiting`, `needs_attention`, `stopped`, `gone`, `starting`.
    pub state: String,
    /// tmux pane id, inert ("" when unknown).
    pub pane: String,
    /// The question, when waiting for a human; inert.
    pub waiting: Option<String>,
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
    /// Kind, inert.
    pub kind: String,
    /// Agent session id, inert ("" when none).
    pub agent: String,
    /// Reason, inert ("" when none).
    pub reason: String,
}

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

/// A one-line text field with a cursor (a byte index on a character boundary).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Input {
    text: String,
    cursor: usize,
}

impl Input {
    /// A field holding `text`, cursor at the end.
    pub fn new(text: &str) -> Input {
        Input {
            text: text.to_string(),
            cursor: text.len(),
        }
    }

    /// The text as typed (raw; draw it through [`Input::window`]).
    pub fn text(&self) -> &str {
        &self.text
    }

    fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    /// Where the cursor lands moving one visible character left: zero-width characters
    /// (combining marks) travel with the character before them.
    fn prev(&self) -> usize {
        let mut at = self.cursor;
        for (i, c) in self.text[..self.cursor].char_indices().rev() {
            at = i;
            if c.width().unwrap_or(0) > 0 {
                break;
            }
        }
        at
    }

    fn next(&self) -> usize {
        let mut chars = self.text[self.cursor..].char_indices();
        let Some((_, first)) = chars.next() else {
            return self.cursor;
        };
        let mut at = self.cursor + first.len_utf8();
        for (i, c) in chars {
            if c.width().unwrap_or(0) > 0 {
                break;
            }
            at = self.cursor + i + c.len_utf8();
        }
        at
    }

    /// Applies an editing key; returns false when the key is not an editing key.
    fn edit(&mut self, key: &KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = self.text.len(),
            KeyCode::Char('u') if ctrl => {
                self.text.replace_range(..self.cursor, "");
                self.cursor = 0;
            }
            KeyCode::Char('k') if ctrl => self.text.truncate(self.cursor),
            KeyCode::Char('w') if ctrl => {
                let head = &self.text[..self.cursor];
                let start = head.trim_end().rfind(' ').map(|i| i + 1).unwrap_or(0);
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            KeyCode::Char(c) if !ctrl && !key.modifiers.contains(KeyModifiers::ALT) => {
                self.insert(c)
            }
            KeyCode::Backspace => {
                let p = self.prev();
                self.text.replace_range(p..self.cursor, "");
                self.cursor = p;
            }
            KeyCode::Delete => {
                let n = self.next();
                self.text.replace_range(self.cursor..n, "");
            }
            KeyCode::Left => self.cursor = self.prev(),
            KeyCode::Right => self.cursor = self.next(),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = self.text.len(),
            _ => return false,
        }
        true
    }

    /// What to draw in a field `width` columns wide: the inert text around the cursor, and the
    /// cursor's column within it. Line breaks show as `↵`, controls as their inert pictures.
    pub fn window(&self, width: usize) -> (String, usize) {
        let width = width.max(1);
        let shown: Vec<(usize, char, usize)> = self
            .text
            .char_indices()
            .map(|(i, c)| {
                let s = shown_char(c);
                (i, s, s.width().unwrap_or(0))
            })
            .collect();
        let cur = shown
            .iter()
            .position(|(i, _, _)| *i >= self.cursor)
            .unwrap_or(shown.len());
        // Walk back from the cursor until the text before it fills the field (minus the cursor).
        let mut start = cur;
        let mut used = 0;
        while start > 0 && used + shown[start - 1].2 < width {
            used += shown[start - 1].2;
            start -= 1;
        }
        let mut out = String::new();
        let mut cols = 0;
        let mut cursor_col = 0;
        for (n, (_, c, w)) in shown.iter().enumerate().skip(start) {
            if n == cur {
                cursor_col = cols;
            }
            if cols + w > width {
                break;
            }
            out.push(*c);
            cols += w;
        }
        if cur >= shown.len() {
            cursor_col = cols;
        }
        (out, cursor_col.min(width - 1))
    }
}

fn shown_char(c: char) -> char {
    if c == '\n' {
        return '↵';
    }
    let mut b = [0u8; 4];
    one_line(c.encode_utf8(&mut b))
        .chars()
        .next()
        .unwrap_or(' ')
}

/// A labelled field of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Label shown left of the field.
    pub label: &'static str,
    /// The text being edited.
    pub input: Input,
    /// Alt-Enter / Ctrl-J insert a line break.
    pub multiline: bool,
}

impl Field {
    /// A one-line field labelled `label`, holding `text`.
    pub fn new(label: &'static str, text: &str) -> Field {
        Field {
            label,
            input: Input::new(text),
            multiline: false,
        }
    }
}

/// What a form does on Enter.
#[derive(Debug, Clone, PartialEq)]
pub enum FormKind {
    /// Add a task (title, priority, dependencies).
    Add,
    /// Edit a task; holds the task as it was when the form opened.
    Edit(Box<TaskView>),
    /// Set the goal.
    Goal,
    /// A message to an agent, or an answer to one that waits (see [`super::messages`]).
    Message(Box<super::messages::Recipient>),
}

/// A form in a dialog.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// Its purpose.
    pub kind: FormKind,
    /// The fields, top to bottom.
    pub fields: Vec<Field>,
    /// Index of the field with the cursor.
    pub focus: usize,
    /// Why the last submit failed (inert).
    pub error: Option<String>,
    /// Submitted; waiting for the board's answer.
    pub pending: bool,
}

impl Form {
    /// The dialog's title.
    pub fn title(&self) -> String {
        match &self.kind {
            FormKind::Add => "Add a task".into(),
            FormKind::Edit(t) => format!("Edit #{}", t.id),
            FormKind::Goal => "Set the goal".into(),
            FormKind::Message(r) => super::messages::title(r, &inert_line(&r.to)),
        }
    }

    /// The text of the field labelled `label` ("" when there is none).
    pub fn value(&self, label: &str) -> &str {
        self.fields
            .iter()
            .find(|f| f.label == label)
            .map(|f| f.input.text())
            .unwrap_or("")
    }
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
    /// Tasks per group before filtering ([`Group::ALL`] order).
    pub totals: [usize; 5],
    /// Agents to show: live ones in start order, then recently ended ones.
    pub agents: Vec<AgentItem>,
    /// The feed, newest first.
    pub events: Vec<EventItem>,
    /// Index into [`App::rows`] of the selected task (always a [`Row::Task`]).
    pub selected: Option<usize>,
    selected_id: Option<i64>,
    /// Index into [`App::agents`] of the selected agent.
    pub agent_selected: usize,
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
}

fn parse_ms(s: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339_weak(s).ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_millis()).ok()
}

fn inert_line(s: &str) -> String {
    truncate_width(&one_line(s), LINE_COLS)
}

/// Parses a dependency list: ids separated by spaces or commas, `#` allowed.
fn parse_ids(s: &str) -> Result<Vec<i64>, String> {
    s.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.trim_start_matches('#')
                .parse::<i64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{:?} is not a task id", one_line(w)))
        })
        .collect()
}

fn ids_text(ids: &[i64]) -> String {
    ids.iter()
        .map(|i| format!("#{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn press(key: &KeyEvent) -> bool {
    key.kind != KeyEventKind::Release
}

impl App {
    /// An empty board, waiting for its first snapshot.
    pub fn new(color: bool) -> App {
        App {
            color,
            board_name: String::new(),
            config_error: None,
            lease_ms: None,
            goal: None,
            goal_text: String::new(),
            tasks: Vec::new(),
            rows: Vec::new(),
            totals: [0; 5],
            agents: Vec::new(),
            events: Vec::new(),
            selected: None,
            selected_id: None,
            agent_selected: 0,
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

    /// The agents waiting for a human.
    pub fn waiting(&self) -> impl Iterator<Item = &AgentItem> {
        self.agents
            .iter()
            .filter(|a| a.waiting.is_some() && a.view.ended_at.is_none())
    }

    /// The live agents that never reached their prompt (needs attention).
    pub fn needing_attention(&self) -> impl Iterator<Item = &AgentItem> {
        self.agents
            .iter()
            .filter(|a| a.state == "needs_attention" && a.view.ended_at.is_none())
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
        for task in snap.tasks {
            while old.next_if(|o| o.task.id < task.id).is_some() {}
            let prev = old.next_if(|o| o.task.id == task.id);
            tasks.push(TaskItem::new(task, prev));
        }
        self.tasks = tasks;
        self.totals = [0; 5];
        for t in &self.tasks {
            self.totals[t.group.index()] += 1;
        }
        self.take_agents(snap.agents);
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
                kind: inert_line(&e.kind),
                agent: e.agent.as_deref().map(inert_line).unwrap_or_default(),
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
        let selected = self
            .agents
            .get(self.agent_selected)
            .map(|a| a.view.id.clone());
        let item = |v: SessionView| AgentItem {
            id: inert_line(&v.id),
            state: inert_line(&v.state),
            pane: v.pane.as_deref().map(inert_line).unwrap_or_default(),
            waiting: v.waiting.as_deref().map(inert_line),
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
        let mut ended: Vec<AgentItem> = ended
            .into_iter()
            .map(item)
            .filter(|a| {
                a.last_heard_ms
                    .is_some_and(|t| self.now_wall_ms - t <= GONE_FOR_MS)
            })
            .collect();
        ended.sort_by_key(|a| std::cmp::Reverse(a.last_heard_ms));
        ended.truncate(GONE_SHOWN);
        self.agents = live.into_iter().map(item).chain(ended).collect();
        self.agent_selected = selected
            .and_then(|id| self.agents.iter().position(|a| a.view.id == id))
            .unwrap_or(self.agent_selected)
            .min(self.agents.len().saturating_sub(1));
    }

    fn matches(&self, t: &TaskItem, terms: &[String]) -> bool {
        terms.iter().all(|term| {
            if let Some(id) = term.strip_prefix('#') {
                return t.task.id.to_string() == id;
            }
            t.title_lower.contains(term.as_str())
                || t.holder.to_lowercase().contains(term.as_str())
                || t.task.id.to_string() == *term
                || t.group.label().eq_ignore_ascii_case(term)
        })
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
        let mut groups: [Vec<usize>; 5] = Default::default();
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
                Group::Claimed => list.sort_by_key(|&i| tasks[i].task.id),
                Group::Done => list.sort_by(|&a, &b| {
                    let (a, b) = (&tasks[a].task, &tasks[b].task);
                    b.done_at.cmp(&a.done_at).then(b.id.cmp(&a.id))
                }),
                Group::Cancelled => list.sort_by_key(|&i| std::cmp::Reverse(tasks[i].task.id)),
            }
        }
        let mut rows = Vec::with_capacity(self.tasks.len() + 5);
        for g in Group::ALL {
            if g == Group::Cancelled && !self.show_cancelled {
                continue;
            }
            let list = &groups[g.index()];
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

    fn nearest_task_row(&self, from: usize) -> Option<usize> {
        let from = from.min(self.rows.len().saturating_sub(1));
        let is_task = |i: &usize| matches!(self.rows[*i], Row::Task(_));
        (from..self.rows.len())
            .find(is_task)
            .or_else(|| (0..from).rev().find(is_task))
    }

    fn remember_selection(&mut self) {
        if let Some(t) = self.selected_task() {
            self.selected_id = Some(t.task.id);
        }
    }

    /// Moves the selection `delta` tasks down (negative: up), stopping at the ends.
    fn move_by(&mut self, delta: isize) {
        if self.focus == Focus::Agents {
            let n = self.agents.len();
            if n > 0 {
                let to = self.agent_selected as isize + delta;
                self.agent_selected = to.clamp(0, n as isize - 1) as usize;
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

    fn move_to_end(&mut self, last: bool) {
        if self.focus == Focus::Agents {
            self.agent_selected = if last {
                self.agents.len().saturating_sub(1)
            } else {
                0
            };
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
        if let Purpose::Show(id) = purpose {
            if let Mode::Detail(d) = &mut self.mode {
                if d.task == id {
                    match result.and_then(|v| parse_show(&v)) {
                        Ok(data) => {
                            d.data = Some(data);
                            d.error = None;
                        }
                        Err(e) => d.error = Some(one_line(&e.message)),
                    }
                }
            }
            return Vec::new();
        }
        let form_purpose = matches!(
            purpose,
            Purpose::Add | Purpose::Edit(_) | Purpose::Goal | Purpose::Send
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
                    Purpose::Show(_) => String::new(),
                    Purpose::Send => {
                        let typing = self.type_after_send.take();
                        let (text, typed) = super::messages::after_send(&v, typing);
                        effects.extend(typed);
                        text
                    }
                    Purpose::TypeIntoPane => "typed the answer into the agent's pane".into(),
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
                    Purpose::Send => "send".into(),
                    Purpose::TypeIntoPane => "typing into the agent's pane".into(),
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

    /// Text pasted into the terminal (bracketed paste): goes into the field being edited.
    pub fn on_paste(&mut self, text: &str) {
        match &mut self.mode {
            Mode::Form(f) if !f.pending => {
                if let Some(field) = f.fields.get_mut(f.focus) {
                    let text = if field.multiline {
                        text.replace("\r\n", "\n")
                    } else {
                        text.replace("\r\n", " ").replace(['\n', '\r'], " ")
                    };
                    field.input.insert_str(&text);
                }
            }
            Mode::Filter => {
                self.filter.insert_str(&text.replace(['\n', '\r'], " "));
                self.rebuild();
            }
            _ => {}
        }
    }

    /// A key press.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if !press(&key) {
            return Vec::new();
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return vec![Effect::Quit];
        }
        if let Some(fx) =
            super::agents::on_confirm_key(self, &key).or_else(|| super::agents::on_key(self, &key))
        {
            return fx;
        }
        match self.mode {
            Mode::Normal => self.key_normal(key),
            Mode::Help => {
                self.mode = Mode::Normal;
                Vec::new()
            }
            Mode::Filter => {
                self.key_filter(key);
                Vec::new()
            }
            Mode::Form(_) => self.key_form(key),
            Mode::Confirm(_) => self.key_confirm(key),
            Mode::Detail(_) => self.key_detail(key),
        }
    }

    fn key_normal(&mut self, key: KeyEvent) -> Vec<Effect> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('q') => return vec![Effect::Quit],
            KeyCode::Char('j') | KeyCode::Down => self.move_by(1),
            KeyCode::Char('k') | KeyCode::Up => self.move_by(-1),
            KeyCode::Char('d') if ctrl => self.move_by(self.page as isize),
            KeyCode::Char('u') if ctrl => self.move_by(-(self.page as isize)),
            KeyCode::PageDown => self.move_by(self.page as isize),
            KeyCode::PageUp => self.move_by(-(self.page as isize)),
            KeyCode::Char('g') | KeyCode::Home => self.move_to_end(false),
            KeyCode::Char('G') | KeyCode::End => self.move_to_end(true),
            KeyCode::Tab | KeyCode::BackTab => {
                self.focus = match self.focus {
                    Focus::Backlog => Focus::Agents,
                    Focus::Agents => Focus::Backlog,
                }
            }
            KeyCode::Char('?') => self.mode = Mode::Help,
            KeyCode::Char('/') => {
                self.focus = Focus::Backlog;
                self.mode = Mode::Filter;
            }
            KeyCode::Esc if !self.filter.text().is_empty() => {
                self.filter = Input::default();
                self.rebuild();
            }
            KeyCode::Char('c') => {
                self.show_cancelled = !self.show_cancelled;
                self.rebuild();
                let shown = if self.show_cancelled {
                    "shown"
                } else {
                    "hidden"
                };
                self.say(format!("cancelled tasks {shown}"), false);
            }
            KeyCode::Char('a') => self.open_form(FormKind::Add),
            KeyCode::Char('s') => self.open_form(FormKind::Goal),
            KeyCode::Char('m') | KeyCode::Char('A') => {
                match super::messages::recipient(self, key.code == KeyCode::Char('A')) {
                    Ok(kind) => self.open_form(kind),
                    Err(e) => self.say(e, true),
                }
            }
            KeyCode::Char('R') | KeyCode::F(5) => return vec![Effect::Refresh],
            KeyCode::Enter | KeyCode::Char('e') | KeyCode::Char('r') | KeyCode::Char('x') => {
                let Some(t) = self.selected_task().map(|t| t.task.clone()) else {
                    self.say("no task selected", true);
                    return Vec::new();
                };
                return self.act_on(key.code, &t);
            }
            _ => {}
        }
        Vec::new()
    }

    /// Enter / e / r / x on a task, from the list or from its details.
    fn act_on(&mut self, code: KeyCode, t: &TaskView) -> Vec<Effect> {
        match code {
            KeyCode::Enter => {
                self.mode = Mode::Detail(Box::new(Detail {
                    task: t.id,
                    data: None,
                    scroll: 0,
                    error: None,
                }));
                return vec![show_call(t.id)];
            }
            KeyCode::Char('e') => self.open_form(FormKind::Edit(Box::new(t.clone()))),
            KeyCode::Char('r') => {
                if t.state != "claimed" {
                    self.say(
                        format!("#{} is not claimed: nothing to release", t.id),
                        true,
                    );
                } else {
                    let holder = inert_line(t.holder.as_deref().unwrap_or("?"));
                    self.mode = Mode::Confirm(Confirm {
                        action: Action::ForceRelease(t.id),
                        question: format!(
                            "End {holder}'s claim on #{} (generation {})? The task becomes open again.",
                            t.id, t.generation
                        ),
                    });
                }
            }
            KeyCode::Char('x') => {
                if t.state == "done" || t.state == "cancelled" {
                    self.say(format!("#{} is {} already", t.id, t.state), true);
                } else {
                    let title = truncate_width(&one_line(&t.title), 60);
                    self.mode = Mode::Confirm(Confirm {
                        action: Action::Cancel(t.id),
                        question: format!("Cancel #{} “{title}”?", t.id),
                    });
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn open_form(&mut self, kind: FormKind) {
        let fields = match &kind {
            FormKind::Add => vec![
                Field::new("Title", ""),
                Field::new("Priority", ""),
                Field::new("After", ""),
            ],
            FormKind::Edit(t) => vec![
                Field::new("Title", &t.title),
                Field {
                    multiline: true,
                    ..Field::new("Body", &t.body)
                },
                Field::new("Priority", &t.priority.to_string()),
                Field::new("After", &ids_text(&t.after)),
            ],
            FormKind::Goal => vec![Field::new(
                "Goal",
                self.goal.as_ref().map(|g| g.text.as_str()).unwrap_or(""),
            )],
            FormKind::Message(r) => super::messages::fields(r),
        };
        self.mode = Mode::Form(Form {
            kind,
            fields,
            focus: 0,
            error: None,
            pending: false,
        });
    }

    fn key_filter(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Enter => self.mode = Mode::Normal,
            KeyCode::Esc => {
                self.filter = Input::default();
                self.mode = Mode::Normal;
                self.rebuild();
            }
            KeyCode::Down => self.move_by(1),
            KeyCode::Up => self.move_by(-1),
            _ => {
                if self.filter.edit(&key) {
                    self.rebuild();
                }
            }
        }
    }

    fn key_form(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Form(form) = &mut self.mode else {
            return Vec::new();
        };
        if key.code == KeyCode::Esc {
            self.mode = Mode::Normal;
            return Vec::new();
        }
        if form.pending {
            return Vec::new();
        }
        let n = form.fields.len();
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Enter if alt => newline(form),
            KeyCode::Char('j') if ctrl => newline(form),
            KeyCode::Enter => return self.submit(),
            KeyCode::Tab | KeyCode::Down => form.focus = (form.focus + 1) % n,
            KeyCode::BackTab | KeyCode::Up => form.focus = (form.focus + n - 1) % n,
            _ => {
                if let Some(f) = form.fields.get_mut(form.focus) {
                    if f.input.edit(&key) {
                        form.error = None;
                    }
                }
            }
        }
        Vec::new()
    }

    fn submit(&mut self) -> Vec<Effect> {
        let Mode::Form(form) = &mut self.mode else {
            return Vec::new();
        };
        self.type_after_send = None;
        let built = match &form.kind {
            FormKind::Message(r) => super::messages::build(form, r).map(|(call, typing)| {
                self.type_after_send = typing;
                Some(call)
            }),
            _ => build_call(form),
        };
        let call = match built {
            Ok(Some(c)) => c,
            Ok(None) => {
                self.mode = Mode::Normal;
                self.say("nothing changed", false);
                return Vec::new();
            }
            Err(e) => {
                form.error = Some(e);
                return Vec::new();
            }
        };
        form.pending = true;
        form.error = None;
        vec![Effect::Call(call)]
    }

    fn key_confirm(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Confirm(c) = &self.mode else {
            return Vec::new();
        };
        let action = c.action;
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => {
                self.mode = Mode::Normal;
                let call = match action {
                    Action::ForceRelease(id) => Call {
                        purpose: Purpose::Release(id),
                        method: "release",
                        params: json!({ "task": id, "force": true }),
                    },
                    Action::Cancel(id) => Call {
                        purpose: Purpose::Cancel(id),
                        method: "cancel",
                        params: json!({ "task": id }),
                    },
                };
                vec![Effect::Call(call)]
            }
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Char('q') | KeyCode::Esc => {
                self.mode = Mode::Normal;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn key_detail(&mut self, key: KeyEvent) -> Vec<Effect> {
        let max = match &self.mode {
            Mode::Detail(d) => super::view::detail_max_scroll(self, d, self.size.0, self.size.1),
            _ => return Vec::new(),
        };
        let page = self.page;
        let Mode::Detail(d) = &mut self.mode else {
            return Vec::new();
        };
        let scroll = d.scroll.min(max);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter => self.mode = Mode::Normal,
            KeyCode::Char('j') | KeyCode::Down => d.scroll = (scroll + 1).min(max),
            KeyCode::Char('k') | KeyCode::Up => d.scroll = scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => d.scroll = (scroll + page).min(max),
            KeyCode::PageUp => d.scroll = scroll.saturating_sub(page),
            KeyCode::Char('g') | KeyCode::Home => d.scroll = 0,
            KeyCode::Char('G') | KeyCode::End => d.scroll = max,
            KeyCode::Char('e') | KeyCode::Char('r') | KeyCode::Char('x') => {
                let task = d.data.as_ref().map(|x| x.task.clone()).or_else(|| {
                    let id = d.task;
                    self.tasks
                        .iter()
                        .find(|t| t.task.id == id)
                        .map(|t| t.task.clone())
                });
                if let Some(t) = task {
                    self.mode = Mode::Normal;
                    return self.act_on(key.code, &t);
                }
            }
            _ => {}
        }
        Vec::new()
    }
}

fn newline(form: &mut Form) {
    if let Some(f) = form.fields.get_mut(form.focus) {
        if f.multiline {
            f.input.insert('\n');
        }
    }
}

fn show_call(id: i64) -> Effect {
    Effect::Call(Call {
        purpose: Purpose::Show(id),
        method: "show",
        params: json!({ "task": id }),
    })
}

fn parse_show(v: &Value) -> Result<ShowData, BoardError> {
    let bad = |e: serde_json::Error| BoardError::internal(format!("unexpected `show` answer: {e}"));
    Ok(ShowData {
        task: serde_json::from_value(v["task"].clone()).map_err(bad)?,
        notes: serde_json::from_value(v["notes"].clone()).map_err(bad)?,
        events: serde_json::from_value(v["events"].clone()).map_err(bad)?,
    })
}

fn parse_priority(s: &str, default: Option<i64>) -> Result<i64, String> {
    let s = s.trim();
    match (s.is_empty(), default) {
        (true, Some(d)) => Ok(d),
        _ => s
            .parse()
            .map_err(|_| "priority must be a whole number (higher runs first)".to_string()),
    }
}

/// The request a submitted form sends; `Ok(None)` when an edit changes nothing.
fn build_call(form: &Form) -> Result<Option<Call>, String> {
    match &form.kind {
        FormKind::Add => {
            let title = form.value("Title").trim();
            if title.is_empty() {
                return Err("a task needs a title".into());
            }
            let priority = parse_priority(form.value("Priority"), Some(0))?;
            let after = parse_ids(form.value("After"))?;
            Ok(Some(Call {
                purpose: Purpose::Add,
                method: "add",
                params: json!({ "title": title, "priority": priority, "after": after }),
            }))
        }
        FormKind::Edit(t) => {
            let mut params = json!({ "task": t.id });
            let title = form.value("Title");
            if title != t.title {
                if title.trim().is_empty() {
                    return Err("a task needs a title".into());
                }
                params["title"] = json!(title.trim());
            }
            let body = form.value("Body");
            if body != t.body {
                params["body"] = json!(body);
            }
            let priority = parse_priority(form.value("Priority"), None)?;
            if priority != t.priority {
                params["priority"] = json!(priority);
            }
            let after = parse_ids(form.value("After"))?;
            let (mut a, mut b) = (after.clone(), t.after.clone());
            a.sort_unstable();
            a.dedup();
            b.sort_unstable();
            b.dedup();
            if a != b {
                params["after"] = json!(after);
            }
            if params.as_object().map(|m| m.len()) == Some(1) {
                return Ok(None);
            }
            Ok(Some(Call {
                purpose: Purpose::Edit(t.id),
                method: "edit",
                params,
            }))
        }
        FormKind::Message(r) => super::messages::build(form, r).map(|(call, _)| Some(call)),
        FormKind::Goal => {
            let text = form.value("Goal").trim();
            if text.is_empty() {
                return Err("the goal needs some text".into());
            }
            Ok(Some(Call {
                purpose: Purpose::Goal,
                method: "goal",
                params: json!({ "text": text }),
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixture;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn typed(app: &mut App, s: &str) {
        for c in s.chars() {
            app.on_key(key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn backlog_is_grouped_in_order_with_headers() {
        let app = fixture::sample_app(true);
        let headers: Vec<_> = app
            .rows
            .iter()
            .filter_map(|r| match r {
                Row::Header(g, n) => Some((g.label(), *n)),
                _ => None,
            })
            .collect();
        assert_eq!(
            headers,
            vec![("READY", 7), ("BLOCKED", 4), ("CLAIMED", 4), ("DONE", 4)]
        );
        assert_eq!(app.totals.iter().sum::<usize>(), 20);
        // The first task is selected, never a heading.
        assert!(matches!(app.rows[app.selected.unwrap()], Row::Task(_)));
    }

    #[test]
    fn movement_skips_headings_and_stops_at_the_ends() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('G')));
        let last = app.selected.unwrap();
        assert_eq!(last, app.rows.len() - 1);
        app.on_key(key(KeyCode::Char('j')));
        assert_eq!(app.selected, Some(last));
        app.on_key(key(KeyCode::Char('g')));
        assert_eq!(app.selected, Some(1));
        app.on_key(key(KeyCode::Char('k')));
        assert_eq!(app.selected, Some(1));
        for _ in 0..7 {
            app.on_key(key(KeyCode::Down));
        }
        // Seven ready tasks, then the BLOCKED heading is skipped.
        assert!(matches!(app.rows[app.selected.unwrap()], Row::Task(_)));
        assert_eq!(app.selected_task().unwrap().group, Group::Blocked);
    }

    #[test]
    fn selection_follows_the_task_across_snapshots() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('j')));
        app.on_key(key(KeyCode::Char('j')));
        let id = app.selected_task().unwrap().task.id;
        let mut snap = fixture::sample_snapshot();
        snap.tasks.reverse();
        app.on_snapshot(snap, 0);
        assert_eq!(app.selected_task().unwrap().task.id, id);
    }

    #[test]
    fn filter_narrows_the_backlog_and_escape_clears_it() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('/')));
        typed(&mut app, "refund");
        let shown = app
            .rows
            .iter()
            .filter(|r| matches!(r, Row::Task(_)))
            .count();
        assert!(shown > 0 && shown < 20, "{shown}");
        for r in &app.rows {
            if let Row::Task(i) = r {
                assert!(app.tasks[*i].title.to_lowercase().contains("refund"));
            }
        }
        app.on_key(key(KeyCode::Enter));
        assert_eq!(app.mode, Mode::Normal);
        assert_eq!(app.filter.text(), "refund");
        app.on_key(key(KeyCode::Esc));
        assert_eq!(app.filter.text(), "");
        assert_eq!(app.rows.len(), 23);
    }

    #[test]
    fn adding_a_task_sends_add_and_closes_on_success() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('a')));
        typed(&mut app, "Write the changelog");
        app.on_key(key(KeyCode::Tab));
        typed(&mut app, "3");
        let fx = app.on_key(key(KeyCode::Enter));
        let [Effect::Call(call)] = fx.as_slice() else {
            panic!("{fx:?}")
        };
        assert_eq!(call.method, "add");
        assert_eq!(
            call.params,
            json!({"title": "Write the changelog", "priority": 3, "after": []})
        );
        let fx = app.on_call_result(
            Purpose::Add,
            Ok(json!({"task": {"id": 21, "title": "Write the changelog"}})),
        );
        assert_eq!(fx, vec![Effect::Refresh]);
        assert_eq!(app.mode, Mode::Normal);
        assert!(app.current_flash().unwrap().text.contains("#21"));
    }

    #[test]
    fn a_failed_add_keeps_the_form_with_the_error() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('a')));
        let fx = app.on_key(key(KeyCode::Enter));
        assert!(fx.is_empty());
        let Mode::Form(f) = &app.mode else { panic!() };
        assert!(f.error.as_deref().unwrap().contains("title"));
        typed(&mut app, "x");
        app.on_key(key(KeyCode::Enter));
        app.on_call_result(
            Purpose::Add,
            Err(BoardError::unavailable("no board\x1b[31m")),
        );
        let Mode::Form(f) = &app.mode else { panic!() };
        let err = f.error.as_deref().unwrap();
        assert!(err.contains("no board") && !err.contains('\x1b'), "{err}");
        assert!(!f.pending);
    }

    #[test]
    fn edit_sends_only_what_changed() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('e')));
        let Mode::Form(f) = &app.mode else { panic!() };
        assert_eq!(f.fields.len(), 4);
        app.on_key(key(KeyCode::Tab));
        app.on_key(key(KeyCode::Tab));
        app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        typed(&mut app, "9");
        app.on_key(key(KeyCode::Tab));
        typed(&mut app, " #2, 3");
        let fx = app.on_key(key(KeyCode::Enter));
        let [Effect::Call(call)] = fx.as_slice() else {
            panic!("{fx:?}")
        };
        let id = app.selected_task().unwrap().task.id;
        assert_eq!(call.method, "edit");
        assert_eq!(call.params["task"], json!(id));
        assert_eq!(call.params["priority"], json!(9));
        assert!(call.params.get("title").is_none());
        assert!(call.params.get("body").is_none());
        assert!(call.params["after"].as_array().unwrap().contains(&json!(3)));
    }

    #[test]
    fn force_release_asks_first() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('/')));
        typed(&mut app, "claimed");
        app.on_key(key(KeyCode::Enter));
        let t = app.selected_task().unwrap().task.clone();
        assert_eq!(t.state, "claimed");
        assert!(app.on_key(key(KeyCode::Char('r'))).is_empty());
        assert!(matches!(app.mode, Mode::Confirm(_)));
        assert!(app.on_key(key(KeyCode::Char('n'))).is_empty());
        assert_eq!(app.mode, Mode::Normal);
        app.on_key(key(KeyCode::Char('r')));
        let fx = app.on_key(key(KeyCode::Char('y')));
        assert_eq!(
            fx,
            vec![Effect::Call(Call {
                purpose: Purpose::Release(t.id),
                method: "release",
                params: json!({"task": t.id, "force": true}),
            })]
        );
    }

    #[test]
    fn cancel_asks_first_and_refuses_finished_tasks() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('x')));
        let fx = app.on_key(key(KeyCode::Char('y')));
        assert!(matches!(&fx[..], [Effect::Call(c)] if c.method == "cancel"));
        app.on_key(key(KeyCode::Char('G')));
        assert_eq!(app.selected_task().unwrap().task.state, "done");
        assert!(app.on_key(key(KeyCode::Char('x'))).is_empty());
        assert_eq!(app.mode, Mode::Normal);
        assert!(app.current_flash().unwrap().error);
    }

    #[test]
    fn details_are_fetched_and_refreshed() {
        let mut app = fixture::sample_app(true);
        let fx = app.on_key(key(KeyCode::Enter));
        let id = app.selected_task().unwrap().task.id;
        assert_eq!(fx, vec![show_call(id)]);
        let fx = app.on_snapshot(fixture::sample_snapshot(), 0);
        assert_eq!(fx, vec![show_call(id)]);
        app.on_key(key(KeyCode::Esc));
        assert_eq!(app.mode, Mode::Normal);
    }

    #[test]
    fn detail_scrolling_stops_at_the_end() {
        let mut app = fixture::sample_app(true);
        app.set_size(80, 24);
        app.on_key(key(KeyCode::Enter));
        let mut task = app.selected_task().unwrap().task.clone();
        task.body = (0..100)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let v = json!({"task": task, "notes": [], "events": []});
        app.on_call_result(Purpose::Show(task.id), Ok(v));
        let scroll = |app: &App| match &app.mode {
            Mode::Detail(d) => d.scroll,
            other => panic!("{other:?}"),
        };
        app.on_key(key(KeyCode::Char('G')));
        let max = scroll(&app);
        assert!(max > 80, "{max}");
        app.on_key(key(KeyCode::Char('k')));
        assert_eq!(scroll(&app), max - 1);
        app.on_key(key(KeyCode::Char('j')));
        app.on_key(key(KeyCode::Char('j')));
        assert_eq!(scroll(&app), max);
    }

    #[test]
    fn goal_form_is_prefilled_and_q_in_help_does_not_quit() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('?')));
        assert_eq!(app.mode, Mode::Help);
        assert!(app.on_key(key(KeyCode::Char('q'))).is_empty());
        app.on_key(key(KeyCode::Char('s')));
        let Mode::Form(f) = &app.mode else { panic!() };
        assert_eq!(f.fields[0].input.text(), app.goal.as_ref().unwrap().text);
        // Typing q in a form types it.
        assert!(app.on_key(key(KeyCode::Char('q'))).is_empty());
        assert_eq!(app.on_key(key(KeyCode::Esc)), vec![]);
        assert_eq!(app.on_key(key(KeyCode::Char('q'))), vec![Effect::Quit]);
    }

    #[test]
    fn countdown_ticks_from_the_fetch_time() {
        let mut app = fixture::sample_app(true);
        let t = app
            .tasks
            .iter()
            .find(|t| t.task.expires_in_ms.is_some())
            .unwrap()
            .task
            .clone();
        let at_fetch = app.remaining_ms(&t).unwrap();
        app.set_clock(app.fetched_ms + 3_000, app.now_wall_ms + 3_000);
        assert_eq!(app.remaining_ms(&t).unwrap(), at_fetch - 3_000);
    }

    #[test]
    fn input_moves_over_combining_marks_and_scrolls_wide_text() {
        let mut i = Input::new("e\u{301}漢");
        i.edit(&key(KeyCode::Left));
        i.edit(&key(KeyCode::Left));
        assert_eq!(i.cursor, 0);
        i.edit(&key(KeyCode::Right));
        assert_eq!(i.cursor, "e\u{301}".len());
        i.edit(&key(KeyCode::End));
        i.edit(&key(KeyCode::Backspace));
        i.edit(&key(KeyCode::Backspace));
        assert_eq!(i.text(), "");
        let i = Input::new(&format!("\x1b[31m{}", "漢".repeat(50)));
        let (shown, col) = i.window(20);
        assert!(!shown.contains('\x1b'));
        assert!(unicode_width::UnicodeWidthStr::width(shown.as_str()) <= 20);
        assert!(col < 20);
        let (shown, col) = Input::new("\x1b]0;x\x07").window(20);
        assert_eq!((shown.as_str(), col), ("␛]0;x␇", 6));
    }

    #[test]
    fn reconnecting_and_back() {
        let mut app = fixture::sample_app(true);
        app.on_disconnected(2, "no board\x1b[2J");
        assert!(
            matches!(&app.conn, Conn::Reconnecting { attempt: 2, error } if !error.contains('\x1b'))
        );
        assert_eq!(app.on_connected(), vec![Effect::Refresh]);
        assert_eq!(app.conn, Conn::Live);
        assert!(app.current_flash().unwrap().text.contains("reconnected"));
    }
}
