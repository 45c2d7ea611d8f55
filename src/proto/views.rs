//! The objects the board shows its clients: tasks, agent sessions, events, notes, goals.
//!
//! Each derives `JsonSchema` under the name it has in the printed schema (`$defs/task`, …):
//! what the board serializes is what `board json --schema` describes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::proto::glossary::{AgentState, EventKind, Generation, NoticeKind, TaskId, TaskState};

/// A task as clients see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "task")]
pub struct TaskView {
    /// Task id (1, 2, …).
    pub id: TaskId,
    /// One-line title, as given (untrusted text).
    pub title: String,
    /// Free text body, as given.
    pub body: String,
    /// Higher runs first; default 0.
    pub priority: i64,
    /// `open`, `claimed`, `review`, `done` or `cancelled`.
    pub state: TaskState,
    /// The task's fencing token: incremented by every grant, never reused.
    pub generation: Generation,
    /// Ids this task waits for (`--after`).
    pub after: Vec<TaskId>,
    /// Ids among `after` that are not `done` yet.
    pub blocked_by: Vec<TaskId>,
    /// `open` and no unfinished dependency.
    pub ready: bool,
    /// Agent session id holding the live claim, if any.
    pub holder: Option<String>,
    /// Milliseconds until the live claim lapses unless renewed (as stored; may be negative
    /// between expiry and the next sweep).
    pub expires_in_ms: Option<i64>,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// RFC 3339 UTC.
    pub updated_at: String,
    /// Agent session that finished it.
    pub done_by: Option<String>,
    /// RFC 3339 UTC.
    pub done_at: Option<String>,
    /// The commit its finishing holder named (full SHA; `done --commit`, default the HEAD of
    /// the agent's branch), from a `done` that went to review or landed on; else None.
    #[serde(default)]
    pub commit: Option<String>,
    /// The base branch's head right after the board brought `commit` in (full SHA); None until
    /// it landed, and when the board lands nothing (`[git] land = "none"`).
    #[serde(default)]
    pub landed: Option<String>,
    /// The task's labels (`add --label`), in the order given; each 1 to 64 characters with no
    /// comma, whitespace or control character.
    #[serde(default)]
    pub labels: Vec<String>,
    /// The agent name or role the task is for (`add --for`); None: any agent may claim it.
    #[serde(default, rename = "for")]
    pub meant_for: Option<String>,
    /// Whether this task's `done` goes through review: true (`add --review`), false
    /// (`--no-review`), None: as the board's `[review] required` says.
    #[serde(default)]
    pub review: Option<bool>,
}

/// An agent session as clients see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "session")]
pub struct SessionView {
    /// Unique id (`claude`, `claude-2`, …; `BOARD_AGENT`), never given again, even after the
    /// session is pruned. For `--json`, `board agents --all` and the log's details.
    pub id: String,
    /// The name people see (`claude`): the requested name unless a live session had it, else
    /// the first free `NAME-N`; unique among live sessions, so a restarted agent takes its
    /// name back.
    pub name: String,
    /// The agent's process id (None until the launcher attached it).
    pub pid: Option<i64>,
    /// The `board run` launcher's pid.
    pub launcher_pid: Option<i64>,
    /// tmux pane id, when started by `board up`.
    pub pane: Option<String>,
    /// `working` (holds claims), `idle` (finished its turn, or holds nothing), `waiting` (for a
    /// human: an open `question` or a permission prompt, `waiting`), `needs_attention` (never reached its prompt), `stopped`, `gone`, `starting`.
    pub state: AgentState,
    /// Task ids of live claims.
    pub claims: Vec<TaskId>,
    /// The permission prompt its CLI shows (it waits for a person to allow something), as its
    /// hook reported it; ends when the CLI moves on.
    pub waiting: Option<String>,
    /// The question it asked a person (`board wait`), open until answered (`board answer`),
    /// withdrawn (`board resume`) or the session ends.
    #[serde(default)]
    pub question: Option<String>,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// RFC 3339 UTC; last request with this identity.
    pub last_seen_at: Option<String>,
    /// RFC 3339 UTC.
    pub ended_at: Option<String>,
    /// Why it ended (`exited (status 0)`, `killed by SIGKILL`, `pane closed`).
    pub end_reason: Option<String>,
    /// How many sessions of the same name started before this one (a `board up` pane that was
    /// restarted twice shows `claude`, restarted 2 times, whatever its unique id); pruned
    /// sessions no longer count.
    #[serde(default)]
    pub restarts: i64,
    /// The git branch the agent started on, when it started in a git work tree.
    #[serde(default)]
    pub branch: Option<String>,
    /// RFC 3339 UTC; when its agent finished its turn, as its CLI's hook said (cleared by its
    /// next call).
    #[serde(default)]
    pub idle_since: Option<String>,
    /// Why it needs attention: it neither called the board nor fired a hook within its profile's
    /// `attention_after` of its start.
    #[serde(default)]
    pub attention: Option<String>,
    /// RFC 3339 UTC; its first board call or hook (it reached its prompt).
    #[serde(default)]
    pub contacted_at: Option<String>,
    /// The host whose board started and watches it, on a store shared by several hosts
    /// (PostgreSQL); None on the embedded store.
    #[serde(default)]
    pub host: Option<String>,
}

/// How long `board agents` (without `--all`) and the TUI keep showing the last ended session
/// of a name no live session has, ms.
pub const RECENT_ENDED_MS: i64 = 10 * 60 * 1000;

