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
use crate::proto::error::{BoardError, BoardResult};
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
}

/// `BOARD_SOCKET` if set, else the board of the working directory (or of `BOARD_ROOT`).
pub fn target() -> BoardResult<Target> {
    let discovered = discover_paths();
    if let Some(s) = std::env::var_os("BOARD_SOCKET").filter(|s| !s.is_empty()) {
        let socket = PathBuf::from(s);
        let paths = discovered.ok().filter(|p| p.socket == socket);
        return Ok(Target { socket, paths });
    }
    let paths = discovered?;
    Ok(Target {
        socket: paths.socket.clone(),
        paths: Some(paths),
    })
}

fn discover_paths() -> BoardResult<Paths> {
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
            Ok(paths)
        }
        // A broken edit must not cut clients off the running board, which keeps its previous
        // configuration: find the socket through the data_dir as written (or the default).
        Err(config::ConfigError::Invalid { message, .. }) => {
            let paths = Paths::new(&root, &lenient_config(&file));
            // Once per version of the file, not on every call of every agent.
            if config_notice::first_to_see(&file, &paths.data_dir) {
                eprintln!(
                    "board: warning: {} is invalid ({}); the board keeps its previous settings \
                     until it is fixed (`board status` shows the error)",
                    file.display(),
                    config_notice::one_line(&message)
                );
            }
            Ok(paths)
        }
        Err(e) => Err(BoardError::unavailable(e.to_string())),
    }
}

/// The defaults with only `board.data_dir` taken from `file`, when the file is invalid otherwise.
fn lenient_config(file: &std::path::Path) -> config::Config {
    let mut cfg = config::Config::default();
    let data_dir = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("board")?.get("data_dir")?.as_str().map(PathBuf::from));
    if let Some(d) = data_dir {
        cfg.board.data_dir = d;
    }
    cfg
}

/// The board went away between a request and its answer: the request may have been applied.
const ANSWER_LOST: &str =
    "the board closed the connection before answering: the request may or may \
not have been applied (check with `board show`/`board list`, or retry with the same op_id)";

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

/// A connection to the board.
pub struct Client {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
    /// Identity added to every request's params, unless the params carry their own.
    pub identity: Option<(String, String)>,
}

impl Client {
    /// Connects to `target`, starting the board (detached) when `autostart` and none answers.
    /// Errors: `unavailable` when no board answers within 5 s.
    pub fn connect(target: &Target, autostart: bool) -> BoardResult<Client> {
        match UnixStream::connect(&target.socket) {
            Ok(s) => Client::from_stream(s),
            Err(e) if sandboxed(&e) => Err(sandbox_error(&target.socket, &e)),
            Err(e) => {
                let Some(paths) = target.paths.as_ref().filter(|_| autostart) else {
                    return Err(BoardError::unavailable(format!(
                        "no board is running at {} ({e}); start it with `board serve` in the project",
                        target.socket.display()
                    )));
                };
                let started = start_board(paths)?;
                let deadline = Instant::now() + Duration::from_secs(5);
                loop {
                    // Read before connecting: a board that lost a start race to another one
                    // exits only once that one answers, so a connect after its exit succeeds.
                    let exited = started.try_recv().ok();
                    match UnixStream::connect(&target.socket) {
                        Ok(s) => return Client::from_stream(s),
                        Err(e) if sandboxed(&e) => return Err(sandbox_error(&target.socket, &e)),
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

    fn from_stream(s: UnixStream) -> BoardResult<Client> {
        let reader = BufReader::new(
            s.try_clone()
                .map_err(|e| BoardError::unavailable(e.to_string()))?,
        );
        Ok(Client {
            writer: s,
            reader,
            next_id: 1,
            identity: env_identity(),
        })
    }

    fn request(&mut self, method: &str, mut params: Value) -> String {
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
        let n = self
            .reader
            .read_line(&mut line)
            .map_err(|e| BoardError::unavailable(format!("{ANSWER_LOST} ({e})")))?;
        if n == 0 {
            return Err(BoardError::unavailable(ANSWER_LOST));
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
        self.writer
            .write_all(out.as_bytes())
            .map_err(|e| BoardError::unavailable(format!("writing to the board: {e}")))?;
        if hello {
            let hello = self.read_response();
            let line = self.read_line();
            check_protocol(&hello?)?;
            return line;
        }
        self.read_line()
    }

    /// Bounds every later read and write on this connection by `limit` (a hook must never hang
    /// its CLI on a board that accepts but does not answer). Errors: `unavailable`.
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
        self.writer
            .write_all(both.as_bytes())
            .map_err(|e| BoardError::unavailable(format!("writing to the board: {e}")))?;
        let hello = self.read_response();
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
        self.writer
            .write_all(format!("{req}\n").as_bytes())
            .map_err(|e| BoardError::unavailable(format!("writing to the board: {e}")))?;
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
        )));
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
