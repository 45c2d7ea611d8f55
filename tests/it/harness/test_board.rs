//! The one test board: a project in a temporary directory with a `board.toml` the test chose,
//! served by a child `board serve` ([`Builder::start`]) or left for the first CLI call to
//! autostart ([`Builder::unserved`]); killed, with everything started in it, on drop.
//!
//! ```ignore
//! let b = TestBoard::start();                                   // 60 s lease, 1 s sweep
//! let b = TestBoard::builder().lease("1s").sweep("100ms").start();
//! let b = TestBoard::builder().liveness("process").config("[run]\nhangup_grace = \"1s\"").start();
//! let mut b = TestBoard::builder().unserved();                  // CLI autostarts, or b.serve()
//! ```

use std::fs::{self, File};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use tempfile::TempDir;

use super::command::{run_within, Out};
use super::events::Events;
use super::process::{kill_processes_in, mkfifo};
use super::real_clis::user_env;
use super::rpc::{self, Rpc};
use super::tmux::Tmux;
use super::{path_env, poll_until, scrub, wait_child, BOARD, STEP};

/// How a [`TestBoard`] is made: its `board.toml`, and whether it is served.
#[must_use]
pub struct Builder {
    name: String,
    lease: String,
    sweep: String,
    liveness: Option<String>,
    extra: String,
    bare: bool,
    user_home: bool,
}

impl Builder {
    /// `[board] name` (default `"test"`).
    pub fn name(mut self, name: &str) -> Builder {
        self.name = name.to_string();
        self
    }

    /// `[lease] duration` (default `"60s"`: nothing lapses during a test).
    pub fn lease(mut self, duration: &str) -> Builder {
        self.lease = duration.to_string();
        self
    }

    /// `[lease] sweep`, the liveness sweep's interval (default `"1s"`).
    pub fn sweep(mut self, interval: &str) -> Builder {
        self.sweep = interval.to_string();
        self
    }

    /// `[lease] liveness` (`"activity"` or `"process"`; default: the board's, activity).
    pub fn liveness(mut self, mode: &str) -> Builder {
        self.liveness = Some(mode.to_string());
        self
    }

    /// More `board.toml` sections (`[run]`, `[client]`, `[[agents]]`, …), appended.
    pub fn config(mut self, extra_toml: &str) -> Builder {
        self.extra.push_str(extra_toml);
        self.extra.push('\n');
        self
    }

    /// An empty project directory: no `board init`, no `board.toml` (for a test that makes
    /// its own, e.g. `board demo --dir`).
    pub fn bare(mut self) -> Builder {
        self.bare = true;
        self
    }

    /// A user of the real agent CLIs instead of the test's environment: every command gets a
    /// fresh HOME and only the variables [`real_clis::user_env`] lists.
    pub fn user_home(mut self) -> Builder {
        self.user_home = true;
        self
    }

    /// The `board.toml` this builder writes.
    pub fn config_text(&self) -> String {
        let liveness = match &self.liveness {
            Some(m) => format!("liveness = \"{m}\"\n"),
            None => String::new(),
        };
        format!(
            "[board]\nname = \"{}\"\ndata_dir = \".board\"\n\n\
             [lease]\nduration = \"{}\"\nsweep = \"{}\"\n{liveness}\n\
             [identity]\ncheck_process_tree = true\n\n{}",
            self.name, self.lease, self.sweep, self.extra
        )
    }

    /// The project (`board init`, then this `board.toml`), no board running yet: the first
    /// CLI call autostarts one, or the test calls [`TestBoard::serve`].
    pub fn unserved(self) -> TestBoard {
        let dir = tempfile::Builder::new()
            .prefix("bd-")
            .tempdir()
            .expect("temporary directory");
        let home = self.user_home.then(|| {
            tempfile::Builder::new()
                .prefix("bh-")
                .tempdir()
                .expect("temporary HOME")
        });
        let b = TestBoard {
            dir,
            home,
            serve: None,
            serves: 0,
            tmux: None,
        };
        if !self.bare {
            b.board(&["init", "--name", &self.name]).ok();
            b.write_config(&self.config_text());
        }
        b
    }

    /// The project, served by a child `board serve` that answers on the socket.
    pub fn start(self) -> TestBoard {
        let mut b = self.unserved();
        b.serve();
        b
    }
}

/// A real board in a temporary project. See the module docs for how to make one.
pub struct TestBoard {
    dir: TempDir,
    /// The HOME of a [`Builder::user_home`] board.
    home: Option<TempDir>,
    serve: Option<Child>,
    serves: usize,
    tmux: Option<Tmux>,
}

impl TestBoard {
    /// A board with the defaults: 60 s lease, 1 s sweep, served.
    pub fn start() -> TestBoard {
        TestBoard::builder().start()
    }

