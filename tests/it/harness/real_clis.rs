//! Harness for the tests that drive the real agent CLIs (Claude Code, Codex, Gemini CLI, aider)
//! as installed by `.ci/install-agent-clis` into `.ci/cache/` (or found on PATH): a project set
//! up by `board init --agents`, a throwaway HOME seeded as a user who already uses each CLI
//! (onboarding done, a fake API key accepted or logged in), fake keys in the environment, no
//! network. A CLI that cannot be found makes its test print why and skip, except under CI
//! (`CI` set), where every real-CLI test must run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::TempDir;

use super::{poll, BOARD};

/// Fake keys: the CLIs accept them offline and never reach a model.
pub const ANTHROPIC_KEY: &str = "sk-ant-api03-board-test-0123456789abcdefghij";
pub const OPENAI_KEY: &str = "sk-board-test-openai-0123456789";
pub const GEMINI_KEY: &str = "board-test-gemini-0123456789";

fn cache() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/cache")
}

/// The directories the CLIs are installed in, then the usual system ones.
fn cli_dirs() -> Vec<PathBuf> {
    vec![
        cache().join("npm/node_modules/.bin"),
        cache().join("aider-venv/bin"),
    ]
}

/// The executable `name`, from the cache or PATH. None (after saying why) when it is missing
/// outside CI; under CI a missing CLI fails the test.
pub fn require(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = cli_dirs()
        .into_iter()
        .chain(std::env::split_paths(&path))
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        let why = format!(
            "{name} is not installed (run .ci/install-agent-clis, which puts it in {})",
            cache().display()
        );
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run every real-CLI test: {why}"
        );
        eprintln!("skipping: {why}");
    }
    found
}

/// A project set up by `board init --agents` (a git repository with one commit), a running
/// board, and a HOME seeded for every CLI. The board is stopped on drop.
pub struct RealProject {
    pub dir: TempDir,
    pub home: TempDir,
}

impl RealProject {
    /// `board_toml_extra` is appended to the `board.toml` that `board init` writes.
    pub fn new(board_toml_extra: &str) -> RealProject {
        let dir = tempfile::Builder::new()
            .prefix("board-real-")
            .tempdir()
            .unwrap();
        let home = tempfile::Builder::new()
            .prefix("board-home-")
            .tempdir()
            .unwrap();
        let p = RealProject { dir, home };
        p.seed_home();
        p.git(&["init", "-q"]);
        let out = p.board(&["init", "--name", "real"]);
        assert!(out.status.success(), "{out:?}");
        let toml = p.root().join("board.toml");
        let text = std::fs::read_to_string(&toml).unwrap();
        std::fs::write(&toml, format!("{text}\n{board_toml_extra}\n")).unwrap();
        let out = p.board(&["init", "--agents", "--json"]);
        assert!(out.status.success(), "{out:?}");
        p.git(&["add", "-A"]);
        p.git(&["commit", "-qm", "start"]);
        p
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A user who already uses each CLI: Claude's onboarding done and this API key accepted,
    /// Codex logged in with a key, Gemini's auth method chosen, git's identity set.
    fn seed_home(&self) {
        let h = self.home.path();
        let suffix: String = ANTHROPIC_KEY
            .chars()
            .skip(ANTHROPIC_KEY.len() - 20)
            .collect();
        std::fs::write(
            h.join(".claude.json"),
            json!({"hasCompletedOnboarding": true,
                   "customApiKeyResponses": {"approved": [suffix], "rejected": []}})
            .to_string(),
        )
        .unwrap();
        std::fs::create_dir_all(h.join(".gemini")).unwrap();
        std::fs::write(
            h.join(".gemini/settings.json"),
            json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
        )
        .unwrap();
        std::fs::write(
            h.join(".gitconfig"),
            "[user]\n\tname = Board Test\n\temail = test@example.com\n",
        )
        .unwrap();
        if let Some(codex) = find("codex") {
            let mut child = self
                .command(&codex)
                .args(["login", "--with-api-key"])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(OPENAI_KEY.as_bytes())
                .unwrap();
            assert!(child.wait().unwrap().success(), "codex login");
        }
    }

    /// PATH for the CLIs: their install directories, board's, then the system's.
    pub fn path(&self) -> String {
        let board_dir = Path::new(BOARD).parent().unwrap().to_path_buf();
        let mut dirs = cli_dirs();
        dirs.push(board_dir);
        let sys = std::env::var_os("PATH").unwrap_or_default();
        dirs.extend(std::env::split_paths(&sys));
        std::env::join_paths(dirs)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// A command in the project with the test user's environment (no board identity).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.current_dir(self.root())
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", self.path())
            .env("TERM", "xterm-256color")
            .env("LANG", "C.UTF-8")
            .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
            .env("OPENAI_API_KEY", OPENAI_KEY)
            .env("GEMINI_API_KEY", GEMINI_KEY)
            .env("NO_BROWSER", "1")
            .stdin(Stdio::null());
        c
    }

    fn git(&self, args: &[&str]) {
        let out = self.command("git").args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// `board ARGS` in the project.
    pub fn board(&self, args: &[&str]) -> Output {
        self.command(BOARD).args(args).output().unwrap()
    }

    /// `board --json ARGS`, parsed.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.board(&all);
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("board {args:?}: {e}: {out:?}"))
    }

