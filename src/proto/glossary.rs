//! The glossary as types (ARCHITECTURE.md "Words"): the states of a task and of an agent session, the
//! kinds of events, how a claim ends, and the ids that would otherwise be bare numbers and
//! strings. Each word is spelt here once: on the wire (serde), in the database (as `as_str`
//! gives it; each store backend binds it), in the JSON Schema and in the SQL text of the store
//! (the `sql_*!` macros, so a statement stays one `&'static str`).

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A name that is not one of a glossary enum's words (parsing a stored or given spelling).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {shown:?}: use {known}")]
pub struct UnknownWord {
    /// Which word list (`task state`, `event kind`, …).
    pub what: &'static str,
    /// The text given, cut to 32 characters (it may be untrusted).
    pub shown: String,
    /// The accepted words, comma-separated.
    pub known: String,
}

/// Declares a glossary enum: snake_case on the wire and in the database, `as_str`, `ALL`,
/// `Display`, `FromStr` and an inline JSON Schema.
macro_rules! words {
    ($(#[$meta:meta])* $name:ident ($what:literal) { $($(#[$vmeta:meta])* $variant:ident = $word:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every word, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The word as the wire and the database spell it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }

            /// The accepted words, comma-separated (for error messages).
            pub fn known() -> String {
                Self::ALL.iter().map(|w| w.as_str()).collect::<Vec<_>>().join(", ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        /// A plain string enum, inlined where it is used (no `$defs` entry of its own).
        impl JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let words: Vec<&str> = Self::ALL.iter().map(|w| w.as_str()).collect();
                schemars::json_schema!({ "type": "string", "enum": words })
            }
        }

        impl FromStr for $name {
            type Err = UnknownWord;
            fn from_str(s: &str) -> Result<Self, UnknownWord> {
                Self::ALL.iter().copied().find(|w| w.as_str() == s).ok_or_else(|| UnknownWord {
                    what: $what,
                    shown: s.chars().take(32).collect(),
                    known: Self::known(),
                })
            }
        }

    };
}

words! {
    /// The stored state of a task. `ready` and `blocked` are not states but views of `open`
    /// ([`ListState`]).
    TaskState ("task state") {
        /// Not claimed, not finished.
        Open = "open",
        /// Held by a live claim.
        Claimed = "claimed",
        /// Finished by its holder.
        Done = "done",
        /// Cancelled by an operator.
        Cancelled = "cancelled",
        /// Finished by its holder with a commit that waits for a person's accept (and the land
        /// into the base branch) or reject; no lease runs.
        Review = "review",
    }
}

impl TaskState {
    /// The state as a sentence reads it after "is": "in review" where the word alone
    /// ("task 4 is review") would not read.
    pub fn phrase(self) -> &'static str {
        match self {
            TaskState::Review => "in review",
            other => other.as_str(),
        }
    }
}

words! {
    /// The state of a task in an imported or exported backlog: it is either still to do or
    /// finished; a claim does not travel with a backlog.
    BacklogState ("backlog state") {
        /// To do (the default).
        Open = "open",
        /// Finished.
        Done = "done",
        /// Cancelled.
        Cancelled = "cancelled",
    }
}

// A backlog task without a state is still to do (derive(Default) cannot be put on one enum
// the macro declares).
#[allow(clippy::derivable_impls, reason = "the enum is declared by `words!`")]
impl Default for BacklogState {
    fn default() -> Self {
        BacklogState::Open
    }
}

impl From<BacklogState> for TaskState {
    fn from(s: BacklogState) -> TaskState {
        match s {
            BacklogState::Open => TaskState::Open,
            BacklogState::Done => TaskState::Done,
            BacklogState::Cancelled => TaskState::Cancelled,
        }
    }
}

impl From<TaskState> for BacklogState {
    /// A claimed task is still to do once its claim is left behind.
    fn from(s: TaskState) -> BacklogState {
        match s {
            TaskState::Open | TaskState::Claimed | TaskState::Review => BacklogState::Open,
            TaskState::Done => BacklogState::Done,
            TaskState::Cancelled => BacklogState::Cancelled,
        }
    }
}

words! {
    /// A task state as `list --state` filters by it: the stored states and two views of `open`.
    ListState ("state") {
        /// Not claimed, not finished.
        Open = "open",
        /// Open with nothing to wait for.
        Ready = "ready",
        /// Open, waiting for an unfinished dependency.
        Blocked = "blocked",
        /// Held by a live claim.
        Claimed = "claimed",
        /// Finished.
        Done = "done",
        /// Cancelled.
        Cancelled = "cancelled",
        /// Finished with a commit that waits for review.
        Review = "review",
    }
}

