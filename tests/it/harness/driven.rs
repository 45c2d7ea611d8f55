//! Shared helpers for the board tests: a real board in a temporary directory, agent
//! sessions under `board run` that the test drives line by line, raw socket access, and polling
//! with deadlines (never fixed sleeps).
//!
//! Every helper starts the real binary (`CARGO_BIN_EXE_board`).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use tempfile::TempDir;

use super::{exit_code, poll, poll_until, scrub, sh_quote, wait_child, BOARD, STEP};

/// The output of one `board` command.
#[derive(Clone)]
pub struct Out {
    /// Exit code (128 + signal if killed).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Out {
    fn from_output(o: std::process::Output) -> Out {
        Out {
            code: exit_code(o.status),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// Stdout parsed as exactly one JSON document.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{self:?}"))
    }

    /// Asserts exit 0 and returns self.
    #[track_caller]
    pub fn ok(self) -> Out {
        assert_eq!(self.code, 0, "expected success:\n{self:?}");
        self
    }

    /// Asserts the exit code and returns self.
    #[track_caller]
    pub fn expect_code(self, code: i32) -> Out {
        assert_eq!(self.code, code, "expected exit {code}:\n{self:?}");
        self
    }
}

/// A command for the board binary, in `root`, with no identity or socket from our environment.
fn board_command(root: &Path) -> Command {
    let mut c = Command::new(BOARD);
    scrub(c.current_dir(root)).stdin(Stdio::null());
    c
}

/// Runs `board ARGS` in `root` as an operator, with a deadline of [`STEP`].
pub fn run_board(root: &Path, args: &[&str]) -> Out {
    run_board_within(root, args, STEP)
}

/// Runs `board ARGS` in `root` as an operator; panics if it takes longer than `timeout`.
pub fn run_board_within(root: &Path, args: &[&str], timeout: Duration) -> Out {
    let mut child = board_command(root)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn board");
    // Read both pipes on threads so the deadline also covers a command that hangs.
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut so, &mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut se, &mut s);
        s
    });
    let status = match wait_child(&mut child, timeout) {
        Some(st) => st,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`board {}` did not finish within {timeout:?}",
                args.join(" ")
            );
        }
    };
    Out::from_output(std::process::Output {
        status,
        stdout: t_out.join().unwrap_or_default().into_bytes(),
        stderr: t_err.join().unwrap_or_default().into_bytes(),
    })
}

/// One JSON-RPC connection to the board's socket, used the way a client would (or a bad one).
pub struct Rpc {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
}

impl Rpc {
    /// Connects to `socket`.
    pub fn connect(socket: &Path) -> std::io::Result<Rpc> {
        let stream = UnixStream::connect(socket)?;
        stream.set_read_timeout(Some(STEP))?;
        stream.set_write_timeout(Some(STEP))?;
        let reader = BufReader::new(stream.try_clone()?);
        Ok(Rpc {
            stream,
            reader,
            next_id: 1,
        })
    }

    /// Sends raw bytes (a newline is not added).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write to the board");
    }

    /// Reads one response line as JSON.
    pub fn read_response(&mut self) -> Value {
        let mut line = String::new();
        let n = self
            .reader
            .read_line(&mut line)
            .expect("read a response from the board");
        assert!(n > 0, "the board closed the connection");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the board answered a line that is not JSON ({e}): {line}"))
    }

    /// Sends one request and returns the whole response object (`result` or `error`).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(format!("{req}\n").as_bytes());
        let resp = self.read_response();
        assert_eq!(resp["id"], json!(id), "response to another request: {resp}");
        resp
    }

    /// Like [`Rpc::call`], but expects success and returns `result`.
    #[track_caller]
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let resp = self.call(method, params.clone());
        assert!(
            resp.get("error").is_none(),
            "{method} {params} failed: {resp}"
        );
        resp["result"].clone()
    }
}

static NEXT_AGENT: AtomicUsize = AtomicUsize::new(0);

/// A real board (`board serve`) in a temporary directory.
pub struct TestBoard {
    dir: TempDir,
    serve: Option<Child>,
}

impl TestBoard {
    /// A board with a long lease (nothing lapses during a test) and a 1 s sweep.
    pub fn start() -> TestBoard {
        TestBoard::with_lease("60s", "1s")
    }

    /// A board with the given lease duration and sweep interval (e.g. `"1s"`, `"100ms"`),
    /// `liveness = "activity"` and the process-tree identity check on.
    pub fn with_lease(duration: &str, sweep: &str) -> TestBoard {
        let dir = tempfile::Builder::new()
            .prefix("board-test-")
            .tempdir()
            .expect("temporary directory");
        run_board(dir.path(), &["init", "--name", "test"]).ok();
        let config = format!(
            "[board]\nname = \"test\"\ndata_dir = \".board\"\n\n\
             [lease]\nduration = \"{duration}\"\nsweep = \"{sweep}\"\nliveness = \"activity\"\n\n\
             [identity]\ncheck_process_tree = true\n"
        );
        std::fs::write(dir.path().join("board.toml"), config).expect("write board.toml");
        TestBoard::serve_in(dir)
    }

