//! One connection to the board ([`Client`]): a command's `hello` and request go out in one write
//! (one round trip), every read and write is bounded by the answer deadline, and an I/O failure
//! becomes an error that names the board's pid (SO_PEERCRED of the listening socket, known even
//! when the board is stopped and never accepts) and socket: a timeout is final, anything else
//! is a lost answer (`answer_was_lost` of `retry`).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::autostart::{sandbox_error, sandboxed, start_and_connect};
use super::locate::{env_identity, EnvIdentity, Target, TIMEOUT_ENV};
use super::markers::{ANSWER_LOST, PROTOCOL, TIMED_OUT};
use super::op_id::with_op_id;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::{request_line, Id, PROTOCOL_VERSION};

/// A connection to the board.
pub struct Client {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
    /// Identity added to every request's params, unless the params carry their own.
    pub identity: Option<EnvIdentity>,
    /// The socket, to name it in errors.
    socket: PathBuf,
    /// The board's pid as the kernel knows it (SO_PEERCRED), to name it in errors.
    pid: Option<i32>,
    /// The answer deadline every read and write on this connection is bounded by.
    timeout: Duration,
}
impl Client {
    /// Connects to `target`, starting the board (detached) when `autostart` and none answers.
    /// Every later read and write on the connection is bounded by `target.timeout`.
    /// Errors: `unavailable` when no board answers within 5 s.
    pub fn connect(target: &Target, autostart: bool) -> BoardResult<Client> {
        let stream = match UnixStream::connect(&target.socket) {
            Ok(s) => s,
            Err(e) if sandboxed(&e) => return Err(sandbox_error(&target.socket, &e)),
            Err(e) => {
                let Some(paths) = target.paths.as_ref().filter(|_| autostart) else {
                    return Err(BoardError::unavailable(format!(
                        "no board is running at {} ({e}); start it with `board serve` in the project",
                        target.socket.display()
                    )));
                };
                start_and_connect(target, paths)?
            }
        };
        Client::from_stream(stream, target)
    }

    fn from_stream(s: UnixStream, target: &Target) -> BoardResult<Client> {
        let reader = BufReader::new(
            s.try_clone()
                .map_err(|e| BoardError::unavailable(e.to_string()))?,
        );
        // The credentials of a listening socket are its creator's: the board's pid, even when
        // the board is stopped and never accepts this connection.
        let pid = nix::sys::socket::getsockopt(&s, nix::sys::socket::sockopt::PeerCredentials)
            .ok()
            .map(|c| c.pid())
            .filter(|p| *p > 0);
        let c = Client {
            writer: s,
            reader,
            next_id: 1,
            identity: env_identity(),
            socket: target.socket.clone(),
            pid,
            timeout: target.timeout,
        };
        c.set_timeout(target.timeout)?;
        Ok(c)
    }

    /// "the board (pid N) at SOCKET", for errors.
    fn board_named(&self) -> String {
        match self.pid {
            Some(p) => format!("the board (pid {p}) at {}", self.socket.display()),
            None => format!("the board at {}", self.socket.display()),
        }
    }

