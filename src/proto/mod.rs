//! The wire protocol: JSON-RPC 2.0, one UTF-8 message per line, at most [`MAX_LINE`] bytes.
//!
//! The same framing is used on the board's Unix socket and by `board json` on stdin/stdout.
//! Requests look like `{"jsonrpc":"2.0","id":7,"method":"claim","params":{"task":12}}`; the
//! answer carries the same `id` and either `result` or `error` (see [`crate::proto::error::BoardError`]).
//! A connection that sent `subscribe` then receives notifications
//! `{"jsonrpc":"2.0","method":"event","params":<EventView>}`.

pub mod claim_wait;
pub mod client;
pub mod config_notice;
pub mod error;
pub mod sanitize;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::proto::error::{BoardError, BoardResult};

/// Version of this protocol; `hello` reports it and clients refuse a board of another version.
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest accepted message, in bytes, newline excluded (1 MiB).
pub const MAX_LINE: usize = 1 << 20;

/// Every method the board answers, with the CLI verb it belongs to.
pub const METHODS: &[&str] = &[
    "hello",
    "status",
    "goal",
    "add",
    "edit",
    "cancel",
    "list",
    "ready",
    "show",
    "claim",
    "done",
    "release",
    "note",
    "renew",
    "check",
    "wait",
    "resume",
    "activity",
    "agents",
    "log",
    "subscribe",
    "stop",
    "session.register",
    "session.attach",
    "session.exit",
    "import",
    "export",
    "send",
    "inbox",
];

/// A parsed request. `params` is always an object (missing params become `{}`).
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The request id as sent (number, string or null).
    pub id: Value,
    /// Method name, one of [`METHODS`].
    pub method: String,
    /// Named parameters.
    pub params: Map<String, Value>,
}

impl Request {
    /// A request with the given id, method and params object.
    pub fn new(id: impl Into<Value>, method: &str, params: Value) -> Self {
        let params = match params {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        Request {
            id: id.into(),
            method: method.to_string(),
            params,
        }
    }

    /// The request as one JSON line (no trailing newline).
    pub fn to_line(&self) -> String {
        json!({"jsonrpc": "2.0", "id": self.id, "method": self.method, "params": self.params})
            .to_string()
    }
}

/// Parses one line into a [`Request`].
///
/// Errors (all of kind `invalid`, each with `data.id` when an id could be read): not JSON
/// (-32700), not a JSON-RPC 2.0 request object (-32600), unknown method (-32601), params not an
/// object (-32602). The error's `id` field tells the caller which id to answer with.
pub fn parse_request(line: &[u8]) -> Result<Request, (Value, BoardError)> {
    if line.len() > MAX_LINE {
        return Err((
            Value::Null,
            BoardError::invalid(format!(
                "request is {} bytes; the limit is {} bytes (1 MiB)",
                line.len(),
                MAX_LINE
            ))
            .with_code(-32600),
        ));
    }
    let text = std::str::from_utf8(line).map_err(|e| {
        (
            Value::Null,
            BoardError::invalid(format!("request is not UTF-8: {e}")).with_code(-32700),
        )
    })?;
    let value: Value = serde_json::from_str(text).map_err(|e| {
        (
            Value::Null,
            BoardError::invalid(format!("request is not JSON: {e}")).with_code(-32700),
        )
    })?;
    let Value::Object(mut obj) = value else {
        return Err((
            Value::Null,
            BoardError::invalid("request must be a JSON object").with_code(-32600),
        ));
    };
    let id = obj.remove("id").unwrap_or(Value::Null);
    let id = match id {
        Value::Null | Value::Number(_) | Value::String(_) => id,
        _ => {
            return Err((
                Value::Null,
                BoardError::invalid("`id` must be a number, a string or null").with_code(-32600),
            ))
        }
    };
    let bad = |msg: String, code: i64| (id.clone(), BoardError::invalid(msg).with_code(code));
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(bad("`jsonrpc` must be \"2.0\"".into(), -32600));
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => return Err(bad("`method` must be a string".into(), -32600)),
        None => return Err(bad("`method` is missing".into(), -32600)),
    };
    if !METHODS.contains(&method.as_str()) {
        let shown: String = method.chars().take(64).collect();
        return Err(bad(format!("unknown method {shown:?}"), -32601));
    }
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(bad("`params` must be an object".into(), -32602)),
    };
    Ok(Request { id, method, params })
}

/// A success response line: `{"jsonrpc":"2.0","id":…,"result":…}`.
pub fn result_line(id: &Value, result: &Value) -> String {
    // Written around the result rather than built with `json!`, which would deep-copy it first
    // (a 10 000-task list is megabytes). Keys in the order `json!` prints them (sorted).
    format!(r#"{{"id":{id},"jsonrpc":"2.0","result":{result}}}"#)
}

/// An error response line: `{"jsonrpc":"2.0","id":…,"error":{code,message,data}}`.
pub fn error_line(id: &Value, err: &BoardError) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": err.to_json()}).to_string()
}

