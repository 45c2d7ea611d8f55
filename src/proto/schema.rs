//! The JSON Schema (draft 2020-12) of the wire, generated from the Rust types with schemars:
//! what `board json --schema` prints. Nothing of the wire is kept by hand; only the `--json`
//! output of the commands that are not one request (`init`, `up`, `down`) comes from a small
//! fragment (`schema_cli.json`), as those are local documents, not messages.
//!
//! Layout: `$defs.request`, `$defs.response`, `$defs.notification` (the top level accepts any of
//! the three), `$defs.params.<method>`, `$defs.results.<method>`, `$defs.error`, the views
//! (`task`, `session`, `event`, `note`, `goal`) and `$defs.cli.<command>`.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::proto::error::ErrorKind;
use crate::proto::methods::InboxNotice;
use crate::proto::methods::LostClaim;
use crate::proto::methods::{method_schemas, Access, Identity, Method};

const CLI_FRAGMENT: &str = include_str!("schema_cli.json");

/// The members of a JSON-RPC error object as the board sends it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ErrorObject {
    /// JSON-RPC code: the kind's own, or -32700 (parse), -32600 (bad request), -32601 (unknown
    /// method), -32602 (bad params), all of kind `invalid`.
    code: i64,
    /// One sentence for a human.
    message: String,
    /// `kind` plus structured details; further members may appear.
    data: ErrorData,
}

/// `error.data`: the kind, and details some kinds carry.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct ErrorData {
    /// How a client must react. CLI exit codes: internal 1, usage and invalid 2,
    /// no_ready_task 3, conflict 4, lapsed 5, not_found 6, unauthorized 7, unavailable 8.
    kind: ErrorKind,
    /// `board json` only: the 1-based input line this answers.
    #[serde(default)]
    line: Option<u64>,
    /// Task concerned.
    #[serde(default)]
    task: Option<i64>,
    /// State of the task concerned.
    #[serde(default)]
    state: Option<String>,
    /// Agent session holding the task now, null when none (conflict, lapsed).
    #[serde(default)]
    holder: Option<String>,
    /// The task's current generation (conflict, lapsed).
    #[serde(default)]
    generation: Option<i64>,
    /// lapsed: the generation the refused call gave.
    #[serde(default)]
    given_generation: Option<i64>,
    /// Claims the caller lost since its previous call (see `$defs/lost`).
    #[serde(default)]
    lost: Option<Vec<LostClaim>>,
    /// The caller has unread messages.
    #[serde(default)]
    inbox: Option<InboxNotice>,
    /// no_ready_task: unfinished tasks; 0 means the backlog is finished.
    #[serde(default)]
    remaining: Option<i64>,
    /// no_ready_task on a task id: the dependencies not done yet.
    #[serde(default)]
    blocked_by: Option<Vec<i64>>,
    /// lapsed: when the caller's claim or session ended (RFC 3339 UTC).
    #[serde(default)]
    ended_at: Option<String>,
    /// lapsed: why it ended.
    #[serde(default)]
    end_reason: Option<String>,
}

