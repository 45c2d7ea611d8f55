//! OpenAI Chat Completions as aider speaks it (through litellm): `POST /v1/chat/completions`
//! with `stream: true`, no `tools`. A model without tools acts in its text: aider runs the
//! shell block of a reply (```` ```bash ````) after asking "Run shell command?", and when the
//! person lets it add the output to the chat, the next request holds it as a user message
//! `Output from CMD\n…` answered by an assistant `Ok`. aider sends that next request only when
//! the person types a new message: the turn goes on one message at a time.
//!
//! So a tool result here is: for each earlier reply with a shell block, the `Output from`
//! message right after it, or "" when there was none (a command with no output, or output the
//! person did not add). Side calls: a commit message or a summary of the chat (aider's weak
//! model) get a plain sentence; `GET …/models` lists one model.

use serde_json::{json, Value};

use super::turn::{self, Action, Step};
use super::{Request, Response};

/// The model id answered (aider's `--model openai/gpt-4o` sends `gpt-4o`).
const MODEL: &str = "gpt-4o";

/// An answer function for [`super::Endpoint::start`] replaying `script`.
pub fn model(script: &'static [Step]) -> impl Fn(&Request) -> Response + Send + Sync + 'static {
    move |req| answer(script, req)
}

/// The answer to one request of the Chat Completions API.
pub fn answer(script: &[Step], req: &Request) -> Response {
    let route = req.route();
    if req.method == "GET" && route.ends_with("/models") {
        return Response::json(&json!({
            "object": "list",
            "data": [{"id": MODEL, "object": "model", "owned_by": "scripted"}]
        }));
    }
    if req.method != "POST" || !route.ends_with("/chat/completions") {
        return Response::error(404, &format!("no route {} {}", req.method, req.path));
    }
    let messages: Vec<Value> = req.json["messages"].as_array().cloned().unwrap_or_default();
    let text = match side_call(&messages) {
        Some(t) => t.to_string(),
        None => reply(&turn::next(script, &results(&messages))),
    };
    if req.json["stream"] == Value::Bool(true) {
        stream(&text)
    } else {
        whole(&text)
    }
}

/// The text of a message's `content`: a string, or the text parts of an array.
fn content(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

fn has_shell_block(text: &str) -> bool {
    text.lines().any(|l| l.trim_start().starts_with("```bash"))
}

/// The tool results so far: one per earlier reply with a shell block (see the module's doc).
fn results(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m["role"] == "assistant" && has_shell_block(&content(m)))
        .map(|(i, _)| {
            messages
                .get(i + 1)
                .filter(|m| m["role"] == "user")
                .map(content)
                .filter(|c| c.starts_with("Output from "))
                .unwrap_or_default()
        })
        .collect()
}

/// A sentence for aider's weak-model calls (commit message, chat summary), None for the turn.
fn side_call(messages: &[Value]) -> Option<&'static str> {
    let system = messages
        .iter()
        .find(|m| m["role"] == "system")
        .map(content)
        .unwrap_or_default()
        .to_lowercase();
    if system.contains("commit message") {
        Some("Record the scripted work")
    } else if system.contains("summarize") {
        Some("The user asked to work through the board's tasks.")
    } else {
        None
    }
}

/// The reply carrying `action`: a shell block for a command, the closing text at the end.
fn reply(action: &Action) -> String {
    match action {
        Action::Shell(cmd) => format!("Next step:\n\n```bash\n{cmd}\n```\n"),
        Action::Finish(text) => text.clone(),
        Action::Mcp { tool, .. } => format!("I have no tool {tool} here: no MCP in this chat."),
    }
}

/// A `chat.completion.chunk` with `delta` and `finish`.
fn chunk(delta: Value, finish: Value) -> Value {
    json!({
        "id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
    })
}

/// The streamed answer: the role, the text in one chunk, the end, usage, then `[DONE]`.
fn stream(text: &str) -> Response {
    let mut usage = chunk(json!({}), Value::Null);
    usage["choices"] = json!([]);
    usage["usage"] = json!({"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20});
    let chunks = [
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": text}), Value::Null),
        chunk(json!({}), json!("stop")),
        usage,
    ];
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    Response::sse_raw(body)
}

/// The answer in one `chat.completion` object (a request without `stream`).
fn whole(text: &str) -> Response {
    Response::json(&json!({
        "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
    }))
}

#[test]
fn each_reply_reads_the_output_aider_added_after_the_one_before() {
    let req = |messages: Value| Request {
        method: "POST".into(),
        path: "/v1/chat/completions".into(),
        headers: vec![],
        json: json!({"model": MODEL, "stream": false, "messages": messages}),
        body: vec![],
    };
    let said = |r: Response| {
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        v["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let claim = json!({"task": {"id": 4, "title": "t"}, "generation": 2});
    let mut conv = vec![
        json!({"role": "system", "content": "Act as an expert software developer."}),
        json!({"role": "user", "content": "work the backlog"}),
    ];
    assert!(said(answer(turn::SHELL_ONLY, &req(json!(conv))))
        .contains("```bash\nboard claim --json\n```"));
    conv.extend([
        json!({"role": "assistant", "content": "Next step:\n\n```bash\nboard claim --json\n```"}),
        json!({"role": "user", "content": format!("Output from board claim --json\n{claim}\n")}),
        json!({"role": "assistant", "content": "Ok"}),
        json!({"role": "user", "content": [{"type": "text", "text": "go on"}]}),
    ]);
    assert!(said(answer(turn::SHELL_ONLY, &req(json!(conv)))).contains("echo done > work.txt"));
    // `echo` prints nothing: no output message, and the next step still comes.
    conv.extend([
        json!({"role": "assistant", "content": "```bash\necho done > work.txt\n```"}),
        json!({"role": "user", "content": "go on"}),
    ]);
    assert!(
        said(answer(turn::SHELL_ONLY, &req(json!(conv)))).contains("board done 4 --generation 2")
    );
}
