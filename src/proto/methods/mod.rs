//! Every method of the wire, its parameters and its result type, in one table.
//!
//! The table is the single source of the method list: [`Method`] (names), [`Call`] (a request's
//! typed parameters), [`verb`] (each method as a type, which the board's handlers implement),
//! [`Method::is_write`] (which answers are kept for `op_id` retries), the printed JSON Schema
//! (`proto/schema.rs`), the board's dispatch and the CLI's one-request commands all come
//! from it. Parameters are strict (`deny_unknown_fields`): an unknown or mistyped member is
//! `invalid` (-32602) and the message names it, so a misspelt `generation` can never turn a
//! fenced write into an unfenced one.
//!
//! The table's rows live with their parameters and results, one file per group of methods
//! ([`board`], [`tasks`], [`claims`], [`review`], [`team`], [`launcher`]); each group's rows
//! macro passes the rows so far on to the next group's, and the last one (`collect_rows!`)
//! defines `method_table!`, which hands the whole table to a macro of the caller's choosing.
//!
//! Adding a method: its row, params and result in its group's file, its handler (an `impl` of
//! the handler trait for its verb, in the group's file in `daemon/handlers/`), its printer;
//! with `+ Cli` in its row (and `clap::Args` on its params) it is a `board` command as well.
//! ARCHITECTURE.md "Adding a verb".

#[macro_use]
pub mod board;
#[macro_use]
pub mod claims;
#[macro_use]
pub mod launcher;
#[macro_use]
pub mod review;
mod shared;
#[macro_use]
pub mod tasks;
#[macro_use]
pub mod team;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::proto::error::{BoardError, BoardResult};
pub use crate::proto::glossary::{Generation, ListState, TaskId};
pub use crate::proto::views::{
    EventView, GoalView, HostView, MessageView, NoteView, SessionView, StoreInfo, TaskView,
};
pub use board::*;
pub use claims::*;
pub use launcher::*;
pub use review::*;
pub use shared::*;
pub use tasks::*;
pub use team::*;

/// How a method treats the common members of its params.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads or answers without changing tasks; `agent`/`token` identify the caller.
    Read,
    /// Changes the board; its answer is kept under the request's `op_id` (retries apply once).
    Write,
    /// Changes the board by git work first (a land), then one store transition, outside the
    /// write scope of [`Access::Write`] so no store transaction waits on git (`accept`,
    /// `reject`); a repeat is recognised from the task's state. Clients send an `op_id` as for
    /// any write.
    Land,
    /// Turns the connection into a stream (`subscribe`).
    Stream,
    /// The `board run` launcher's own calls: `agent`/`token` are parameters, not an identity.
    Launcher,
}

macro_rules! methods {
    ($( $(#[$doc:meta])* $var:ident = $name:literal, $access:ident $(+ $cli:ident)?, $params:ident => $result:ty; )*) => {
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

        /// Each method as a type (a unit struct named as its [`Method`] variant) with its
        /// params and result ([`Verb`]): the board's handlers implement their trait for it,
        /// so a row without a handler does not compile.
        pub mod verb {
            use super::*;
            $(
                $(#[$doc])*
                #[derive(Debug, Clone, Copy)]
                pub struct $var;
                impl Verb for $var {
                    const METHOD: Method = Method::$var;
                    type Params = $params;
                    type Result = $result;
                }
            )*
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
            pub fn held_task(&self) -> Option<TaskId> {
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

/// The end of the rows' chain: defines `method_table!` with every row, in the groups' order.
macro_rules! collect_rows {
    ([] $d:tt $($rows:tt)*) => {
        /// Hands every row of the method table to the macro `cb` (named by the caller, in
        /// scope where this is invoked), as `cb! { ROW; ROW; … }`, each row written
        /// `/// docs` `Var = "name", Access [+ Cli], ParamsType => ResultType;`.
        macro_rules! method_table {
            ($d cb:ident) => { $d cb! { $($rows)* } };
        }
        pub(crate) use method_table;
    };
}

tasks_rows! { [claims_rows review_rows team_rows board_rows launcher_rows collect_rows] $ }

method_table!(methods);

/// A method as a type: the unit structs of [`verb`], one per row of the table.
pub trait Verb {
    /// The method.
    const METHOD: Method;
    /// Its parameters.
    type Params;
    /// Its result.
    type Result: Serialize;
}

impl Method {
    /// Whether the method changes the board (its answer is kept under `op_id`).
    pub fn is_write(self) -> bool {
        matches!(self.access(), Access::Write | Access::Land)
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
                task: Some(TaskId(2)),
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
