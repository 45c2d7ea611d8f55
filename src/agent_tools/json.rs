//! `board json`: JSON-RPC 2.0 requests on stdin, one per line; one response per line on stdout.
//!
//! Every input line gets exactly one response line, in input order, and nothing on the input can
//! end the loop but end of file (exit 0). A line that is not JSON, not valid UTF-8, longer than
//! [`MAX_LINE`], not a JSON-RPC request, names an unknown method or carries params of the wrong
//! type is answered with an `invalid` error whose `error.data.line` is the 1-based line number and
//! whose `id` is the request's id when one could be read; nothing is changed on the board.
//!
//! Valid requests are checked locally with [`parse_request`] and forwarded over one socket
//! connection ([`Link`]), with the agent identity of the environment (`BOARD_AGENT`,
//! `BOARD_TOKEN`) added to their params as the CLI does. `subscribe` (a stream) and the
//! launcher's own `session.*` calls are refused with a `usage` error. `board json --schema` prints
//! the JSON Schema of every request and response, generated from the wire's types
//! ([`crate::proto::schema`]).

use std::io::{self, BufRead, Write};

use serde_json::Value;

use crate::proto::client::{self, Client};
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::line::{read_line, Line};
use crate::proto::methods::Access;
use crate::proto::methods::{Call, NoParams};
use crate::proto::{error_line, parse_request, result_line, Id, MAX_LINE};

/// Errors that end `board json` (input is never one of them: bad lines are answered).
#[derive(Debug, thiserror::Error)]
pub enum JsonStdioError {
    /// Standard input could not be read (not: it held bad data).
    #[error("reading standard input: {0}")]
    Read(io::Error),
    /// Standard output is closed or failed; nobody can read the answers any more.
    #[error("writing standard output: {0}")]
    Write(io::Error),
}

/// One lazily opened connection to the board, shared by all requests of one `board json` or
/// `board mcp` process. It connects (starting the board if needed) on first use, checks the protocol
/// version with one `hello`, then sends every request with [`Client::call_raw`]. A connection
/// the board closed (it restarted) is replaced before the next request is written; one that
/// failed during a request is dropped and the next attempt opens a new one.
///
/// A write without an `op_id` gets one here, and an answer lost on the way (the board stopped,
/// crashed or restarted) is asked for again with that same `op_id` until the board answers or
/// the client timeout passes ([`client::retrying`]), so the caller always learns the outcome.
pub struct Link {
    client: Option<Client>,
    target: Option<client::Target>,
}

impl Default for Link {
    fn default() -> Self {
        Link::new()
    }
}

impl Link {
    /// A link that has not connected yet.
    pub fn new() -> Link {
        Link {
            client: None,
            target: None,
        }
    }

    /// Sends one request with the environment's identity and returns its result.
    /// Errors: the board's own error for the request, or `unavailable` when no board answers
    /// in time (then `data.op_id` names the write's `op_id`: asking again with it tells whether
    /// it was applied).
    pub fn call(&mut self, method: &str, params: Value) -> BoardResult<Value> {
        let target = match &self.target {
            Some(t) => t.clone(),
            None => self.target.insert(client::target()?).clone(),
        };
        let params = client::with_op_id(method, params);
        client::retrying(target.timeout, || {
            self.attempt(&target, method, params.clone())
        })
        .map_err(|e| match params.get("op_id") {
            Some(op) if e.kind == ErrorKind::Unavailable => e.with("op_id", op.clone()),
            _ => e,
        })
    }

    /// One attempt of a request on the kept connection (opened first when there is none).
    fn attempt(
        &mut self,
        target: &client::Target,
        method: &str,
        params: Value,
    ) -> BoardResult<Value> {
        // A board that restarted since the last call closed our connection: open a new one
        // rather than fail this call with a broken pipe.
        if self.client.as_ref().is_some_and(Client::peer_closed) {
            self.client = None;
        }
        let client = match self.client.as_mut() {
            Some(c) => c,
            None => self.client.insert(open(target)?),
        };
        let out = client.call_raw(method, params);
        if matches!(&out, Err(e) if e.kind == ErrorKind::Unavailable) {
            self.client = None;
        }
        out
    }
}

