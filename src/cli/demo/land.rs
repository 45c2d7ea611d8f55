//! The demo's ending: review and a fenced land in a real git repository (the demo directory).
//!
//! After the backlog is worked, the demo makes the directory a git repository on `main` with the
//! commit fence hooks, and turns on `[review] required` and `[git] land = "merge"` (board.toml
//! is reloaded while the board runs). Then:
//! 1. an agent finishes a task with a commit; the demo accepts it as a person would
//!    (`board accept ID --note …`) and the board lands it on `main` by compare-and-swap;
//! 2. a paused agent's stale commit is refused at land: agent A claims a task under a short
//!    lease, commits (generation g) and stops itself (SIGSTOP); its claim lapses; agent B claims
//!    the task (generation g+1) under the long lease, commits on top of A's work and finishes;
//!    the accept exits 5 naming A's commit and both generations, `main` is unchanged; A is
//!    resumed and its late `done` is rejected by generation.
//!
//! Every step waits on a condition (an event in the timeline, a process exit, the lease in force)
//! with a deadline, never on a sleep.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::ending_git::{git, git_env, git_missing, Repo};
use super::files::{write, BOARD_SECTION};
use super::setup::{operator, path_with, Demo};
use super::timeline::SHORT;
use super::timeline::{mark, Timeline};
use crate::proto::client::Target;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::glossary::{EventKind, Generation, TaskId};
use crate::proto::methods::{AddParams, Call, NoParams};
use crate::proto::methods::{StatusResult, TaskResult};
use crate::proto::EventView;

/// The scripted agent of the ending (agents/demo/git-agent.sh).
const GIT_AGENT_SCRIPT: &str = include_str!("../../../agents/demo/git-agent.sh");
/// A's lease: short, so its claim lapses soon after A stops itself, yet longer than the board's
/// stall threshold (1 s): a board starved that long finds a stall, which does not count against
/// the lease, so A's claim cannot lapse before its commit while A runs.
const SHORT_LEASE: &str = "1500ms";
const SHORT_LEASE_MS: i64 = 1_500;
/// Every other claim of the ending: long enough for the honest steps on a loaded machine.
const LONG_LEASE: &str = "10s";
const LONG_LEASE_MS: i64 = 10_000;
/// The longest wait for any one step of the ending.
const STEP: Duration = Duration::from_secs(60);
/// The agents of the ending (new sessions, so new names): the paused one (A), the one taking
/// over its task (B), and the honest one.
const PAUSED: &str = "agent-4";
const TAKER: &str = "agent-5";
const HONEST: &str = "agent-6";

/// What the ending showed; judged by [`Ending::holds`].
#[derive(Debug, Default)]
pub(super) struct Ending {
    /// Why the ending did not run (git missing), if it did not.
    pub skipped: Option<String>,
    /// Why it stopped early, if it did.
    pub failed: Option<String>,
    /// The reviewed task that landed: (task, its commit, main's head after the land).
    pub landed: Option<(TaskId, String, String)>,
    /// The stale task: (task, A's commit, A's generation, B's generation).
    pub stale: Option<(TaskId, String, Generation, Generation)>,
    /// The refused accept's exit code, and whether its message named A's commit and both
    /// generations.
    pub refused: Option<(i32, bool)>,
    /// Whether `main` was the same before and after the refused accept, and A's commit is not
    /// an ancestor of it.
    pub main_unchanged: bool,
    /// Whether A's late `done` was rejected after it was resumed.
    pub late_rejected: bool,
}

impl Ending {
    /// Whether the ending showed what it should (a skipped ending holds: nothing to show).
    pub fn holds(&self) -> bool {
        self.skipped.is_some()
            || (self.failed.is_none()
                && self.landed.is_some()
                && self.refused == Some((5, true))
                && self.main_unchanged
                && self.late_rejected)
    }

    /// The ending's lines of the summary.
    pub fn print_summary(&self) {
        if let Some(why) = &self.skipped {
            println!("  review and land: skipped ({why})");
            return;
        }
        if let Some(why) = &self.failed {
            println!("  review and land: stopped early: {why} {}", mark(false));
        }
        match &self.landed {
            Some((task, commit, head)) => println!(
                "  reviewed, accepted and landed on main: #{task}, commit {} (main now at {}) {}",
                short(commit),
                short(head),
                mark(true)
            ),
            None => println!(
                "  reviewed, accepted and landed on main: no {}",
                mark(false)
            ),
        }
        let refused = self.refused == Some((5, true)) && self.main_unchanged;
        match &self.stale {
            Some((task, commit, ga, gb)) => println!(
                "  stale commit refused at land: #{task}, {PAUSED}'s commit {} (generation {ga}) \
                 under {TAKER}'s (generation {gb}) never reached main, main unchanged: {} {}",
                short(commit),
                if refused { "yes" } else { "no" },
                mark(refused)
            ),
            None => println!("  stale commit refused at land: no {}", mark(false)),
        }
        println!(
            "  late done of the paused agent rejected by generation: {} {}",
            if self.late_rejected { "yes" } else { "no" },
            mark(self.late_rejected)
        );
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(SHORT)]
}