    /// A board to configure (see [`Builder`]).
    pub fn builder() -> Builder {
        Builder {
            name: "test".into(),
            lease: "60s".into(),
            sweep: "1s".into(),
            liveness: None,
            extra: String::new(),
            bare: false,
            user_home: false,
        }
    }

    /// The project root (holds `board.toml`, `.board/`, `agents/`, agents' `NAME.out`).
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A scratch directory for the test's own files (`t/` in the project root).
    pub fn scratch(&self) -> PathBuf {
        let t = self.root().join("t");
        fs::create_dir_all(&t).expect("scratch directory");
        t
    }

    fn paths(&self) -> board::proto::config::Paths {
        let cfg =
            board::proto::config::Config::load(&self.root().join("board.toml")).unwrap_or_default();
        board::proto::config::Paths::new(self.root(), &cfg)
    }

    /// The board's socket.
    pub fn socket(&self) -> PathBuf {
        self.paths().socket
    }

    /// The board's database.
    pub fn db(&self) -> PathBuf {
        self.paths().db
    }

    /// A read-only connection to the board's database, to look at what the board wrote (the
    /// board stays the only writer).
    pub fn read_db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open_with_flags(self.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the database read-only")
    }

    /// Replaces `board.toml` (written then renamed, as editors do, so the board never reads
    /// half a file).
    pub fn write_config(&self, text: &str) {
        let tmp = self.root().join(".board.toml.tmp");
        fs::write(&tmp, text).unwrap();
        fs::rename(&tmp, self.root().join("board.toml")).unwrap();
    }

