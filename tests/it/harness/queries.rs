//! What a test asks a [`TestBoard`] as an operator: tasks, the event log, sessions; the
//! project's git repository; and the scenario steps several modules share (an agent in a tmux
//! pane, a pid a script wrote).

use std::fs;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use super::test_board::TestBoard;
use super::{path_env, poll, sh_quote};

impl TestBoard {
    /// Adds a task as an operator; returns its id.
    pub fn add(&self, title: &str) -> i64 {
        self.json(&["add", title])["task"]["id"]
            .as_i64()
            .expect("task id")
    }

    /// Adds tasks `task 1` … `task N` as an operator.
    pub fn add_tasks(&self, n: usize) {
        for i in 1..=n {
            self.add(&format!("task {i}"));
        }
    }

    /// `board show ID` (task, notes, events).
    pub fn show(&self, task: i64) -> Value {
        self.json(&["show", &task.to_string()])
    }

    /// The task object of `board show ID`.
    pub fn task(&self, task: i64) -> Value {
        self.show(task)["task"].clone()
    }

    /// Ids of the tasks `board ready` lists.
    pub fn ready_ids(&self) -> Vec<i64> {
        ready_ids(&self.json(&["ready"]))
    }

    /// `board --json up` on the tmux server `tmux` (usually this board's own, shared): its
    /// answer (`panes`, …). Fails the test when `board up` fails.
    pub fn up_on(&self, tmux: &crate::harness::tmux::Tmux) -> Value {
        let up = self
            .command(crate::harness::BOARD)
            .env("TMUX_TMPDIR", tmux.tmpdir())
            .args(["--json", "up"])
            .output()
            .unwrap();
        assert!(up.status.success(), "{up:?}");
        serde_json::from_slice(&up.stdout).unwrap()
    }

    /// The whole event log, oldest first.
    pub fn log(&self) -> Vec<Value> {
        self.rpc()
            .result("log", json!({"after": 0, "limit": 100_000}))["events"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Events of one kind, from the log.
    pub fn log_kind(&self, kind: &str) -> Vec<Value> {
        self.log()
            .into_iter()
            .filter(|e| e["kind"] == kind)
            .collect()
    }

    /// Events of one kind on one task, from the log.
    pub fn log_of(&self, kind: &str, task: i64) -> Vec<Value> {
        self.log_kind(kind)
            .into_iter()
            .filter(|e| e["task"] == json!(task))
            .collect()
    }

    /// The session `id` from `board agents --all --json`.
    pub fn session(&self, id: &str) -> Option<Value> {
        let v = self.json(&["agents", "--all"]);
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
                fs::read_to_string(self.root().join(format!("{id}.out"))).unwrap_or_default()
            )
        })
    }

    /// A `git` command in the project with a test identity and no user or system git
    /// configuration.
    pub fn git_cmd(&self) -> Command {
        let mut c = self.command("git");
        c.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid");
        c
    }

    /// Runs `git ARGS` in the project (see [`TestBoard::git_cmd`]); must succeed; its stdout.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.git_cmd().args(args).output().expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `board run --name NAME -- sh -c SCRIPT` (output in `NAME.out`) in a new window of the
    /// test's tmux server, in the project root; returns the session once it is working.
    pub fn run_in_pane(&mut self, name: &str, script: &str) -> Value {
        let cmd = format!(
            "PATH={} board run --name {name} -- sh -c {} > {name}.out 2>&1",
            sh_quote(&path_env()),
            sh_quote(script)
        );
        let root = self.root().to_str().unwrap().to_string();
        self.tmux()
            .run(&["new-window", "-t", "keepalive", "-c", &root, &cmd]);
        self.wait_working(name)
    }

    /// The pid a test's script wrote into `file` (in the project root), once it is there.
    pub fn pid_in(&self, file: &str) -> i32 {
        poll(Duration::from_secs(10), || {
            fs::read_to_string(self.root().join(file))
                .ok()
                .and_then(|t| t.trim().parse().ok())
        })
        .unwrap_or_else(|| panic!("no pid in {file}"))
    }
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
