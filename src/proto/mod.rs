//! The wire protocol: JSON-RPC 2.0, one UTF-8 message per line, at most [`MAX_LINE`] bytes.
//!
//! The same framing is used on the board's Unix socket and by `board json` on stdin/stdout.
//! Requests look like `{"jsonrpc":"2.0","id":7,"method":"claim","params":{"task":12}}`; the
//! answer carries the same `id`, byte for byte as sent ([`Id`]), and either `result` or `error`
//! (see [`crate::proto::error::BoardError`]). A connection that sent `subscribe` then receives
//! notifications `{"jsonrpc":"2.0","method":"event","params":<EventView>}`, and, when it asked
//! with `notices: true`, `{"jsonrpc":"2.0","method":"notice","params":<NoticeView>}`.
//!
//! Methods, their parameters and results are typed ([`methods`]); the JSON Schema
//! printed by `board json --schema` is generated from those types ([`schema`]).
//!
//! Besides the wire itself this holds what every process of the board agrees on: where a board
//! lives and how it is configured ([`config`], `board.toml`), the shape of a backlog as a file
//! ([`backlog`], the params of `import` and the result of `export`), and how agent text is made
//! inert on a terminal ([`sanitize`]).

pub mod backlog;
pub mod claim_wait;
pub mod client;
pub mod config;
pub mod config_land;
pub mod config_notice;
pub mod config_notify;
pub mod config_store;
pub mod config_worktree;
pub mod duration;
pub mod error;
pub mod glossary;
pub mod labels;
pub mod last_run;
pub mod line;
pub mod methods;
pub mod question_wait;
pub mod sanitize;
pub mod schema;
pub mod views;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::proto::error::BoardError;
pub use crate::proto::methods::{Call, Identity, Method};
pub use crate::proto::views::{
    EventView, GoalView, HostView, MessageView, NoteView, NoticeView, SessionView, StoreInfo,
    TaskView,
};

/// Version of this protocol; `hello` reports it and clients refuse a board of another version.
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest accepted message, in bytes, newline excluded (1 MiB).
pub const MAX_LINE: usize = 1 << 20;

/// A request id exactly as the caller wrote it: a JSON number (any size or precision, kept as
/// its text, never rounded through a float), a string, or null. Answers echo it verbatim.
#[derive(Debug, Clone)]
pub struct Id(Box<RawValue>);

impl Id {
    /// The null id (a request without one, or one that could not be read).
    pub fn null() -> Id {
        Id(raw("null"))
    }

    /// The id as written (`7`, `"x"`, `1e400`).
    pub fn as_raw(&self) -> &str {
        self.0.get()
    }

    /// Whether this is the null id.
    pub fn is_null(&self) -> bool {
        self.as_raw() == "null"
    }

    /// Checks a raw JSON value is a valid id (number, string or null) and keeps it.
    fn from_raw(v: Box<RawValue>) -> Option<Id> {
        let text = v.get();
        let ok = match text.as_bytes().first() {
            Some(b'"') => true,
            Some(b'-' | b'0'..=b'9') => true,
            _ => text == "null",
        };
        ok.then_some(Id(v))
    }
}

impl From<u64> for Id {
    fn from(n: u64) -> Id {
        Id(raw(&n.to_string()))
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Id) -> bool {
        self.as_raw() == other.as_raw()
    }
}

impl Serialize for Id {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A raw JSON value from text that is known to be valid JSON.
fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_string()).unwrap_or_default()
}

/// A parsed, validated request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The request id as sent.
    pub id: Id,
    /// The method.
    pub method: Method,
    /// `agent`, `token`, `op_id` (for launcher methods only `op_id`).
    pub identity: Identity,
    /// The method's own parameters, parsed strictly.
    pub call: Call,
    /// The params object as sent (missing params: `{}`), for `board json` and `board mcp`, which forward it.
    pub params: Map<String, Value>,
}

/// Parses and validates one line into a [`Request`].
///
/// Errors (all of kind `invalid`), with the id to answer with (null when none could be read):
/// not JSON or not UTF-8 (-32700), not a JSON-RPC 2.0 request object (-32600), unknown method
/// (-32601), params not an object or not right for the method (-32602, naming the member).
pub fn parse_request(line: &[u8]) -> Result<Request, (Id, BoardError)> {
    let null = |msg: String, code: i64| (Id::null(), BoardError::invalid(msg).with_code(code));
    if line.len() > MAX_LINE {
        return Err(null(
            format!(
                "request is {} bytes; the limit is {} bytes (1 MiB)",
                line.len(),
                MAX_LINE
            ),
            -32600,
        ));
    }
    let text = std::str::from_utf8(line)
        .map_err(|e| null(format!("request is not UTF-8: {e}"), -32700))?;
    let whole: &RawValue = serde_json::from_str(text)
        .map_err(|e| null(format!("request is not JSON: {e}"), -32700))?;
    if !whole.get().starts_with('{') {
        return Err(null("request must be a JSON object".into(), -32600));
    }
    let mut members: BTreeMap<String, Box<RawValue>> = serde_json::from_str(whole.get())
        .map_err(|e| null(format!("request is not a JSON object: {e}"), -32600))?;
    let id = match members.remove("id") {
        None => Id::null(),
        Some(v) => Id::from_raw(v)
            .ok_or_else(|| null("`id` must be a number, a string or null".into(), -32600))?,
    };
    let bad = |msg: String, code: i64| (id.clone(), BoardError::invalid(msg).with_code(code));
    let jsonrpc = members.get("jsonrpc").map(|v| v.get());
    if jsonrpc != Some("\"2.0\"") {
        return Err(bad("`jsonrpc` must be \"2.0\"".into(), -32600));
    }
    let method = match members.get("method") {
        None => return Err(bad("`method` is missing".into(), -32600)),
        Some(v) => serde_json::from_str::<String>(v.get())
            .map_err(|_| bad("`method` must be a string".into(), -32600))?,
    };
    let Some(method) = Method::from_name(&method) else {
        let shown: String = method.chars().take(64).collect();
        return Err(bad(format!("unknown method {shown:?}"), -32601));
    };
    let params = match members.get("params").map(|v| v.get()) {
        None | Some("null") => Map::new(),
        Some(p) => match serde_json::from_str::<Value>(p) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(bad("`params` must be an object".into(), -32602)),
            Err(e) => return Err(bad(format!("bad params: {e}"), -32602)),
        },
    };
    let (identity, call) =
        methods::split_params(method, params.clone()).map_err(|e| (id.clone(), e))?;
    Ok(Request {
        id,
        method,
        identity,
        call,
        params,
    })
}