    /// Starts `board serve` in a directory that already holds a board.
    pub fn serve_in(dir: TempDir) -> TestBoard {
        TestBoard::serve_via(dir, &[])
    }

    /// Starts `WRAPPER… board serve` (e.g. `unshare --time …`) in a directory that already
    /// holds a board; the wrapper must exec the board, so [`TestBoard::serve_pid`] is its pid.
    pub fn serve_via(dir: TempDir, wrapper: &[&str]) -> TestBoard {
        std::fs::create_dir_all(dir.path().join("t")).expect("scratch directory");
        let stderr = File::create(dir.path().join("t/serve.stderr")).expect("serve log");
        let mut cmd = match wrapper.split_first() {
            None => board_command(dir.path()),
            Some((program, args)) => {
                let mut c = Command::new(program);
                scrub(c.current_dir(dir.path())).stdin(Stdio::null());
                c.args(args).arg(BOARD);
                c
            }
        };
        let child = cmd
            .arg("serve")
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("spawn board serve");
        let mut board = TestBoard {
            dir,
            serve: Some(child),
        };
        board.wait_serving();
        board
    }

    fn wait_serving(&mut self) {
        let socket = self.socket();
        let serve = self.serve.as_mut().expect("serve child");
        let mut exited = None;
        let up = poll_until(STEP, || {
            if let Ok(Some(st)) = serve.try_wait() {
                exited = Some(st);
                return true;
            }
            UnixStream::connect(&socket).is_ok()
        });
        if let Some(st) = exited {
            panic!(
                "board serve exited with {st} before serving:\n{}",
                std::fs::read_to_string(self.root().join("t/serve.stderr")).unwrap_or_default()
            );
        }
        assert!(
            up,
            "board serve did not open {} within {STEP:?}",
            socket.display()
        );
    }

    /// The pid of the `board serve` this board started.
    pub fn serve_pid(&self) -> i32 {
        self.serve.as_ref().expect("a board served by the test").id() as i32
    }

    /// The project root (holds `board.toml`).
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A scratch directory for the test's own files.
    pub fn scratch(&self) -> PathBuf {
        self.root().join("t")
    }

    /// The board's socket.
    pub fn socket(&self) -> PathBuf {
        self.root().join(".board/board.sock")
    }

    /// Runs `board ARGS` here as an operator (no agent identity).
    pub fn board(&self, args: &[&str]) -> Out {
        run_board(self.root(), args)
    }

    /// Runs `board --json ARGS` as an operator, whatever its outcome.
    pub fn board_json(&self, args: &[&str]) -> Out {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.board(&all)
    }

    /// Runs `board --json ARGS` as an operator, expects success, returns the JSON result.
    #[track_caller]
    pub fn json(&self, args: &[&str]) -> Value {
        self.board_json(args).ok().json()
    }

    /// A new raw connection to the socket.
    pub fn rpc(&self) -> Rpc {
        Rpc::connect(&self.socket()).expect("connect to the board socket")
    }

    /// Adds a task as an operator; returns its id.
    pub fn add(&self, title: &str) -> i64 {
        self.json(&["add", title])["task"]["id"]
            .as_i64()
            .expect("task id")
    }

    /// `board show ID` (task, notes, events).
    pub fn show(&self, task: i64) -> Value {
        self.json(&["show", &task.to_string()])
    }

    /// The task object of `board show ID`.
    pub fn task(&self, task: i64) -> Value {
        self.show(task)["task"].clone()
    }

    /// The whole event log, oldest first.
    pub fn events(&self) -> Vec<Value> {
        self.rpc()
            .result("log", json!({"after": 0, "limit": 100_000}))["events"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Events of one kind on one task.
    pub fn events_of(&self, kind: &str, task: i64) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["kind"] == kind && e["task"] == json!(task))
            .collect()
    }

    /// Ids of the tasks `board ready` lists.
    pub fn ready_ids(&self) -> Vec<i64> {
        ready_ids(&self.json(&["ready"]))
    }

    /// `board stop`, then waits until the board process we started has exited.
    pub fn stop(&mut self) {
        self.board(&["stop"]).ok();
        assert!(
            UnixStream::connect(self.socket()).is_err(),
            "the socket still answers after `board stop`"
        );
        if let Some(mut child) = self.serve.take() {
            let st = wait_child(&mut child, STEP).expect("board serve exits after `board stop`");
            assert!(st.success(), "board serve exited with {st}");
        }
    }

