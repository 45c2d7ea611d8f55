//! The arguments of the MCP tools: one strict struct per tool (unknown members refused), the
//! input schema every host accepts, and argument errors that name the argument.
//!
//! Hosts differ in the JSON Schema they take: Gemini rejects `type` arrays (schemars writes
//! `"type": ["integer", "null"]` for an `Option`), and a line break in a description breaks some
//! hosts' tool lists. [`input_schema`] rewrites both away: an optional argument is simply not
//! required (send it or leave it out; null is not accepted).

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use super::tool_error;
use crate::proto::error::BoardError;

/// The input schema of a tool taking `T`: JSON Schema 2020-12, with no `type` arrays and no line
/// breaks in descriptions.
pub fn input_schema<T: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    let raw = rmcp::handler::server::common::schema_for_type::<T>();
    let mut v = Value::Object(raw.as_ref().clone());
    host_friendly(&mut v);
    if let Value::Object(m) = &mut v {
        // The wrapper struct's own name and doc are noise in a tool list.
        m.remove("title");
        m.remove("description");
    }
    match v {
        Value::Object(m) => Arc::new(m),
        _ => raw,
    }
}

/// Rewrites a schema in place: `type` arrays lose `null` (and become one type), descriptions
/// become one line.
fn host_friendly(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(types)) = m.get("type") {
                let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                let one = match kept.len() {
                    1 => kept.into_iter().next(),
                    _ => None,
                };
                match one {
                    Some(t) => {
                        m.insert("type".into(), t);
                    }
                    None => {
                        m.remove("type");
                    }
                }
            }
            // `"default": null` on an integer says nothing useful and contradicts its type.
            if m.get("default").is_some_and(Value::is_null) {
                m.remove("default");
            }
            if let Some(Value::String(d)) = m.get_mut("description") {
                *d = d.split_whitespace().collect::<Vec<_>>().join(" ");
            }
            for child in m.values_mut() {
                host_friendly(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(host_friendly),
        _ => {}
    }
}

/// Parses the arguments of `tool` strictly. Errors: a tool error `invalid (-32602): …` whose
/// message names the bad argument (unknown, missing or mistyped), with `data.argument`.
pub fn parse<T: DeserializeOwned>(tool: &str, args: JsonObject) -> Result<T, CallToolResult> {
    serde_path_to_error::deserialize(Value::Object(args)).map_err(|e| {
        let path = e.path().to_string();
        let inner: String = e.into_inner().to_string().chars().take(300).collect();
        let (msg, argument) = if path == "." || path.is_empty() {
            (format!("bad arguments for {tool}: {inner}"), None)
        } else {
            (
                format!("bad argument `{path}` for {tool}: {inner}"),
                Some(path),
            )
        };
        let mut err = BoardError::invalid(msg).with_code(-32602);
        if let Some(a) = argument {
            err = err.with("argument", a);
        }
        tool_error(&err)
    })
}

/// Tools that take no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `board_goal` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalArgs {
    /// A new goal for the whole team. Leave it out to read the current goal.
    #[serde(default)]
    pub text: Option<String>,
}

/// A task's state: `open` (not claimed, not finished), `claimed` (held by an agent), `done`,
/// `cancelled`. (The variants carry no docs of their own, so the schema is a plain `enum`.)
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
#[allow(missing_docs)]
pub enum TaskState {
    Open,
    Claimed,
    Done,
    Cancelled,
}

impl TaskState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Open => "open",
            TaskState::Claimed => "claimed",
            TaskState::Done => "done",
            TaskState::Cancelled => "cancelled",
        }
    }
}

/// `board_list` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only tasks in these states. Leave it out for every task.
    #[serde(default)]
    pub state: Option<Vec<TaskState>>,
}

/// `board_claim` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimArgs {
    /// Task id to claim. Leave it out to claim the best ready task (highest priority, then oldest).
    #[serde(default)]
    pub task: Option<i64>,
    /// When nothing is ready yet but work remains, wait up to this many seconds (at most 600)
    /// for a task to become ready. Leave it out (or 0) to answer at once.
    #[serde(default)]
    #[schemars(range(min = 0, max = 600))]
    pub wait_s: Option<i64>,
}