    /// The error of an I/O failure while waiting for (or sending) a request: a timeout names
    /// the board's pid and socket and is final; anything else means the answer was lost.
    fn io_error(&self, doing: &str, e: &std::io::Error) -> BoardError {
        use std::io::ErrorKind as Io;
        let with_board = |e: BoardError| {
            let e = e.with("socket", self.socket.display().to_string());
            match self.pid {
                Some(p) => e.with("pid", p),
                None => e,
            }
        };
        if matches!(e.kind(), Io::WouldBlock | Io::TimedOut) {
            let ms = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX);
            return with_board(
                BoardError::unavailable(format!(
                    "{} did not answer within {} ({doing}): it may be stopped (SIGSTOP) or \
                     stuck; the request may or may not have been applied (`{TIMEOUT_ENV}` or \
                     `[client] timeout` in board.toml sets this wait)",
                    self.board_named(),
                    humantime::format_duration(self.timeout)
                ))
                .with(TIMED_OUT, ms),
            );
        }
        with_board(
            BoardError::unavailable(format!(
                "{} closed the connection before answering ({doing}: {e}): the request may \
                 or may not have been applied (`board show`/`board list` tell)",
                self.board_named()
            ))
            .with(ANSWER_LOST, true),
        )
    }

    fn request(&mut self, method: &str, params: Value) -> String {
        let mut params = with_op_id(method, params);
        if let (Some(who), Value::Object(m)) = (&self.identity, &mut params) {
            if let Some(a) = &who.agent {
                m.entry("agent").or_insert_with(|| json!(a));
            }
            if let Some(t) = &who.token {
                m.entry("token").or_insert_with(|| json!(t));
            }
        }
        let id = Id::from(self.next_id);
        self.next_id += 1;
        request_line(&id, method, &params)
    }

    /// The next answer line as the board sent it (newline included).
    fn read_line(&mut self) -> BoardResult<String> {
        let mut line = String::new();
        let n = match self.reader.read_line(&mut line) {
            Ok(n) => n,
            Err(e) => return Err(self.io_error("reading the answer", &e)),
        };
        if n == 0 {
            let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
            return Err(self.io_error("reading the answer", &eof));
        }
        Ok(line)
    }

    fn read_response(&mut self) -> BoardResult<Value> {
        let line = self.read_line()?;
        let v: Value = serde_json::from_str(&line).map_err(|e| {
            BoardError::internal(format!("the board sent a line that is not JSON: {e}"))
        })?;
        // Moved out, not cloned: a full list's result is a tree of ~200 000 nodes.
        let Value::Object(mut m) = v else {
            return Ok(Value::Null);
        };
        match m.get("error") {
            Some(e) => Err(BoardError::from_json(e)),
            None => Ok(m.remove("result").unwrap_or(Value::Null)),
        }
    }

    /// Sends one request (after `hello` when `hello`, checking its protocol) and returns the
    /// answer line unparsed, for a caller that passes parts of a large result through as they
    /// are (see [`split_answer`]). Errors: `unavailable` as [`Client::call`].
    pub fn call_line(&mut self, method: &str, params: Value, hello: bool) -> BoardResult<String> {
        let mut out = String::new();
        if hello {
            out = self.request("hello", json!({}));
            out.push('\n');
        }
        out.push_str(&self.request(method, params));
        out.push('\n');
        if let Err(e) = self.writer.write_all(out.as_bytes()) {
            return Err(self.io_error("writing the request", &e));
        }
        if hello {
            let hello = self.read_response();
            if let Err(e) = &hello {
                // The connection is dead or silent: the second answer will not come either.
                if e.data.contains_key(TIMED_OUT) || e.data.contains_key(ANSWER_LOST) {
                    return Err(e.clone());
                }
            }
            let line = self.read_line();
            // A refused `hello` (an ended session: `lapsed`) was refused for the same reason as
            // the method, whose answer says more (the task's holder now): pass that on.
            if let Ok(h) = &hello {
                check_protocol(h)?;
            }
            return line;
        }
        self.read_line()
    }

    /// Bounds every later read and write on this connection by `limit` (a hook must never hang
    /// its CLI on a board that accepts but does not answer; every connection starts with its
    /// target's timeout). Errors: `unavailable`.
    pub fn set_timeout(&self, limit: Duration) -> BoardResult<()> {
        let e = |e: std::io::Error| BoardError::unavailable(e.to_string());
        self.writer.set_write_timeout(Some(limit)).map_err(e)?;
        self.reader
            .get_ref()
            .set_read_timeout(Some(limit))
            .map_err(e)
    }

    /// Sends `hello` and `method` in one write (one round trip) and returns `method`'s result.
    /// Refuses a board speaking another protocol version.
    pub fn call(&mut self, method: &str, params: Value) -> BoardResult<Value> {
        let hello = self.request("hello", json!({}));
        let req = self.request(method, params);
        let both = format!("{hello}\n{req}\n");
        if let Err(e) = self.writer.write_all(both.as_bytes()) {
            return Err(self.io_error("writing the request", &e));
        }
        let hello = self.read_response();
        if let Err(e) = &hello {
            // The connection is dead or silent: the second answer will not come either.
            if e.data.contains_key(TIMED_OUT) || e.data.contains_key(ANSWER_LOST) {
                return hello;
            }
        }
        let out = self.read_response();
        match (hello, out) {
            (Ok(h), out) => {
                check_protocol(&h)?;
                out
            }
            // Refused for the same reason as `hello` (an ended session), and saying more.
            (Err(_), Err(method)) => Err(method),
            // `hello` failed on its own (a store connection lost for one call) but the request
            // was answered: it may have been applied, so its answer is the truth, not `hello`'s
            // error (a caller told "unavailable" would apply it again under a new `op_id`).
            (Err(_), Ok(out)) => Ok(out),
        }
    }

    /// Whether the board has closed this connection (it stopped or restarted since): a request
    /// written now would be lost, so a long-lived connection (`board json`, `board mcp`) reconnects first. Looks without reading
    /// or blocking (a non-blocking MSG_PEEK).
    pub fn peer_closed(&self) -> bool {
        use nix::sys::socket::{recv, MsgFlags};
        use std::os::fd::AsRawFd;
        if !self.reader.buffer().is_empty() {
            return false;
        }
        let mut byte = [0u8; 1];
        match recv(
            self.writer.as_raw_fd(),
            &mut byte,
            MsgFlags::MSG_PEEK | MsgFlags::MSG_DONTWAIT,
        ) {
            Ok(0) => true,
            Ok(_) => false,
            Err(nix::errno::Errno::EAGAIN) | Err(nix::errno::Errno::EINTR) => false,
            Err(_) => true,
        }
    }

    /// Sends one request without `hello` (for long-lived connections that already checked it).
    pub fn call_raw(&mut self, method: &str, params: Value) -> BoardResult<Value> {
        let req = self.request(method, params);
        if let Err(e) = self.writer.write_all(format!("{req}\n").as_bytes()) {
            return Err(self.io_error("writing the request", &e));
        }
        self.read_response()
    }

    /// Turns this connection into an event stream (`subscribe`) starting after event `after`;
    /// calls `on_event` for each event until it returns false or the board goes away.
    pub fn follow(
        self,
        after: Option<i64>,
        mut on_event: impl FnMut(&Value) -> bool,
    ) -> BoardResult<()> {
        self.follow_stream(after, false, |item| match item {
            StreamItem::Event(e) => on_event(e),
            StreamItem::Notice(_) => true,
        })
    }

    /// As [`Client::follow`], with the board's notices too when `notices` is true (what
    /// `[notify] terminal` shows); `on_item` gets each event or notice's `params` until it
    /// returns false or the board goes away.
    pub fn follow_stream(
        mut self,
        after: Option<i64>,
        notices: bool,
        mut on_item: impl FnMut(StreamItem<'_>) -> bool,
    ) -> BoardResult<()> {
        let mut params = json!({});
        if let Some(a) = after {
            params["after"] = json!(a);
        }
        if notices {
            params["notices"] = json!(true);
        }
        self.call("subscribe", params)?;
        // A stream is quiet for as long as nothing happens: only its answer had a deadline.
        self.reader
            .get_ref()
            .set_read_timeout(None)
            .map_err(|e| BoardError::unavailable(e.to_string()))?;
        loop {
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) | Err(_) => return Ok(()),
                Ok(_) => {}
            }
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if let Some(e) = v.get("error") {
                return Err(BoardError::from_json(e));
            }
            let item = match v.get("method").and_then(Value::as_str) {
                Some("event") => StreamItem::Event(&v["params"]),
                Some("notice") => StreamItem::Notice(&v["params"]),
                _ => continue,
            };
            if !on_item(item) {
                return Ok(());
            }
        }
    }
}