/// Connects and says `hello` as an operator (a pure version check: it renews nothing and cannot
/// fail on a bad identity, which the first real request reports instead).
fn open(target: &client::Target) -> BoardResult<Client> {
    let mut c = Client::connect(target, true)?;
    let identity = c.identity.take();
    let hello = c.send_raw(Call::Hello(NoParams {}))?;
    client::check_protocol(&hello)?;
    c.identity = identity;
    Ok(c)
}

/// Answers one input line (line number `line_no`, 1-based) as one response line.
pub fn answer(link: &mut Link, line: &Line, line_no: u64) -> String {
    let text = match line {
        Line::Eof => return String::new(),
        Line::TooLong(n) => {
            let e = BoardError::invalid(format!(
                "line {line_no} is {n} bytes; the limit is {MAX_LINE} bytes (1 MiB)"
            ))
            .with_code(-32600);
            return error_line(&Id::null(), &e.with("line", line_no));
        }
        Line::Text(t) => t,
    };
    let req = match parse_request(text) {
        Ok(r) => r,
        Err((id, e)) => {
            let id = if id.is_null() { salvage_id(text) } else { id };
            return error_line(&id, &e.with("line", line_no));
        }
    };
    let refused = match req.method.access() {
        Access::Stream => Some(
            "`subscribe` turns a connection into an event stream and is not available over \
             `board json`; use `board log --follow --json` for a stream of events",
        ),
        Access::Launcher => Some(
            "`session.*` calls belong to the `board run` launcher; start an agent with \
             `board run -- CMD` instead",
        ),
        Access::Read | Access::Write | Access::Land => None,
    };
    if let Some(why) = refused {
        return error_line(&req.id, &BoardError::usage(why).with("line", line_no));
    }
    match link.call(req.method.name(), Value::Object(req.params)) {
        Ok(v) => result_line(&req.id, &v),
        Err(e) => error_line(&req.id, &e.with("line", line_no)),
    }
}

/// The id of a line refused for invalid UTF-8 that is JSON otherwise (read with the bad bytes
/// replaced), so the caller can match the error to its request. Null when there is none.
fn salvage_id(line: &[u8]) -> Id {
    if std::str::from_utf8(line).is_ok() {
        return Id::null();
    }
    let lossy = String::from_utf8_lossy(line).replace('\u{fffd}', "?");
    match parse_request(lossy.as_bytes()) {
        Ok(r) => r.id,
        Err((id, _)) => id,
    }
}

/// Runs the loop over `input` and `output` until end of input. Errors: only I/O failures of the
/// two streams (bad input lines are answered, never fatal).
pub fn serve<R: BufRead, W: Write>(
    input: &mut R,
    output: &mut W,
    link: &mut Link,
) -> Result<(), JsonStdioError> {
    let mut line_no = 0u64;
    loop {
        let line = read_line(input, MAX_LINE).map_err(JsonStdioError::Read)?;
        if line == Line::Eof {
            return Ok(());
        }
        line_no += 1;
        let out = answer(link, &line, line_no);
        output
            .write_all(out.as_bytes())
            .and_then(|()| output.write_all(b"\n"))
            .and_then(|()| output.flush())
            .map_err(JsonStdioError::Write)?;
    }
}

/// `board json`: serves stdin/stdout; returns the exit code (0 at end of input, 1 when a stream
/// failed).
pub fn run() -> i32 {
    let stdin = io::stdin();
    let mut input = io::BufReader::with_capacity(64 * 1024, stdin.lock());
    let stdout = io::stdout();
    let mut output = stdout.lock();
    let mut link = Link::new();
    match serve(&mut input, &mut output, &mut link) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("board json: {e}");
            1
        }
    }
}

/// `board json --schema`: prints the generated schema; returns the exit code.
pub fn print_schema() -> i32 {
    let mut out = io::stdout().lock();
    let text = crate::proto::schema::schema_text();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("board json: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bad_lines_are_answered_without_a_board() {
        let mut link = Link::new();
        let out = answer(&mut link, &Line::Text(b"{oops".to_vec()), 3);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["error"]["data"]["line"], json!(3));
        assert_eq!(v["error"]["data"]["kind"], json!("invalid"));
        let out = answer(
            &mut link,
            &Line::Text(br#"{"jsonrpc":"2.0","id":9,"method":"subscribe"}"#.to_vec()),
            4,
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["id"], json!(9));
        assert_eq!(v["error"]["data"]["kind"], json!("usage"));
    }
}
