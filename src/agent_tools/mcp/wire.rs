//! The JSON-RPC edge of `board mcp`: every line read on stdin is checked before the MCP library
//! sees it, so a client gets a proper JSON-RPC error for a line the library would answer without
//! an id (or not at all):
//! - a line that is not JSON (or not UTF-8, or longer than 1 MiB): parse error -32700, id null;
//! - JSON that is not a JSON-RPC 2.0 message: -32600, with the request's id when it has a number
//!   or string `id` (null otherwise);
//! - a known request with unusable params (`tools/call` without a tool name, …): -32602, with
//!   its id;
//! - a bad notification (no id): dropped, as JSON-RPC requires (never answered);
//! - `notifications/initialized` before `initialize`: held back and passed on right after
//!   `initialize` (the library takes the handshake only in its order, and would otherwise wait
//!   for ever for an `initialize` that came after).
//!
//! An id is echoed exactly as sent (its JSON text), even one no integer type holds
//! (`18446744073709551617` stays that, not a float).
//!
//! Valid lines go on to the library through an in-memory pipe; its output and these errors are
//! written to stdout by one task, a whole line at a time.

use rmcp::model::ClientJsonRpcMessage;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::proto::line::{read_line_async, Line};
use crate::proto::MAX_LINE;

/// The pipe sizes between the filter and the library.
const PIPE: usize = 1 << 20;

/// The tasks that move lines between stdio and the library.
pub struct Pumps {
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Pumps {
    /// Waits until everything the library wrote has reached stdout.
    pub async fn finish(self) {
        self.reader.abort();
        let _ = self.writer.await;
    }
}

/// The library's end of a filtered stdio (reader, writer), and the tasks that feed it.
pub fn stdio_filtered() -> ((DuplexStream, DuplexStream), Pumps) {
    let (mut to_lib, lib_in) = tokio::io::duplex(PIPE);
    let (lib_out, from_lib) = tokio::io::duplex(PIPE);
    let (errors, mut error_rx) = mpsc::unbounded_channel::<String>();
    let reader = tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut handshake = Handshake::default();
        loop {
            let line = match read_line_async(&mut stdin, MAX_LINE).await {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong(n)) => {
                    let msg = format!("line of {n} bytes; the limit is {MAX_LINE} bytes (1 MiB)");
                    let _ = errors.send(error_line("null", -32700, &msg));
                    continue;
                }
                Ok(Line::Text(t)) => t,
            };
            match check(&line) {
                Verdict::Forward => {
                    let mut ok = true;
                    for l in handshake.pass(line) {
                        ok = ok
                            && to_lib.write_all(&l).await.is_ok()
                            && to_lib.write_all(b"\n").await.is_ok();
                    }
                    if !ok {
                        break;
                    }
                }
                Verdict::Answer(e) => {
                    let _ = errors.send(e);
                }
                Verdict::Drop => {}
            }
        }
        // End of input: the library sees it and ends the session.
        let _ = to_lib.shutdown().await;
    });
    let writer = tokio::spawn(async move {
        let mut lib = BufReader::new(from_lib).lines();
        let mut stdout = tokio::io::stdout();
        let mut lib_open = true;
        loop {
            let line = tokio::select! {
                l = lib.next_line(), if lib_open => match l {
                    Ok(Some(l)) => l,
                    _ => { lib_open = false; continue; }
                },
                e = error_rx.recv() => match e {
                    Some(e) => e,
                    None if lib_open => { continue; }
                    None => break,
                },
                else => break,
            };
            let ok = stdout
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_ok()
                && stdout.flush().await.is_ok();
            if !ok {
                break;
            }
            if !lib_open && error_rx.is_closed() && error_rx.is_empty() {
                break;
            }
        }
    });
    ((lib_in, lib_out), Pumps { reader, writer })
}

/// The order of the MCP handshake as the library takes it: `initialize`, then
/// `notifications/initialized`. A client that sends the notification first gets it passed on
/// right after its `initialize`.
#[derive(Debug, Default)]
struct Handshake {
    /// `initialize` was passed on.
    initialized: bool,
    /// An early `notifications/initialized`, held back until then.
    held: Option<Vec<u8>>,
}

impl Handshake {
    /// The lines to pass on for one valid `line`, in order (none while it is held back).
    fn pass(&mut self, line: Vec<u8>) -> Vec<Vec<u8>> {
        if self.initialized {
            return vec![line];
        }
        match method_of(&line).as_deref() {
            Some("notifications/initialized") => {
                self.held = Some(line);
                Vec::new()
            }
            Some("initialize") => {
                self.initialized = true;
                std::iter::once(line).chain(self.held.take()).collect()
            }
            _ => vec![line],
        }
    }
}

/// The `method` member of a valid message, if it has one.
fn method_of(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct M {
        method: Option<String>,
    }
    serde_json::from_slice::<M>(line).ok()?.method
}

/// The `id` member of a JSON object exactly as written (its JSON text), `null` when absent or
/// unreadable.
fn raw_id(line: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct I<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    serde_json::from_slice::<I>(line)
        .ok()
        .and_then(|i| i.id)
        .map_or_else(|| "null".to_string(), |r| r.get().to_string())
}

/// What to do with one input line.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// A valid message: hand it to the library.
    Forward,
    /// Answer with this error line.
    Answer(String),
    /// A bad notification: no answer is allowed.
    Drop,
}

