//! Every method of the wire, its parameters and its result type, in one table (`methods!`).
//!
//! The table is the single source of the method list: [`Method`] (names), [`Call`] (a request's
//! typed parameters), [`Method::is_write`] (which answers are kept for `op_id` retries) and the
//! printed JSON Schema ([`crate::proto::schema`]) all come from it. Parameters are strict
//! (`deny_unknown_fields`): an unknown or mistyped member is `invalid` (-32602) and the message
//! names it, so a misspelt `generation` can never turn a fenced write into an unfenced one.
//!
//! This file holds the table and how a request's params are split into the identity and the
//! method's own; the parameter structs are in `params.rs` (re-exported here).
//!
//! Adding a method: one line in the table, a params struct in `params.rs`, a result struct in
//! [`crate::proto::results`], one handler function in `daemon/handlers/`.

mod params;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::proto::error::{BoardError, BoardResult};
pub use crate::proto::glossary::ListState;
pub use crate::proto::results::ActivityKind;
use crate::proto::results::*;
pub use params::*;

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

            /// The call as it goes on the wire: its method and its params object (members
            /// left out where the params struct skips them).
            pub fn wire(&self) -> (Method, Value) {
                let params = match self {
                    $(Call::$var(p) => serde_json::to_value(p),)*
                };
                // Serializing a params struct cannot fail: string keys, no custom serializer.
                (self.method(), params.unwrap_or_else(|_| Value::Object(Map::new())))
            }
        }

        impl Call {
            /// The task a holder write names (`done`, `release`, `note`, `check` with a task):
            /// the task whose current holder a refusal of this call should name.
            pub fn held_task(&self) -> Option<i64> {
                match self {
                    Call::Done(p) => Some(p.task),
                    Call::Release(p) => Some(p.task),
                    Call::Note(p) => Some(p.task),
                    Call::Check(p) => p.task,
                    _ => None,
                }
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
    /// Accept a task in review: the board lands its commit on the base branch (`[git] land`),
    /// then it is done. Never by the task's last holder.
    Accept = "accept", Write, AcceptParams => AcceptResult;
    /// Reject a task in review: it goes back to ready with the note. Never by its last holder.
    Reject = "reject", Write, RejectParams => TaskResult;
    /// Give a claimed task back (holder), or end anyone's claim (operator, `force`).
    Release = "release", Write, ReleaseParams => TaskResult;
    /// Add a note to a task, as its holder (fenced) or as an operator.
    Note = "note", Write, NoteParams => NoteResult;
    /// Agents only: renew all of the caller's live claims now.
    Renew = "renew", Read, RenewParams => RenewResult;
    /// Agents only: succeeds only if the caller holds a live claim (on task, at generation).
    Check = "check", Read, CheckParams => CheckResult;
    /// Agents only: ask a person a question; it stays open (and the claims kept) until answered,
    /// withdrawn (`resume`) or the session ends.
    Wait = "wait", Read, WaitParams => WaitResult;
    /// Agents only: withdraw the caller's open question (and end its permission prompt).
    Resume = "resume", Read, ResumeParams => WaitResult;
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
    /// The operator or another agent session answers an agent's open question: the answer goes
    /// to its inbox and the question ends, in one transaction.
    Answer = "answer", Write, AnswerParams => AnswerResult;
    /// Operators only: stop an agent session of this host the way a closed pane ends it
    /// (SIGTERM to its process group, SIGKILL to its tree after `[run] hangup_grace`).
    SessionStop = "session.stop", Read, SessionStopParams => SessionStopResult;
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
        assert_eq!(
            call,
            Call::Claim(ClaimParams {
                task: Some(2),
                label: None
            })
        );
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
