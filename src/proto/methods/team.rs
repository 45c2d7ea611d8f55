//! Between agents and people, and the backlog as a file: `import`, `export`, `send`, `inbox`,
//! `answer`: their rows of the method table, their parameters and their results.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::proto::glossary::TaskId;

use super::shared::NoParams;
use crate::proto::views::{MessageView, TaskView};

/// This group's rows of the method table (see [`super`]): passed on to the next group's rows.
macro_rules! team_rows {
    ([$next:ident $($rest:ident)*] $d:tt $($rows:tt)*) => { $next! { [$($rest)*] $d $($rows)*
        /// Add a whole backlog in one transaction (all of it or nothing); `after` names keys.
        Import = "import", Write, ImportParams => ImportResult;
        /// The backlog (goal and tasks, keys `tN`) as `import` takes it.
        Export = "export", Read, ExportParams => ExportResult;
        /// Send a message to an agent session (id, or a name one live session has) or `operator`.
        Send = "send", Write, SendParams => SendResult;
        /// Read the caller's unread messages, oldest first; each is returned once (marked read).
        Inbox = "inbox", Write, InboxParams => InboxResult;
        /// The operator or another agent session answers an agent's open question: the answer goes
        /// to its inbox and the question ends, in one transaction.
        Answer = "answer", Write + Cli, AnswerParams => AnswerResult;
    } };
}

/// `import`: a backlog document (`goal`, `tasks` with keys).
pub type ImportParams = crate::proto::backlog::Backlog;

/// `export`: no parameters.
pub type ExportParams = NoParams;

/// `send` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendParams {
    /// Recipient: an agent session id, the name exactly one live session has, or `operator`.
    pub to: String,
    /// The message.
    pub text: String,
    /// It answers the recipient's `wait`: its open question and its permission prompt end in
    /// the same transaction (as `answer` does, without refusing when none is open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<bool>,
}

/// `inbox` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InboxParams {
    /// Only the answers to the caller's questions (other messages stay unread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<bool>,
}

/// `answer` parameters. (The agent asked is `to`, as for `send`: `agent` is the caller's
/// identity on the wire.)
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct AnswerParams {
    /// The agent session whose open question this answers: its id, or the name exactly one
    /// live session has.
    #[arg(value_name = "AGENT")]
    pub to: String,
    /// The answer (it goes to that agent's inbox).
    pub text: String,
}

/// `import`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportResult {
    /// The new tasks, in the request's order.
    pub tasks: Vec<TaskView>,
    /// Each key's new task id.
    pub keys: std::collections::BTreeMap<String, TaskId>,
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