words! {
    /// What an event of the append-only log records.
    EventKind ("event kind") {
        /// A claim was granted.
        Grant = "grant",
        /// Claims were renewed.
        Renew = "renew",
        /// A session ended and its claims with it.
        Expel = "expel",
        /// A claim's lease expired.
        Lapse = "lapse",
        /// A holder's write was refused by the fence.
        Reject = "reject",
        /// A task was finished.
        Done = "done",
        /// A claim was given back (by its holder, or forced by an operator).
        Release = "release",
        /// A task was added.
        Add = "add",
        /// A task was edited.
        Edit = "edit",
        /// A task was cancelled.
        Cancel = "cancel",
        /// The goal was set.
        Goal = "goal",
        /// A note was added.
        Note = "note",
        /// An agent session started.
        SessionStart = "session_start",
        /// An agent session ended.
        SessionEnd = "session_end",
        /// A CLI's permission prompt: the agent waits for a human to let it go on.
        Wait = "wait",
        /// A permission prompt or a question ended (the CLI moved on, the agent withdrew its
        /// question, its session ended).
        Resume = "resume",
        /// An agent asked a person a question (`board wait`); it stays open until answered,
        /// withdrawn or the session ends.
        Question = "question",
        /// A person answered an agent's question; the answer is in the agent's inbox.
        Answer = "answer",
        /// A hook said the agent finished its turn.
        Idle = "idle",
        /// The board started.
        BoardStart = "board_start",
        /// `board.toml` was refused or fixed.
        Config = "config",
        /// A message was sent.
        Message = "message",
        /// A claim is about to lapse.
        Warn = "warn",
        /// The board did not run for a while; expiries moved by that time.
        Stall = "stall",
        /// A new epoch began (restored database, `serve --new-epoch`).
        Epoch = "epoch",
        /// A holder finished a task with a commit that waits for review (the reason names it).
        Review = "review",
        /// A person or a reviewing agent accepted a task in review (the reason names the commit).
        Accept = "accept",
        /// A task in review went back to ready: rejected by a reviewer, or its land conflicted
        /// (the reason names the commit; the note says why).
        Rejected = "rejected",
        /// The board brought a task's commit into the base branch (the reason names the commit
        /// and the base's new head).
        Land = "land",
    }
}

words! {
    /// What a notification that leaves the terminal is about (`[notify] events`).
    NoticeKind ("notice kind") {
        /// An agent asked a person a question.
        Question = "question",
        /// An agent's CLI shows a permission prompt.
        Permission = "permission",
        /// An agent needs attention (it never reached its prompt).
        Attention = "attention",
        /// An agent sent the operator a message.
        Message = "message",
        /// A holder's `done` put a task in review, where it waits for a person's verdict.
        Review = "review",
        /// An agent session ended while holding a claim, or was expelled.
        Expel = "expel",
        /// The backlog has no open or claimed task and every live agent is idle.
        Finished = "finished",
    }
}

words! {
    /// How a claim ended (`end` of a lost claim, `end_kind` in the database).
    ClaimEnd ("claim end") {
        /// Its holder finished the task.
        Done = "done",
        /// Given back: by its holder, or forced by an operator.
        Release = "release",
        /// Its lease expired.
        Lapse = "lapse",
        /// Its session ended (process gone, pane closed, …).
        Expel = "expel",
        /// Its task was cancelled.
        Cancel = "cancel",
        /// A new epoch ended every older claim.
        Epoch = "epoch",
    }
}

words! {
    /// What an agent session is doing, as `agents` and the TUI show it.
    AgentState ("agent state") {
        /// Holds claims.
        Working = "working",
        /// Finished its turn, or holds nothing.
        Idle = "idle",
        /// Waits for a human.
        Waiting = "waiting",
        /// Never reached its prompt within its profile's `attention_after`.
        NeedsAttention = "needs_attention",
        /// Its process is stopped (SIGSTOP, job control).
        Stopped = "stopped",
        /// Its session ended.
        Gone = "gone",
        /// Started, no process attached yet.
        Starting = "starting",
    }
}

impl ListState {
    /// The stored state this filter selects from (`ready` and `blocked` are views of `open`).
    pub fn stored(self) -> TaskState {
        match self {
            ListState::Open | ListState::Ready | ListState::Blocked => TaskState::Open,
            ListState::Claimed => TaskState::Claimed,
            ListState::Done => TaskState::Done,
            ListState::Cancelled => TaskState::Cancelled,
            ListState::Review => TaskState::Review,
        }
    }
}