fn check(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Drop;
    }
    let v: Value = match std::str::from_utf8(line)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => return Verdict::Answer(error_line("null", -32700, &parse_error(&e))),
    };
    let Value::Object(obj) = &v else {
        return Verdict::Answer(error_line(
            "null",
            -32600,
            "a message must be one JSON-RPC 2.0 object per line (batches are not accepted)",
        ));
    };
    let id = match obj.get("id") {
        Some(Value::Number(_) | Value::String(_)) => raw_id(line),
        _ => "null".to_string(),
    };
    let is_notification = obj.contains_key("method") && !obj.contains_key("id");
    let is_response =
        !obj.contains_key("method") && (obj.contains_key("result") || obj.contains_key("error"));
    let problem = shape_problem(obj).or_else(|| {
        serde_json::from_value::<ClientJsonRpcMessage>(v.clone())
            .err()
            .map(|e| {
                (
                    -32600,
                    format!("not a valid MCP message: {}", cut(&e.to_string())),
                )
            })
    });
    match problem {
        None => Verdict::Forward,
        // JSON-RPC never answers a notification, and nobody waits for an answer to a response
        // (to something the server asked).
        Some(_) if is_notification || is_response => Verdict::Drop,
        Some((code, msg)) => Verdict::Answer(error_line(&id, code, &msg)),
    }
}

/// What is wrong with the message's JSON-RPC shape, before the library's own parsing.
fn shape_problem(obj: &serde_json::Map<String, Value>) -> Option<(i64, String)> {
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Some((-32600, "`jsonrpc` must be \"2.0\"".into()));
    }
    if let Some(id) = obj.get("id") {
        if !(id.is_string() || id.as_i64().is_some()) {
            return Some((-32600, "`id` must be a string or an integer".into()));
        }
    }
    let method = match obj.get("method") {
        None => return None,
        Some(Value::String(m)) => m.as_str(),
        Some(_) => return Some((-32600, "`method` must be a string".into())),
    };
    let params = obj.get("params");
    if params.is_some_and(|p| !p.is_object() && !p.is_null()) {
        return Some((-32602, format!("`params` of {method} must be an object")));
    }
    if method == "tools/call" {
        let name = params.and_then(|p| p.get("name"));
        if !name.is_some_and(Value::is_string) {
            return Some((
                -32602,
                "tools/call needs `params.name`, the tool's name".into(),
            ));
        }
        if params
            .and_then(|p| p.get("arguments"))
            .is_some_and(|a| !a.is_object() && !a.is_null())
        {
            return Some((
                -32602,
                "`params.arguments` of tools/call must be an object".into(),
            ));
        }
    }
    None
}

fn parse_error(e: &str) -> String {
    format!("parse error: the line is not JSON ({})", cut(e))
}

fn cut(s: &str) -> String {
    s.chars().take(200).collect()
}

/// A JSON-RPC error response line; `id` is the request's id as JSON text (`null` for none).
fn error_line(id: &str, code: i64, message: &str) -> String {
    let error = json!({"code": code, "message": message});
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match check(line.as_bytes()) {
            Verdict::Answer(a) => serde_json::from_str(&a).unwrap(),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn bad_lines_get_errors_with_the_id_when_it_can_be_read() {
        let a = answer("not json");
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        assert!(a.as_object().unwrap().contains_key("id"));
        assert_eq!(answer("[1,2]")["error"]["code"], -32600);
        let a = answer(r#"{"id":11,"method":"tools/list"}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(11), json!(-32600))
        );
        let a = answer(r#"{"jsonrpc":"2.0","id":"x","method":"tools/call"}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!("x"), json!(-32602))
        );
        let a = answer(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":7}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(3), json!(-32602))
        );
        let a = answer(r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(1.5), json!(-32600))
        );
    }

    #[test]
    fn valid_messages_pass_and_bad_notifications_are_dropped() {
        for ok in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"board_status"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"nosuch"}"#,
        ] {
            assert_eq!(check(ok.as_bytes()), Verdict::Forward, "{ok}");
        }
        assert_eq!(
            check(br#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#),
            Verdict::Drop
        );
        assert_eq!(check(b"   "), Verdict::Drop);
    }

    #[test]
    fn an_id_no_integer_type_holds_comes_back_as_written() {
        let line = r#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/list"}"#;
        let Verdict::Answer(a) = check(line.as_bytes()) else {
            panic!("refused")
        };
        assert!(a.contains(r#""id":18446744073709551617,"#), "{a}");
        let line = r#"{"jsonrpc":"2.0","id":"\u00e9x","method":"tools/call"}"#;
        let Verdict::Answer(a) = check(line.as_bytes()) else {
            panic!("refused")
        };
        assert!(a.contains(r#""id":"\u00e9x","#), "{a}");
    }

    #[test]
    fn an_early_initialized_notification_follows_initialize() {
        let mut h = Handshake::default();
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec();
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.to_vec();
        let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_vec();
        assert!(h.pass(note.clone()).is_empty());
        assert_eq!(h.pass(init.clone()), vec![init, note.clone()]);
        assert_eq!(h.pass(list.clone()), vec![list]);
        assert_eq!(h.pass(note.clone()), vec![note]);
    }
}
