//! The client side of the socket: finds the board, starts it when none runs, sends requests.
//!
//! Blocking std I/O on purpose: a client command makes one or two round trips, and skipping an
//! async runtime keeps `board claim` quick to start.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::proto::config::{self, Paths};
use crate::proto::config_notice;
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::{request_line, Id, PROTOCOL_VERSION};

/// The agent identity from the environment (`BOARD_AGENT`, `BOARD_TOKEN`), if both are set.
pub fn env_identity() -> Option<(String, String)> {
    let agent = std::env::var("BOARD_AGENT")
        .ok()
        .filter(|s| !s.is_empty())?;
    let token = std::env::var("BOARD_TOKEN")
        .ok()
        .filter(|s| !s.is_empty())?;
    Some((agent, token))
}

/// Where to connect, and the board's paths when known (needed to start it).
#[derive(Debug, Clone)]
pub struct Target {
    /// Socket path.
    pub socket: PathBuf,
    /// The board's paths, when it was found through `board.toml`.
    pub paths: Option<Paths>,
    /// The longest wait for one answer, and for the retries of a lost one (see
    /// [`call_once`]): `BOARD_TIMEOUT`, else `[client] timeout` of `board.toml`, else 5 s.
    pub timeout: Duration,
}

impl Target {
    /// A target at `socket` that is never started (no paths), with the timeout of
    /// `BOARD_TIMEOUT` or the default (an invalid `BOARD_TIMEOUT` counts as unset here).
    pub fn new(socket: PathBuf) -> Target {
        Target {
            socket,
            paths: None,
            timeout: env_timeout()
                .ok()
                .flatten()
                .unwrap_or(config::DEFAULT_CLIENT_TIMEOUT),
        }
    }
}

/// The environment variable that overrides `[client] timeout` (a duration with a unit: `"2s"`).
pub const TIMEOUT_ENV: &str = "BOARD_TIMEOUT";

/// `BOARD_TIMEOUT`, if set. Errors: `usage` naming the variable when it is not a duration
/// with a unit or is zero.
pub fn env_timeout() -> BoardResult<Option<Duration>> {
    let Some(raw) = std::env::var_os(TIMEOUT_ENV).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let text = raw.to_string_lossy();
    match config::parse_duration(&text) {
        Ok(d) if !d.is_zero() => Ok(Some(d)),
        Ok(_) => Err(BoardError::usage(format!(
            "{TIMEOUT_ENV} must be longer than 0s"
        ))),
        Err(e) => Err(BoardError::usage(format!(
            "{TIMEOUT_ENV}: {}",
            crate::proto::sanitize::inert(&e.chars().take(200).collect::<String>())
        ))),
    }
}

/// `BOARD_SOCKET` if set, else the board of the working directory (or of `BOARD_ROOT`).
/// Errors: `unavailable` when no board is found; `usage` for a bad `BOARD_TIMEOUT`.
pub fn target() -> BoardResult<Target> {
    let env = env_timeout()?;
    let discovered = discover_paths();
    if let Some(s) = std::env::var_os("BOARD_SOCKET").filter(|s| !s.is_empty()) {
        let socket = PathBuf::from(s);
        let (paths, timeout) = match discovered {
            Ok((p, t)) if p.socket == socket => (Some(p), t),
            _ => (None, config::DEFAULT_CLIENT_TIMEOUT),
        };
        return Ok(Target {
            socket,
            paths,
            timeout: env.unwrap_or(timeout),
        });
    }
    let (paths, timeout) = discovered?;
    Ok(Target {
        socket: paths.socket.clone(),
        paths: Some(paths),
        timeout: env.unwrap_or(timeout),
    })
}