/// The whole schema document.
pub fn schema() -> Value {
    let mut pgen = SchemaGenerator::new(SchemaSettings::draft2020_12());
    let mut rgen = SchemaGenerator::new(SchemaSettings::draft2020_12().for_serialize());
    let identity = Identity::json_schema(&mut pgen).to_value();
    let error = error_schema(&mut pgen);

    let (params, results, branches) = method_defs(&mut pgen, &mut rgen, &identity);

    let lost_item = LostClaim::json_schema(&mut pgen).to_value();
    // Named, so it lands in the definitions as `inbox_notice`.
    let _ = pgen.subschema_for::<InboxNotice>();
    let mut defs = pgen.take_definitions(true);
    defs.extend(rgen.take_definitions(true));
    let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
    let any_result: Vec<Value> = names
        .iter()
        .map(|n| json!({ "$ref": format!("#/$defs/results/{n}") }))
        .collect();
    let ours = json!({
        "id": {
            "description": "Request id, echoed in the response exactly as written (numbers of any size or precision too). Null when the request had none or it could not be read.",
            "type": ["number", "string", "null"]
        },
        "identity": identity,
        "lost": {
            "description": "Claims the calling agent lost since its previous call without asking (lapse, expel, force-release, cancel, new epoch), oldest first; each is reported once. Added to any answer of an agent's call (result or error data), only when not empty.",
            "type": "array",
            "items": lost_item
        },
        "notification": {
            "description": "Sent to a connection after `subscribe`: one event of the append-only log, in id order.",
            "type": "object",
            "required": ["jsonrpc", "method", "params"],
            "additionalProperties": false,
            "properties": {
                "jsonrpc": { "const": "2.0" },
                "method": { "const": "event" },
                "params": { "$ref": "#/$defs/event" }
            }
        },
        "any_result": {
            "description": "The result of some method (responses do not name their method; see $defs.results for each one).",
            "anyOf": any_result
        },
        "error": error,
        "params": params,
        "results": results,
    });
    for part in [ours, message_defs(&names, branches)] {
        if let Value::Object(o) = part {
            defs.extend(o);
        }
    }
    if let Ok(Value::Object(cli)) = serde_json::from_str::<Value>(CLI_FRAGMENT) {
        defs.extend(cli);
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://board.invalid/schema/protocol-{}.json", crate::proto::PROTOCOL_VERSION),
        "title": format!("board wire protocol, version {}", crate::proto::PROTOCOL_VERSION),
        "description": "JSON-RPC 2.0, one message per line (UTF-8, at most 1 MiB a line), the same on the board's Unix socket and on `board json` stdin/stdout. A document is a request, a response or an event notification. Method names are the CLI's verbs; identity travels in params (`agent`, `token`) or, for the CLI, `board json` and `board mcp`, comes from BOARD_AGENT/BOARD_TOKEN. Writes carry an `op_id`: a retry with the same one is answered from the first attempt and applied once. The `--json` output of a client command is the `result` (see $defs.results) or `error` (see $defs.error) object of its call. Timestamps are UTC RFC 3339; durations are integers in milliseconds (`*_ms`) or seconds (`*_s`).",
        "anyOf": [
            { "$ref": "#/$defs/request" },
            { "$ref": "#/$defs/response" },
            { "$ref": "#/$defs/notification" }
        ],
        "$defs": defs,
    })
}

