//! Agent sessions under `board run`: one [`Agent`], whose agent process is either a shell the
//! test drives one line at a time ([`TestBoard::agent`]) or a script that runs on its own
//! ([`TestBoard::run_agent`]).

use std::fs::File;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicUsize, Ordering};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use super::command::Out;
use super::process::{fifo_rw, mkfifo, running};
use super::test_board::TestBoard;
use super::{exit_code, poll, poll_until, sh_quote, wait_child, STEP};

static NEXT_AGENT: AtomicUsize = AtomicUsize::new(0);

/// The driven agent's program: a shell that runs one line at a time from the `in` FIFO of its
/// control directory, leaving `N.out`, `N.err` and `N.code` there. While waiting for a line it
/// is blocked in `read`: silent (no board calls, no CPU), like an agent thinking for a long
/// time.
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

/// An agent session started with `board run`. The launcher leads its own process group, so
/// dropping this kills the launcher, the agent and every helper they left behind (the launcher
/// first, so it reports nothing to the board).
pub struct Agent {
    /// The session id: the one the board gave (`claude`, `claude-2`) for a driven agent, the
    /// name asked for (unique per test) for a scripted one.
    pub id: String,
    /// The agent process (the driven shell); 0 for a scripted agent.
    pub pid: i32,
    /// The `board run` process.
    pub launcher: Child,
    /// Where the launcher's stdout and stderr go (`NAME.out` in the project root).
    out: PathBuf,
    /// Where a driven agent reads its lines and leaves their results.
    ctl: Option<PathBuf>,
    input: Option<File>,
    sent: usize,
}

impl TestBoard {
    /// Starts an agent session (`board run --name NAME`) whose agent is a shell the test drives
    /// one command line at a time (see [`Agent::sh`]). Waits until it is registered.
    pub fn agent(&self, name: &str) -> Agent {
        let mut a = self.spawn_driven(name);
        a.wait_registered();
        a
    }

    /// [`TestBoard::agent`] started with `board run --role ROLE`.
    pub fn agent_with_role(&self, name: &str, role: &str) -> Agent {
        let mut a = self.spawn_driven_with(name, &["--role", role]);
        a.wait_registered();
        a
    }

    /// Starts several driven agent sessions at once, then waits until all are registered.
    pub fn agents(&self, names: &[&str]) -> Vec<Agent> {
        let mut all: Vec<Agent> = names.iter().map(|n| self.spawn_driven(n)).collect();
        for a in &mut all {
            a.wait_registered();
        }
        all
    }

    /// Starts `board run --name NAME -- sh -c SCRIPT sh` here without waiting; what the
    /// launcher prints goes to `NAME.out` in the project root.
    pub fn run_agent(&self, name: &str, script: &str) -> Agent {
        self.run_agent_with(name, script, &[], &[])
    }

    /// [`TestBoard::run_agent`] with `args` for the script (`$1`…) and extra environment for
    /// the launcher (and so the agent).
    pub fn run_agent_with(
        &self,
        name: &str,
        script: &str,
        args: &[&str],
        env: &[(&str, &Path)],
    ) -> Agent {
        self.run_agent_opts(name, &[], script, args, env)
    }

    /// [`TestBoard::run_agent_with`] with more `board run` options (`run_opts`, before `--`).
    fn run_agent_opts(
        &self,
        name: &str,
        run_opts: &[&str],
        script: &str,
        args: &[&str],
        env: &[(&str, &Path)],
    ) -> Agent {
        let mut run = vec!["run", "--name", name];
        run.extend_from_slice(run_opts);
        run.extend_from_slice(&["--", "sh", "-c", script, "sh"]);
        let out = self.root().join(format!("{name}.out"));
        let log = File::options()
            .create(true)
            .append(true)
            .open(&out)
            .expect("agent output file");
        let launcher = self
            .board_cmd(&run)
            .args(args)
            .envs(env.iter().copied())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("spawn board run");
        Agent {
            id: name.to_string(),
            pid: 0,
            launcher,
            out,
            ctl: None,
            input: None,
            sent: 0,
        }
    }

    /// A task `title` that a driven agent `name` claimed, released and claimed again: the agent
    /// holds it at generation 2, so generation 1 is stale. The task id and the agent.
    #[track_caller]
    pub fn reclaimed(&self, title: &str, name: &str) -> (i64, Agent) {
        let task = self.add(title);
        let mut agent = self.agent(name);
        assert_eq!(agent.claim(task), 1);
        agent.board(&["release", &task.to_string()]).ok();
        assert_eq!(agent.claim(task), 2, "a new claim, a new generation");
        (task, agent)
    }

