//! Shared helpers for the supervision tests (supervision that never strands a task).
//!
//! Every test starts the real `board` binary in its own temporary project: `board init`, a
//! `board.toml` with short leases, and `board serve` as a child of the test. Agents run under
//! `board run --name X -- sh -c '…'` (the board checks that callers descend from the agent), each
//! launcher in its own process group so a test can always kill everything it started. tmux runs
//! on a private server (`TMUX_TMPDIR` in the temp dir) that a guard kills at the end.
//!
//! Conditions are polled with deadlines; event timing comes from a `subscribe` connection read
//! on a thread, stamped with `Instant` on arrival.

#![allow(dead_code)]

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use super::{path_env, poll, poll_until, scrub, sh_quote, BOARD};

/// Wall-clock milliseconds since the epoch (to compare with the board's event timestamps).
pub fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// An event's `at` (RFC 3339 UTC) as wall-clock ms since the epoch.
pub fn event_ms(e: &Value) -> i64 {
    let at = e["at"].as_str().expect("event has `at`");
    humantime::parse_rfc3339(at)
        .unwrap_or_else(|err| panic!("bad timestamp {at:?}: {err}"))
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The median, min and max of some durations, in ms.
pub fn stats(samples: &[Duration]) -> (f64, f64, f64) {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = ms.len();
    let median = if n % 2 == 1 {
        ms[n / 2]
    } else {
        (ms[n / 2 - 1] + ms[n / 2]) / 2.0
    };
    (median, ms[0], ms[n - 1])
}

/// How many iterations a timing test makes: 20 with `BOARD_MEASURE=1`, else `normal`.
pub fn iterations(normal: usize) -> usize {
    match std::env::var("BOARD_MEASURE").as_deref() {
        Ok("1") => 20,
        _ => normal,
    }
}

/// One request on the board's socket, without the CLI (so it never starts a board).
pub fn socket_call(socket: &Path, method: &str, params: Value) -> Result<Value, String> {
    let s = UnixStream::connect(socket).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut w = s.try_clone().map_err(|e| e.to_string())?;
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    w.write_all(format!("{req}\n").as_bytes())
        .map_err(|e| e.to_string())?;
    let mut line = String::new();
    BufReader::new(s)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let v: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line:?}"))?;
    match v.get("error") {
        Some(e) => Err(e.to_string()),
        None => Ok(v["result"].clone()),
    }
}

/// A live `subscribe` stream: events stamped with their arrival time.
pub struct Events {
    rx: mpsc::Receiver<(Instant, Value)>,
    /// Every event received so far, in order.
    pub seen: Vec<(Instant, Value)>,
}

