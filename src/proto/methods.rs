//! Every method of the wire, its parameters and its result type, in one table (`methods!`).
//!
//! The table is the single source of the method list: [`Method`] (names), [`Call`] (a request's
//! typed parameters), [`Method::is_write`] (which answers are kept for `op_id` retries) and the
//! printed JSON Schema ([`crate::proto::schema`]) all come from it. Parameters are strict
//! (`deny_unknown_fields`): an unknown or mistyped member is `invalid` (-32602) and the message
//! names it, so a misspelt `generation` can never turn a fenced write into an unfenced one.
//!
//! Adding a method: one line in the table, a params struct here, a result struct in
//! [`crate::proto::results`], one handler function in `daemon/handlers/`.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::proto::error::{BoardError, BoardResult};
pub use crate::proto::glossary::ListState;
use crate::proto::results::*;

/// How a method treats the common members of its params.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads or answers without changing tasks; `agent`/`token` identify the caller.
    Read,
    /// Changes the board; its answer is kept under the request's `op_id` (retries apply once).
    Write,
    /// Turns the connection into a stream (`subscribe`).
    Stream,
    /// The `board run` launcher's own calls: `agent`/`token` are parameters, not an identity.
    Launcher,
}

macro_rules! methods {
    ($( $(#[$doc:meta])* $var:ident = $name:literal, $access:ident, $params:ident => $result:ty; )*) => {
        /// A method of the wire protocol (its name is the CLI verb).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Method {
            $( $(#[$doc])* $var, )*
        }

        impl Method {
            /// Every method, in the order the schema lists them.
            pub const ALL: &'static [Method] = &[$(Method::$var),*];

            /// The name on the wire (`claim`, `session.register`).
            pub fn name(self) -> &'static str {
                match self { $(Method::$var => $name),* }
            }

            /// The method called `name`, if any.
            pub fn from_name(name: &str) -> Option<Method> {
                match name { $($name => Some(Method::$var),)* _ => None }
            }

            /// How the method treats identity and `op_id`.
            pub fn access(self) -> Access {
                match self { $(Method::$var => Access::$access),* }
            }
        }

        /// A request's parameters, parsed strictly for its method.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Call {
            $( $(#[$doc])* $var($params), )*
        }

        impl Call {
            /// Parses `params` (identity members already taken out) for `method`.
            /// Errors: `invalid` (-32602) naming the unknown, missing or mistyped member.
            pub fn parse(method: Method, params: Map<String, Value>) -> BoardResult<Call> {
                match method {
                    $(Method::$var => parse_params::<$params>(method, params).map(Call::$var),)*
                }
            }

            /// The method of this call.
            pub fn method(&self) -> Method {
                match self { $(Call::$var(_) => Method::$var),* }
            }
        }

        /// (method, params schema, result schema) of every method, with their named parts added
        /// to the generators' definitions. Params use `params`' deserialize contract, results
        /// `results`' serialize contract (so an `Option` member is required, as null).
        pub(crate) fn method_schemas(
            params: &mut schemars::SchemaGenerator,
            results: &mut schemars::SchemaGenerator,
        ) -> Vec<(Method, schemars::Schema, schemars::Schema)> {
            vec![$(
                (Method::$var, <$params as JsonSchema>::json_schema(params),
                 <$result as JsonSchema>::json_schema(results)),
            )*]
        }
    };
}

methods! {
    /// Protocol version handshake; may be the first call on a connection.
    Hello = "hello", Read, HelloParams => HelloResult;
    /// The board process and its settings.
    Status = "status", Read, StatusParams => StatusResult;
    /// Without text: read the current goal. With text: set a new goal (older ones are kept).
    Goal = "goal", Write, GoalParams => GoalResult;
    /// Add a task to the backlog.
    Add = "add", Write, AddParams => TaskResult;
    /// Change a task; absent members stay; `after` replaces the dependency list.
    Edit = "edit", Write, EditParams => TaskResult;
    /// Cancel a task; its claim, if any, ends.
    Cancel = "cancel", Write, CancelParams => TaskResult;
    /// List tasks, optionally only those in the given state(s).
    List = "list", Read, ListParams => TasksResult;
    /// Ready tasks in claim order (priority, then age).
    Ready = "ready", Read, ReadyParams => TasksResult;
    /// One task with its notes and events.
    Show = "show", Read, ShowParams => ShowResult;
    /// Agents only: claim the task, or without one the best ready task.
    Claim = "claim", Write, ClaimParams => ClaimResult;
    /// Agents only, as holder: finish the task (idempotent for one agent and generation).
    Done = "done", Write, DoneParams => DoneResult;
    /// Give a claimed task back (holder), or end anyone's claim (operator, `force`).
    Release = "release", Write, ReleaseParams => TaskResult;
    /// Add a note to a task, as its holder (fenced) or as an operator.
    Note = "note", Write, NoteParams => NoteResult;
    /// Agents only: renew all of the caller's live claims now.
    Renew = "renew", Read, RenewParams => RenewResult;
    /// Agents only: succeeds only if the caller holds a live claim (on task, at generation).
    Check = "check", Read, CheckParams => CheckResult;
    /// Agents only: say the agent waits for a human; its claims are kept meanwhile.
    Wait = "wait", Read, WaitParams => WaitResult;
    /// Agents only: end waiting for a human (any other call does too).
    Resume = "resume", Read, ResumeParams => WaitResult;
    /// Agents only: what an agent CLI's hook reports (`board hook CLI EVENT`).
    Activity = "activity", Read, ActivityParams => ActivityResult;
    /// Agent sessions; ended ones only with `all`.
    Agents = "agents", Read, AgentsParams => AgentsResult;
    /// Events, oldest first: the last `limit`, or those after event id `after`.
    Log = "log", Read, LogParams => LogResult;
    /// Turn the connection into a stream of `event` notifications after event id `after`.
    Subscribe = "subscribe", Stream, SubscribeParams => SubscribeResult;
    /// Operators only: stop the board process.
    Stop = "stop", Read, StopParams => StopResult;
    /// Launcher only (`board run`): register an agent session.
    SessionRegister = "session.register", Launcher, SessionRegisterParams => SessionRegisterResult;
    /// Launcher only: attach the agent's process (and tmux pane) to its session.
    SessionAttach = "session.attach", Launcher, SessionAttachParams => SessionAttachResult;
    /// Launcher only: the agent exited (or its pane closed); its claims are expelled.
    SessionExit = "session.exit", Launcher, SessionExitParams => SessionExitResult;
    /// Add a whole backlog in one transaction (all of it or nothing); `after` names keys.
    Import = "import", Write, ImportParams => ImportResult;
    /// The backlog (goal and tasks, keys `tN`) as `import` takes it.
    Export = "export", Read, ExportParams => ExportResult;
    /// Send a message to an agent session (id, or a name one live session has) or `operator`.
    Send = "send", Write, SendParams => SendResult;
    /// Read the caller's unread messages, oldest first; each is returned once (marked read).
    Inbox = "inbox", Write, InboxParams => InboxResult;
}

impl Method {
    /// Whether the method changes the board (its answer is kept under `op_id`).
    pub fn is_write(self) -> bool {
        self.access() == Access::Write
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Members every request but the launcher's may carry beside its method's own parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// Agent session id (BOARD_AGENT); with `token`, or neither for an operator.
    #[serde(default)]
    pub agent: Option<String>,
    /// Agent session token (BOARD_TOKEN).
    #[serde(default)]
    pub token: Option<String>,
    /// Idempotency key of a write: a retry with the same `op_id` from the same identity returns
    /// the first answer and is not applied twice. Ignored by reads.
    #[serde(default)]
    pub op_id: Option<String>,
}

/// The members of [`Identity`], taken out of params before the method's own are parsed.
pub const IDENTITY_MEMBERS: &[&str] = &["agent", "token", "op_id"];

/// Splits a request's params into the identity members and the method's own, both parsed.
/// Launcher methods keep `agent`/`token` as their own parameters.
/// Errors: `invalid` (-32602) naming the bad member.
pub fn split_params(
    method: Method,
    mut params: Map<String, Value>,
) -> BoardResult<(Identity, Call)> {
    let mut ident = Map::new();
    let taken: &[&str] = if method.access() == Access::Launcher {
        &["op_id"]
    } else {
        IDENTITY_MEMBERS
    };
    for key in taken {
        if let Some(v) = params.remove(*key) {
            ident.insert((*key).to_string(), v);
        }
    }
    let identity = parse_params::<Identity>(method, ident)?;
    Ok((identity, Call::parse(method, params)?))
}

/// Deserializes `params` into `T`, turning serde's error into an `invalid` error that names the
/// member (via its path, as serde_path_to_error reports it).
fn parse_params<T: DeserializeOwned>(method: Method, params: Map<String, Value>) -> BoardResult<T> {
    serde_path_to_error::deserialize(Value::Object(params)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let inner: String = inner.chars().take(300).collect();
        let msg = if path == "." || path.is_empty() {
            format!("bad params for `{method}`: {inner}")
        } else {
            format!("bad params for `{method}`: `{path}`: {inner}")
        };
        BoardError::invalid(msg).with_code(-32602)
    })
}

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
/// `inbox`: no parameters.
pub type InboxParams = NoParams;

/// `send` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendParams {
    /// Recipient: an agent session id, the name exactly one live session has, or `operator`.
    pub to: String,
    /// The message.
    pub text: String,
    /// It answers the recipient's `wait`: its wait ends in the same transaction.
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
}

/// `ready` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadyParams {
    /// At most this many tasks (1..10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
}

/// `claim` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimParams {
    /// Task id; absent: the best ready task (highest priority, then oldest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<i64>,
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
    /// What you need from a human: the question, or the permission you wait for.
    pub question: String,
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

/// `activity` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivityParams {
    /// renew: it is working; idle: it finished its turn; waiting: it waits for a human.
    pub kind: ActivityKind,
    /// The CLI's message (required with `waiting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `agents` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsParams {
    /// Include ended sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<bool>,
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
}