    /// Starts `board run --name NAME -- sh -c SCRIPT sh ARGS…` here; stdout and stderr of the
    /// launcher go to `t/run-N.log`.
    pub fn spawn_run(&self, name: &str, script: &str, args: &[&str]) -> Child {
        let n = NEXT_AGENT.fetch_add(1, Ordering::SeqCst);
        let log = File::create(self.scratch().join(format!("run-{n}.log"))).expect("run log");
        board_command(self.root())
            .args(["run", "--name", name, "--", "sh", "-c", script, "sh"])
            .args(args)
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("spawn board run")
    }

    /// Starts an agent session (`board run --name NAME`) whose agent is a shell the test drives
    /// one command line at a time (see [`Agent`]). Waits until it is registered.
    pub fn agent(&self, name: &str) -> Agent {
        let mut a = self.spawn_agent(name);
        a.wait_registered();
        a
    }

    /// Starts several agent sessions at once, then waits until all are registered.
    pub fn agents(&self, names: &[&str]) -> Vec<Agent> {
        let mut all: Vec<Agent> = names.iter().map(|n| self.spawn_agent(n)).collect();
        for a in &mut all {
            a.wait_registered();
        }
        all
    }

    fn spawn_agent(&self, name: &str) -> Agent {
        let n = NEXT_AGENT.fetch_add(1, Ordering::SeqCst);
        let ctl = self.scratch().join(format!("agent-{n}"));
        std::fs::create_dir_all(&ctl).expect("agent control directory");
        let input = ctl.join("in");
        nix::unistd::mkfifo(&input, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .expect("mkfifo");
        // Read-write, so neither side's open blocks and the shell never sees end of input
        // while we hold it; dropping it (end of the test) makes the shell's `read` fail and exit.
        let input = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&input)
            .expect("open the agent's input");
        let log = File::create(ctl.join("launcher.log")).expect("launcher log");
        let launcher = board_command(self.root())
            .args(["run", "--name", name, "--", "sh", "-c", AGENT_SHELL, "sh"])
            .arg(&ctl)
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("spawn board run");
        Agent {
            id: String::new(),
            pid: 0,
            launcher,
            ctl,
            input: Some(input),
            sent: 0,
        }
    }
}

/// A task object without the fields that move with the clock (`expires_in_ms`), to compare a
/// task before and after something that must not change it.
pub fn frozen(task: &Value) -> Value {
    let mut t = task.clone();
    if let Some(m) = t.as_object_mut() {
        m.remove("expires_in_ms");
    }
    t
}