/// `board_done` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneArgs {
    /// Id of the task you claimed and finished.
    pub task: i64,
    /// The `generation` board_claim returned (fencing token); the call is refused if your claim
    /// is no longer that one.
    #[serde(default)]
    pub generation: Option<i64>,
    /// What you did, for the people and agents after you.
    #[serde(default)]
    pub note: Option<String>,
}

/// `board_release` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseArgs {
    /// Id of the task to give back.
    pub task: i64,
    /// The `generation` board_claim returned.
    #[serde(default)]
    pub generation: Option<i64>,
    /// Why you give it back and what the next agent should know.
    #[serde(default)]
    pub note: Option<String>,
    /// Operators only: end the claim whoever holds it.
    #[serde(default)]
    pub force: Option<bool>,
}

/// `board_note` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteArgs {
    /// Task id (you must hold its claim).
    pub task: i64,
    /// The note: a finding, a decision, a warning for the next agent.
    pub text: String,
}

/// `board_add` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddArgs {
    /// One-line title of the new task.
    pub title: String,
    /// Longer description: what to do and how to tell it is done.
    #[serde(default)]
    pub body: Option<String>,
    /// Higher runs first; default 0.
    #[serde(default)]
    pub priority: Option<i64>,
    /// Ids of tasks that must be done before this one is ready.
    #[serde(default)]
    pub after: Option<Vec<i64>>,
}

/// `board_show` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowArgs {
    /// Task id.
    pub task: i64,
}

/// `board_check` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckArgs {
    /// Task id you believe you hold. Leave it out to check that you hold any live claim.
    #[serde(default)]
    pub task: Option<i64>,
    /// The generation you hold it at (from board_claim).
    #[serde(default)]
    pub generation: Option<i64>,
}

/// `board_wait` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// What you need from a human: the question, or the permission you wait for.
    pub question: String,
}

/// `board_agents` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsArgs {
    /// Include ended sessions.
    #[serde(default)]
    pub all: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_have_no_type_arrays_and_one_line_descriptions() {
        fn walk(v: &Value, path: &str) {
            match v {
                Value::Object(m) => {
                    assert!(!m.get("type").is_some_and(Value::is_array), "{path}");
                    if let Some(Value::String(d)) = m.get("description") {
                        assert!(!d.contains('\n'), "{path}: {d:?}");
                    }
                    for (k, c) in m {
                        walk(c, &format!("{path}/{k}"));
                    }
                }
                Value::Array(a) => a.iter().for_each(|c| walk(c, path)),
                _ => {}
            }
        }
        for (name, s) in [
            ("claim", input_schema::<ClaimArgs>()),
            ("list", input_schema::<ListArgs>()),
            ("add", input_schema::<AddArgs>()),
            ("release", input_schema::<ReleaseArgs>()),
            ("done", input_schema::<DoneArgs>()),
        ] {
            walk(&Value::Object(s.as_ref().clone()), name);
        }
        let list = input_schema::<ListArgs>();
        assert_eq!(list["properties"]["state"]["type"], "array");
        assert_eq!(
            list["properties"]["state"]["items"]["enum"],
            serde_json::json!(["open", "claimed", "done", "cancelled"])
        );
    }

    #[test]
    fn argument_errors_name_the_argument() {
        let text = |r: CallToolResult| {
            serde_json::to_value(&r).unwrap()["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let obj = |v: Value| v.as_object().cloned().unwrap();
        let e = parse::<DoneArgs>("board_done", obj(serde_json::json!({"task": "x"}))).unwrap_err();
        assert!(text(e).starts_with("invalid (-32602): bad argument `task`"));
        let e = parse::<DoneArgs>(
            "board_done",
            obj(serde_json::json!({"task": 1, "genration": 2})),
        )
        .unwrap_err();
        assert!(text(e).contains("unknown field `genration`"));
        let e = parse::<DoneArgs>("board_done", obj(serde_json::json!({}))).unwrap_err();
        assert!(text(e).contains("missing field `task`"));
        assert!(parse::<DoneArgs>("board_done", obj(serde_json::json!({"task": 1}))).is_ok());
    }
}
