//! The store: the board's data, behind one trait and two backends.
//!
//! [`Store`] is the surface (`api`); [`SqliteStore`] (`sqlite`) the embedded backend and
//! [`PgStore`] (`pg`) the shared one for several hosts. Neither backend imports the other: what
//! both keep (the shared types below, the pure `*_rules` modules, refusal texts, the identity
//! mark) lives here, and so do the procedures written once for both (`procs`, over the
//! driver-neutral statements of `db`). Every state change runs in one transaction whose deciding step is one
//! conditional statement (`UPDATE … WHERE <condition> RETURNING …`): a store never reads,
//! compares in Rust, then writes (ARCHITECTURE.md rule 6). Each transition appends an event in
//! the same transaction (ARCHITECTURE.md rule 9); the caller broadcasts the returned
//! [`EventView`]s after commit.

use std::time::SystemTime;

#[macro_use]
mod sql;
#[macro_use]
mod db;
mod answers;
mod api;
mod holder_rules;
pub mod identity;
mod import_rules;
mod lapse_rules;
mod message_rules;
#[macro_use]
mod procs;
pub mod pg;
pub(crate) mod refusal;
pub mod review_rules;
mod session_rules;
pub mod sqlite;
mod task_rules;
#[cfg(test)]
mod tests;

use crate::proto::error::{BoardError, BoardResult};
pub use crate::proto::glossary::{
    AgentState, ClaimEnd, EventKind, Generation, ListState, SessionId, TaskId, TaskState,
};
use crate::proto::{EventView, MessageView, TaskView};

pub use crate::proto::labels::{check_label, MAX_LABEL};
pub use api::Store;

/// `error.data` key of an `unavailable` error whose write may have been applied: the store went
/// away after the write was sent (its commit, or its one statement) and before it answered.
/// Only the write's `op_id` can tell: asking again with it finds the saved answer if it was
/// applied, and applies it now if it was not.
pub const OUTCOME_UNKNOWN: &str = "outcome_unknown";
pub use pg::PgStore;
pub use review_rules::ReviewFacts;
pub use sqlite::SqliteStore;
pub use task_rules::Reassign;

/// Author name of requests without an agent identity.
pub const OPERATOR: &str = "operator";

/// Longest accepted title, in bytes.
pub const MAX_TITLE: usize = 16 * 1024;
/// Longest accepted body or note, in bytes.
pub const MAX_TEXT: usize = 512 * 1024;

/// RFC 3339 UTC wall-clock time with milliseconds, for people.
pub fn now_wall() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// What the board remembers of one agent session for authentication and watching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// Session id.
    pub id: String,
    /// SHA-256 of the token, hex.
    pub token_hash: String,
    /// Boot the session started in.
    pub boot_id: String,
    /// `board run` launcher pid and start time (clock ticks since boot).
    pub launcher: Option<(i32, u64)>,
    /// Agent process pid and start time.
    pub agent: Option<(i32, u64)>,
    /// tmux pane id, pane process pid and start time.
    pub pane: Option<(String, i32, u64)>,
    /// Its CLI's permission prompt (the hooks' `waiting`), until the CLI moves on.
    pub waiting: Option<String>,
    /// The question it asked a person (`board wait`), until answered, withdrawn or ended.
    pub question: Option<String>,
    /// When its agent finished its turn (a hook said so), until its next call.
    pub idle_since: Option<String>,
    /// None while the session is live.
    pub ended_at: Option<String>,
}

/// A lease asked of the store for a grant or a renewal: asked at `now_ms`, running until
/// `expires_ms` (both lease-clock ms, the board's `LeaseRules` makes it). The embedded store
/// compares the expiry as given; a shared store uses only the length (its own clock decides
/// when a lease began, see [`Store::clock_ms`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// When it is asked (lease clock, ms).
    pub now_ms: i64,
    /// When it ends unless renewed (lease clock, ms).
    pub expires_ms: i64,
}

impl Lease {
    /// A lease asked at `now_ms` that ends at `expires_ms`.
    pub fn until(now_ms: i64, expires_ms: i64) -> Lease {
        Lease { now_ms, expires_ms }
    }

    /// How long it runs, ms.
    pub fn length_ms(&self) -> i64 {
        self.expires_ms - self.now_ms
    }
}

/// A live claim as returned by grants and renewals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimInfo {
    /// Task id.
    pub task: TaskId,
    /// The claim's generation.
    pub generation: Generation,
    /// Expiry on the lease clock (ms).
    pub expires_ms: i64,
}