/// The two tasks of the ending: (the one reviewed and landed, the one A leaves stale).
struct Tasks {
    honest: TaskId,
    stale: TaskId,
}

impl Demo {
    /// Runs the ending on the board at `target`; what it showed. Skipped when git cannot be
    /// run; a step that fails or times out (git, board.toml, the board, an agent) ends it early,
    /// with the reason in [`Ending::failed`].
    pub(super) fn ending(&self, exe: &Path, target: &Target, tl: &Timeline) -> Ending {
        if let Some(why) = git_missing() {
            return Ending {
                skipped: Some(why),
                ..Ending::default()
            };
        }
        println!(
            "\nreview and land: the demo directory becomes a git repository on main with the commit \
             fence hooks; board.toml now says [review] required = true, [git] land = \"merge\"\n"
        );
        let mut out = Ending::default();
        if let Err(e) = self.run_ending(exe, target, tl, &mut out) {
            out.failed = Some(e.message);
        }
        out
    }

    fn run_ending(
        &self,
        exe: &Path,
        target: &Target,
        tl: &Timeline,
        out: &mut Ending,
    ) -> BoardResult<()> {
        let repo = Repo::init(&self.dir, exe)?;
        self.configure(target, SHORT_LEASE, SHORT_LEASE_MS)?;
        let tasks = self.add_ending_tasks(target, tl)?;
        let (mut a, a_commit, ga) = self.pause_past_lease(exe, tl, &repo, tasks.stale)?;
        self.configure(target, LONG_LEASE, LONG_LEASE_MS)?;
        let gb = self.take_over(exe, tl, &repo, &tasks)?;
        out.stale = Some((tasks.stale, a_commit.clone(), ga, gb));

        out.landed = Some(self.accept_honest(tl, tasks.honest)?);
        self.accept_stale(tasks.stale, &a_commit, (ga, gb), out)?;

        // A wakes up and goes on as if nothing happened: its late done meets the fence.
        self.narrate(&format!(
            "{PAUSED} resumed (SIGCONT): it goes on to finish #{} at generation {ga}",
            tasks.stale
        ));
        self.resume(Some(a.child.id() as i32));
        let rejected = tl.wait(STEP, |e| {
            e.kind == EventKind::Reject
                && e.task == Some(tasks.stale)
                && e.agent.as_deref() == Some(PAUSED)
        });
        out.late_rejected = rejected.is_some();
        a.wait(STEP);
        self.show_main();
        Ok(())
    }

    /// A claims `task` under the short lease, commits and stops itself; its claim lapses. (A,
    /// its commit, the generation it had.)
    fn pause_past_lease(
        &self,
        exe: &Path,
        tl: &Timeline,
        repo: &Repo,
        task: TaskId,
    ) -> BoardResult<(Running<'_>, String, Generation)> {
        let wt_a = repo.worktree(PAUSED, "main")?;
        let a = self.spawn_git_agent(exe, PAUSED, &wt_a, task, true)?;
        let a_commit = self.wait_commit(PAUSED)?;
        self.narrate(&format!(
            "{PAUSED} committed {} on board/{PAUSED} and is paused (SIGSTOP) before its done",
            short(&a_commit)
        ));
        let lapse = tl.wait(STEP, |e| {
            e.kind == EventKind::Lapse && e.task == Some(task) && e.agent.as_deref() == Some(PAUSED)
        });
        let Some(lapse) = lapse else {
            return Err(fail(format!("{PAUSED}'s claim did not lapse")));
        };
        let ga = lapse.generation.unwrap_or_default();
        Ok((a, a_commit, ga))
    }