    /// `board agents --all --json` → the agent `id`.
    pub fn agent(&self, id: &str) -> Option<Value> {
        self.json(&["agents", "--all"])["agents"]
            .as_array()?
            .iter()
            .find(|a| a["id"] == id)
            .cloned()
    }

    /// Runs `board run --name NAME -- ARGV…` with `env` added, within `timeout`; the output.
    pub fn run_under_board(
        &self,
        name: &str,
        argv: &[String],
        env: &[(&str, &str)],
        timeout: Duration,
    ) -> Output {
        let mut c = self.command(BOARD);
        c.args(["run", "--name", name, "--"]).args(argv);
        for (k, v) in env {
            c.env(k, v);
        }
        let child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(timeout) {
            Ok(out) => out.unwrap(),
            Err(_) => {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGTERM,
                );
                panic!("board run -- {argv:?} did not finish within {timeout:?}");
            }
        }
    }
}

impl Drop for RealProject {
    fn drop(&mut self) {
        let _ = self.board(&["stop"]);
    }
}

/// `name` in the cache or on PATH, without the CI rule (for optional set-up steps).
fn find(name: &str) -> Option<PathBuf> {
    cli_dirs()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Stdout and stderr of `out`, as text.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A private tmux server (its own TMUX_TMPDIR) for the test user; killed on drop.
pub struct Tmux {
    dir: TempDir,
    pub env: Vec<(String, String)>,
}

impl Tmux {
    /// True (after saying why) when tmux is not installed; under CI that fails the test.
    pub fn missing() -> bool {
        let missing = Command::new("tmux").arg("-V").output().is_err();
        if missing {
            assert!(std::env::var_os("CI").is_none(), "CI must have tmux");
            eprintln!("skipping: tmux is not installed");
        }
        missing
    }

    pub fn new(p: &RealProject) -> Tmux {
        let dir = tempfile::tempdir().unwrap();
        Tmux {
            dir,
            env: vec![
                ("HOME".into(), p.home.path().to_string_lossy().into_owned()),
                ("PATH".into(), p.path()),
            ],
        }
    }

    /// The TMUX_TMPDIR of this server (for `board up`, which runs tmux itself).
    pub fn tmpdir(&self) -> &Path {
        self.dir.path()
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        // Panes are a user's interactive terminals: Gemini CLI runs headless (and exits at
        // once) when `CI=true`, which a CI runner sets for the test process.
        c.env("TMUX_TMPDIR", self.dir.path())
            .env_remove("TMUX")
            .env_remove("CI")
            .env_remove("GITHUB_ACTIONS");
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.stdin(Stdio::null());
        c
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn capture(&self, pane: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", pane])
    }

    /// Waits until pane `pane` shows `text`; the screen, or None at the deadline.
    pub fn wait_for(&self, pane: &str, text: &str, timeout: Duration) -> Option<String> {
        poll(timeout, || {
            std::thread::sleep(Duration::from_millis(100));
            let s = self.capture(pane);
            s.contains(text).then_some(s)
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}