/// The board's paths and `[client] timeout`.
fn discover_paths() -> BoardResult<(Paths, Duration)> {
    let start = match std::env::var_os("BOARD_ROOT").filter(|s| !s.is_empty()) {
        Some(r) => PathBuf::from(r),
        None => std::env::current_dir()
            .map_err(|e| BoardError::unavailable(format!("no working directory: {e}")))?,
    };
    let root = config::find_root(&start).map_err(|e| BoardError::unavailable(e.to_string()))?;
    let file = root.join(config::CONFIG_FILE);
    match config::Config::load(&file) {
        Ok(cfg) => {
            let paths = Paths::new(&root, &cfg);
            config_notice::forget(&paths.data_dir);
            Ok((paths, cfg.client.timeout.0))
        }
        // A broken edit must not cut clients off the running board, which keeps its previous
        // configuration: find the socket through the data_dir as written (or the default).
        Err(config::ConfigError::Invalid { message, .. }) => {
            let cfg = lenient_config(&file);
            let paths = Paths::new(&root, &cfg);
            // Once per version of the file, not on every call of every agent.
            if config_notice::first_to_see(&file, &paths.data_dir) {
                eprintln!(
                    "board: warning: {} is invalid ({}); the board keeps its previous settings \
                     until it is fixed (`board status` shows the error)",
                    file.display(),
                    config_notice::one_line(&message)
                );
            }
            Ok((paths, cfg.client.timeout.0))
        }
        Err(e) => Err(BoardError::unavailable(e.to_string())),
    }
}

/// The defaults with only `board.data_dir` and `client.timeout` taken from `file`, when the
/// file is invalid otherwise.
fn lenient_config(file: &std::path::Path) -> config::Config {
    let mut cfg = config::Config::default();
    let table = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok());
    let get = |section: &str, key: &str| -> Option<String> {
        Some(
            table
                .as_ref()?
                .get(section)?
                .get(key)?
                .as_str()?
                .to_string(),
        )
    };
    if let Some(d) = get("board", "data_dir") {
        cfg.board.data_dir = PathBuf::from(d);
    }
    if let Some(t) = get("client", "timeout")
        .and_then(|t| config::parse_duration(&t).ok())
        .filter(|t| !t.is_zero())
    {
        cfg.client.timeout = config::Dur(t);
    }
    cfg
}

/// A new `op_id`: 128 random bits as 32 hex digits, unique per request (not per attempt: every
/// retry of one request sends the same one).
pub fn new_op_id() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `params` with an `op_id` when `method` is a write ([`crate::proto::Method::is_write`]) and
/// the params carry none; otherwise unchanged.
pub fn with_op_id(method: &str, mut params: Value) -> Value {
    let write = crate::proto::Method::from_name(method).is_some_and(|m| m.is_write());
    if let (true, Value::Object(m)) = (write, &mut params) {
        m.entry("op_id").or_insert_with(|| json!(new_op_id()));
    }
    params
}

/// Marks an `unavailable` error whose request may or may not have been applied because the
/// board closed the connection before answering (it stopped, crashed or restarted): asking
/// again with the same `op_id` tells which.
const ANSWER_LOST: &str = "answer_lost";

/// Marks an `unavailable` answer of a board that is stopping (nothing was applied).
const STOPPING: &str = "stopping";

/// Marks the `unavailable` error of a board that did not answer in time (never retried: a
/// stopped or stuck board would only be waited for again).
const TIMED_OUT: &str = "answer_timeout_ms";

/// Marks the `unavailable` error of a board of another protocol version.
const PROTOCOL: &str = "protocol";

/// Whether `e` says the answer to a request was lost (or refused by a stopping board), so the
/// same request with the same `op_id` should be sent again.
pub fn answer_was_lost(e: &BoardError) -> bool {
    e.kind == ErrorKind::Unavailable
        && (e.data.contains_key(ANSWER_LOST) || e.data.get(STOPPING) == Some(&json!(true)))
}

/// Whether a failure to reach the board may pass by itself (it is restarting): not a
/// sandbox, a protocol mismatch, a timeout or any error of another kind.
fn may_pass(e: &BoardError) -> bool {
    e.kind == ErrorKind::Unavailable
        && ![TIMED_OUT, PROTOCOL, "sandbox"]
            .iter()
            .any(|k| e.data.contains_key(*k))
}