/// How [`Client::follow_until`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Followed {
    /// The callback asked to stop.
    Stopped,
    /// The deadline passed first.
    TimedOut,
    /// The board closed the stream (it stopped or restarted).
    Closed,
}

impl Client {
    /// [`Client::follow`] with a deadline: events after `after` go to `on_event` until it
    /// returns false, `deadline` passes, or the board closes the stream. Errors: the board's
    /// refusal of `subscribe`, or `unavailable` when the socket fails.
    pub fn follow_until(
        mut self,
        after: i64,
        deadline: std::time::Instant,
        mut on_event: impl FnMut(&Value) -> bool,
    ) -> BoardResult<Followed> {
        self.call("subscribe", json!({ "after": after }))?;
        let mut line = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Ok(Followed::TimedOut);
            }
            // A read that times out keeps what it read of a line in `line` for the next one.
            self.reader
                .get_ref()
                .set_read_timeout(Some(left))
                .map_err(|e| BoardError::unavailable(e.to_string()))?;
            match self.reader.read_until(b'\n', &mut line) {
                Ok(0) => return Ok(Followed::Closed),
                Ok(_) if line.ends_with(b"\n") => {}
                Ok(_) => return Ok(Followed::Closed),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) =>
                {
                    continue
                }
                Err(e) => return Err(self.io_error("reading the event stream", &e)),
            }
            let v = serde_json::from_slice::<Value>(&line);
            line.clear();
            let Ok(v) = v else {
                continue;
            };
            if let Some(e) = v.get("error") {
                return Err(BoardError::from_json(e));
            }
            if v.get("method").and_then(Value::as_str) == Some("event") && !on_event(&v["params"]) {
                return Ok(Followed::Stopped);
            }
        }
    }
}

