//! The OpenAI Responses API as Codex CLI 0.171 speaks it: `POST /v1/responses` with the whole
//! conversation in `input`, answered by server-sent events (`response.created`,
//! `response.output_item.added`/`.done`, `response.completed`).
//!
//! Codex's default model runs in "code mode": the model is offered one custom tool, `exec`,
//! whose input is JavaScript that calls every other tool through the global `tools` object
//! (`tools.exec_command({cmd})`, `tools.mcp__board__board_claim({})`; MCP tools are deferred,
//! left out of the description but callable). So each step of the turn is one `exec` call
//! whose script calls one tool and returns its result as text; the result comes back as a
//! `custom_tool_call_output` item. A request that offers no `exec` tool ends the turn saying
//! so (the test then fails on the board's state, with the requests in its message).

use serde_json::{json, Value};

use super::turn::{self, Action, Step};
use super::{Request, Response};

/// A scripted Codex model.
#[derive(Debug, Clone, Copy)]
pub struct Script {
    /// The turn.
    pub steps: &'static [Step],
    /// Shell commands the model asks to run outside the sandbox
    /// (`sandbox_permissions: "require_escalated"`), which Codex asks a person about.
    pub escalate: &'static [&'static str],
}

impl Script {
    /// `steps`, nothing escalated.
    pub const fn new(steps: &'static [Step]) -> Script {
        Script {
            steps,
            escalate: &[],
        }
    }

    /// The answer to one request: the turn's next step for `POST …/responses`, an empty model
    /// list for `GET …/models`, 404 for anything else.
    pub fn answer(&self, req: &Request) -> Response {
        match (req.method.as_str(), req.route()) {
            ("POST", r) if r.ends_with("/responses") => self.respond(&req.json),
            ("GET", r) if r.ends_with("/models") => {
                Response::json(&json!({"object": "list", "data": [], "models": []}))
            }
            _ => Response::error(404, "the scripted endpoint answers /v1/responses only"),
        }
    }

    fn respond(&self, body: &Value) -> Response {
        let results = tool_results(body);
        let n = results.len();
        let item = match turn::next(self.steps, &results) {
            Action::Finish(text) => message(n, &text),
            _ if !offers_exec(body) => message(
                n,
                "The request offered no code-mode `exec` tool: this script cannot call tools.",
            ),
            Action::Mcp { tool, args } => exec(n, &format!("mcp__board__{tool}"), &args),
            Action::Shell(cmd) => {
                let mut args = json!({ "cmd": cmd });
                if self.escalate.contains(&cmd.as_str()) {
                    args["sandbox_permissions"] = json!("require_escalated");
                    // Not naming the command: the waiting message must name it by itself.
                    args["justification"] = json!("It needs to run outside the sandbox.");
                }
                exec(n, "exec_command", &args)
            }
        };
        stream(n, item)
    }
}

/// The text of every tool result in the conversation, in order: the `output` of each
/// `*_output` item (a string as is, anything else as JSON).
pub fn tool_results(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")))
        .map(|i| match &i["output"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// Whether the request offers the custom tool `exec`, at the top level or inside a namespace
/// (Codex sends it in an `additional_tools` input item, namespace `functions`).
fn offers_exec(body: &Value) -> bool {
    fn any_exec(tools: &Value) -> bool {
        tools
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| (t["type"] == "custom" && t["name"] == "exec") || any_exec(&t["tools"]))
    }
    any_exec(&body["tools"])
        || body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|i| any_exec(&i["tools"]))
}

/// An `exec` call whose script calls `tools.TOOL(args)` and returns its result as text.
fn exec(n: usize, tool: &str, args: &Value) -> Value {
    let script = format!("const r = await tools.{tool}({args});\ntext(JSON.stringify(r));");
    json!({
        "type": "custom_tool_call",
        "id": format!("ctc_{n}"),
        "call_id": format!("call_{n}"),
        "name": "exec",
        "input": script,
        "status": "completed",
    })
}

/// An assistant message ending the turn.
fn message(n: usize, text: &str) -> Value {
    json!({
        "type": "message",
        "role": "assistant",
        "id": format!("msg_{n}"),
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    })
}

/// The event stream of a response made of one output item.
fn stream(n: usize, item: Value) -> Response {
    let id = format!("resp_{n}");
    let usage = json!({
        "input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    });
    Response::sse([
        (
            Some("response.created"),
            json!({"type": "response.created", "response": {"id": id}}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ),
        (
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            Some("response.completed"),
            json!({"type": "response.completed", "response": {"id": id, "usage": usage}}),
        ),
    ])
}

#[test]
fn each_step_is_one_exec_script_and_results_are_read_from_the_outputs() {
    let offered = json!([{"type": "additional_tools", "tools": [
        {"type": "namespace", "name": "functions", "tools": [{"type": "custom", "name": "exec"}]}
    ]}]);
    let body = |outputs: &[&str]| {
        let mut input = offered.as_array().unwrap().clone();
        for o in outputs {
            input.push(
                json!({"type": "custom_tool_call_output", "call_id": "c", "output": [
                    {"type": "input_text", "text": o}
                ]}),
            );
        }
        json!({"input": input})
    };
    let s = Script::new(turn::STANDARD);
    let text = |r: Response| String::from_utf8(r.body).unwrap();
    let first = text(s.respond(&body(&[])));
    assert!(
        first.contains("tools.mcp__board__board_claim({})"),
        "{first}"
    );
    let claim = json!({"task": {"id": 4}, "generation": 2}).to_string();
    let third = text(s.respond(&body(&[&claim, ""])));
    assert!(third.contains(r#"board done 4 --generation 2"#), "{third}");
    assert!(!third.contains("require_escalated"), "{third}");
    let bare = text(s.respond(&json!({"input": []})));
    assert!(bare.contains("offered no code-mode"), "{bare}");
}
