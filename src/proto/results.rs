//! The result type of every method (see the table in [`crate::proto::methods`]).
//!
//! Handlers build these and the board serializes them, so the printed schema describes exactly
//! what is sent: every member is present (`null` when it has no value) unless noted.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::proto::views::{
    EventView, GoalView, HostView, MessageView, NoteView, SessionView, StoreInfo, TaskView,
};

/// `hello`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HelloResult {
    /// Protocol version; a client refuses another one.
    pub protocol: u32,
    /// The board's package version.
    pub version: String,
    /// The board process id.
    pub pid: u32,
    /// Agent session id of the caller, or `operator`.
    pub caller: String,
}

/// Lease settings in force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaseSettings {
    /// Lease duration, ms.
    pub duration_ms: i64,
    /// Sweep interval, ms.
    pub sweep_ms: i64,
    /// `activity` or `process`.
    #[schemars(extend("enum" = ["activity", "process"]))]
    pub liveness: String,
}

/// A live agent session in `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusAgent {
    /// Session id.
    pub id: String,
    /// Requested name.
    pub name: String,
    /// The git branch the agent started on (its worktree's, with `worktree = true`).
    pub branch: Option<String>,
}

/// `status`: what the board process is and how it is configured right now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusResult {
    /// Board name (board.toml).
    pub name: String,
    /// Board process id.
    pub pid: u32,
    /// Package version.
    pub version: String,
    /// Protocol version.
    pub protocol: u32,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// Seconds since the board started.
    pub uptime_s: u64,
    /// Project root (directory of board.toml).
    pub root: String,
    /// Socket path.
    pub socket: String,
    /// The database: the SQLite file, or the PostgreSQL store's URL without its password (the
    /// same as `store.location`).
    pub db: String,
    /// Log file path.
    pub log: String,
    /// Lease settings in force.
    pub lease: LeaseSettings,
    /// Whether callers must descend from their agent's process.
    pub check_process_tree: bool,
    /// Why the last edit of board.toml was refused (the previous configuration stays), or null.
    pub config_error: Option<String>,
    /// Whether process exits are seen at once (pidfd).
    pub pidfd: bool,
    /// Live agent sessions.
    pub live_sessions: u64,
    /// Live agent sessions and the git branch each started on.
    pub agents: Vec<StatusAgent>,
    /// Open and claimed tasks.
    pub unfinished_tasks: i64,
    /// The current goal.
    pub goal: Option<GoalView>,
    /// Which store the board keeps its data in (and this board's host name in a shared one).
    pub store: StoreInfo,
    /// Why the board cannot reach its shared store right now (None when it can): writes and
    /// `board check` fail closed (exit 8) meanwhile.
    pub store_unreachable: Option<String>,
    /// Since when (RFC 3339 UTC) the store is unreachable, or null. Meanwhile `live_sessions`,
    /// `agents`, `unfinished_tasks`, `goal` and `hosts` are as the board last read them.
    pub store_unreachable_since: Option<String>,
    /// When the board last reached its shared store (RFC 3339 UTC), or null (never, or SQLite).
    pub store_last_contact: Option<String>,
    /// The host sessions of a shared store, live ones first (none for SQLite).
    pub hosts: Vec<HostView>,
}

/// `goal`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalResult {
    /// The current goal (after setting it, the new one), or null.
    pub goal: Option<GoalView>,
}

/// `add`, `edit`, `cancel`, `release`: the task after the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskResult {
    /// The task.
    pub task: TaskView,
}

/// `list`, `ready`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TasksResult {
    /// The tasks (list: by id; ready: in claim order).
    pub tasks: Vec<TaskView>,
    /// `list` with `limit`: the cursor of the next page (its `after`), null on the last page;
    /// absent without `limit`.
    #[serde(default, skip_serializing_if = "Paged::is_unpaged")]
    pub next: Paged,
}

/// The `next` cursor of a paged `list`: absent when the call asked for no page, else the next
/// page's `after` or null on the last page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Paged {
    /// The call asked for no page (the member is left out).
    #[default]
    Unpaged,
    /// The cursor, or null on the last page.
    Page(Option<i64>),
}

impl Paged {
    /// Whether the member is left out.
    pub fn is_unpaged(&self) -> bool {
        matches!(self, Paged::Unpaged)
    }
}

/// `show`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowResult {
    /// The task.
    pub task: TaskView,
    /// Its notes, oldest first.
    pub notes: Vec<NoteView>,
    /// Its history, oldest first.
    pub events: Vec<EventView>,
}

/// `claim`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimResult {
    /// The task, now claimed by the caller.
    pub task: TaskView,
    /// The claim's generation (fencing token).
    pub generation: i64,
    /// Until the claim lapses unless renewed (any call renews), ms.
    pub expires_in_ms: i64,
    /// True when the caller already held this live claim (same generation).
    pub already: bool,
}

/// `done`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneResult {
    /// The task after the call.
    pub task: TaskView,
    /// The generation it was finished at.
    pub generation: i64,
    /// True when this repeated an earlier `done` of the same agent and generation.
    pub already: bool,
}

/// `accept`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptResult {
    /// The task after the call: `done`, with `commit` and `landed`.
    pub task: TaskView,
    /// The base branch's head after the land (full commit id); None when the board lands
    /// nothing (`[git] land = "none"`).
    pub landed: Option<String>,
    /// The base branch it landed on.
    pub base: String,
}

/// `note`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteResult {
    /// The note written.
    pub note: NoteView,
}

/// One live claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimView {
    /// Task id.
    pub task: i64,
    /// Its generation.
    pub generation: i64,
    /// Until it lapses unless renewed, ms.
    pub expires_in_ms: i64,
}