#[derive(Serialize)]
struct Outgoing<'a> {
    jsonrpc: &'static str,
    id: &'a Id,
    method: &'a str,
    params: &'a Value,
}

#[derive(Serialize)]
struct Success<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a Id,
    result: &'a T,
}

#[derive(Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    id: &'a Id,
    error: Value,
}

#[derive(Serialize)]
struct Notification<'a, P: Serialize> {
    jsonrpc: &'static str,
    method: &'static str,
    params: &'a P,
}

/// A request line: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}` (no newline).
pub fn request_line(id: &Id, method: &str, params: &Value) -> String {
    let out = Outgoing {
        jsonrpc: "2.0",
        id,
        method,
        params,
    };
    serde_json::to_string(&out).unwrap_or_default()
}

/// A success response line: `{"jsonrpc":"2.0","id":…,"result":…}`.
pub fn result_line<T: Serialize>(id: &Id, result: &T) -> String {
    let out = Success {
        jsonrpc: "2.0",
        id,
        result,
    };
    match serde_json::to_string(&out) {
        Ok(s) => s,
        Err(e) => error_line(
            id,
            &BoardError::internal(format!("serializing the result: {e}")),
        ),
    }
}

/// An error response line: `{"jsonrpc":"2.0","id":…,"error":{code,message,data}}`.
pub fn error_line(id: &Id, err: &BoardError) -> String {
    let out = Failure {
        jsonrpc: "2.0",
        id,
        error: err.to_json(),
    };
    serde_json::to_string(&out).unwrap_or_default()
}

/// An event notification line for subscribers.
pub fn event_line(event: &EventView) -> String {
    let out = Notification {
        jsonrpc: "2.0",
        method: "event",
        params: event,
    };
    serde_json::to_string(&out).unwrap_or_default()
}

/// A notice notification line for subscribers that asked for notices (`subscribe` with
/// `notices: true`).
pub fn notice_line(notice: &NoticeView) -> String {
    let out = Notification {
        jsonrpc: "2.0",
        method: "notice",
        params: notice,
    };
    serde_json::to_string(&out).unwrap_or_default()
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
    use crate::proto::glossary::TaskId;
    use serde_json::json;

    #[test]
    fn parses_a_claim_request() {
        let r = parse_request(br#"{"jsonrpc":"2.0","id":7,"method":"claim","params":{"task":12}}"#)
            .unwrap();
        assert_eq!(r.id.as_raw(), "7");
        assert_eq!(r.method, Method::Claim);
        assert_eq!(
            r.call,
            Call::Claim(methods::ClaimParams {
                task: Some(TaskId(12)),
                label: None
            })
        );
    }

    #[test]
    fn garbage_is_a_parse_error_without_id() {
        let (id, e) = parse_request(b"{not json").unwrap_err();
        assert!(id.is_null());
        assert_eq!(e.to_json()["code"], json!(-32700));
        assert_eq!(e.to_json()["data"]["kind"], json!("invalid"));
    }

    #[test]
    fn unknown_method_keeps_the_id() {
        let (id, e) = parse_request(br#"{"jsonrpc":"2.0","id":"x","method":"nuke"}"#).unwrap_err();
        assert_eq!(id.as_raw(), "\"x\"");
        assert_eq!(e.to_json()["code"], json!(-32601));
    }

    #[test]
    fn wrong_param_types_name_the_field() {
        let (id, e) =
            parse_request(br#"{"jsonrpc":"2.0","id":1,"method":"claim","params":{"task":"a"}}"#)
                .unwrap_err();
        assert_eq!(id.as_raw(), "1");
        assert!(e.message.contains("`task`"), "{}", e.message);
    }

    #[test]
    fn huge_ids_are_echoed_as_written() {
        for id in ["123456789012345678901234567890", "1e400", "-0.0", "1.50"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"hello"}}"#);
            let r = parse_request(line.as_bytes()).unwrap();
            let answer = result_line(&r.id, &json!({}));
            assert_eq!(
                answer,
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
            );
        }
        let (_, e) = parse_request(br#"{"jsonrpc":"2.0","id":[1],"method":"hello"}"#).unwrap_err();
        assert_eq!(e.to_json()["code"], json!(-32600));
    }

    #[test]
    fn oversized_line_is_refused() {
        let line = vec![b' '; MAX_LINE + 1];
        let (_, e) = parse_request(&line).unwrap_err();
        assert!(e.message.contains("1 MiB"));
    }
}
