//! The parameters of each method, one struct each (several methods share [`NoParams`] or
//! [`TaskParams`]): strict (`deny_unknown_fields`), with the JSON Schema derived from them.
//! Identity members (`agent`, `token`, `op_id`) are not here: they are taken out first
//! ([`super::split_params`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::proto::glossary::ListState;
use crate::proto::results::ActivityKind;
/// No parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// `hello`: no parameters.
pub type HelloParams = NoParams;
/// `status`: no parameters.
pub type StatusParams = NoParams;
/// `renew`: no parameters.
pub type RenewParams = NoParams;
/// `resume`: no parameters.
pub type ResumeParams = NoParams;
/// `stop`: no parameters.
pub type StopParams = NoParams;
/// `export`: no parameters.
pub type ExportParams = NoParams;
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerParams {
    /// The agent session whose open question this answers: its id, or the name exactly one
    /// live session has.
    pub to: String,
    /// The answer (it goes to that agent's inbox).
    pub text: String,
}

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
/// `import`: a backlog document (`goal`, `tasks` with keys).
pub type ImportParams = crate::proto::backlog::Backlog;

/// `goal` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalParams {
    /// A new goal for the whole team (older goals are kept); leave it out to read the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `add` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddParams {
    /// One-line title of the new task.
    pub title: String,
    /// Longer description: what to do and how to tell it is done (default empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Higher runs first (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// Ids of tasks that must be done before this one is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Vec<i64>>,
    /// Labels (each 1 to 64 characters, no comma, whitespace or control character).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// The agent name or role the task is for (default: any agent).
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub meant_for: Option<String>,
    /// Whether its `done` goes through review: true or false whatever `[review] required`
    /// says (default: as `[review] required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<bool>,
}

/// `edit` parameters: absent or null members stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditParams {
    /// Task id.
    pub task: i64,
    /// New title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// New body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// New priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// New dependency list (replaces the old one; `[]` clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Vec<i64>>,
    /// New label set (replaces the old one; `[]` clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// New agent name or role the task is for; `""` makes it for any agent.
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub meant_for: Option<String>,
    /// Whether its `done` goes through review from now on, whatever `[review] required` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<bool>,
}

/// Parameters naming one task (`cancel`, `show`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskParams {
    /// Task id.
    pub task: i64,
}

/// `cancel` parameters.
pub type CancelParams = TaskParams;
/// `show` parameters.
pub type ShowParams = TaskParams;

/// One state or several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum StateFilter {
    /// Only this state.
    One(ListState),
    /// Any of these states.
    Many(Vec<ListState>),
}

impl<'de> Deserialize<'de> for StateFilter {
    /// A state name or a list of them; an unknown name is refused with the list of known ones.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let known = ListState::known;
        let one = |v: &Value| -> Result<ListState, D::Error> {
            let name = v
                .as_str()
                .ok_or_else(|| D::Error::custom(format!("a state is a string ({})", known())))?;
            name.parse().map_err(D::Error::custom)
        };
        match Value::deserialize(d)? {
            v @ Value::String(_) => one(&v).map(StateFilter::One),
            Value::Array(items) => items
                .iter()
                .map(one)
                .collect::<Result<_, _>>()
                .map(StateFilter::Many),
            _ => Err(D::Error::custom(format!(
                "must be a state or a list of states ({})",
                known()
            ))),
        }
    }
}

/// `list` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Only tasks in this state or these states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateFilter>,
    /// At most this many tasks (1..10000); the result's `next` is the cursor of the next page,
    /// null on the last. With ready or blocked, a page may hold fewer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Cursor: only tasks with an id above this (the `next` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<i64>,
    /// Only tasks carrying this label (a page may then hold fewer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `ready` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadyParams {
    /// At most this many tasks (1..10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Only tasks carrying this label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `claim` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimParams {
    /// Task id; absent: the best ready task (highest priority, then oldest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<i64>,
    /// Without `task`: the best ready task carrying this label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `done` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneParams {
    /// Id of the task you claimed and finished.
    pub task: i64,
    /// The `generation` claim returned (fencing token): refused when your claim is no longer
    /// that one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// What you did, for the people and agents after you.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The commit that finishes the task (a full commit id; `board done --commit REV` resolves
    /// REV, default the HEAD of your branch). Needed when the board reviews or lands finished
    /// work (`[review] required`, `[git] land`): the task then waits in review with it, or lands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// `accept` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptParams {
    /// Id of the task in review.
    pub task: i64,
    /// Why it is good, kept as a note on the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `reject` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectParams {
    /// Id of the task in review.
    pub task: i64,
    /// What is wrong and what to do instead: the next holder reads it.
    pub note: String,
}

/// `release` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseParams {
    /// Task id.
    pub task: i64,
    /// Require this claim generation (also with `force`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// Why you give it back and what the next agent should know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Operator only: end whoever's claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
}

/// `note` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteParams {
    /// Task id (you must hold its claim).
    pub task: i64,
    /// The note: a finding, a decision, a warning for the next agent.
    pub text: String,
    /// As holder: require this claim generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

/// `check` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckParams {
    /// Task id you believe you hold; leave it out to check that you hold any live claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<i64>,
    /// The generation you hold it at (from claim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

/// `wait` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitParams {
    /// What you need from a person: the question. It stays open until a person answers it
    /// (`answer`), you withdraw it (`resume`) or your session ends.
    pub question: String,
}

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

/// `session.register` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionRegisterParams {
    /// Requested session name: the name people see unless a live session has it (then
    /// NAME-2, …); ids become NAME, NAME-2, … and are never reused.
    pub name: String,
    /// The git branch the agent starts on, when it starts in a git work tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Needs attention when neither a call nor a hook came this long after the start, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_ms: Option<i64>,
    /// The agent's role (`board run --role`, `[[agents]] role`): claim-next gives it the tasks
    /// meant for that role as well as those meant for its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// `session.attach` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionAttachParams {
    /// Session id from `session.register`.
    pub agent: String,
    /// Its token.
    pub token: String,
    /// The agent process id.
    pub pid: i64,
    /// tmux pane id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    /// The pane's process id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane_pid: Option<i64>,
    /// The terminal the agent runs on (`/dev/pts/N`): input there is activity; the lapse
    /// warning is written there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty: Option<String>,
}

/// `session.exit` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionExitParams {
    /// Session id.
    pub agent: String,
    /// Its token.
    pub token: String,
    /// Exit status, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// Signal number, when killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i64>,
    /// Reason to record instead of one made from code/signal (`pane closed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `session.stop` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionStopParams {
    /// The agent session to stop: its id, or the name exactly one live session has (`agent`
    /// names the caller on the wire).
    pub session: String,
}