    fn spawn_driven(&self, name: &str) -> Agent {
        self.spawn_driven_with(name, &[])
    }

    fn spawn_driven_with(&self, name: &str, run_opts: &[&str]) -> Agent {
        let n = NEXT_AGENT.fetch_add(1, Ordering::SeqCst);
        let ctl = self.scratch().join(format!("agent-{n}"));
        std::fs::create_dir_all(&ctl).expect("agent control directory");
        // Read-write, so the shell never sees end of input while we hold it; dropping it (end
        // of the test) makes the shell's `read` fail and exit.
        let input = fifo_rw(&mkfifo(ctl.join("in")));
        let ctl_arg = ctl.to_string_lossy().into_owned();
        let mut a = self.run_agent_opts(name, run_opts, AGENT_SHELL, &[&ctl_arg], &[]);
        a.id = String::new();
        a.ctl = Some(ctl);
        a.input = Some(input);
        a
    }
}

impl Agent {
    fn ctl(&self) -> &Path {
        self.ctl
            .as_deref()
            .expect("a driven agent (TestBoard::agent)")
    }

    fn wait_registered(&mut self) {
        let id_file = self.ctl().join("id");
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
                std::fs::read_to_string(&self.out).unwrap_or_default()
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

    /// Sends one shell line to the driven agent without waiting; returns its sequence number.
    pub fn send(&mut self, line: &str) -> usize {
        assert!(!line.contains('\n'), "one line at a time");
        let input = self
            .input
            .as_mut()
            .expect("a driven agent with its input open");
        input
            .write_all(format!("{line}\n").as_bytes())
            .expect("write to the agent");
        self.sent += 1;
        self.sent
    }

    /// Waits for the result of line `n`.
    pub fn result(&mut self, n: usize) -> Out {
        let ctl = self.ctl().to_path_buf();
        let code_file = ctl.join(format!("{n}.code"));
        let code = poll(STEP, || {
            std::fs::read_to_string(&code_file)
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
        })
        .unwrap_or_else(|| panic!("agent {} did not finish line {n} in time", self.id));
        let read =
            |ext: &str| std::fs::read_to_string(ctl.join(format!("{n}.{ext}"))).unwrap_or_default();
        Out {
            code,
            stdout: read("out"),
            stderr: read("err"),
        }
    }

    /// Runs one shell line inside the driven agent and returns its output.
    pub fn sh(&mut self, line: &str) -> Out {
        let n = self.send(line);
        self.result(n)
    }

    /// Runs `board ARGS` inside the driven agent (with its identity).
    pub fn board(&mut self, args: &[&str]) -> Out {
        let words: Vec<String> = args.iter().map(|a| sh_quote(a)).collect();
        self.sh(&format!("board {}", words.join(" ")))
    }

    /// Runs `board --json ARGS` inside the driven agent, whatever its outcome.
    pub fn board_json(&mut self, args: &[&str]) -> Out {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.board(&all)
    }

    /// Runs `board --json ARGS` inside the driven agent; expects success; returns the JSON.
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

    /// Makes the driven agent process exit with `code` (it runs `exit CODE`).
    pub fn exit_with(&mut self, code: i32) {
        self.send(&format!("exit {code}"));
    }

    /// Waits for `board run` to exit; returns its exit code.
    pub fn wait_launcher(&mut self) -> i32 {
        let st = wait_child(&mut self.launcher, STEP).expect("board run exits");
        exit_code(st)
    }

    /// SIGKILLs the driven agent process only (its launcher sees it die and reports it).
    pub fn kill_agent(&mut self) {
        kill(Pid::from_raw(self.pid), Signal::SIGKILL).expect("kill the agent");
    }

    /// SIGKILLs the launcher and then the driven agent, with no chance to tell the board, and
    /// waits until both are gone (the agent may linger as a zombie of an init that does not
    /// reap).
    pub fn kill_silently(&mut self) {
        let _ = self.launcher.kill();
        let _ = self.launcher.wait();
        let _ = kill(Pid::from_raw(self.pid), Signal::SIGKILL);
        let pid = self.pid;
        let gone = poll_until(STEP, || !running(pid));
        assert!(gone, "agent {} ({}) did not die", self.id, self.pid);
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        // The launcher first, so it reports nothing; then its group; closing the input ends a
        // driven shell that left the group.
        let _ = self.launcher.kill();
        let _ = killpg(Pid::from_raw(self.launcher.id() as i32), Signal::SIGKILL);
        let _ = self.launcher.wait();
        self.input.take();
    }
}
