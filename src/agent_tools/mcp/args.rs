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

use super::tool_result::tool_error;
use crate::proto::error::BoardError;
use crate::proto::glossary::ListState;

/// The input schema of a tool taking `T`: JSON Schema 2020-12, with no `type` arrays and no line
/// breaks in descriptions.
pub fn input_schema<T: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    // Subschemas inlined: a tool schema is read alone, and not every host follows `$ref`.
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut v = generator.into_root_schema_for::<T>().to_value();
    host_friendly(&mut v);
    if let Value::Object(m) = &mut v {
        // The wrapper struct's own name and doc are noise in a tool list.
        m.remove("title");
        m.remove("description");
    }
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

/// Rewrites a schema in place: `type` arrays lose `null` (and become one type), a `oneOf` of
/// documented string constants becomes a plain `enum` (the form every host's function-calling
/// schema takes), descriptions become one line.
fn host_friendly(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(names) = m.get("oneOf").and_then(string_constants) {
                m.remove("oneOf");
                m.insert("type".into(), Value::from("string"));
                m.insert("enum".into(), Value::from(names));
            }
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

/// The values of a `oneOf` whose every member is `{"const": "<string>", …}`.
fn string_constants(one_of: &Value) -> Option<Vec<String>> {
    one_of
        .as_array()?
        .iter()
        .map(|m| m.get("const")?.as_str().map(str::to_owned))
        .collect()
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

// Every tool takes its method's wire parameters (`crate::proto::methods`), so the tool
// schemas are generated from the same types as `board json --schema` and the board's own
// parsing. Two tools add what only an MCP caller needs:

/// `board_list` arguments: `list`'s filter as a list of states only (some hosts reject a schema
/// that is "a string or an array").
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only tasks in these states. Leave it out for every task.
    #[serde(default)]
    pub state: Option<Vec<ListState>>,
}

/// `board_claim` arguments: `claim`'s parameters and the wait that `board claim --wait` does on
/// the client side.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimArgs {
    /// Task id to claim. Leave it out to claim the best ready task (highest priority, then oldest).
    #[serde(default)]
    pub task: Option<crate::proto::glossary::TaskId>,
    /// Without `task`: claim the best ready task carrying this label (as `board claim --label`).
    #[serde(default)]
    pub label: Option<String>,
    /// When nothing is ready yet but work remains, wait up to this many seconds (at most 600)
    /// for a task to become ready. Leave it out (or 0) to answer at once.
    #[serde(default)]
    #[schemars(range(min = 0, max = 600))]
    pub wait_s: Option<i64>,
}

/// `board_wait` arguments: `wait`'s parameters and the wait for the answer that
/// `board wait --block` does on the client side.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// Your question for a person. It stays open until a person answers it, you withdraw it
    /// (board_resume) or your session ends.
    pub question: String,
    /// Wait up to this many seconds (at most 600) for the answer and return it. Leave it out
    /// (or 0) to return at once and read the answer later with board_inbox. Asking the same
    /// question again keeps it open and waits again.
    #[serde(default)]
    #[schemars(range(min = 0, max = 600))]
    pub wait_s: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::methods::{AddParams, DoneParams, ReleaseParams};

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
            ("add", input_schema::<AddParams>()),
            ("release", input_schema::<ReleaseParams>()),
            ("done", input_schema::<DoneParams>()),
        ] {
            walk(&Value::Object(s.as_ref().clone()), name);
        }
        let list = input_schema::<ListArgs>();
        assert_eq!(list["properties"]["state"]["type"], "array");
        assert_eq!(
            list["properties"]["state"]["items"]["enum"],
            serde_json::json!([
                "open",
                "ready",
                "blocked",
                "claimed",
                "done",
                "cancelled",
                "review"
            ])
        );
        assert!(!list.contains_key("$defs"), "inlined: {list:?}");
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
        let e =
            parse::<DoneParams>("board_done", obj(serde_json::json!({"task": "x"}))).unwrap_err();
        assert!(text(e).starts_with("invalid (-32602): bad argument `task`"));
        let e = parse::<DoneParams>(
            "board_done",
            obj(serde_json::json!({"task": 1, "genration": 2})),
        )
        .unwrap_err();
        assert!(text(e).contains("unknown field `genration`"));
        let e = parse::<DoneParams>("board_done", obj(serde_json::json!({}))).unwrap_err();
        assert!(text(e).contains("missing field `task`"));
        assert!(parse::<DoneParams>("board_done", obj(serde_json::json!({"task": 1}))).is_ok());
    }
}