/// One entry of the append-only event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "event")]
pub struct EventView {
    /// Monotonic event id.
    pub id: i64,
    /// RFC 3339 UTC.
    pub at: String,
    /// `grant`, `renew`, `expel`, `lapse`, `reject`, `done`, `release`, `add`, `edit`,
    /// `cancel`, `goal`, `note`, `session_start`, `session_end`, `wait`, `resume`, `idle` (a
    /// hook said the agent finished its turn), `board_start`, `config` (board.toml refused or
    /// fixed), `message` (`send`), `warn` (a claim is about to lapse), `stall` (the board did
    /// not run for a while), `epoch` (a new epoch ended older claims).
    pub kind: EventKind,
    /// Task concerned, if any.
    pub task: Option<TaskId>,
    /// Agent session concerned, if any.
    pub agent: Option<String>,
    /// Claim generation concerned, if any.
    pub generation: Option<Generation>,
    /// Human reason (`exited (status 3)`, `lease expired`, …).
    pub reason: Option<String>,
}

/// A notice: something a person should hear about even when not looking at the board (a
/// question, a permission prompt, …). The board sends it over `[notify]`'s channels; a `board
/// tui` gets it as a `notice` notification on its stream. The JSON object a `[notify] command`
/// reads on stdin has exactly these keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "notice")]
pub struct NoticeView {
    /// `question`, `permission`, `attention`, `message`, `review`, `expel` or `finished`.
    pub kind: NoticeKind,
    /// The agent session concerned, if one is.
    pub agent: Option<String>,
    /// The task concerned, if one is.
    pub task: Option<TaskId>,
    /// What happened, in words (the agent's text as given; sanitise before showing it).
    pub text: String,
    /// RFC 3339 UTC.
    pub at: String,
}

impl NoticeView {
    /// A title for a popup or a terminal notification: `board: w asks` and the like (the agent
    /// as given: sanitise before showing it).
    pub fn title(&self) -> String {
        let who = self.agent.as_deref().unwrap_or("board");
        match self.kind {
            NoticeKind::Question => format!("board: {who} asks"),
            NoticeKind::Permission => format!("board: {who} waits for permission"),
            NoticeKind::Attention => format!("board: {who} needs attention"),
            NoticeKind::Message => format!("board: message from {who}"),
            NoticeKind::Review => match self.task {
                Some(t) => format!("board: #{t} from {who} waits for review"),
                None => "board: a task waits for review".to_string(),
            },
            NoticeKind::Expel => format!("board: {who} ended holding a claim"),
            NoticeKind::Finished => "board: the backlog is done".to_string(),
        }
    }
}

/// A note on a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "note")]
pub struct NoteView {
    /// Note id.
    pub id: i64,
    /// Task id.
    pub task: TaskId,
    /// Agent session id, or `operator`.
    pub author: String,
    /// Generation of the author's claim when written, if any.
    pub generation: Option<Generation>,
    /// The text as given.
    pub text: String,
    /// RFC 3339 UTC.
    pub at: String,
}

/// A goal of the board (the latest is current).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "goal")]
pub struct GoalView {
    /// Goal id.
    pub id: i64,
    /// The text.
    pub text: String,
    /// RFC 3339 UTC.
    pub set_at: String,
    /// Who set it (`operator` or an agent id).
    pub set_by: String,
}

/// A message between agent sessions (or operators): `board send`, read by `board inbox`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "message")]
pub struct MessageView {
    /// Message id.
    pub id: i64,
    /// Sender: agent session id, or `operator`.
    pub from: String,
    /// Recipient: agent session id, or `operator`.
    pub to: String,
    /// The text as given (untrusted).
    pub text: String,
    /// RFC 3339 UTC.
    pub sent_at: String,
    /// It answered the recipient's `board wait` (and ended the wait).
    pub answer: bool,
}

/// A host session of a shared store (PostgreSQL): one `board serve` on one host, kept alive by
/// its heartbeat. Times are on the store server's clock, so hosts' own clocks do not matter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "host")]
pub struct HostView {
    /// The host's name (`[store] host`, default the machine's hostname).
    pub name: String,
    /// The host's `board serve` process id (on that host).
    pub pid: i64,
    /// RFC 3339 UTC: when this host session started.
    pub started_at: String,
    /// Milliseconds since its last heartbeat (store server clock).
    pub beat_age_ms: i64,
    /// Milliseconds until the host session expires unless renewed; negative once it has
    /// expired and no sweep has ended it yet.
    pub expires_in_ms: i64,
    /// RFC 3339 UTC, when the host session ended (None while live).
    pub ended_at: Option<String>,
    /// Why it ended (`expired: no heartbeat for 31.2s, ended by host b`, `stopped`).
    pub end_reason: Option<String>,
}

/// Which store a board runs on, for `board status`: `{"kind":"postgres",
/// "location":"postgres://board@db.example/board","host":"ci-3"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "store_info")]
pub struct StoreInfo {
    /// `sqlite` (embedded) or `postgres` (shared by several hosts).
    pub kind: String,
    /// The SQLite database file, or the PostgreSQL URL without its password.
    pub location: String,
    /// This board's host name in a shared store; None for SQLite.
    pub host: Option<String>,
}

/// Largest page of `list` / `ready` (tasks).
pub const MAX_PAGE: i64 = 10_000;
