//! The Anthropic Messages API as Claude Code speaks it (`POST /v1/messages?beta=true`, streamed
//! as server-sent events), answering from a scripted turn.
//!
//! - The turn's requests carry the tools (`Bash`, `mcp__board__…`): the tool results so far are
//!   the `tool_result` blocks of the user messages (content a string or a list of text blocks);
//!   the next [`turn::Action`] becomes one `tool_use` block (or a text block that ends the turn).
//! - Side calls (title generation and the like on a small model, no tools): a short text.
//! - `/v1/messages/count_tokens`: a count from the body's size; `/v1/models`: one model.

use serde_json::{json, Value};

use super::turn::{self, Action, Step};
use super::{Request, Response};

/// The shell tool's name in Claude Code.
pub const SHELL_TOOL: &str = "Bash";
/// The prefix Claude Code gives the tools of the MCP server named `board`.
pub const MCP_PREFIX: &str = "mcp__board__";

/// An answer to every request of Claude Code, replaying `script`.
pub fn answer(script: &'static [Step]) -> impl Fn(&Request) -> Response + Send + Sync {
    move |req| respond(script, req)
}

fn respond(script: &[Step], req: &Request) -> Response {
    match (req.method.as_str(), req.route()) {
        ("POST", "/v1/messages") => message(script, &req.json),
        ("POST", "/v1/messages/count_tokens") => Response::json(&json!({
            "input_tokens": (req.body.len() / 4).max(1)
        })),
        ("GET", "/v1/models") => Response::json(&json!({
            "data": [{"type": "model", "id": "claude-sonnet-4-5", "display_name": "Scripted"}],
            "has_more": false, "first_id": "claude-sonnet-4-5", "last_id": "claude-sonnet-4-5"
        })),
        _ => Response::error(404, "the scripted endpoint has no such route"),
    }
}

/// Whether `body` is a turn of the agent (it offers the shell tool), not a side call.
fn is_turn(body: &Value) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == SHELL_TOOL))
}

/// The text of every `tool_result` block in the conversation, in order.
pub fn tool_results(body: &Value) -> Vec<String> {
    let empty = Vec::new();
    let messages = body["messages"].as_array().unwrap_or(&empty);
    messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| match &b["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
        .collect()
}

fn message(script: &[Step], body: &Value) -> Response {
    let model = body["model"]
        .as_str()
        .unwrap_or("claude-sonnet-4-5")
        .to_string();
    let (block, stop) = if is_turn(body) {
        let results = tool_results(body);
        block_of(offered(body, turn::next(script, &results)), results.len())
    } else {
        (json!({"type": "text", "text": "Board turn"}), "end_turn")
    };
    if body["stream"] == true {
        stream(&model, block, stop)
    } else {
        Response::json(&json!({
            "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 10}
        }))
    }
}

/// `action`, or the end of the turn when it calls a board tool the request does not offer
/// (interactive Claude may send its first prompt before the MCP server is connected; the
/// same prompt later, with the tools, starts the turn from the beginning).
fn offered(body: &Value, action: Action) -> Action {
    let Action::Mcp { tool, .. } = &action else {
        return action;
    };
    let name = format!("{MCP_PREFIX}{tool}");
    let tools = body["tools"].as_array();
    if tools.is_some_and(|t| t.iter().any(|t| t["name"] == name.as_str())) {
        return action;
    }
    Action::Finish(format!("{NOT_OFFERED} {name}"))
}

/// How the scripted model's answer starts when the board's tools are not offered.
pub const NOT_OFFERED: &str = "The board's tool is not offered yet:";

/// The content block of `action` (the `n`th step, for a stable tool-use id) and its stop reason.
fn block_of(action: Action, n: usize) -> (Value, &'static str) {
    let id = format!("toolu_scripted_{n}");
    match action {
        Action::Mcp { tool, args } => (
            json!({"type": "tool_use", "id": id, "name": format!("{MCP_PREFIX}{tool}"), "input": args}),
            "tool_use",
        ),
        Action::Shell(command) => (
            json!({"type": "tool_use", "id": id, "name": SHELL_TOOL,
                   "input": {"command": command, "description": "Run the next step"}}),
            "tool_use",
        ),
        Action::Finish(text) => (json!({"type": "text", "text": text}), "end_turn"),
    }
}

/// The streamed form of one message holding `block`: the block starts empty and its content
/// comes as one delta (`input_json_delta` for a tool call, `text_delta` for text).
fn stream(model: &str, block: Value, stop: &str) -> Response {
    let (start, delta) = if block["type"] == "tool_use" {
        (
            json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
        )
    } else {
        (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": block["text"]}),
        )
    };
    Response::sse([
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {
                "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": start}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": 10}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ])
}

#[test]
fn a_turn_request_gets_the_next_tool_call_and_a_side_call_gets_text() {
    let claim = json!({"task": {"id": 4}, "generation": 2}).to_string();
    let body = json!({"model": "m", "stream": false, "tools": [{"name": "Bash"}, {"name": "mcp__board__board_done"}], "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
            "content": [{"type": "text", "text": claim}]}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": ""}]},
    ]});
    assert_eq!(tool_results(&body).len(), 2);
    let Response { body: out, .. } = message(turn::STANDARD, &body);
    let out: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(out["content"][0]["name"], "Bash");
    assert_eq!(
        out["content"][0]["input"]["command"],
        "board done 4 --generation 2"
    );
    let side = json!({"model": "haiku", "stream": true, "messages": [{"role": "user", "content": "title?"}]});
    let text = String::from_utf8(message(turn::STANDARD, &side).body).unwrap();
    assert!(
        text.contains("text_delta") && text.contains("end_turn"),
        "{text}"
    );
}