/// An event notification line for subscribers.
pub fn event_line(event: &EventView) -> String {
    json!({"jsonrpc": "2.0", "method": "event", "params": event}).to_string()
}

/// Reads typed parameters out of a request's params object, with errors that name the field.
pub struct Params<'a>(pub &'a Map<String, Value>);

impl<'a> Params<'a> {
    /// An optional integer field; wrong type → `invalid` naming the field.
    pub fn opt_i64(&self, key: &str) -> BoardResult<Option<i64>> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| {
                BoardError::invalid(format!("`{key}` must be an integer")).with_code(-32602)
            }),
        }
    }

    /// A required integer field.
    pub fn i64(&self, key: &str) -> BoardResult<i64> {
        self.opt_i64(key)?
            .ok_or_else(|| BoardError::invalid(format!("`{key}` is required")).with_code(-32602))
    }

    /// An optional string field; wrong type → `invalid`.
    pub fn opt_str(&self, key: &str) -> BoardResult<Option<&'a str>> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => {
                Err(BoardError::invalid(format!("`{key}` must be a string")).with_code(-32602))
            }
        }
    }

    /// A required string field.
    pub fn str(&self, key: &str) -> BoardResult<&'a str> {
        self.opt_str(key)?
            .ok_or_else(|| BoardError::invalid(format!("`{key}` is required")).with_code(-32602))
    }

    /// An optional boolean (missing → false).
    pub fn flag(&self, key: &str) -> BoardResult<bool> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => {
                Err(BoardError::invalid(format!("`{key}` must be true or false")).with_code(-32602))
            }
        }
    }

    /// An optional list of integers (missing → None).
    pub fn opt_ids(&self, key: &str) -> BoardResult<Option<Vec<i64>>> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_i64().ok_or_else(|| {
                        BoardError::invalid(format!("`{key}` must be a list of task ids"))
                            .with_code(-32602)
                    })
                })
                .collect::<BoardResult<Vec<_>>>()
                .map(Some),
            Some(_) => Err(
                BoardError::invalid(format!("`{key}` must be a list of task ids"))
                    .with_code(-32602),
            ),
        }
    }
}

/// A task as clients see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskView {
    /// Task id (1, 2, …).
    pub id: i64,
    /// One-line title, as given (untrusted text).
    pub title: String,
    /// Free text body, as given.
    pub body: String,
    /// Higher runs first; default 0.
    pub priority: i64,
    /// `open`, `claimed`, `done` or `cancelled`.
    pub state: String,
    /// The task's fencing token: incremented by every grant, never reused.
    pub generation: i64,
    /// Ids this task waits for (`--after`).
    pub after: Vec<i64>,
    /// Ids among `after` that are not `done` yet.
    pub blocked_by: Vec<i64>,
    /// `open` and no unfinished dependency.
    pub ready: bool,
    /// Agent session id holding the live claim, if any.
    pub holder: Option<String>,
    /// Milliseconds until the live claim lapses unless renewed (as stored; may be negative
    /// between expiry and the next sweep).
    pub expires_in_ms: Option<i64>,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// RFC 3339 UTC.
    pub updated_at: String,
    /// Agent session that finished it.
    pub done_by: Option<String>,
    /// RFC 3339 UTC.
    pub done_at: Option<String>,
}

/// An agent session as clients see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionView {
    /// Unique id (`claude`, `claude-2`); never reused.
    pub id: String,
    /// The requested name.
    pub name: String,
    /// The agent's process id (None until the launcher attached it).
    pub pid: Option<i64>,
    /// The `board run` launcher's pid.
    pub launcher_pid: Option<i64>,
    /// tmux pane id, when started by `board up`.
    pub pane: Option<String>,
    /// `working` (holds claims), `idle` (finished its turn, or holds nothing), `waiting` (for a
    /// human), `needs_attention` (never reached its prompt), `stopped`, `gone`, `starting`.
    pub state: String,
    /// Task ids of live claims.
    pub claims: Vec<i64>,
    /// The question when waiting for a human.
    pub waiting: Option<String>,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// RFC 3339 UTC; last request with this identity.
    pub last_seen_at: Option<String>,
    /// RFC 3339 UTC.
    pub ended_at: Option<String>,
    /// Why it ended (`exited (status 0)`, `killed by SIGKILL`, `pane closed`).
    pub end_reason: Option<String>,
    /// How many sessions of the same name started before this one (a `board up` pane that was
    /// restarted twice shows `claude`, restarted 2 times, whatever its unique id).
    #[serde(default)]
    pub restarts: i64,
    /// The git branch the agent started on, when it started in a git work tree.
    #[serde(default)]
    pub branch: Option<String>,
    /// RFC 3339 UTC; when its agent finished its turn, as its CLI's hook said (cleared by its
    /// next call).
    #[serde(default)]
    pub idle_since: Option<String>,
    /// Why it needs attention: it neither called the board nor fired a hook within its profile's
    /// `attention_after` of its start.
    #[serde(default)]
    pub attention: Option<String>,
    /// RFC 3339 UTC; its first board call or hook (it reached its prompt).
    #[serde(default)]
    pub contacted_at: Option<String>,
}

