//! The demo's stage: its directory, its board, the sample backlog loaded into it, and the
//! scripted agents started under `board run`, watched and woken again.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::ending_git;
use super::interrupt::Started;
use super::timeline::Timeline;
use crate::proto::client::{Client, Target};
use crate::proto::config::Paths;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::glossary::TaskId;
use crate::proto::methods::TaskResult;
use crate::proto::methods::{AddParams, Call, GoalParams, NoParams};

const BACKLOG: &str = include_str!("../../../agents/demo/backlog.toml");
pub(super) const AGENTS: usize = 3;
/// The agent (1-based) that crashes, and in which of its tasks.
pub(super) const CRASHER: usize = 2;
const CRASH_ON_TASK: usize = 2;
/// The agent (1-based) that is paused past its lease, and in which of its tasks.
pub(super) const PAUSER: usize = 3;
const PAUSE_ON_TASK: usize = 1;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Backlog {
    goal: String,
    tasks: Vec<BacklogTask>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BacklogTask {
    key: String,
    title: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    priority: i64,
    #[serde(default)]
    after: Vec<String>,
}

/// One run of the demo: its directory, its board (the process and where it listens), when it
/// started, and the pids to end on an interrupt.
pub(super) struct Demo {
    pub(super) dir: PathBuf,
    pub(super) board: Option<(Child, Target)>,
    pub(super) start: Instant,
    pub(super) started: Started,
}

impl Demo {
    /// Starts the board in the demo directory and waits (10 s at most) until it answers.
    pub(super) fn start_board(&mut self, exe: &Path, paths: &Paths) -> BoardResult<Target> {
        let mut cmd = Command::new(exe);
        cmd.arg("serve").current_dir(&self.dir);
        // The board lands the ending's commits: with the demo's git environment, not the user's.
        ending_git::git_env(&mut cmd, "board");
        let child = crate::proto::client::without_identity(&mut cmd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| BoardError::unavailable(format!("starting the board: {e}")))?;
        let target = Target::new(paths.socket.clone());
        if let Ok(mut p) = self.started.lock() {
            p.push(child.id());
        }
        self.board = Some((child, target.clone()));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Client::connect(&target, false).is_err() {
            if Instant::now() > deadline {
                return Err(BoardError::unavailable(
                    "the demo board did not start within 10 s",
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(target)
    }

    pub(super) fn stop_board(&mut self) {
        if let Some((mut child, target)) = self.board.take() {
            if let Ok(mut c) = operator(&target) {
                let _ = c.send(Call::Stop(NoParams {}));
            }
            let deadline = Instant::now() + Duration::from_secs(3);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub(super) fn load_backlog(&self, target: &Target) -> BoardResult<BTreeMap<TaskId, String>> {
        let backlog: Backlog = toml::from_str(BACKLOG)
            .map_err(|e| BoardError::internal(format!("agents/demo/backlog.toml: {e}")))?;
        let mut c = operator(target)?;
        c.send(Call::Goal(GoalParams {
            text: Some(backlog.goal.clone()),
        }))?;
        println!("goal: {}", backlog.goal);
        let mut ids: HashMap<String, TaskId> = HashMap::new();
        let mut titles = BTreeMap::new();
        for t in &backlog.tasks {
            let after = t
                .after
                .iter()
                .map(|k| {
                    ids.get(k)
                        .copied()
                        .ok_or_else(|| BoardError::internal(format!("backlog: unknown key {k:?}")))
                })
                .collect::<BoardResult<Vec<TaskId>>>()?;
            let added = c.ask_raw::<TaskResult>(Call::Add(AddParams {
                title: t.title.clone(),
                body: Some(t.body.clone()),
                priority: Some(t.priority),
                after: Some(after),
                ..AddParams::default()
            }))?;
            let id = added.result.task.id;
            ids.insert(t.key.clone(), id);
            titles.insert(id, t.title.clone());
        }
        Ok(titles)
    }

    pub(super) fn spawn_agent(&self, exe: &Path, i: usize) -> BoardResult<Child> {
        let crash = if i == CRASHER { CRASH_ON_TASK } else { 0 };
        let pause = if i == PAUSER { PAUSE_ON_TASK } else { 0 };
        let mut cmd = Command::new(exe);
        cmd.args(["run", "--name", &format!("agent-{i}"), "--"])
            .arg(exe)
            .arg("demo-agent")
            .current_dir(&self.dir)
            .env("PATH", path_with(exe))
            .env("BOARD_BIN", exe)
            .env("DEMO_CRASH_ON", crash.to_string())
            .env("DEMO_PAUSE_ON", pause.to_string());
        crate::proto::client::without_identity(&mut cmd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| BoardError::internal(format!("starting agent {i}: {e}")))
    }

    /// Prints the timeline live from the board's event stream.
    pub(super) fn follow(&self, target: &Target, timeline: Arc<Timeline>) {
        let Ok(c) = operator(target) else { return };
        let start = self.start;
        std::thread::spawn(move || {
            let _ = c.follow(None, |e| {
                timeline.push(e, start.elapsed());
                true
            });
        });
    }

    /// Wakes a paused agent: SIGCONT to its launcher `launcher` and the launcher's tree.
    pub(super) fn resume(&self, launcher: Option<i32>) {
        let Some(launcher) = launcher else { return };
        for pid in std::iter::once(launcher).chain(crate::os::procfs::descendants(launcher)) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGCONT,
            );
        }
    }
}

/// `PATH` with the directory of the board binary `exe` first.
pub(super) fn path_with(exe: &Path) -> String {
    let bin_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A connection to the board at `target` as the operator (no agent identity).
pub(super) fn operator(target: &Target) -> BoardResult<Client> {
    let mut c = Client::connect(target, false)?;
    c.identity = None;
    Ok(c)
}