/// Ids of a `list`/`ready` result.
pub fn ready_ids(v: &Value) -> Vec<i64> {
    v["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["id"].as_i64())
        .collect()
}

impl Drop for TestBoard {
    fn drop(&mut self) {
        let root = self.root().to_path_buf();
        // Launchers and agents first, so none reports an exit to (and so restarts) a stopped board.
        kill_processes_in(&root, false);
        if UnixStream::connect(self.socket()).is_ok() {
            let _ = board_command(&root)
                .arg("stop")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        if let Some(mut child) = self.serve.take() {
            if wait_child(&mut child, Duration::from_secs(3)).is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        // Whatever is left (a board started detached by a client, a stuck process).
        kill_processes_in(&root, true);
    }
}

/// SIGKILLs every process of ours whose working directory is inside `root` (boards too when
/// `boards`), except this test process.
fn kill_processes_in(root: &Path, boards: bool) {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(e.path().join("cwd")) else {
            continue;
        };
        if !cwd.starts_with(root) {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let is_board = cmdline
            .split(|b| *b == 0)
            .nth(1)
            .is_some_and(|a| a == b"serve");
        if is_board && !boards {
            continue;
        }
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
    }
}

/// The agent's program: a shell that runs one line at a time from the `in` FIFO of its control
/// directory, leaving `N.out`, `N.err` and `N.code` there. While waiting for a line it is blocked
/// in `read`: silent (no board calls, no CPU), like an agent thinking for a long time.
const AGENT_SHELL: &str = r#"
ctl="$1"
printf '%s %s\n' "$BOARD_AGENT" "$$" > "$ctl/id.part"
mv "$ctl/id.part" "$ctl/id"
i=0
while IFS= read -r line < "$ctl/in"; do
    i=$((i + 1))
    eval "$line" > "$ctl/$i.out" 2> "$ctl/$i.err" < /dev/null
    echo "$?" > "$ctl/$i.code"
done
"#;

/// An agent session started with `board run`, whose agent process is a shell driven by the test.
/// Commands run inside the agent's process tree with its `BOARD_AGENT`/`BOARD_TOKEN`.
pub struct Agent {
    /// Session id the board gave (`claude`, `claude-2`).
    pub id: String,
    /// The agent process (the shell).
    pub pid: i32,
    launcher: Child,
    ctl: PathBuf,
    input: Option<File>,
    sent: usize,
}

impl Agent {
    fn wait_registered(&mut self) {
        let id_file = self.ctl.join("id");
        let launcher = &mut self.launcher;
        let mut exited = None;
        let line = poll(STEP, || {
            if let Ok(Some(st)) = launcher.try_wait() {
                exited = Some(st);
                return Some(String::new());
            }
            std::fs::read_to_string(&id_file).ok()
        });
        if let Some(st) = exited {
            panic!(
                "board run exited with {st} before starting the agent:\n{}",
                std::fs::read_to_string(self.ctl.join("launcher.log")).unwrap_or_default()
            );
        }
        let line = line.expect("the agent started within the deadline");
        let (id, pid) = line.trim().split_once(' ').expect("id file: AGENT PID");
        self.id = id.to_string();
        self.pid = pid.parse().expect("agent pid");
    }

    /// The `board run` launcher's pid.
    pub fn launcher_pid(&self) -> i32 {
        self.launcher.id() as i32
    }

    /// Sends one shell line to the agent without waiting; returns its sequence number.
    pub fn send(&mut self, line: &str) -> usize {
        assert!(!line.contains('\n'), "one line at a time");
        let input = self.input.as_mut().expect("agent input open");
        input
            .write_all(format!("{line}\n").as_bytes())
            .expect("write to the agent");
        self.sent += 1;
        self.sent
    }

    /// Waits for the result of line `n`.
    pub fn result(&mut self, n: usize) -> Out {
        let code_file = self.ctl.join(format!("{n}.code"));
        let code = poll(STEP, || {
            std::fs::read_to_string(&code_file)
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
        })
        .unwrap_or_else(|| panic!("agent {} did not finish line {n} in time", self.id));
        let read = |ext: &str| {
            std::fs::read_to_string(self.ctl.join(format!("{n}.{ext}"))).unwrap_or_default()
        };
        Out {
            code,
            stdout: read("out"),
            stderr: read("err"),
        }
    }

    /// Runs one shell line inside the agent and returns its output.
    pub fn sh(&mut self, line: &str) -> Out {
        let n = self.send(line);
        self.result(n)
    }

    /// Runs `board ARGS` inside the agent (with its identity).
    pub fn board(&mut self, args: &[&str]) -> Out {
        let words: Vec<String> = args.iter().map(|a| sh_quote(a)).collect();
        self.sh(&format!("board {}", words.join(" ")))
    }

    /// Runs `board --json ARGS` inside the agent, whatever its outcome.
    pub fn board_json(&mut self, args: &[&str]) -> Out {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.board(&all)
    }

    /// Runs `board --json ARGS` inside the agent; expects success; returns the JSON result.
    #[track_caller]
    pub fn json(&mut self, args: &[&str]) -> Value {
        self.board_json(args).ok().json()
    }

    /// Claims `task`; expects success; returns the claim's generation.
    #[track_caller]
    pub fn claim(&mut self, task: i64) -> i64 {
        self.json(&["claim", &task.to_string()])["generation"]
            .as_i64()
            .expect("generation")
    }

    /// Makes the agent process exit with `code` (it runs `exit CODE`).
    pub fn exit_with(&mut self, code: i32) {
        self.send(&format!("exit {code}"));
    }

    /// Waits for `board run` to exit; returns its exit code.
    pub fn wait_launcher(&mut self) -> i32 {
        let st = wait_child(&mut self.launcher, STEP).expect("board run exits");
        exit_code(st)
    }

    /// SIGKILLs the agent process only (its launcher sees it die and reports it).
    pub fn kill_agent(&mut self) {
        kill(Pid::from_raw(self.pid), Signal::SIGKILL).expect("kill the agent");
    }

    /// SIGKILLs the launcher and then the agent, with no chance to tell the board, and waits
    /// until both are gone (the agent may linger as a zombie of an init that does not reap).
    pub fn kill_silently(&mut self) {
        let _ = self.launcher.kill();
        let _ = self.launcher.wait();
        let _ = kill(Pid::from_raw(self.pid), Signal::SIGKILL);
        let stat = format!("/proc/{}/stat", self.pid);
        let gone = poll_until(STEP, || match std::fs::read_to_string(&stat) {
            Err(_) => true,
            Ok(s) => s
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        });
        assert!(gone, "agent {} ({}) did not die", self.id, self.pid);
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        // SIGKILL the launcher so it reports nothing; closing the input ends the shell.
        let _ = self.launcher.kill();
        let _ = self.launcher.wait();
        self.input.take();
    }
}
