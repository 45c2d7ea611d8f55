//! A private tmux server per test: its own `TMUX_TMPDIR`, so nothing reaches the user's server,
//! and killed when the handle that owns it drops.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use tempfile::TempDir;

use super::{poll, SCRUB};

/// A tmux server of one test (see [`crate::harness::test_board::TestBoard::tmux`] for the board's
/// own, [`Tmux::private`] for one in a folder of its own).
pub struct Tmux {
    tmpdir: PathBuf,
    /// Set on every tmux command (and so on a server it starts): `PATH`, `HOME`, …
    env: Vec<(String, String)>,
    /// This handle ends the server on drop (see [`Tmux::share`]).
    owner: bool,
    /// The folder of a [`Tmux::private`] server, removed after it.
    _dir: Option<TempDir>,
}

impl Tmux {
    /// True (after saying why) when tmux is not installed; under CI (`CI` set) that fails the
    /// test instead, so CI never skips.
    pub fn missing() -> bool {
        let missing = Command::new("tmux").arg("-V").output().is_err();
        if missing {
            assert!(std::env::var_os("CI").is_none(), "CI must have tmux");
            eprintln!("skipping: tmux is not installed");
        }
        missing
    }

    /// Fails the test when tmux is not installed (for tests that are about tmux panes).
    pub fn require() {
        let ok = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "these tests need tmux on PATH");
    }

    /// A server whose sockets live in `tmpdir`, not started yet; `env` is set on every tmux
    /// command. This handle owns it.
    pub fn in_dir(tmpdir: &Path, env: Vec<(String, String)>) -> Tmux {
        Tmux {
            tmpdir: tmpdir.to_path_buf(),
            env,
            owner: true,
            _dir: None,
        }
    }

    /// A server in a temporary folder of its own (for `board up`, which starts it).
    pub fn private(env: Vec<(String, String)>) -> Tmux {
        let dir = tempfile::Builder::new().prefix("tm").tempdir().unwrap();
        let mut t = Tmux::in_dir(dir.path(), env);
        t._dir = Some(dir);
        t
    }

    /// Another handle on the same server that does not end it (so a test can keep using the
    /// board mutably while it drives the panes).
    pub fn share(&self) -> Tmux {
        Tmux {
            tmpdir: self.tmpdir.clone(),
            env: self.env.clone(),
            owner: false,
            _dir: None,
        }
    }

    /// The `TMUX_TMPDIR` of this server (for a `board up` or `board tui` that runs tmux).
    pub fn tmpdir(&self) -> &Path {
        &self.tmpdir
    }

    /// A `tmux` command talking to this server, with none of the test's board identity and no
    /// CI flags (panes are a user's interactive terminals: Gemini CLI runs headless when
    /// `CI=true`), and no user configuration.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        for v in SCRUB.iter().chain(&["CI", "GITHUB_ACTIONS"]) {
            c.env_remove(v);
        }
        c.env("TMUX_TMPDIR", &self.tmpdir);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.args(["-u", "-f", "/dev/null"]).stdin(Stdio::null());
        c
    }

    /// Runs a tmux command and returns its stdout, trimmed; panics on failure.
    #[track_caller]
    pub fn run(&self, args: &[&str]) -> String {
        self.run_raw(args).trim().to_string()
    }

    #[track_caller]
    fn run_raw(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Sends tmux key names (`Enter`, `C-c`, `q`) to pane `target`.
    pub fn keys(&self, target: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", target];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Types `text` literally into pane `target`.
    pub fn type_text(&self, target: &str, text: &str) {
        self.run(&["send-keys", "-t", target, "-l", text]);
    }

    /// A tmux format (`#{pane_pid}`, `#{window_name}`) evaluated for `target`.
    pub fn format(&self, target: &str, fmt: &str) -> String {
        self.run_raw(&["display-message", "-p", "-t", target, fmt])
            .trim_end()
            .to_string()
    }

    /// What pane `target` shows, line for line as on screen (`flags` adds capture-pane flags:
    /// `-J` joins wrapped lines and keeps trailing spaces, `-e` keeps escape sequences).
    pub fn capture(&self, target: &str, flags: &[&str]) -> String {
        let mut args = vec!["capture-pane", "-p", "-t", target];
        args.extend_from_slice(flags);
        self.run_raw(&args)
    }

    /// Pane `target`'s screen (captured with `flags`, see [`Tmux::capture`]) once it satisfies
    /// `check`, or None when `timeout` passed first.
    pub fn poll_screen(
        &self,
        target: &str,
        flags: &[&str],
        timeout: Duration,
        check: impl Fn(&str) -> bool,
    ) -> Option<String> {
        poll(timeout, || {
            let s = self.capture(target, flags);
            check(&s).then_some(s)
        })
    }

    /// [`Tmux::poll_screen`] that must succeed; panics with the last screen seen, naming `what`
    /// was awaited.
    #[track_caller]
    pub fn wait_screen(
        &self,
        target: &str,
        flags: &[&str],
        what: &str,
        timeout: Duration,
        check: impl Fn(&str) -> bool,
    ) -> String {
        self.poll_screen(target, flags, timeout, check)
            .unwrap_or_else(|| {
                let last = self.capture(target, flags);
                panic!("timed out waiting for {what}; screen of {target}:\n{last}")
            })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        if self.owner {
            let _ = self
                .cmd()
                .arg("kill-server")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}
