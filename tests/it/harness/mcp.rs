//! A client of `board mcp`, as an MCP host speaks to it: JSON-RPC lines over the server's
//! stdin/stdout (a child's pipes, or two FIFOs an agent's shell redirected).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use super::{wait_child, STEP};

/// One MCP session with a `board mcp` server.
pub struct Mcp {
    /// The server (or `board run … -- board mcp`), when this client started it.
    child: Option<Child>,
    to: Option<Box<dyn Write + Send>>,
    lines: Receiver<String>,
    next_id: i64,
}

impl Mcp {
    /// Starts `cmd` (a `board mcp`, maybe under `board run`) with piped stdin and stdout.
    pub fn spawn(mut cmd: Command) -> Mcp {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn board mcp");
        let to = child.stdin.take().expect("stdin");
        let from = child.stdout.take().expect("stdout");
        let mut c = Mcp::over(to, from);
        c.child = Some(child);
        c
    }

    /// A client writing requests to `to` and reading answers from `from` (read on a thread).
    pub fn over(to: impl Write + Send + 'static, from: impl Read + Send + 'static) -> Mcp {
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(from).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Mcp {
            child: None,
            to: Some(Box::new(to)),
            lines,
            next_id: 0,
        }
    }

    /// Writes one raw line (a newline is added).
    pub fn send_line(&mut self, line: &str) {
        let to = self.to.as_mut().expect("stdin open");
        writeln!(to, "{line}").unwrap();
        to.flush().unwrap();
    }

    /// Writes one message.
    pub fn send(&mut self, msg: &Value) {
        self.send_line(&msg.to_string());
    }

    /// The next line the server wrote, as written, within [`STEP`].
    #[track_caller]
    pub fn read_raw(&mut self) -> String {
        self.lines
            .recv_timeout(STEP)
            .unwrap_or_else(|e| panic!("no line from board mcp within {STEP:?}: {e}"))
    }

    /// The next line the server wrote, as JSON, within [`STEP`].
    #[track_caller]
    pub fn read(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(STEP)
            .unwrap_or_else(|e| panic!("no line from board mcp within {STEP:?}: {e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Sends a request and returns the response with its id (skipping notifications).
    #[track_caller]
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self.read();
            if v["id"] == json!(id) {
                return v;
            }
            assert!(v.get("id").is_none(), "answer to another request: {v}");
        }
    }

    /// The handshake: `initialize` (its response is returned), then
    /// `notifications/initialized`.
    pub fn initialize(&mut self) -> Value {
        let init = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "board-test", "version": "0"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }

    /// `tools/call`; returns the CallToolResult, error or not.
    #[track_caller]
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        r.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{tool} failed at the protocol level: {r}"))
    }

    /// `tools/call` that must succeed; returns its `structuredContent` (which the text content
    /// must repeat).
    #[track_caller]
    pub fn tool(&mut self, tool: &str, arguments: Value) -> Value {
        let r = self.call(tool, arguments);
        ok_result(&r).clone()
    }

    /// Closes the server's stdin (which ends it) and waits up to `timeout` for it to exit.
    pub fn close(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.to.take();
        let child = self.child.as_mut().expect("a server this client started");
        wait_child(child, timeout)
    }
}

/// The `structuredContent` of a successful CallToolResult, checked against its text content.
#[track_caller]
pub fn ok_result(r: &Value) -> &Value {
    assert_eq!(r["isError"], json!(false), "tool failed: {r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    let from_text: Value = serde_json::from_str(text).unwrap();
    assert_eq!(&from_text, &r["structuredContent"]);
    &r["structuredContent"]
}

impl Drop for Mcp {
    fn drop(&mut self) {
        self.to.take();
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