    /// Writes `agents/NAME.toml`.
    pub fn write_profile(&self, name: &str, text: &str) {
        let d = self.root().join("agents");
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join(format!("{name}.toml")), text).unwrap();
    }

    /// Makes a FIFO in the project root and returns its path.
    pub fn fifo(&self, name: &str) -> PathBuf {
        mkfifo(self.root().join(name))
    }

    /// The HOME of a [`Builder::user_home`] board.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_ref().map(|h| h.path())
    }

    /// What every command here (and this test's tmux server) gets set: `PATH` with the board
    /// binary first; for a [`Builder::user_home`] board the whole environment of the user.
    fn env(&self) -> Vec<(String, String)> {
        match self.home() {
            Some(home) => user_env(home),
            None => vec![("PATH".into(), path_env())],
        }
    }

    /// A command in the project as an operator: no identity, socket or tmux from our
    /// environment (none at all but [`TestBoard::env`] for a user-home board), stdin closed,
    /// tmux on this test's server.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        if self.home.is_some() {
            c.env_clear();
        } else {
            scrub(&mut c);
        }
        c.current_dir(self.root())
            .envs(self.env())
            .env("TMUX_TMPDIR", self.root())
            .stdin(Stdio::null());
        c
    }

    /// A `board ARGS` [`TestBoard::command`].
    pub fn board_cmd(&self, args: &[&str]) -> Command {
        let mut c = self.command(BOARD);
        c.args(args);
        c
    }

    /// Runs `board ARGS` as an operator, with a deadline of [`STEP`].
    pub fn board(&self, args: &[&str]) -> Out {
        self.board_within(args, STEP)
    }

    /// Runs `board ARGS` as an operator; panics if it takes longer than `timeout`.
    pub fn board_within(&self, args: &[&str], timeout: Duration) -> Out {
        run_within(&mut self.board_cmd(args), timeout)
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

    /// Starts `board serve` as a child and waits until it answers on the socket; its pid.
    pub fn serve(&mut self) -> i32 {
        self.serve_via(&[])
    }

    /// Starts `WRAPPER… board serve` (e.g. `unshare --time …`) like [`TestBoard::serve`]; the
    /// wrapper must exec the board, so the child's pid is the board's.
    pub fn serve_via(&mut self, wrapper: &[&str]) -> i32 {
        assert!(self.serve.is_none(), "already serving");
        self.serves += 1;
        let log = File::create(self.root().join(format!("serve-{}.out", self.serves))).unwrap();
        let mut cmd = match wrapper.split_first() {
            None => self.command(BOARD),
            Some((program, args)) => {
                let mut c = self.command(program);
                c.args(args).arg(BOARD);
                c
            }
        };
        let child = cmd
            .arg("serve")
            .env("BOARD_LOG", "info,board::daemon::watchers=debug")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("spawn board serve");
        let pid = child.id() as i32;
        let socket = self.paths().socket;
        let serve = self.serve.insert(child);
        let mut exited = None;
        let up = poll_until(STEP, || {
            if let Ok(Some(st)) = serve.try_wait() {
                exited = Some(st);
                return true;
            }
            rpc::call(&socket, "status", json!({})).is_ok_and(|v| v["pid"] == pid)
        });
        if let Some(st) = exited {
            self.serve = None;
            panic!(
                "board serve exited with {st} before serving:\n{}",
                self.serve_output()
            );
        }
        assert!(up, "board serve did not come up: {}", self.serve_output());
        pid
    }

    /// What the `board serve` children printed.
    pub fn serve_output(&self) -> String {
        (1..=self.serves)
            .map(|i| {
                fs::read_to_string(self.root().join(format!("serve-{i}.out"))).unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The pid of the `board serve` child.
    pub fn serve_pid(&self) -> Option<i32> {
        self.serve.as_ref().map(|c| c.id() as i32)
    }

    /// Sends `sig` to the `board serve` child and reaps it.
    pub fn kill_serve(&mut self, sig: Signal) {
        let mut child = self.serve.take().expect("board is not running");
        kill(Pid::from_raw(child.id() as i32), sig).unwrap();
        child.wait().unwrap();
    }

    /// `board stop`; then the socket no longer answers and the `board serve` child (if any)
    /// has exited 0.
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

    /// The pid of the board answering on the socket now (whoever started it), if one does.
    pub fn board_pid(&self) -> Option<i32> {
        self.call("hello", json!({}))
            .ok()
            .and_then(|v| v["pid"].as_i64())
            .map(|p| p as i32)
    }

    /// A new raw connection to the socket.
    pub fn rpc(&self) -> Rpc {
        Rpc::connect(&self.socket()).expect("connect to the board socket")
    }

    /// One request on the socket, without the CLI (so it never starts a board).
    pub fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        rpc::call(&self.socket(), method, params)
    }

    /// Subscribes to the board's events from now on.
    pub fn subscribe(&self) -> Events {
        Events::subscribe(&self.socket(), None)
    }

    /// The private tmux server of this test, started on first use with a `keepalive` session so
    /// it does not exit (and race the next `board up`) when `board down` ends the last board
    /// session. Board commands find it through `TMUX_TMPDIR`; its panes have the board binary
    /// on PATH (and a user-home board's environment). Fails the test when tmux is missing.
    pub fn tmux(&mut self) -> &Tmux {
        if self.tmux.is_none() {
            Tmux::require();
            let t = Tmux::in_dir(self.root(), self.env());
            let out = t
                .cmd()
                .current_dir(self.root())
                .args(["new-session", "-d", "-s", "keepalive", "sleep 100000"])
                .output()
                .expect("run tmux");
            assert!(out.status.success(), "tmux new-session: {out:?}");
            self.tmux = Some(t);
        }
        self.tmux.as_ref().unwrap()
    }

    /// Prints what a failed test needs to see: the board's log and the agents' output.
    fn dump(&self) {
        let log = fs::read_to_string(self.root().join(".board/board.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(80).collect();
        eprintln!("--- board.log (last {} lines) ---", tail.len());
        for l in tail.iter().rev() {
            eprintln!("{l}");
        }
        eprintln!("--- board serve output ---\n{}", self.serve_output());
        if let Ok(dir) = fs::read_dir(self.root()) {
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
            let format = "#{session_name}:#{window_name} #{pane_id} #{pane_pid} \
                          dead=#{pane_dead} #{pane_current_command}";
            let panes = t.cmd().args(["list-panes", "-a", "-F", format]).output();
            if let Ok(out) = panes {
                eprintln!(
                    "--- tmux panes ---\n{}",
                    String::from_utf8_lossy(&out.stdout)
                );
            }
        }
    }
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
                self.call("agents", json!({}))
                    .map(|v| {
                        !v["agents"]
                            .as_array()
                            .is_some_and(|a| a.iter().any(|a| a["pane"].is_string()))
                    })
                    .unwrap_or(true)
            });
        }
        let root = self.root().to_path_buf();
        let socket = self.socket();
        // Launchers and agents first, so none reports an exit to (and so restarts) a board.
        kill_processes_in(&root, false);
        // An invalid board.toml keeps any late client from starting a new board (a started
        // board would refuse it) while the running one ignores the edit.
        if root.join("board.toml").exists() {
            self.write_config("[[[ test over\n");
        }
        if let Some(mut c) = self.serve.take() {
            let _ = kill(Pid::from_raw(c.id() as i32), Signal::SIGKILL);
            let _ = c.wait();
        }
        // A board some client started on its own (detached) still answers: end it.
        if let Ok(v) = rpc::call(&socket, "status", json!({})) {
            if let Some(pid) = v["pid"].as_i64() {
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            }
        }
        // Whatever is left (a stuck process).
        kill_processes_in(&root, true);
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