/// `renew`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenewResult {
    /// The caller's live claims after renewal.
    pub claims: Vec<ClaimView>,
}

/// `check`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckResult {
    /// Task id of the live claim.
    pub task: i64,
    /// Its generation.
    pub generation: i64,
    /// The caller's session id.
    pub holder: String,
    /// Until it lapses unless renewed, ms.
    pub expires_in_ms: i64,
}

/// `wait`, `resume`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitResult {
    /// The open question (wait), or null (resume).
    pub waiting: Option<String>,
    /// The agent session that asked (the caller).
    #[serde(default)]
    pub agent: String,
    /// The id of the newest event when the question was asked (or withdrawn): a waiter for
    /// its answer follows the event stream after it (`subscribe {after}`).
    #[serde(default)]
    pub event: i64,
}

/// `answer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerResult {
    /// The answer, stored as a message in the asker's inbox (`answer: true`).
    pub message: MessageView,
    /// The question it answered (now closed).
    pub question: String,
    /// The asker's tmux pane, when it runs in one.
    pub pane: Option<String>,
}

/// `activity`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivityResult {
    /// The kind reported.
    pub kind: ActivityKind,
}

/// `agents`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsResult {
    /// The sessions.
    pub agents: Vec<SessionView>,
    /// How many sessions have ended (listed only with `all`).
    pub ended: i64,
    /// Whether every session is listed (`all`); else the live ones and, for 10 minutes, the
    /// last ended one of each name.
    #[serde(default)]
    pub all: bool,
}

/// `agents.prune`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsPruneResult {
    /// Ids of the ended sessions forgotten (never given again).
    pub pruned: Vec<String>,
}

/// `log`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogResult {
    /// Events, oldest first.
    pub events: Vec<EventView>,
}

/// `subscribe` (then `event` notifications follow).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscribeResult {
    /// Always true.
    pub subscribed: bool,
}

/// `stop`: the board was asked to stop; or (CLI only, `board stop --json`) none was running.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum StopResult {
    /// The board stops after answering.
    Stopping {
        /// True.
        stopping: bool,
        /// The board process id.
        pid: u32,
    },
    /// No board was running (the CLI's own answer).
    NotRunning {
        /// False.
        stopping: bool,
        /// False.
        running: bool,
    },
}

/// `session.register`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionRegisterResult {
    /// The session id given (unique for ever; the identity in `BOARD_AGENT`).
    pub agent: String,
    /// The name people see: the requested name unless a live session has it, else the first
    /// free `NAME-N`.
    #[serde(default)]
    pub name: String,
    /// Its secret token (≥ 128 bit, hex); the board keeps only its hash.
    pub token: String,
}

/// `session.attach`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionAttachResult {
    /// Session id.
    pub agent: String,
    /// The attached agent process id.
    pub pid: i64,
}

/// `session.exit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionExitResult {
    /// Whether this call ended the session (false: it had ended already).
    pub ended: bool,
    /// The reason recorded.
    pub reason: String,
}

/// `session.stop`: the agent got SIGTERM; its session ends when it exits (a `session_end`
/// event), at the latest when SIGKILL reaches its tree `kill_after_ms` later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionStopResult {
    /// The session being stopped.
    pub session: String,
    /// The agent's pid.
    pub pid: i64,
    /// When SIGKILL follows if it is still running, ms from now (`[run] hangup_grace`).
    pub kill_after_ms: u64,
}

/// `import`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportResult {
    /// The new tasks, in the request's order.
    pub tasks: Vec<TaskView>,
    /// Each key's new task id.
    pub keys: std::collections::BTreeMap<String, i64>,
    /// Whether the backlog's goal was set.
    pub goal_set: bool,
    /// The goal the backlog's replaced (still kept among the older goals), if there was one.
    pub replaced_goal: Option<String>,
}

/// `export`: the backlog as `import` takes it.
pub type ExportResult = crate::proto::backlog::Backlog;

/// `send`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendResult {
    /// The message stored.
    pub message: MessageView,
    /// The recipient was waiting for a human and no longer is.
    pub ended_wait: bool,
    /// The recipient's tmux pane, when it runs in one.
    pub pane: Option<String>,
}

/// `inbox`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InboxResult {
    /// Unread messages, oldest first (now read).
    pub messages: Vec<MessageView>,
}

/// Added to an agent's answers (results and error data) while it has unread messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "inbox_notice")]
pub struct InboxNotice {
    /// How many unread messages (at least 1).
    pub unread: i64,
    /// Senders, each once, oldest first.
    pub from: Vec<String>,
    /// Always `board inbox`.
    pub read_with: String,
}

/// A claim its holder lost without asking (lapse, expel, force-release, cancel, new epoch), as
/// reported on that agent's next call (`lost` in the answer). Shape on the wire:
/// `{"task":3,"generation":2,"end":"lapse","reason":"lease expired …","ended_at":"…"}`.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "lost_claim")]
pub struct LostClaim {
    /// Task id.
    pub task: i64,
    /// The generation the claim had.
    pub generation: i64,
    /// How it ended: `lapse`, `expel`, `release` (forced by an operator), `cancel`, `epoch`.
    pub end: crate::proto::glossary::ClaimEnd,
    /// Why, in words.
    pub reason: Option<String>,
    /// When (RFC 3339 UTC).
    pub ended_at: Option<String>,
}

/// What an agent CLI's hook reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActivityKind {
    /// It is working (renews like any call).
    Renew,
    /// It finished its turn.
    Idle,
    /// It waits for a human (a permission prompt), with the CLI's message.
    Waiting,
}

impl ActivityKind {
    /// The kind's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ActivityKind::Renew => "renew",
            ActivityKind::Idle => "idle",
            ActivityKind::Waiting => "waiting",
        }
    }
}