/// Answer of a successful `claim`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimOutcome {
    /// The task after the call.
    pub task: TaskView,
    /// The live claim.
    pub claim: ClaimInfo,
    /// True when the caller already held this live claim: nothing was granted, the generation is
    /// the one it holds (ARCHITECTURE.md rule 1).
    pub already: bool,
}

/// What [`Store::claim_next_at_once`] and [`Store::done_at_once`] answer: the request's answer
/// (fresh or as saved under its `op_id`), the events to publish, and what the board adds to
/// every agent's answer.
#[derive(Debug)]
pub struct AtOnce {
    /// The result as the wire carries it, or a saved refusal.
    pub answer: answers::Answer,
    /// The `grant` or `done` event (none when the answer was a saved one).
    pub events: Events,
    /// The agent has lost claims it was not told of yet ([`Store::take_lost`] has some).
    pub lost_waiting: bool,
    /// The agent's unread messages.
    pub unread: Unread,
}

pub use crate::proto::methods::LostClaim;

/// Answer of a successful `done`.
#[derive(Debug, Clone, PartialEq)]
pub struct DoneOutcome {
    /// The task after the call.
    pub task: TaskView,
    /// Generation the task was finished at.
    pub generation: Generation,
    /// True when this repeated an earlier `done` of the same agent and generation.
    pub already: bool,
}

/// Events appended by one transaction, to broadcast after commit.
pub type Events = Vec<EventView>;

/// Answer of [`Store::host_beat`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostBeat {
    /// Our previous host session had been ended by another host's sweep (we were declared
    /// dead: stopped, cut off, or too slow): its end reason. A fresh host session was taken.
    pub ended_by_others: Option<String>,
    /// Events the beat appended (a `warn` when the host had been declared dead).
    pub events: Events,
}

/// Called with the events of a transaction that committed but whose call answers an error (a
/// refused write that lapsed the caller's expired claim): nobody else would publish them.
pub type Notify = Box<dyn Fn(Events) + Send>;

pub(crate) fn agent_opt(by: &str) -> Option<&str> {
    (by != OPERATOR).then_some(by)
}

pub(crate) fn fmt_ms(ms: i64) -> String {
    humantime::format_duration(std::time::Duration::from_millis(ms.max(0) as u64)).to_string()
}

pub(crate) fn check_text(
    what: &str,
    text: &str,
    max: usize,
    may_be_empty: bool,
) -> BoardResult<()> {
    if !may_be_empty && text.trim().is_empty() {
        return Err(BoardError::invalid(format!("{what} must not be empty")));
    }
    if text.len() > max {
        return Err(BoardError::invalid(format!(
            "{what} is {} bytes; the limit is {max} bytes",
            text.len()
        )));
    }
    if text.contains('\0') {
        return Err(BoardError::invalid(format!(
            "{what} must not contain NUL characters"
        )));
    }
    Ok(())
}

pub(crate) fn task_not_found(id: i64) -> BoardError {
    BoardError::not_found(format!("no task {id}")).with("task", id)
}

/// A live claim, for the warning before it lapses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveClaim {
    /// Task id.
    pub task: TaskId,
    /// Holder's session id.
    pub agent: String,
    /// The claim's generation.
    pub generation: Generation,
    /// Expiry on the lease clock (ms).
    pub expires_ms: i64,
    /// The holder's terminal (e.g. `/dev/pts/3`), if known.
    pub tty: Option<String>,
}

/// Answer of a successful `send` or `answer`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    /// The stored message.
    pub message: MessageView,
    /// The message was an answer and the recipient was waiting (a question or a permission
    /// prompt): that ended.
    pub ended_wait: bool,
    /// The question the message answered (and ended), when the recipient had one open.
    pub question: Option<String>,
    /// The recipient's tmux pane, when it runs in one (where an answer can also be typed).
    pub pane: Option<String>,
}

/// What the recipient has not read yet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unread {
    /// How many unread messages.
    pub count: i64,
    /// Their senders, each once, oldest first.
    pub from: Vec<String>,
}

/// What an import created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// New task ids, in the file's order.
    pub ids: Vec<TaskId>,
    /// The file's key of each new task, in the same order.
    pub keys: Vec<String>,
    /// Whether the import set a new goal (a goal equal to the current one is left alone).
    pub goal_set: bool,
    /// The goal the new one replaced (kept among the older goals), when there was one.
    pub replaced_goal: Option<String>,
}