/// Declares an integer id newtype: transparent on the wire, in the schema and in the database.
macro_rules! int_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(pub i64);

        /// The schema of the `i64` inside, inlined: the printed schema names no such type.
        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> std::borrow::Cow<'static, str> {
                <i64 as JsonSchema>::schema_name()
            }

            fn schema_id() -> std::borrow::Cow<'static, str> {
                <i64 as JsonSchema>::schema_id()
            }

            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                <i64 as JsonSchema>::json_schema(g)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<i64> for $name {
            fn from(v: i64) -> Self {
                $name(v)
            }
        }

        impl From<$name> for i64 {
            fn from(v: $name) -> i64 {
                v.0
            }
        }

        impl From<$name> for serde_json::Value {
            fn from(v: $name) -> serde_json::Value {
                v.0.into()
            }
        }

        /// Parses a whole number, as the command line gives it (`board note 12 …`): clap's
        /// value parser uses this, so `abc` is refused with the integer's own error.
        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse::<i64>().map($name)
            }
        }
    };
}

int_id! {
    /// A task's id (1, 2, …).
    TaskId
}

int_id! {
    /// A claim's fencing token: incremented by every grant of its task, never reused (design
    /// rule 1, and rule 8a across restores).
    Generation
}

/// An agent session's unique id (`claude`, `claude-2`); never reused. Transparent on the wire
/// and in the database; borrows as `&str`.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct SessionId(pub String);

impl SessionId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::ops::Deref for SessionId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SessionId {
    fn from(s: &str) -> Self {
        SessionId(s.to_string())
    }
}

impl From<String> for SessionId {
    fn from(s: String) -> Self {
        SessionId(s)
    }
}

/// The SQL spelling of a [`TaskState`] (`sql_state!(open)` is `'open'`), for `concat!` into a
/// statement that stays one `&'static str`. The unit tests check it against [`TaskState`].
#[macro_export]
macro_rules! sql_state {
    (open) => {
        "'open'"
    };
    (claimed) => {
        "'claimed'"
    };
    (done) => {
        "'done'"
    };
    (cancelled) => {
        "'cancelled'"
    };
    (review) => {
        "'review'"
    };
}

/// The SQL spelling of a [`ClaimEnd`] (`sql_end!(lapse)` is `'lapse'`), like [`sql_state!`].
#[macro_export]
macro_rules! sql_end {
    (done) => {
        "'done'"
    };
    (release) => {
        "'release'"
    };
    (lapse) => {
        "'lapse'"
    };
    (expel) => {
        "'expel'"
    };
    (cancel) => {
        "'cancel'"
    };
    (epoch) => {
        "'epoch'"
    };
}

/// The reason of the `resume` event that says an agent withdrew its question (`board resume`);
/// a `resume` with any other reason ends a permission prompt.
pub const QUESTION_WITHDRAWN: &str = "withdrew the question";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_round_trips_through_text_and_json() {
        fn check<T>(all: &[T])
        where
            T: Copy + PartialEq + fmt::Debug + FromStr + Serialize,
            T: for<'de> Deserialize<'de> + fmt::Display,
        {
            for w in all {
                assert_eq!(w.to_string().parse::<T>().ok(), Some(*w));
                let json = serde_json::to_string(w).unwrap();
                assert_eq!(json, format!("\"{w}\""));
                assert_eq!(serde_json::from_str::<T>(&json).unwrap(), *w);
            }
        }
        check(TaskState::ALL);
        check(BacklogState::ALL);
        check(ListState::ALL);
        check(EventKind::ALL);
        check(ClaimEnd::ALL);
        check(AgentState::ALL);
        assert_eq!(
            "nope".parse::<EventKind>().unwrap_err().to_string(),
            format!("unknown event kind \"nope\": use {}", EventKind::known())
        );
    }

    #[test]
    fn the_sql_spellings_are_the_words() {
        let sql = |w: &str| format!("'{w}'");
        assert_eq!(sql_state!(open), sql(TaskState::Open.as_str()));
        assert_eq!(sql_state!(claimed), sql(TaskState::Claimed.as_str()));
        assert_eq!(sql_state!(done), sql(TaskState::Done.as_str()));
        assert_eq!(sql_state!(cancelled), sql(TaskState::Cancelled.as_str()));
        assert_eq!(sql_state!(review), sql(TaskState::Review.as_str()));
        assert_eq!(sql_end!(done), sql(ClaimEnd::Done.as_str()));
        assert_eq!(sql_end!(release), sql(ClaimEnd::Release.as_str()));
        assert_eq!(sql_end!(lapse), sql(ClaimEnd::Lapse.as_str()));
        assert_eq!(sql_end!(expel), sql(ClaimEnd::Expel.as_str()));
        assert_eq!(sql_end!(cancel), sql(ClaimEnd::Cancel.as_str()));
        assert_eq!(sql_end!(epoch), sql(ClaimEnd::Epoch.as_str()));
    }

    #[test]
    fn ids_are_bare_numbers_and_strings_on_the_wire() {
        assert_eq!(serde_json::to_string(&TaskId(7)).unwrap(), "7");
        assert_eq!(serde_json::to_string(&Generation(3)).unwrap(), "3");
        assert_eq!(
            serde_json::to_string(&SessionId::from("claude-2")).unwrap(),
            "\"claude-2\""
        );
    }
}