/// Runs `attempt` (one request on a connection of its own) until it gives an answer. A lost
/// answer ([`answer_was_lost`]) is asked for again, with a short backoff (10 ms doubling to
/// 200 ms), until `timeout` has passed since the first loss; meanwhile a board that cannot be
/// reached yet (restarting) is waited for too. `attempt` must send the same `op_id` each time.
///
/// # Errors
/// The answer's own error; or the last `unavailable` error when the deadline passed, with
/// `data.retried_ms` (how long it retried).
pub fn retrying<T>(
    timeout: Duration,
    mut attempt: impl FnMut() -> BoardResult<T>,
) -> BoardResult<T> {
    let mut since: Option<Instant> = None;
    let mut delay = Duration::from_millis(10);
    loop {
        let e = match attempt() {
            Err(e) if answer_was_lost(&e) || (since.is_some() && may_pass(&e)) => e,
            other => return other,
        };
        let first = *since.get_or_insert_with(Instant::now);
        if first.elapsed() + delay > timeout {
            let ms = u64::try_from(first.elapsed().as_millis()).unwrap_or(u64::MAX);
            let message = format!(
                "{} (asked again for {} with the same op_id: no answer)",
                e.message,
                humantime::format_duration(Duration::from_millis(ms))
            );
            let mut out = BoardError::new(e.kind, message).with("retried_ms", ms);
            out.data.extend(e.data);
            return Err(out);
        }
        tracing::debug!(error = %e.message, "answer lost; asking again");
        std::thread::sleep(delay);
        delay = (delay * 2).min(Duration::from_millis(200));
    }
}

/// One request as a command sends it: on a connection of its own (starting the board when
/// `autostart` and none answers), with an `op_id` added to a write, and a lost answer asked
/// for again with that `op_id` (see [`retrying`]) so the caller learns whether its request was
/// applied. `stop` is sent once.
///
/// # Errors
/// The board's error for the request; `unavailable` when no board answers in time: the
/// message names the board's pid (when known) and socket, and `data.op_id` the request's
/// `op_id`, so it can be asked again.
pub fn call_once(
    target: &Target,
    autostart: bool,
    method: &str,
    params: Value,
) -> BoardResult<Value> {
    let params = with_op_id(method, params);
    let once = || Client::connect(target, autostart)?.call(method, params.clone());
    if method == "stop" {
        return once();
    }
    retrying(target.timeout, once).map_err(|e| match params.get("op_id") {
        Some(op) if e.kind == ErrorKind::Unavailable => e.with("op_id", op.clone()),
        _ => e,
    })
}

/// Set by Codex in the commands it runs in a sandbox without network access (which also blocks
/// Unix sockets on Linux).
const CODEX_NO_NETWORK: &str = "CODEX_SANDBOX_NETWORK_DISABLED";

/// Whether a failed connect to the socket means a sandbox (or the system) forbids it: the socket
/// may well be served, so starting a board would only wait in vain. EPERM is what seccomp
/// sandboxes answer (Codex on Linux), EACCES what file permissions or Landlock answer.
fn sandboxed(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(code) if code == nix::libc::EPERM || code == nix::libc::EACCES
    ) || std::env::var(CODEX_NO_NETWORK).is_ok_and(|v| v == "1")
}

/// The `unavailable` error for a connect that a sandbox blocked: says so and how to allow it.
fn sandbox_error(socket: &std::path::Path, e: &std::io::Error) -> BoardError {
    let codex = if std::env::var(CODEX_NO_NETWORK).is_ok_and(|v| v == "1") {
        format!(" ({CODEX_NO_NETWORK}=1 is set: this runs in Codex's sandbox)")
    } else {
        String::new()
    };
    BoardError::unavailable(format!(
        "the agent's sandbox blocks the board socket {} ({e}){codex}: allow the agent to \
         connect to it (for Codex: `-c sandbox_workspace_write.network_access=true`, or run \
         `board` outside the sandbox); if no sandbox is involved, the socket or its directory \
         belongs to another user or lacks permissions",
        socket.display()
    ))
    .with("sandbox", true)
}

/// How many boards one connect starts at most, when each started one exits without answering.
const MAX_STARTS: u32 = 3;