/// One entry of the append-only event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventView {
    /// Monotonic event id.
    pub id: i64,
    /// RFC 3339 UTC.
    pub at: String,
    /// `grant`, `renew`, `expel`, `lapse`, `reject`, `done`, `release`, `add`, `edit`,
    /// `cancel`, `goal`, `note`, `session_start`, `session_end`, `wait`, `resume`, `idle` (a
    /// hook said the agent finished its turn), `board_start`, `config` (board.toml refused or
    /// fixed), `message` (`send`), `warn` (a claim is about to lapse).
    pub kind: String,
    /// Task concerned, if any.
    pub task: Option<i64>,
    /// Agent session concerned, if any.
    pub agent: Option<String>,
    /// Claim generation concerned, if any.
    pub generation: Option<i64>,
    /// Human reason (`exited (status 3)`, `lease expired`, …).
    pub reason: Option<String>,
}

/// A note on a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoteView {
    /// Note id.
    pub id: i64,
    /// Task id.
    pub task: i64,
    /// Agent session id, or `operator`.
    pub author: String,
    /// Generation of the author's claim when written, if any.
    pub generation: Option<i64>,
    /// The text as given.
    pub text: String,
    /// RFC 3339 UTC.
    pub at: String,
}

/// A message between agent sessions (or operators): `board send`, read by `board inbox`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageView {
    /// Message id.
    pub id: i64,
    /// Sender: agent session id, or `operator`.
    pub from: String,
    /// Recipient: agent session id, or `operator`.
    pub to: String,
    /// The text as given (untrusted).
    pub text: String,
    /// RFC 3339 UTC.
    pub sent_at: String,
    /// It answered the recipient's `board wait` (and ended the wait).
    pub answer: bool,
}

/// A goal of the board (the latest is current).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoalView {
    /// Goal id.
    pub id: i64,
    /// The text.
    pub text: String,
    /// RFC 3339 UTC.
    pub set_at: String,
    /// Who set it (`operator` or an agent id).
    pub set_by: String,
}

/// A lease's remaining time for people: `1m52s`, `9s`, or `lapsing` at or past expiry. Shared by
/// the CLI's printing and the TUI.
pub fn countdown(ms: i64) -> String {
    if ms <= 0 {
        return "lapsing".into();
    }
    let secs = (ms + 999) / 1000;
    if secs >= 60 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_claim_request() {
        let r = parse_request(br#"{"jsonrpc":"2.0","id":7,"method":"claim","params":{"task":12}}"#)
            .unwrap();
        assert_eq!(r.id, json!(7));
        assert_eq!(r.method, "claim");
        assert_eq!(Params(&r.params).i64("task").unwrap(), 12);
    }

    #[test]
    fn garbage_is_a_parse_error_without_id() {
        let (id, e) = parse_request(b"{not json").unwrap_err();
        assert_eq!(id, Value::Null);
        assert_eq!(e.to_json()["code"], json!(-32700));
        assert_eq!(e.to_json()["data"]["kind"], json!("invalid"));
    }

    #[test]
    fn unknown_method_keeps_the_id() {
        let (id, e) = parse_request(br#"{"jsonrpc":"2.0","id":"x","method":"nuke"}"#).unwrap_err();
        assert_eq!(id, json!("x"));
        assert_eq!(e.to_json()["code"], json!(-32601));
    }

    #[test]
    fn wrong_param_types_name_the_field() {
        let r =
            parse_request(br#"{"jsonrpc":"2.0","id":1,"method":"claim","params":{"task":"a"}}"#)
                .unwrap();
        let e = Params(&r.params).opt_i64("task").unwrap_err();
        assert!(e.message.contains("`task`"), "{}", e.message);
    }

    #[test]
    fn oversized_line_is_refused() {
        let line = vec![b' '; MAX_LINE + 1];
        let (_, e) = parse_request(&line).unwrap_err();
        assert!(e.message.contains("1 MiB"));
    }
}
