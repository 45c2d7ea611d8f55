//! The board itself and its agents' attention: `hello`, `status`, `wait`, `resume`, `activity`,
//! `agents`, `agents.prune`, `log`, `subscribe`, `stop`, `session.stop`: their rows of the method
//! table, their parameters and their results.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shared::NoParams;
use crate::proto::views::{EventView, GoalView, HostView, SessionView, StoreInfo};

/// This group's rows of the method table (see [`super`]): passed on to the next group's rows.
macro_rules! board_rows {
    ([$next:ident $($rest:ident)*] $d:tt $($rows:tt)*) => { $next! { [$($rest)*] $d $($rows)*
        /// Protocol version handshake; may be the first call on a connection.
        Hello = "hello", Read, HelloParams => HelloResult;
        /// The board process and its settings.
        Status = "status", Read, StatusParams => StatusResult;
        /// Agents only: ask a person a question; it stays open (and the claims kept) until answered,
        /// withdrawn (`resume`) or the session ends.
        Wait = "wait", Read, WaitParams => WaitResult;
        /// Agents only: withdraw the caller's open question (and end its permission prompt).
        Resume = "resume", Read + Cli, ResumeParams => WaitResult;
        /// Agents only: what an agent CLI's hook reports (`board hook CLI EVENT`).
        Activity = "activity", Read, ActivityParams => ActivityResult;
        /// Agent sessions: live ones and, for 10 minutes, the last ended one of each name; every
        /// one with `all`.
        Agents = "agents", Read, AgentsParams => AgentsResult;
        /// Operators only: forget ended agent sessions (the event log keeps them).
        AgentsPrune = "agents.prune", Write, AgentsPruneParams => AgentsPruneResult;
        /// Events, oldest first: the last `limit`, or those after event id `after`.
        Log = "log", Read, LogParams => LogResult;
        /// Turn the connection into a stream of `event` notifications after event id `after`.
        Subscribe = "subscribe", Stream, SubscribeParams => SubscribeResult;
        /// Operators only: stop the board process.
        Stop = "stop", Read, StopParams => StopResult;
        /// Operators only: stop an agent session of this host the way a closed pane ends it
        /// (SIGTERM to its process group, SIGKILL to its tree after `[run] hangup_grace`).
        SessionStop = "session.stop", Read, SessionStopParams => SessionStopResult;
    } };
}

/// `hello`: no parameters.
pub type HelloParams = NoParams;

/// `status`: no parameters.
pub type StatusParams = NoParams;

/// `stop`: no parameters.
pub type StopParams = NoParams;

/// `agents` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsParams {
    /// Every session, ended ones included (without: the live ones and, for 10 minutes, the
    /// last ended session of each name no live session has).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<bool>,
}

/// `agents.prune` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsPruneParams {
    /// Forget only sessions that ended at least this long ago, ms (default 0: every ended
    /// session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub older_ms: Option<i64>,
}

/// `log` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogParams {
    /// How many events (default 200, clamped to 1 … 100000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Only events with an id above this one, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<i64>,
}

/// `subscribe` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscribeParams {
    /// Start after this event id (earlier events are sent from the log first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<i64>,
    /// Also send `notice` notifications (what `[notify] terminal` shows: a question, a
    /// permission prompt, …) as the board makes them; default false. Notices are not in the log:
    /// one made while the stream was not connected is not sent later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notices: Option<bool>,
}

/// `session.stop` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionStopParams {
    /// The agent session to stop: its id, or the name exactly one live session has (`agent`
    /// names the caller on the wire).
    pub session: String,
}

/// `wait` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitParams {
    /// What you need from a person: the question. It stays open until a person answers it
    /// (`answer`), you withdraw it (`resume`) or your session ends.
    pub question: String,
}

/// `resume`: no parameters.
pub type ResumeParams = NoParams;

/// `activity` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivityParams {
    /// renew: it is working; idle: it finished its turn; waiting: it waits for a human.
    pub kind: ActivityKind,
    /// The CLI's message (required with `waiting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The hook that reported it, `CLI EVENT` (e.g. `claude PostToolUse`): named in the log's
    /// `renew` event when this call renews the agent's claims. At most 64 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<String>,
}

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

/// `activity`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivityResult {
    /// The kind reported.
    pub kind: ActivityKind,
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