/// The members of an answer line's `result` object, each as the raw JSON text the board sent,
/// so that a large member (a page of tasks) can be copied out without being parsed into a tree.
/// Errors: the answer's own `error`; `internal` for a line that is not a JSON-RPC answer with
/// an object result.
pub fn split_answer(line: &str) -> BoardResult<std::collections::BTreeMap<&str, &RawValue>> {
    // One pass over the line: the members are split out where they are, not re-read.
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        result: Option<std::collections::BTreeMap<&'a str, &'a RawValue>>,
        error: Option<Value>,
    }
    let a: Answer = serde_json::from_str(line).map_err(|e| {
        BoardError::internal(format!("the board sent a line that is not an answer: {e}"))
    })?;
    if let Some(e) = a.error {
        return Err(BoardError::from_json(&e));
    }
    Ok(a.result.unwrap_or_default())
}

/// Checks a `hello` result: errors with `unavailable` (and how to restart the board) when the
/// board speaks another protocol version than this client.
pub fn check_protocol(hello: &Value) -> BoardResult<()> {
    let theirs = hello.get("protocol").and_then(Value::as_u64).unwrap_or(0);
    if theirs != u64::from(PROTOCOL_VERSION) {
        return Err(BoardError::unavailable(format!(
            "the running board speaks protocol {theirs}, this client {PROTOCOL_VERSION}: \
             restart it with `board stop` (any command then starts the new one)"
        ))
        .with(PROTOCOL, theirs));
    }
    Ok(())
}

/// One message of a `subscribe` stream: an event of the log, or a notice (`notices: true`).
#[derive(Debug, Clone, Copy)]
pub enum StreamItem<'a> {
    /// An event's `params` (see [`crate::proto::EventView`]).
    Event(&'a Value),
    /// A notice's `params` (see [`crate::proto::NoticeView`]).
    Notice(&'a Value),
}
