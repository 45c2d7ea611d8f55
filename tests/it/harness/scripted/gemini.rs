//! The scripted turn spoken as Google's Generative Language API, as Gemini CLI uses it
//! (`GOOGLE_GEMINI_BASE_URL` pointing here):
//! - `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`: the turn. The conversation's
//!   `functionResponse` parts are the tool results so far; the answer is one SSE chunk with a
//!   `functionCall` part (or text at the end), `finishReason` and `usageMetadata`.
//! - `POST /v1beta/models/MODEL:generateContent`: side calls (the model router's classifier,
//!   next-speaker checks) that want JSON matching `generationConfig.responseJsonSchema`: a value
//!   built from that schema; without a schema, a short text.
//! - `:countTokens`: a count; `GET …/models`: one model.
//!
//! MCP tools are offered as `mcp_<server>_<tool>`; the shell is `run_shell_command {command}`.

use serde_json::{json, Value};

use super::turn::{self, Action, Step};
use super::{Request, Response};

/// Gemini CLI's name for the board MCP server's tool `tool`.
pub fn mcp_name(tool: &str) -> String {
    format!("mcp_board_{tool}")
}

/// Answers one request of Gemini CLI with the next action of `script`.
pub fn answer(script: &[Step], req: &Request) -> Response {
    let route = req.route();
    if route.ends_with(":streamGenerateContent") {
        let results = tool_results(&req.json);
        stream(&turn::next(script, &results))
    } else if route.ends_with(":generateContent") {
        Response::json(&candidate(vec![side_part(&req.json)], "STOP"))
    } else if route.ends_with(":countTokens") {
        Response::json(&json!({"totalTokens": 100}))
    } else if req.method == "GET" && route.ends_with("/models") {
        Response::json(&json!({"models": [{"name": "models/gemini-scripted"}]}))
    } else {
        Response::error(404, "the scripted Gemini endpoint does not know this route")
    }
}

/// The text of every `functionResponse` part in the conversation, in order.
pub fn tool_results(body: &Value) -> Vec<String> {
    let contents = body["contents"].as_array().cloned().unwrap_or_default();
    contents
        .iter()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.get("functionResponse").map(|r| r["response"].to_string()))
        .collect()
}

/// The action as one streamed chunk.
fn stream(action: &Action) -> Response {
    let part = match action {
        Action::Mcp { tool, args } => {
            json!({"functionCall": {"name": mcp_name(tool), "args": args}})
        }
        Action::Shell(command) => json!({"functionCall": {
            "name": "run_shell_command",
            "args": {"command": command, "description": "scripted step"}
        }}),
        Action::Finish(text) => json!({ "text": text }),
    };
    Response::sse([(None, candidate(vec![part], "STOP"))])
}

fn candidate(parts: Vec<Value>, finish: &str) -> Value {
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": parts},
            "finishReason": finish,
            "index": 0
        }],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-scripted"
    })
}

/// A side call's answer: JSON filling the requested schema, or a short text.
fn side_part(body: &Value) -> Value {
    let config = &body["generationConfig"];
    let schema = config
        .get("responseJsonSchema")
        .or_else(|| config.get("responseSchema"));
    match schema {
        Some(s) => json!({ "text": fill(s).to_string() }),
        None => json!({ "text": "ok" }),
    }
}

/// The simplest value a JSON schema (Gemini's upper- or lower-case types) accepts: the first
/// enum value, 1 for numbers (a router's score: the simplest class), a short string, every
/// property of an object.
fn fill(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = schema["type"]
        .as_str()
        .unwrap_or("string")
        .to_ascii_lowercase();
    match kind.as_str() {
        "object" => {
            let props = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            Value::Object(props.iter().map(|(k, v)| (k.clone(), fill(v))).collect())
        }
        "array" => json!([]),
        "integer" | "number" => json!(1),
        "boolean" => json!(false),
        _ => json!("scripted"),
    }
}

#[test]
fn a_router_call_gets_json_of_its_schema_and_the_turn_reads_function_responses() {
    let router = json!({"generationConfig": {"responseJsonSchema": {"type": "OBJECT",
        "properties": {"complexity_reasoning": {"type": "STRING"},
                       "complexity_score": {"type": "INTEGER"},
                       "model": {"type": "STRING", "enum": ["flash", "pro"]}}}}});
    let text = side_part(&router)["text"].as_str().unwrap().to_string();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v,
        json!({"complexity_reasoning": "scripted", "complexity_score": 1, "model": "flash"})
    );
    let claim = json!({"task": {"id": 4}, "generation": 2}).to_string();
    let body = json!({"contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "mcp_board_board_claim", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "mcp_board_board_claim",
            "response": {"output": claim}}}]}
    ]});
    let results = tool_results(&body);
    assert_eq!(results.len(), 1);
    assert_eq!(turn::find_claim(&results[0]), Some((4, 2)));
}