    /// B builds on A's branch and finishes the stale task; the honest agent starts from main and
    /// finishes its own. Both wait in review. The generation B finished at.
    fn take_over(
        &self,
        exe: &Path,
        tl: &Timeline,
        repo: &Repo,
        tasks: &Tasks,
    ) -> BoardResult<Generation> {
        let wt_b = repo.worktree(TAKER, &format!("board/{PAUSED}"))?;
        let wt_h = repo.worktree(HONEST, "main")?;
        self.narrate(&format!(
            "{TAKER} takes #{} over on top of {PAUSED}'s commit; {HONEST} works on #{} from main",
            tasks.stale, tasks.honest
        ));
        let b = self.spawn_git_agent(exe, TAKER, &wt_b, tasks.stale, false)?;
        let h = self.spawn_git_agent(exe, HONEST, &wt_h, tasks.honest, false)?;
        let mut gb = Generation::default();
        for (agent, mut child, task) in [(TAKER, b, tasks.stale), (HONEST, h, tasks.honest)] {
            child.wait(STEP);
            let review = tl.wait(STEP, |e| {
                e.kind == EventKind::Review && e.task == Some(task)
            });
            let Some(review) = review else {
                return Err(fail(format!("{agent} did not finish #{task} into review")));
            };
            if task == tasks.stale {
                gb = review.generation.unwrap_or_default();
            }
        }
        Ok(gb)
    }