/// `session.register` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionRegisterParams {
    /// Requested session name (ids become NAME, NAME-2, …).
    pub name: String,
    /// The git branch the agent starts on, when it starts in a git work tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Needs attention when neither a call nor a hook came this long after the start, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_ms: Option<i64>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_misspelt_member_is_named() {
        let e = split_params(Method::Done, obj(json!({"task": 1, "genration": 3}))).unwrap_err();
        assert!(e.message.contains("`genration`"), "{}", e.message);
        assert_eq!(e.to_json()["code"], json!(-32602));
    }

    #[test]
    fn a_mistyped_member_is_named() {
        let e = split_params(Method::Show, obj(json!({"task": "one"}))).unwrap_err();
        assert!(e.message.contains("`task`"), "{}", e.message);
        let e = split_params(Method::Done, obj(json!({"task": 1, "op_id": 5}))).unwrap_err();
        assert!(e.message.contains("`op_id`"), "{}", e.message);
    }

    #[test]
    fn identity_is_taken_out_except_for_the_launcher() {
        let (id, call) = split_params(
            Method::Claim,
            obj(json!({"agent": "a", "token": "t", "op_id": "o", "task": 2})),
        )
        .unwrap();
        assert_eq!(id.agent.as_deref(), Some("a"));
        assert_eq!(id.op_id.as_deref(), Some("o"));
        assert_eq!(call, Call::Claim(ClaimParams { task: Some(2) }));
        let (_, call) = split_params(
            Method::SessionExit,
            obj(json!({"agent": "a", "token": "t", "code": 3})),
        )
        .unwrap();
        assert!(matches!(call, Call::SessionExit(p) if p.agent == "a" && p.code == Some(3)));
    }

    #[test]
    fn names_round_trip() {
        for m in Method::ALL {
            assert_eq!(Method::from_name(m.name()), Some(*m));
        }
        assert_eq!(Method::from_name("nuke"), None);
    }
}