/// The schema of an error object, its `code` limited to the codes the board answers.
fn error_schema(pgen: &mut SchemaGenerator) -> Value {
    let mut error = ErrorObject::json_schema(pgen).to_value();
    let codes: Vec<i64> = [-32700, -32600, -32601, -32602]
        .into_iter()
        .chain(ErrorKind::ALL.iter().map(|k| k.code()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    error["properties"]["code"]["enum"] = json!(codes);
    error
}

/// Per method: its params schema (with the identity members it accepts), its result schema
/// (with `lost`), and the `if method … then params` branch of the request schema.
fn method_defs(
    pgen: &mut SchemaGenerator,
    rgen: &mut SchemaGenerator,
    identity: &Value,
) -> (Map<String, Value>, Map<String, Value>, Vec<Value>) {
    let mut params = Map::new();
    let mut results = Map::new();
    let mut branches = Vec::new();
    for (method, p, r) in method_schemas(pgen, rgen) {
        let mut p = p.to_value();
        let own_required = p
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        add_identity(&mut p, identity, method.access());
        if !own_required {
            p["type"] = json!(["object", "null"]);
        }
        let name = method.name();
        params.insert(name.into(), p);
        let mut r = r.to_value();
        add_lost(&mut r);
        results.insert(name.into(), r);
        let mut then =
            json!({ "properties": { "params": { "$ref": format!("#/$defs/params/{name}") } } });
        if own_required {
            then["required"] = json!(["params"]);
        }
        branches.push(json!({
            "if": { "properties": { "method": { "const": name } } },
            "then": then,
        }));
    }

    (params, results, branches)
}

/// The envelope: `request` (method `names`, params by `branches`), `response`, `success` and
/// `failure`.
fn message_defs(names: &[&str], branches: Vec<Value>) -> Value {
    json!({
        "request": {
            "description": "One request line. `params` must be an object when present; members not listed for its method are refused (`invalid`, naming the member).",
            "type": "object",
            "required": ["jsonrpc", "method"],
            "properties": {
                "jsonrpc": { "const": "2.0" },
                "id": { "$ref": "#/$defs/id" },
                "method": { "enum": names },
                "params": { "type": ["object", "null"] }
            },
            "allOf": branches
        },
        "response": {
            "description": "The answer to one request: `result` on success, `error` otherwise, with the request's id.",
            "oneOf": [{ "$ref": "#/$defs/success" }, { "$ref": "#/$defs/failure" }]
        },
        "success": {
            "type": "object",
            "required": ["jsonrpc", "id", "result"],
            "additionalProperties": false,
            "properties": {
                "jsonrpc": { "const": "2.0" },
                "id": { "$ref": "#/$defs/id" },
                "result": { "$ref": "#/$defs/any_result" }
            }
        },
        "failure": {
            "type": "object",
            "required": ["jsonrpc", "id", "error"],
            "additionalProperties": false,
            "properties": {
                "jsonrpc": { "const": "2.0" },
                "id": { "$ref": "#/$defs/id" },
                "error": { "$ref": "#/$defs/error" }
            }
        }
    })
}

/// Adds the members of [`Identity`] a method accepts to its params schema.
fn add_identity(params: &mut Value, identity: &Value, access: Access) {
    let Some(props) = identity.get("properties").and_then(Value::as_object) else {
        return;
    };
    let Some(obj) = params.as_object_mut() else {
        return;
    };
    let target = obj
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut();
    let Some(target) = target else {
        return;
    };
    for (k, v) in props {
        if access == Access::Launcher && k != "op_id" {
            continue;
        }
        target.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

/// Allows the optional `lost` and `inbox` members (see `$defs/lost`, `$defs/inbox_notice`) on a
/// result object: they are added to any answer of an agent's call.
fn add_lost(result: &mut Value) {
    let variants = match result.get_mut("anyOf") {
        Some(Value::Array(v)) => v.iter_mut().collect::<Vec<_>>(),
        _ => vec![result],
    };
    for v in variants {
        if let Some(Value::Object(props)) = v.get_mut("properties") {
            props.insert("lost".into(), json!({ "$ref": "#/$defs/lost" }));
            props.insert("inbox".into(), json!({ "$ref": "#/$defs/inbox_notice" }));
        }
    }
}

/// The schema as printed: pretty JSON with a final newline.
pub fn schema_text() -> String {
    let mut s = serde_json::to_string_pretty(&schema()).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_has_params_and_a_result() {
        let v = schema();
        for m in Method::ALL {
            assert!(
                v["$defs"]["params"].get(m.name()).is_some(),
                "params of {m}"
            );
            assert!(
                v["$defs"]["results"].get(m.name()).is_some(),
                "result of {m}"
            );
        }
    }

    #[test]
    fn params_are_closed_and_take_the_identity() {
        let v = schema();
        let done = &v["$defs"]["params"]["done"];
        assert_eq!(done["additionalProperties"], json!(false), "{done}");
        for k in ["task", "generation", "note", "agent", "token", "op_id"] {
            assert!(done["properties"].get(k).is_some(), "done.{k}: {done}");
        }
        assert_eq!(done["required"], json!(["task"]));
        let exit = &v["$defs"]["params"]["session.exit"];
        assert_eq!(exit["required"], json!(["agent", "token"]));
    }

    #[test]
    fn results_require_every_member_even_when_null() {
        let v = schema();
        let task = &v["$defs"]["task"];
        let required = task["required"].as_array().unwrap();
        assert!(required.contains(&json!("holder")), "{task}");
        assert_eq!(task["additionalProperties"], json!(false));
    }

    #[test]
    fn every_reference_resolves() {
        let v = schema();
        let mut refs = Vec::new();
        collect_refs(&v, &mut refs);
        assert!(!refs.is_empty());
        for r in refs {
            let ptr = r.trim_start_matches('#');
            assert!(v.pointer(ptr).is_some(), "dangling {r}");
        }
    }

    fn collect_refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    if k == "$ref" {
                        if let Some(s) = x.as_str() {
                            out.push(s.to_string());
                        }
                    }
                    collect_refs(x, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
            _ => {}
        }
    }
}