impl Events {
    /// Subscribes to the board at `socket` (events from now on).
    pub fn subscribe(socket: &Path) -> Events {
        let s = UnixStream::connect(socket).expect("connect for subscribe");
        let mut w = s.try_clone().unwrap();
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscribe\",\"params\":{}}\n")
            .unwrap();
        let mut r = BufReader::new(s);
        let mut ack = String::new();
        r.read_line(&mut ack).unwrap();
        assert!(ack.contains("subscribed"), "subscribe answered {ack:?}");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _keep = w;
            for line in r.lines() {
                let Ok(line) = line else { return };
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if v["method"] == "event" && tx.send((Instant::now(), v["params"].clone())).is_err()
                {
                    return;
                }
            }
        });
        Events {
            rx,
            seen: Vec::new(),
        }
    }

    fn drain(&mut self) {
        while let Ok(e) = self.rx.try_recv() {
            self.seen.push(e);
        }
    }

    /// The first event (already received or arriving within `timeout`) matching `pred`.
    pub fn wait(
        &mut self,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Option<(Instant, Value)> {
        self.drain();
        if let Some(e) = self.seen.iter().find(|(_, e)| pred(e)) {
            return Some(e.clone());
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(e) => {
                    self.seen.push(e.clone());
                    if pred(&e.1) {
                        return Some(e);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Forgets the events received so far.
    pub fn clear(&mut self) {
        self.drain();
        self.seen.clear();
    }
}

/// Matches an event by kind and agent.
pub fn is(kind: &str, agent: &str) -> impl Fn(&Value) -> bool {
    let (kind, agent) = (kind.to_string(), agent.to_string());
    move |e| e["kind"] == kind.as_str() && e["agent"] == agent.as_str()
}

/// An agent started with `board run`: the launcher is the leader of its own process group, so
/// dropping this kills the launcher, the agent and every helper they left behind.
pub struct Agent {
    /// The `board run` process.
    pub child: Child,
    /// The session name asked for (unique per test, so it is also the session id).
    pub name: String,
}

impl Agent {
    /// The launcher's pid.
    pub fn launcher_pid(&self) -> i32 {
        self.child.id() as i32
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// A private tmux server for one test; killed when the [`TestBoard`] that started it drops it.
pub struct Tmux {
    tmpdir: PathBuf,
    /// This handle started the server (see [`Tmux::share`]) and ends it on drop.
    owner: bool,
}

impl Tmux {
    /// What pane `target` shows (wrapped lines joined), exactly as printed: a prompt's trailing
    /// space is kept.
    pub fn capture(&self, target: &str) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-J", "-t", target])
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Another handle on the same server that does not end it (so a test can keep using the
    /// board mutably while it drives the panes).
    pub fn share(&self) -> Tmux {
        Tmux {
            tmpdir: self.tmpdir.clone(),
            owner: false,
        }
    }

    /// A `tmux` command talking to this test's server.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.env("TMUX_TMPDIR", &self.tmpdir)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::null());
        c
    }

    /// Runs a tmux command and returns its stdout; panics on failure.
    pub fn run(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        if !self.owner {
            return;
        }
        let _ = self
            .cmd()
            .arg("kill-server")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Fails the test when tmux is not installed.
pub fn require_tmux() {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(ok, "these tests need tmux on PATH");
}

/// A board in a temporary project, served by a child `board serve`.
pub struct TestBoard {
    /// The temporary directory (project root is `root`).
    pub dir: tempfile::TempDir,
    /// Project root: holds `board.toml`, `.board/`, `agents/`.
    pub root: PathBuf,
    /// The board's socket.
    pub socket: PathBuf,
    /// The board's database.
    pub db: PathBuf,
    serve: Option<Child>,
    serves: usize,
    tmux: Option<Tmux>,
}

/// `board.toml` with a name and the given `[lease]` body, plus `extra` sections.
pub fn config_text(lease: &str, extra: &str) -> String {
    format!(
        "[board]\nname = \"supervision\"\ndata_dir = \".board\"\n\n[lease]\n{lease}\n\n[identity]\ncheck_process_tree = true\n\n{extra}\n"
    )
}

impl TestBoard {
    /// A new project with `[lease]` set to `lease` (TOML lines), and the board started.
    pub fn start(lease: &str) -> TestBoard {
        let mut b = TestBoard::init(&config_text(lease, ""));
        b.serve();
        b
    }

    /// A new project with `[lease]` set to `lease` plus the `extra` sections, and the board
    /// started.
    pub fn start_with(lease: &str, extra: &str) -> TestBoard {
        let mut b = TestBoard::init(&config_text(lease, extra));
        b.serve();
        b
    }

    /// A new project with this `board.toml`, not yet served.
    pub fn init(config: &str) -> TestBoard {
        let dir = tempfile::Builder::new()
            .prefix("b2-")
            .tempdir()
            .expect("tempdir");
        let root = dir.path().to_path_buf();
        let mut b = TestBoard {
            socket: PathBuf::new(),
            db: PathBuf::new(),
            dir,
            root,
            serve: None,
            serves: 0,
            tmux: None,
        };
        let out = b.board(&["init"]);
        assert!(out.status.success(), "board init: {out:?}");
        b.write_config(config);
        let cfg = board::proto::config::Config::load(&b.root.join("board.toml")).expect("config");
        let paths = board::proto::config::Paths::new(&b.root, &cfg);
        b.socket = paths.socket;
        b.db = paths.db;
        b
    }

    /// Replaces `board.toml`.
    pub fn write_config(&self, text: &str) {
        // Write then rename, as editors do, so the board never reads half a file.
        let tmp = self.root.join(".board.toml.tmp");
        fs::write(&tmp, text).unwrap();
        fs::rename(&tmp, self.root.join("board.toml")).unwrap();
    }

    /// Writes `agents/NAME.toml`.
    pub fn write_profile(&self, name: &str, text: &str) {
        let d = self.root.join("agents");
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join(format!("{name}.toml")), text).unwrap();
    }

    /// A `board` command in the project, with a clean environment (no identity, no tmux).
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BOARD);
        c.args(args)
            .current_dir(&self.root)
            .env("TMUX_TMPDIR", self.dir.path())
            .stdin(Stdio::null());
        scrub(&mut c);
        c
    }

    /// Runs `board ARGS` to completion.
    pub fn board(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run board")
    }

    /// Runs `board --json ARGS`; returns the exit code and the JSON document.
    pub fn json(&self, args: &[&str]) -> (i32, Value) {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let out = self.board(&a);
        let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "board {args:?}: stdout is not JSON ({e}): {:?} / {:?}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code().unwrap_or(-1), v)
    }

    /// `board --json ARGS`, which must succeed.
    pub fn ok(&self, args: &[&str]) -> Value {
        let (code, v) = self.json(args);
        assert_eq!(code, 0, "board {args:?} failed: {v}");
        v
    }

    /// Starts `board serve` as a child and waits until it answers on the socket.
    pub fn serve(&mut self) -> i32 {
        assert!(self.serve.is_none(), "already serving");
        self.serves += 1;
        let log = File::create(self.root.join(format!("serve-{}.out", self.serves))).unwrap();
        let child = self
            .cmd(&["serve"])
            .env("BOARD_LOG", "info,board::daemon::watchers=debug")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("spawn board serve");
        let pid = child.id() as i32;
        self.serve = Some(child);
        let up = poll(Duration::from_secs(10), || {
            socket_call(&self.socket, "status", json!({}))
                .ok()
                .filter(|v| v["pid"] == pid)
        });
        assert!(
            up.is_some(),
            "board serve did not come up: {}",
            self.serve_output()
        );
        pid
    }

    /// What the board processes printed.
    pub fn serve_output(&self) -> String {
        (1..=self.serves)
            .map(|i| {
                fs::read_to_string(self.root.join(format!("serve-{i}.out"))).unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The pid of the `board serve` child.
    pub fn serve_pid(&self) -> Option<i32> {
        self.serve.as_ref().map(|c| c.id() as i32)
    }

    /// Sends `sig` to the board process and reaps it.
    pub fn kill_serve(&mut self, sig: Signal) {
        let mut child = self.serve.take().expect("board is not running");
        kill(Pid::from_raw(child.id() as i32), sig).unwrap();
        child.wait().unwrap();
    }

    /// Stops the board gracefully (SIGTERM) and reaps it.
    pub fn stop_serve(&mut self) {
        self.kill_serve(Signal::SIGTERM);
    }

    /// Subscribes to the board's events.
    pub fn events(&self) -> Events {
        Events::subscribe(&self.socket)
    }

    /// Starts `board run --name NAME -- sh -c SCRIPT` in the project (own process group).
    pub fn run_agent(&self, name: &str, script: &str) -> Agent {
        self.run_agent_env(name, script, &[])
    }

    /// [`TestBoard::run_agent`] with extra environment for the launcher (and so the agent).
    pub fn run_agent_env(&self, name: &str, script: &str, env: &[(&str, &Path)]) -> Agent {
        let out = File::create(self.root.join(format!("{name}.out"))).unwrap();
        let mut cmd = self.cmd(&["run", "--name", name, "--", "sh", "-c", script]);
        cmd.envs(env.iter().copied());
        let child = cmd
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .process_group(0)
            .spawn()
            .expect("spawn board run");
        Agent {
            child,
            name: name.to_string(),
        }
    }

    /// The session `id` from `board agents --all --json`.
    pub fn session(&self, id: &str) -> Option<Value> {
        let v = self.ok(&["agents", "--all"]);
        v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .cloned()
    }

    /// Waits until session `id` is attached (its agent pid is known) and holds a claim; returns
    /// the session.
    pub fn wait_working(&self, id: &str) -> Value {
        let s = poll(Duration::from_secs(10), || {
            self.session(id)
                .filter(|s| s["pid"].is_i64() && !s["claims"].as_array().unwrap().is_empty())
        });
        s.unwrap_or_else(|| {
            panic!(
                "agent {id} never held a claim: {:?}; its output: {}",
                self.session(id),
                fs::read_to_string(self.root.join(format!("{id}.out"))).unwrap_or_default()
            )
        })
    }

    /// One task from `board show`.
    pub fn task(&self, id: i64) -> Value {
        self.ok(&["show", &id.to_string()])
    }

    /// Ids of the ready tasks.
    pub fn ready(&self) -> Vec<i64> {
        self.ok(&["ready"])["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_i64().unwrap())
            .collect()
    }

    /// Adds `n` tasks through the CLI.
    pub fn add_tasks(&self, n: usize) {
        for i in 1..=n {
            self.ok(&["add", &format!("task {i}")]);
        }
    }

    /// Makes a FIFO in the project and returns its path.
    pub fn fifo(&self, name: &str) -> PathBuf {
        let p = self.root.join(name);
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        p
    }

    /// The private tmux server of this test, started on first use with a `keepalive` session so
    /// it does not exit (and race the next `board up`) when `board down` ends the last board
    /// session. Its environment puts the board binary on PATH for the panes.
    pub fn tmux(&mut self) -> &Tmux {
        require_tmux();
        if self.tmux.is_none() {
            let t = Tmux {
                tmpdir: self.dir.path().to_path_buf(),
                owner: true,
            };
            let out = t
                .cmd()
                .env("PATH", path_env())
                .current_dir(&self.root)
                .args(["new-session", "-d", "-s", "keepalive", "sleep 100000"])
                .output()
                .expect("run tmux");
            assert!(out.status.success(), "tmux new-session: {out:?}");
            self.tmux = Some(t);
        }
        self.tmux.as_ref().unwrap()
    }

    /// The pid of the board answering on the socket now (whoever started it), if one does.
    pub fn board_pid(&self) -> Option<i32> {
        socket_call(&self.socket, "hello", json!({}))
            .ok()
            .and_then(|v| v["pid"].as_i64())
            .map(|p| p as i32)
    }

    /// Runs `board run --name NAME -- sh -c SCRIPT` (output in `NAME.out`) in a new window of the
    /// test's tmux server, in the project root; returns the session once it is working.
    pub fn run_in_pane(&mut self, name: &str, script: &str) -> Value {
        let cmd = format!(
            "PATH={} board run --name {name} -- sh -c {} > {name}.out 2>&1",
            sh_quote(&path_env()),
            sh_quote(script)
        );
        let root = self.root.clone();
        self.tmux().run(&[
            "new-window",
            "-t",
            "keepalive",
            "-c",
            root.to_str().unwrap(),
            &cmd,
        ]);
        self.wait_working(name)
    }

    /// The pid a test's script wrote into `file` (in the project root), once it is there.
    pub fn pid_in(&self, file: &str) -> i32 {
        poll(Duration::from_secs(10), || {
            fs::read_to_string(self.root.join(file))
                .ok()
                .and_then(|t| t.trim().parse().ok())
        })
        .unwrap_or_else(|| panic!("no pid in {file}"))
    }

    /// Prints what a failed test needs to see: the board's log and the agents' output.
    fn dump(&self) {
        let log = fs::read_to_string(self.root.join(".board/board.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(80).collect();
        eprintln!("--- board.log (last {} lines) ---", tail.len());
        for l in tail.iter().rev() {
            eprintln!("{l}");
        }
        eprintln!("--- board serve output ---\n{}", self.serve_output());
        if let Ok(dir) = fs::read_dir(&self.root) {
            for e in dir.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "out")
                    && !p.to_string_lossy().contains("serve-")
                {
                    let text = fs::read_to_string(&p).unwrap_or_default();
                    eprintln!("--- {} ---\n{text}", p.display());
                }
            }
        }
        if let Some(t) = &self.tmux {
            if let Ok(out) = t.cmd().args(["list-panes", "-a", "-F", "#{session_name}:#{window_name} #{pane_id} #{pane_pid} dead=#{pane_dead} #{pane_current_command}"]).output() {
                eprintln!("--- tmux panes ---\n{}", String::from_utf8_lossy(&out.stdout));
            }
        }
    }
}

/// Opens `fifo` for writing once someone has opened it for reading (≤ 5 s).
pub fn fifo_writer(fifo: &Path) -> File {
    let f = poll(Duration::from_secs(5), || {
        OpenOptions::new()
            .write(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(fifo)
            .ok()
    });
    f.unwrap_or_else(|| panic!("nobody reads {}", fifo.display()))
}

/// Wakes whoever reads `fifo`, waiting (≤ 5 s) for a reader to open it.
pub fn poke(fifo: &Path) {
    fifo_writer(fifo).write_all(b"go\n").unwrap();
}

/// Whether `pid` exists and is not a zombie.
pub fn running(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state = s.rsplit(')').next().unwrap_or("").split_whitespace().next();
            !matches!(state, Some("Z") | Some("X") | None)
        }
        Err(_) => false,
    }
}

/// Waits (≤ 10 s) until process `pid` runs the program `comm` (e.g. an agent script reached
/// its final `exec sleep`), so a test does not kill it half way through a board call.
pub fn wait_exec(pid: i32, comm: &str) {
    let ok = poll_until(Duration::from_secs(10), || {
        fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == comm)
    });
    assert!(ok, "process {pid} never became {comm:?}");
}

/// The state letter of `pid` (`S`, `T`, `Z`, …).
pub fn proc_state(pid: i32) -> Option<char> {
    board::os::procfs::read_stat(pid).ok().map(|s| s.state)
}

/// The parent pid of `pid`, from `/proc`.
pub fn parent_of(pid: i32) -> i32 {
    board::os::procfs::read_stat(pid).expect("/proc stat").ppid
}

impl Drop for TestBoard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.dump();
        }
        // Close panes while the board still answers, so their launchers report and exit.
        if let Some(t) = self.tmux.take() {
            drop(t);
            let _ = poll_until(Duration::from_secs(2), || {
                socket_call(&self.socket, "agents", json!({}))
                    .map(|v| {
                        !v["agents"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|a| a["pane"].is_string())
                    })
                    .unwrap_or(true)
            });
        }
        // An invalid board.toml keeps any late client from starting a new board (a started board
        // would refuse it) while the running one ignores the edit.
        self.write_config("[[[ test over\n");
        if let Some(mut c) = self.serve.take() {
            let _ = kill(Pid::from_raw(c.id() as i32), Signal::SIGKILL);
            let _ = c.wait();
        }
        // A board some client started on its own (detached) still answers: end it.
        if let Ok(v) = socket_call(&self.socket, "status", json!({})) {
            if let Some(pid) = v["pid"].as_i64() {
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            }
        }
    }
}
