//! `board demo`: the main job, end to end on real parts. In a fresh directory it starts a board,
//! loads the sample backlog of `agents/demo/`, runs three scripted agents under `board run`,
//! kills one of them in the middle of a task, pauses another (SIGSTOP) past its lease so a third
//! takes its task, resumes it (its late `done` is rejected: the fence), prints the timeline as
//! the board reports it, and checks the outcome: every task done exactly once, one expulsion,
//! its task finished by another, the paused agent's claim lapsed and its late writes rejected.
//! Then it ends with review and a fenced land in a real git repository (`land.rs`): an accepted
//! commit lands on `main`, and a paused agent's stale commit is refused there.

mod ending_git;
mod land;
mod summary;
mod timeline;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::proto::client::{Client, Target};
use crate::proto::config::{Config, Paths};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::glossary::{EventKind, TaskId};
use crate::proto::methods::TaskResult;
use crate::proto::methods::{AddParams, Call, GoalParams, NoParams};
use crate::proto::EventView;
use timeline::timeline_line;

/// The `[board]` section of every board.toml the demo writes.
const BOARD_SECTION: &str = "[board]\nname = \"demo\"\n";
const BACKLOG: &str = include_str!("../../../agents/demo/backlog.toml");
/// The scripted demo agent (agents/demo/agent.sh).
pub const AGENT_SCRIPT: &str = include_str!("../../../agents/demo/agent.sh");
const AGENTS: usize = 3;
/// The agent (1-based) that crashes, and in which of its tasks.
const CRASHER: usize = 2;
const CRASH_ON_TASK: usize = 2;
/// The agent (1-based) that is paused past its lease, and in which of its tasks.
const PAUSER: usize = 3;
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

/// Runs the demo; exit code 0 only if the final summary holds.
pub fn run(dir: Option<PathBuf>, keep: bool) -> i32 {
    let (dir, _tmp) = match dir {
        Some(d) => (d, None),
        None => match tempfile::Builder::new().prefix("board-demo-").tempdir() {
            Ok(t) => (t.path().to_path_buf(), Some(t)),
            Err(e) => {
                eprintln!("board demo: cannot make a temporary directory: {e}");
                return 1;
            }
        },
    };
    if dir.join("board.toml").exists() || dir.join(".board").exists() {
        eprintln!(
            "board demo: {} already has a board; the demo needs a new or empty directory (or no --dir)",
            dir.display()
        );
        return crate::proto::error::ErrorKind::Usage.exit_code();
    }
    let keep_dir = keep.then(|| dir.clone());
    let started: Started = Arc::new(Mutex::new(Vec::new()));
    let remove_on_interrupt = (_tmp.is_some() && !keep).then(|| dir.clone());
    clean_up_on_interrupt(Arc::clone(&started), remove_on_interrupt);
    let mut demo = Demo {
        dir,
        board: None,
        start: Instant::now(),
        started,
    };
    let code = match demo.run() {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            eprintln!("board demo: {}", e.message);
            e.kind.exit_code()
        }
    };
    demo.stop_board();
    if let (Some(d), Some(t)) = (keep_dir, _tmp) {
        let _ = t.keep();
        println!("demo directory kept: {}", d.display());
    }
    code
}

/// Set when the demo was interrupted: the summary is not printed, the clean-up thread exits.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Pids the demo started (launchers first, then the board), for clean-up on SIGINT/SIGTERM.
type Started = Arc<Mutex<Vec<u32>>>;

struct Demo {
    dir: PathBuf,
    board: Option<(Child, Target)>,
    start: Instant,
    started: Started,
}

/// On SIGINT or SIGTERM: end the agents (their launchers report and clean up), then the board,
/// remove the temporary directory, and exit 130 / 143. Without this, a stopped demo would leave
/// a board process and agents running.
fn clean_up_on_interrupt(started: Started, remove: Option<PathBuf>) {
    use tokio::signal::unix::{signal, SignalKind};
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => return,
    };
    let (Ok(mut int), Ok(mut term)) = rt.block_on(async {
        (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        )
    }) else {
        return;
    };
    std::thread::spawn(move || {
        let code = rt.block_on(async {
            tokio::select! {
                _ = int.recv() => 130,
                _ = term.recv() => 143,
            }
        });
        INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
        let term = |pid: u32| {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        };
        let mut pids = started.lock().map(|p| p.clone()).unwrap_or_default();
        // The board (last) must outlive the launchers, which report their agents' exits to it.
        let board = pids.pop();
        pids.into_iter().for_each(term);
        std::thread::sleep(Duration::from_millis(300));
        board.into_iter().for_each(term);
        std::thread::sleep(Duration::from_millis(100));
        if let Some(dir) = remove {
            let _ = std::fs::remove_dir_all(dir);
        }
        eprintln!("board demo: interrupted; agents and board stopped");
        std::process::exit(code);
    });
}

