//! A scripted model: a local HTTP endpoint on 127.0.0.1 that speaks one vendor's API and
//! replays one fixed turn ([`turn`]), reading each tool result the way a model does. Pointed at
//! it, a real agent CLI calls the board's MCP tools and runs shell commands itself, and fires its
//! hooks, with no model reachable.
//!
//! - this module: the HTTP/1.1 server (keep-alive, `Content-Length` or chunked request bodies),
//!   one thread per connection, every request kept in a [`Log`] for assertions and for the
//!   failure message.
//! - [`turn`]: the vendor-neutral script (which action comes next, given the tool results so far).
//! - one codec per vendor API, turning the script's [`turn::Action`] into that API's answer and
//!   the CLI's request into the tool results so far.
//!
//! Deterministic by construction: the answer depends only on the request, never on time or on
//! earlier requests (a model is stateless; the CLI sends the whole conversation each time).

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;
pub mod turn;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// One HTTP request as the CLI sent it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `POST`, `GET`, ...
    pub method: String,
    /// Path with query, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Value::Null` when empty or not JSON).
    pub json: Value,
    /// The raw body.
    pub body: Vec<u8>,
}

impl Request {
    /// The header `name` (lower-case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The path without its query string.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or("")
    }
}

/// One answer: status, content type and body. Server-sent events are a body too: the whole
/// stream is written at once (the CLIs read it incrementally either way).
#[derive(Debug, Clone)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: String,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// 200 with a JSON body.
    pub fn json(v: &Value) -> Response {
        Response {
            status: 200,
            content_type: "application/json".into(),
            body: v.to_string().into_bytes(),
        }
    }

    /// 200 with a `text/event-stream` body made of `events`: each is (event name or None, data).
    pub fn sse<'a>(events: impl IntoIterator<Item = (Option<&'a str>, Value)>) -> Response {
        let mut body = String::new();
        for (name, data) in events {
            if let Some(n) = name {
                body.push_str(&format!("event: {n}\n"));
            }
            body.push_str(&format!("data: {data}\n\n"));
        }
        Response {
            status: 200,
            content_type: "text/event-stream".into(),
            body: body.into_bytes(),
        }
    }

    /// `text/event-stream` from raw text (for streams with a non-JSON line such as `[DONE]`).
    pub fn sse_raw(text: String) -> Response {
        Response {
            status: 200,
            content_type: "text/event-stream".into(),
            body: text.into_bytes(),
        }
    }

    /// `status` with a JSON error body naming `why`.
    pub fn error(status: u16, why: &str) -> Response {
        Response {
            status,
            content_type: "application/json".into(),
            body: serde_json::json!({"error": {"message": why, "type": "scripted_endpoint"}})
                .to_string()
                .into_bytes(),
        }
    }
}

/// Every request and the answer's status, in arrival order.
#[derive(Debug, Default, Clone)]
pub struct Log(Arc<Mutex<Vec<(Request, u16)>>>);

impl Log {
    /// A copy of what arrived so far.
    pub fn requests(&self) -> Vec<(Request, u16)> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// One line per request (method, path, status, body cut to `max` bytes), for failure messages.
    pub fn describe(&self, max: usize) -> String {
        self.requests()
            .iter()
            .map(|(r, st)| {
                let b = String::from_utf8_lossy(&r.body);
                let cut: String = b.chars().take(max).collect();
                format!("{} {} -> {st}: {cut}", r.method, r.path)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A running endpoint. It stops accepting when dropped (the listener thread ends on its next
/// connection attempt or with the test process).
pub struct Endpoint {
    /// The port on 127.0.0.1.
    pub port: u16,
    /// What the CLI sent.
    pub log: Log,
}

impl Endpoint {
    /// Starts an endpoint answering every request with `answer`.
    pub fn start(answer: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Log::default();
        let answer = Arc::new(answer);
        let l2 = log.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (answer, log) = (answer.clone(), l2.clone());
                std::thread::spawn(move || serve(conn, &*answer, &log));
            }
        });
        Endpoint { port, log }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// Serves requests on one connection until the client closes it.
fn serve(conn: TcpStream, answer: &(dyn Fn(&Request) -> Response + Send + Sync), log: &Log) {
    conn.set_read_timeout(Some(Duration::from_secs(300))).ok();
    let mut w = match conn.try_clone() {
        Ok(w) => w,
        Err(_) => return,
    };
    let mut r = BufReader::new(conn);
    while let Some(req) = read_request(&mut r) {
        let res = if req
            .header("content-encoding")
            .is_some_and(|e| e != "identity")
        {
            Response::error(415, "the scripted endpoint reads uncompressed bodies only")
        } else {
            answer(&req)
        };
        if let Ok(mut l) = log.0.lock() {
            l.push((req.clone(), res.status));
        }
        let head = format!(
            "HTTP/1.1 {} {}\r\ncontent-type: {}\r\ncontent-length: {}\r\ncache-control: no-cache\r\n\r\n",
            res.status,
            if res.status == 200 { "OK" } else { "Error" },
            res.content_type,
            res.body.len()
        );
        if w.write_all(head.as_bytes()).is_err() || w.write_all(&res.body).is_err() {
            return;
        }
        w.flush().ok();
        if req
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"))
        {
            return;
        }
    }
}

/// Reads one request; None at the end of the connection or on a malformed one.
fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let body = if get("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        read_chunked(r)?
    } else {
        let n: usize = get("content-length")
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let mut b = vec![0; n];
        r.read_exact(&mut b).ok()?;
        b
    };
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(Request {
        method,
        path,
        headers,
        json,
        body,
    })
}

fn read_chunked(r: &mut BufReader<TcpStream>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        r.read_line(&mut size).ok()?;
        let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
        let mut chunk = vec![0; n + 2];
        r.read_exact(&mut chunk).ok()?;
        if n == 0 {
            return Some(body);
        }
        body.extend_from_slice(&chunk[..n]);
    }
}