    /// Writes board.toml with review, the merge land and `lease`, and waits until the board
    /// has it in force (it reloads board.toml while it runs).
    fn configure(&self, target: &Target, lease: &str, lease_ms: i64) -> BoardResult<()> {
        let text = format!(
            "{}\n[lease]\nduration = \"{lease}\"\nsweep = \"100ms\"\nliveness = \"process\"\n\n\
             [client]\ntimeout = \"60s\"\n\n[review]\nrequired = true\n\n\
             [git]\nbase = \"main\"\nland = \"merge\"\n",
            BOARD_SECTION
        );
        // Written whole and renamed into place: the board never reads half a file.
        let tmp = self.dir.join(".board.toml.new");
        write(&tmp, &text)?;
        std::fs::rename(&tmp, self.dir.join("board.toml"))
            .map_err(|e| BoardError::internal(format!("replacing board.toml: {e}")))?;
        let deadline = Instant::now() + STEP;
        loop {
            let status = operator(target)?.ask::<StatusResult>(Call::Status(NoParams {}))?;
            if status.result.lease.duration_ms == lease_ms && status.result.config_error.is_none() {
                self.narrate(&format!("board.toml reloaded: lease {lease}"));
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(fail(format!("the board did not take the lease of {lease}")));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn add_ending_tasks(&self, target: &Target, tl: &Timeline) -> BoardResult<Tasks> {
        let mut c = operator(target)?;
        let mut add = |title: &str| -> BoardResult<TaskId> {
            let added = c.ask_raw::<TaskResult>(Call::Add(AddParams {
                title: title.to_string(),
                priority: Some(5),
                ..AddParams::default()
            }))?;
            let id = added.result.task.id;
            tl.title(id, title);
            Ok(id)
        };
        Ok(Tasks {
            honest: add("Add a health check endpoint")?,
            stale: add("Cache resolved links in memory")?,
        })
    }

    /// `board run --name NAME -- bash -c GIT_AGENT_SCRIPT` in the worktree `wt`, on `task`.
    fn spawn_git_agent(
        &self,
        exe: &Path,
        name: &str,
        wt: &Path,
        task: TaskId,
        pause: bool,
    ) -> BoardResult<Running<'_>> {
        let mut cmd = Command::new(exe);
        cmd.args(["run", "--name", name, "--", "bash", "-c", GIT_AGENT_SCRIPT])
            .arg("board-demo-git-agent")
            .current_dir(wt)
            .env("PATH", path_with(exe))
            .env("BOARD_BIN", exe)
            .env("BOARD_ROOT", &self.dir)
            .env("DEMO_TASK", task.to_string())
            .env("DEMO_FILE", format!("{name}.md"))
            .env("DEMO_MESSAGE", format!("{name}: work on task {task}"))
            .env("DEMO_PAUSE", if pause { "1" } else { "0" });
        git_env(&mut cmd, name);
        let child = crate::proto::client::without_identity(&mut cmd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| BoardError::internal(format!("starting {name}: {e}")))?;
        if let Ok(mut p) = self.started.lock() {
            p.insert(0, child.id());
        }
        Ok(Running { demo: self, child })
    }

    /// `board accept` of the honest task, as a person would: it lands on main.
    fn accept_honest(&self, tl: &Timeline, task: TaskId) -> BoardResult<(TaskId, String, String)> {
        let landed = |e: &EventView| e.kind == EventKind::Land && e.task == Some(task);
        let (code, _) = self.accept(task, "reviewed the diff: looks right", || {
            tl.wait(STEP, landed);
        })?;
        if code != 0 {
            return Err(fail(format!("the accept of #{task} exited {code}")));
        }
        if tl.wait(Duration::ZERO, landed).is_none() {
            return Err(fail(format!("#{task} did not land")));
        }
        let commit = git(&self.dir, &["rev-parse", &format!("board/{HONEST}")])?;
        let head = git(&self.dir, &["rev-parse", "main"])?;
        let ancestor = super::ending_git::is_ancestor(&self.dir, &commit, "main");
        if !ancestor {
            return Err(fail(format!("#{task}'s commit is not on main")));
        }
        Ok((task, commit, head))
    }

    /// `board accept` of the stale task: refused (exit 5), main unchanged.
    fn accept_stale(
        &self,
        task: TaskId,
        a_commit: &str,
        (ga, gb): (Generation, Generation),
        out: &mut Ending,
    ) -> BoardResult<()> {
        let before = git(&self.dir, &["rev-parse", "main"])?;
        let (code, text) = self.accept(task, "the change reads well", || ())?;
        let names = text.contains(a_commit)
            && text.contains(&format!("Board-Generation: {ga}"))
            && text.contains(&format!("generation {gb}"));
        out.refused = Some((code, names));
        let after = git(&self.dir, &["rev-parse", "main"])?;
        out.main_unchanged =
            before == after && !super::ending_git::is_ancestor(&self.dir, a_commit, "main");
        self.narrate(&format!(
            "main before the accept: {}, after: {}{}",
            short(&before),
            short(&after),
            if before == after { " (unchanged)" } else { "" }
        ));
        Ok(())
    }

    /// Runs `board accept TASK --note NOTE` in the demo directory and shows it, once `settle`
    /// returned (it waits for the accept's events, so the lines come in order); (exit code,
    /// its output).
    fn accept(
        &self,
        task: TaskId,
        note: &str,
        settle: impl FnOnce(),
    ) -> BoardResult<(i32, String)> {
        let exe = std::env::current_exe().map_err(|e| BoardError::internal(e.to_string()))?;
        self.narrate(&format!("$ board accept {task} --note \"{note}\""));
        let mut cmd = Command::new(exe);
        cmd.args(["accept", &task.to_string(), "--note", note])
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        git_env(&mut cmd, "board");
        let res = crate::proto::client::without_identity(&mut cmd)
            .output()
            .map_err(|e| BoardError::internal(format!("running board accept: {e}")))?;
        let code = res.status.code().unwrap_or(-1);
        if code == 0 {
            settle();
        }
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&res.stdout),
            String::from_utf8_lossy(&res.stderr)
        );
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            println!("{:>9}{}", "", super::timeline::shorten(line));
        }
        self.narrate(&format!("board accept {task}: exit {code}"));
        Ok((code, text))
    }

    /// Waits for agent `name`'s commit on its branch `board/NAME` (it started at `main`); its id.
    fn wait_commit(&self, name: &str) -> BoardResult<String> {
        let deadline = Instant::now() + STEP;
        let base = git(&self.dir, &["rev-parse", "main"])?;
        loop {
            let head = git(&self.dir, &["rev-parse", &format!("board/{name}")])?;
            if head != base {
                return Ok(head);
            }
            if Instant::now() > deadline {
                return Err(fail(format!("{name} did not commit in time")));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Prints main's last commits with the trailers that fence them.
    fn show_main(&self) {
        let log = git(
            &self.dir,
            &[
                "log",
                "-4",
                "--format=%h %s%x09%(trailers:key=Board-Task,key=Board-Generation,separator=%x2C )",
                "main",
            ],
        );
        if let Ok(log) = log {
            println!("\ngit log main:");
            for line in log.lines() {
                println!("  {}", line.replace('\t', "  "));
            }
        }
    }

    /// A line of the demo's own narration in the timeline.
    pub(super) fn narrate(&self, what: &str) {
        println!(
            "{:>6.2}s  {:<8} {what}",
            self.start.elapsed().as_secs_f64(),
            "demo"
        );
    }
}

fn fail(what: String) -> BoardError {
    BoardError::internal(what)
}

/// An agent of the ending under its launcher. Dropped while still running (the ending stopped
/// early), it is resumed and its launcher ended, so no paused agent outlives the demo.
struct Running<'a> {
    demo: &'a Demo,
    child: Child,
}

impl Running<'_> {
    /// Waits for the launcher to exit; kills it after `within`.
    fn wait(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if Instant::now() > deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let pid = self.child.id() as i32;
            self.demo.resume(Some(pid));
            // The launcher ends its agent (TERM, then KILL) and reports it to the board.
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
            self.wait(Duration::from_secs(5));
        }
    }
}