impl Demo {
    fn run(&mut self) -> BoardResult<bool> {
        let exe = std::env::current_exe().map_err(|e| BoardError::internal(e.to_string()))?;
        std::fs::create_dir_all(&self.dir).map_err(|e| BoardError::internal(e.to_string()))?;
        let cfg_text = format!("{BOARD_SECTION}\n[lease]\nduration = \"3s\"\nsweep = \"250ms\"\n");
        write(&self.dir.join("board.toml"), &cfg_text)?;
        let cfg = Config::parse(&cfg_text, Path::new("board.toml"))
            .map_err(|e| BoardError::internal(e.to_string()))?;
        let paths = Paths::new(&self.dir, &cfg);

        println!("board demo in {}", self.dir.display());
        let target = self.start_board(&exe, &paths)?;
        let titles = self.load_backlog(&target)?;
        println!(
            "{} tasks loaded; starting {AGENTS} agents (agent {CRASHER} will crash mid-task, agent {PAUSER} will be paused past its lease)\n",
            titles.len()
        );

        let timeline = Arc::new(Timeline::new(titles.clone()));
        self.follow(&target, Arc::clone(&timeline));
        let mut agents = Vec::new();
        for i in 1..=AGENTS {
            let agent = self.spawn_agent(&exe, i)?;
            if let Ok(mut p) = self.started.lock() {
                p.insert(0, agent.id());
            }
            agents.push(agent);
        }
        let deadline = Instant::now() + Duration::from_secs(120);
        let pauser = agents.get(PAUSER - 1).map(|a| a.id() as i32);
        let mut resumed = false;
        for (i, mut a) in agents.into_iter().enumerate() {
            loop {
                if !resumed {
                    resumed = resume_when_taken(self, &timeline, pauser);
                }
                match a.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if Instant::now() > deadline => {
                        let _ = a.kill();
                        eprintln!("board demo: agent {} did not finish in time", i + 1);
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                    Err(_) => break,
                }
            }
        }
        wait_unless_interrupted();
        let ending = self.ending(&exe, &target, &timeline);
        wait_unless_interrupted();
        summary::print(&target, &titles, &ending, self.start)
    }

    fn start_board(&mut self, exe: &Path, paths: &Paths) -> BoardResult<Target> {
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

    fn stop_board(&mut self) {
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

    fn load_backlog(&self, target: &Target) -> BoardResult<BTreeMap<TaskId, String>> {
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

    fn spawn_agent(&self, exe: &Path, i: usize) -> BoardResult<Child> {
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
    fn follow(&self, target: &Target, timeline: Arc<Timeline>) {
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
    fn resume(&self, launcher: Option<i32>) {
        let Some(launcher) = launcher else { return };
        for pid in std::iter::once(launcher).chain(crate::os::procfs::descendants(launcher)) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGCONT,
            );
        }
    }
}

/// The events the demo has seen (in the board's order) and the titles it names tasks by;
/// shared by the thread printing the timeline and the steps waiting on it.
struct Timeline {
    events: Mutex<Vec<EventView>>,
    titles: Mutex<BTreeMap<TaskId, String>>,
}

impl Timeline {
    fn new(titles: BTreeMap<TaskId, String>) -> Timeline {
        Timeline {
            events: Mutex::new(Vec::new()),
            titles: Mutex::new(titles),
        }
    }

    /// Prints the event's timeline line (`at`: time since the demo started) and keeps it.
    fn push(&self, e: &Value, at: Duration) {
        // An event this demo cannot read (a newer board's kind) is neither told nor kept.
        let Ok(e) = EventView::deserialize(e) else {
            return;
        };
        let e = &e;
        let line = match self.titles.lock() {
            Ok(titles) => timeline_line(e, &titles, at),
            Err(_) => None,
        };
        if let Some(line) = line {
            println!("{line}");
        }
        if let Ok(mut t) = self.events.lock() {
            t.push(e.clone());
        }
    }

    /// Names task `id` by `title` in later lines.
    fn title(&self, id: TaskId, title: &str) {
        if let Ok(mut t) = self.titles.lock() {
            t.insert(id, title.to_string());
        }
    }

    /// Whether some event seen so far matches `pred`.
    fn any(&self, pred: impl Fn(&[EventView], &EventView) -> bool) -> bool {
        match self.events.lock() {
            Ok(t) => t.iter().any(|e| pred(&t, e)),
            Err(_) => false,
        }
    }

    /// The first event matching `pred`, waiting for it at most `within` (None after that).
    fn wait(&self, within: Duration, pred: impl Fn(&EventView) -> bool) -> Option<EventView> {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(t) = self.events.lock() {
                if let Some(e) = t.iter().find(|e| pred(e)) {
                    return Some(e.clone());
                }
            }
            if Instant::now() > deadline || INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// While an interrupt is being handled, waits: the clean-up thread ends the process, and going
/// on (a summary of a cut-off run) would mislead.
fn wait_unless_interrupted() {
    while INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `PATH` with the directory of the board binary `exe` first.
fn path_with(exe: &Path) -> String {
    let bin_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Once the paused agent's claim has lapsed and another agent was granted that task, wakes the
/// paused agent (SIGCONT to its launcher's tree): it goes on as if nothing happened, and its
/// late writes meet the fence. Returns whether it did.
fn resume_when_taken(demo: &Demo, timeline: &Timeline, launcher: Option<i32>) -> bool {
    if launcher.is_none() {
        return true;
    }
    let pauser = format!("agent-{PAUSER}");
    let taken = timeline.any(|t, l| {
        l.kind == EventKind::Lapse
            && l.agent.as_deref() == Some(pauser.as_str())
            && t.iter().any(|g| {
                g.kind == EventKind::Grant
                    && g.task == l.task
                    && g.agent.as_deref() != Some(pauser.as_str())
                    && g.id > l.id
            })
    });
    if taken {
        demo.resume(launcher);
    }
    taken
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "✓"
    } else {
        "✗"
    }
}

fn operator(target: &Target) -> BoardResult<Client> {
    let mut c = Client::connect(target, false)?;
    c.identity = None;
    Ok(c)
}

fn write(path: &Path, text: &str) -> BoardResult<()> {
    std::fs::write(path, text)
        .map_err(|e| BoardError::internal(format!("writing {}: {e}", path.display())))
}
