//! `board demo`: the main job, end to end on real parts. In a fresh directory it starts a board,
//! loads the sample backlog of `agents/demo/`, runs three scripted agents under `board run`,
//! kills one of them in the middle of a task, pauses another (SIGSTOP) past its lease so a third
//! takes its task, resumes it (its late `done` is rejected: the fence), prints the timeline as
//! the board reports it, and checks the outcome: every task done exactly once, one expulsion,
//! its task finished by another, the paused agent's claim lapsed and its late writes rejected.
//! Then it ends with review and a fenced land in a real git repository (`land.rs`): an accepted
//! commit lands on `main`, and a paused agent's stale commit is refused there.

mod ending_git;
mod files;
mod interrupt;
mod land;
mod setup;
mod summary;
mod timeline;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::proto::config::{Config, Paths};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::glossary::EventKind;
use files::{write, BOARD_SECTION};
use interrupt::{clean_up_on_interrupt, wait_unless_interrupted, Started};
use setup::{Demo, AGENTS, CRASHER, PAUSER};
use timeline::Timeline;

/// The scripted demo agent (agents/demo/agent.sh).
pub const AGENT_SCRIPT: &str = include_str!("../../../agents/demo/agent.sh");

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