/// A connection to the board.
pub struct Client {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
    /// Identity added to every request's params, unless the params carry their own.
    pub identity: Option<(String, String)>,
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
        match UnixStream::connect(&target.socket) {
            Ok(s) => Client::from_stream(s, target),
            Err(e) if sandboxed(&e) => Err(sandbox_error(&target.socket, &e)),
            Err(e) => {
                let Some(paths) = target.paths.as_ref().filter(|_| autostart) else {
                    return Err(BoardError::unavailable(format!(
                        "no board is running at {} ({e}); start it with `board serve` in the project",
                        target.socket.display()
                    )));
                };
                let mut started = start_board(paths)?;
                let mut starts = 1;
                let deadline = Instant::now() + Duration::from_secs(5);
                loop {
                    // Read before connecting: a board that lost a start race to another one
                    // exits only once that one answers, so a connect after its exit succeeds.
                    let exited = started.try_recv().ok();
                    match UnixStream::connect(&target.socket) {
                        Ok(s) => return Client::from_stream(s, target),
                        Err(e) if sandboxed(&e) => return Err(sandbox_error(&target.socket, &e)),
                        // The board it started gave up because another one held the board's
                        // lock, and that one went away (crashed) before we connected: start
                        // one again, a few times at most.
                        Err(_) if exited.is_some() && starts < MAX_STARTS => {
                            started = start_board(paths)?;
                            starts += 1;
                        }
                        // The board it started gave up (an invalid board.toml, say): waiting
                        // out the deadline would only stall the caller.
                        Err(e) if exited.is_some() => {
                            return Err(BoardError::unavailable(format!(
                                "started a board but it exited ({}) without answering at {} ({e}); \
                                 run `board serve` in the project to see why",
                                exited.unwrap_or_default(),
                                target.socket.display()
                            )))
                        }
                        Err(e) if Instant::now() > deadline => {
                            return Err(BoardError::unavailable(format!(
                                "started a board but it did not answer at {} within 5 s ({e}); see {}",
                                target.socket.display(),
                                paths.log.display()
                            )))
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            }
        }
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
        if let (Some((a, t)), Value::Object(m)) = (&self.identity, &mut params) {
            m.entry("agent").or_insert_with(|| json!(a));
            m.entry("token").or_insert_with(|| json!(t));
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
            check_protocol(&hello?)?;
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
        check_protocol(&hello?)?;
        out
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
        mut self,
        after: Option<i64>,
        mut on_event: impl FnMut(&Value) -> bool,
    ) -> BoardResult<()> {
        let mut params = json!({});
        if let Some(a) = after {
            params["after"] = json!(a);
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
            if v.get("method").and_then(Value::as_str) == Some("event") && !on_event(&v["params"]) {
                return Ok(());
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

/// Removes the board identity variables from a child's environment, so a board or agent started
/// from inside an agent session does not inherit that session.
pub fn without_identity(cmd: &mut Command) -> &mut Command {
    cmd.env_remove("BOARD_SOCKET")
        .env_remove("BOARD_AGENT")
        .env_remove("BOARD_TOKEN")
}

/// Starts `board serve` for `paths` in the background, detached from this terminal and from
/// this process: it is forked twice (the middle process exits at once) into its own session
/// with no stdio, so it outlives the command that started it and is not that command's child.
/// A `board run` launcher that autostarts the board thus never has it in its process tree
/// (it becomes a child subreaper only after connecting). The receiver gets a line (`exited`)
/// if the board ends within 10 s.
pub fn start_board(paths: &Paths) -> BoardResult<mpsc::Receiver<String>> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let exe = std::env::current_exe()
        .map_err(|e| BoardError::unavailable(format!("cannot find the board binary: {e}")))?;
    let mut cmd = Command::new(exe);
    without_identity(cmd.arg("serve").current_dir(&paths.root))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // The middle process tells us the board's pid through this pipe (close-on-exec: the board
    // itself never holds it).
    let (rd, wr) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| BoardError::unavailable(format!("starting the board: {e}")))?;
    let wr_fd = wr.as_raw_fd();
    #[allow(
        unsafe_code,
        reason = "pre_exec runs between fork and exec; the closure only forks, writes, exits or calls setsid"
    )]
    // SAFETY: between fork and exec only async-signal-safe calls run: fork, write, _exit,
    // setsid.
    unsafe {
        cmd.pre_exec(
            move || match nix::unistd::fork().map_err(std::io::Error::from)? {
                nix::unistd::ForkResult::Parent { child } => {
                    let pid = child.as_raw().to_ne_bytes();
                    nix::libc::write(wr_fd, pid.as_ptr().cast(), pid.len());
                    nix::libc::_exit(0);
                }
                nix::unistd::ForkResult::Child => {
                    nix::unistd::setsid().map_err(std::io::Error::from)?;
                    Ok(())
                }
            },
        );
    }
    let mut middle = cmd
        .spawn()
        .map_err(|e| BoardError::unavailable(format!("starting the board: {e}")))?;
    drop(wr);
    let _ = middle.wait();
    let mut buf = [0u8; 4];
    let mut rd = std::fs::File::from(rd);
    let pid = match rd.read_exact(&mut buf) {
        Ok(()) => i32::from_ne_bytes(buf),
        Err(e) => return Err(BoardError::unavailable(format!("starting the board: {e}"))),
    };
    let start = crate::os::procfs::start_time(pid).ok();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let gone = match start {
                Some(st) => matches!(
                    crate::os::procfs::liveness(pid, st),
                    crate::os::procfs::Liveness::Gone | crate::os::procfs::Liveness::Zombie
                ),
                None => true,
            };
            if gone {
                let _ = tx.send("exited".to_string());
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    Ok(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost() -> BoardError {
        BoardError::unavailable("closed").with(ANSWER_LOST, true)
    }

    #[test]
    fn writes_get_an_op_id_of_their_own_and_keep_a_given_one() {
        let a = with_op_id("claim", json!({}));
        let b = with_op_id("claim", json!({}));
        let (a, b) = (a["op_id"].as_str().unwrap(), b["op_id"].as_str().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_eq!(with_op_id("done", json!({"op_id": "x"}))["op_id"], "x");
        assert!(with_op_id("list", json!({})).get("op_id").is_none());
    }

    #[test]
    fn a_lost_answer_is_asked_again_until_one_comes() {
        let mut tries = 0;
        let out = retrying(Duration::from_secs(5), || {
            tries += 1;
            match tries {
                1 => Err(lost()),
                // The board is restarting: not reachable for a moment.
                2 => Err(BoardError::unavailable("no board is running")),
                _ => Ok(tries),
            }
        });
        assert_eq!(out.unwrap(), 3);
    }

    #[test]
    fn only_lost_answers_are_asked_again() {
        for e in [
            BoardError::unavailable("no board is running"),
            BoardError::unavailable("silent").with(TIMED_OUT, 5000),
            BoardError::new(ErrorKind::Conflict, "held"),
        ] {
            let mut tries = 0;
            let out: BoardResult<()> = retrying(Duration::from_secs(5), || {
                tries += 1;
                Err(e.clone())
            });
            assert_eq!(out.unwrap_err().message, e.message);
            assert_eq!(tries, 1, "{}", e.message);
        }
        // A timeout while asking again ends the retries too.
        let mut tries = 0;
        let out: BoardResult<()> = retrying(Duration::from_secs(5), || {
            tries += 1;
            Err(if tries == 1 {
                lost()
            } else {
                BoardError::unavailable("silent").with(TIMED_OUT, 5000)
            })
        });
        assert!(out.unwrap_err().data.contains_key(TIMED_OUT));
        assert_eq!(tries, 2);
    }

    #[test]
    fn asking_again_ends_at_the_deadline() {
        let t0 = Instant::now();
        let out: BoardResult<()> = retrying(Duration::from_millis(300), || Err(lost()));
        let e = out.unwrap_err();
        assert!(e.data.contains_key("retried_ms"), "{e:?}");
        assert!(e.data.contains_key(ANSWER_LOST), "{e:?}");
        assert!(t0.elapsed() < Duration::from_secs(3));
    }
}
