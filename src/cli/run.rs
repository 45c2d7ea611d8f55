//! `board run [--name N] -- CMD…`: the launcher that starts an agent under the board.
//!
//! It registers an agent session, makes itself a child subreaper (ARCHITECTURE.md rule 13), spawns CMD with
//! `BOARD_SOCKET`, `BOARD_AGENT`, `BOARD_TOKEN` (and `BOARD_ROOT`, and `BOARD_AGENT_NAME`, the
//! name people see, for its prompt) in its environment, with the `[env]` of the profile of a
//! known agent CLI (as `board up` starts it: Gemini CLI's workspace trust), supervises
//! it (signals, hangup grace, reaping: [`super::supervise`]), and when the child exits (SIGCHLD)
//! reports the exit to the board at once so its claims are expelled, then terminates leftover
//! descendants (TERM, then KILL) and exits with the child's status. It never renews claims: its own liveness proves nothing about the
//! agent (ARCHITECTURE.md rule 2).

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::Value;

use super::supervise::{supervise, terminate_leftovers, Signals};
use crate::proto::client::{self, Client, Target};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::methods::{
    AgentsParams, Call, SessionAttachParams, SessionExitParams, SessionRegisterParams,
};
use crate::proto::methods::{AgentsResult, SessionExitResult, SessionRegisterResult};

/// Runs the launcher; returns the exit code (the child's, or 128 + signal; 8 if no board).
///
/// With `hold` (set by `board up` for its panes) the launcher does not exit when the agent has
/// ended: it prints the agent's exit status and the board's reason under the agent's last output,
/// marks its tmux pane `@board_state ended`, and waits: Enter starts the agent again in place,
/// Ctrl-D or Ctrl-C closes the pane (as does `board up` or the TUI restarting it).
///
/// `hangup_grace` overrides `[run] hangup_grace` of board.toml.
///
/// `attention_after`: the session needs attention when neither a board call nor a hook of its
/// agent came this long after its start (None: never).
///
/// `setup`: a command run first with `sh -c` in the current directory (an agent's new worktree),
/// its output in the terminal; when it fails the agent is not started and the terminal says why
/// (with `hold`, the pane is marked `@board_state setup-failed` and Enter tries again). When it
/// succeeds the worktree is marked set up, so `board up` does not pass it again.
///
/// `role`: the agent's role (`[[agents]] role`), kept on its session: claim-next gives it the
/// tasks meant for that role (`board add --for ROLE`).
#[allow(clippy::too_many_arguments)]
pub fn run(
    name: &str,
    role: Option<&str>,
    pane: Option<&str>,
    hold: bool,
    hangup_grace: Option<Duration>,
    attention_after: Option<Duration>,
    setup: Option<&str>,
    cmd: &[String],
) -> i32 {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("board run: {e}");
            return 1;
        }
    };
    let (code, restart) = rt.block_on(async {
        // Caught from here on, before there is a session or a child: one that arrives while we
        // start (a pane closed at once) is then handled by `supervise` (reported, forwarded)
        // instead of killing us with the agent orphaned and the wrong reason on record.
        let mut signals = Signals::new();
        if hold {
            mark_pane("running");
        }
        if let Some(setup) = setup {
            if let Err(why) = set_up(setup).await {
                // Marked before it is said, so whoever reads the pane finds the mark too.
                if hold {
                    mark_pane(crate::agent_tools::team::SETUP_FAILED);
                }
                eprintln!("\r\n\x1b[1mboard: {why}; agent {name} was not started\x1b[0m\r");
                if !hold {
                    return (1, false);
                }
                eprintln!(
                    "board: Enter runs the setup again here; Ctrl-D closes this pane\r"
                );
                return (1, hold_wait(&mut signals).await);
            }
        }
        let (code, summary, hung_up) = match launch((name, role), pane, hangup_grace, attention_after, cmd, &mut signals).await {
            Ok(end) => (end.code, end.summary(name), end.hung_up),
            Err(e) => {
                let msg = crate::proto::sanitize::inert(&e.message);
                eprintln!("board run: {msg}");
                (e.kind.exit_code(), format!("agent {name} did not start: {msg}"), false)
            }
        };
        if !hold || hung_up {
            return (code, false);
        }
        mark_pane("ended");
        eprintln!("\r\n\x1b[1mboard: {summary}\x1b[0m\r");
        eprintln!(
            "board: Enter starts it again here; Ctrl-D closes this pane (`board up` or the TUI can restart it too)\r"
        );
        (code, hold_wait(&mut signals).await)
    });
    // A blocking read of the terminal may still be pending: do not wait for it.
    rt.shutdown_background();
    if restart {
        restart_self();
    }
    code
}

/// Runs the worktree's setup command with `sh -c` in the current directory, its output in the
/// terminal, and marks the worktree set up when it succeeds. Errors: what failed, in words.
async fn set_up(setup: &str) -> Result<(), String> {
    let shown = crate::proto::sanitize::inert(setup);
    eprintln!("board: setting up this worktree: {shown}\r");
    let status = tokio::process::Command::new("sh")
        .args(["-c", setup])
        .status()
        .await
        .map_err(|e| format!("cannot run the setup `{shown}` ({e})"))?;
    if !status.success() {
        let how = match (status.code(), status.signal()) {
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(s)) => format!("was killed by signal {s}"),
            _ => "failed".to_string(),
        };
        return Err(format!("setup `{shown}` {how}"));
    }
    // Outside a worktree (`board run --setup` by hand) there is nothing to mark.
    let marked = std::env::current_dir()
        .map_err(|e| e.to_string())
        .and_then(|d| {
            crate::agent_tools::team::worktree_files::mark_set_up(&d).map_err(|e| e.message)
        });
    if let Err(e) = marked {
        tracing::debug!(error = %e, "cannot mark the worktree set up");
    }
    eprintln!("board: setup done\r");
    Ok(())
}

/// How an agent run ended.
struct Ended {
    /// The launcher's exit code (the agent's, or 128 + signal).
    code: i32,
    /// The agent's session id.
    agent: String,
    /// The board's reason for ending the session, when it answered.
    reason: Option<String>,
    /// The terminal (pane) went away: nobody is left to read a summary.
    hung_up: bool,
}

impl Ended {
    fn summary(&self, name: &str) -> String {
        let status = if self.code > 128 {
            format!("was killed by signal {}", self.code - 128)
        } else {
            format!("exited with status {}", self.code)
        };
        let session = if self.agent == name {
            String::new()
        } else {
            format!(" (session {})", self.agent)
        };
        match &self.reason {
            Some(r) => format!("agent {name}{session} {status}; the board says: {r}"),
            None => format!("agent {name}{session} {status}"),
        }
    }
}

/// Sets `@board_state` on our tmux pane (`board up` reads it to find ended agents).
fn mark_pane(state: &str) {
    let Ok(pane) = std::env::var("TMUX_PANE") else {
        return;
    };
    let out = std::process::Command::new("tmux")
        .args(["set-option", "-p", "-t", &pane, "@board_state", state])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    if let Err(e) = out {
        tracing::debug!(error = %e, "cannot mark the pane");
    }
}

/// Waits for the user after the agent ended: true to start it again (Enter), false to close
/// (end of input, Ctrl-C, SIGTERM, SIGHUP).
async fn hold_wait(signals: &mut Signals) -> bool {
    let line = tokio::task::spawn_blocking(|| {
        let mut s = String::new();
        std::io::stdin().read_line(&mut s).map(|n| n > 0)
    });
    let closing = async {
        loop {
            match signals.next().await {
                Some(Signal::SIGINT | Signal::SIGTERM | Signal::SIGHUP) => return,
                Some(_) => continue,
                None => std::future::pending::<()>().await,
            }
        }
    };
    tokio::select! {
        r = line => matches!(r, Ok(Ok(true))),
        _ = closing => false,
    }
}

/// Replaces this process with the same `board run` command line: a new agent session in the same
/// pane (the pane's process keeps its pid, so the board's pane watch stays true).
fn restart_self() {
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let _argv0 = args.next();
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("board run: cannot find my own binary to restart: {e}");
            return;
        }
    };
    let err = std::process::Command::new(exe).args(args).exec();
    eprintln!("board run: cannot restart: {err}");
}

fn connect(target: &Target) -> BoardResult<Client> {
    let mut c = Client::connect(target, true)?;
    c.identity = None;
    Ok(c)
}

async fn launch(
    (name, role): (&str, Option<&str>),
    pane: Option<&str>,
    hangup_grace: Option<Duration>,
    attention_after: Option<Duration>,
    cmd: &[String],
    signals: &mut Signals,
) -> BoardResult<Ended> {
    let target = client::target()?;
    let hangup_grace = hangup_grace.unwrap_or_else(|| configured_grace(&target));
    let mut c = connect(&target)?;
    let reg: SessionRegisterResult = c
        .ask(Call::SessionRegister(SessionRegisterParams {
            name: name.to_string(),
            branch: current_branch(),
            attention_ms: attention_after.map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
            role: role.map(str::to_string),
        }))?
        .result;
    let SessionRegisterResult { agent, name, token } = reg;
    // What people see (the prompt, the pane): the name, which a restarted agent takes back.
    let shown = if name.is_empty() { agent.clone() } else { name };
    // Helpers the agent double-forks are re-parented to us, not to init, so they stay in the
    // session's process tree and can be cleaned up.
    if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
        tracing::debug!(error = %e, "cannot become a child subreaper");
    }
    let mut command = agent_command(&target, cmd, (&agent, &shown, &token));
    let mut child = match command.spawn() {
        Ok(ch) => ch,
        Err(e) => {
            let reason = format!("could not start {:?}: {e}", cmd[0]);
            let _ = c.send(exit_call(&agent, &token, None, Some(&reason)));
            return Err(BoardError::usage(reason));
        }
    };
    let pid = child.id().map(|p| p as i32).unwrap_or(0);
    let pane = attach(&mut c, (&agent, &token), pid, pane);
    drop(c);

    let hung_up = std::cell::Cell::new(false);
    let on_hangup = || {
        hung_up.set(true);
        // The terminal or tmux pane is gone: that is a hard signal (ARCHITECTURE.md rule 4), so the claims
        // go now, not when (or if) the agent decides to exit on SIGHUP.
        let reason = if pane.is_some() {
            "pane closed (SIGHUP)"
        } else {
            "terminal closed (SIGHUP)"
        };
        if let Ok(mut c) = connect(&target) {
            let _ = c.send(exit_call(&agent, &token, None, Some(reason)));
        }
    };
    let (status, kill_at) = supervise(&mut child, pid, signals, hangup_grace, on_hangup).await;
    let (code, sig) = (status.code(), status.signal());
    // Report first (the claims must be freed at once), then clean up.
    let reason = report_exit(&target, &agent, &token, code, sig);
    terminate_leftovers(kill_at);
    Ok(Ended {
        code: code.unwrap_or_else(|| 128 + sig.unwrap_or(0)),
        agent,
        reason,
        hung_up: hung_up.get(),
    })
}

/// Tells the board the agent's process `pid`, its tmux pane (`pane`, else `TMUX_PANE`) and
/// terminal; returns the pane. A failure is printed, not fatal: the session runs unwatched.
fn attach(
    c: &mut Client,
    (agent, token): (&str, &str),
    pid: i32,
    pane: Option<&str>,
) -> Option<String> {
    let pane = pane
        .map(str::to_string)
        .or_else(|| std::env::var("TMUX_PANE").ok());
    let pane_pid = pane.as_ref().and_then(|p| tmux_pane_pid(p));
    let attach = c.send(Call::SessionAttach(SessionAttachParams {
        agent: agent.to_string(),
        token: token.to_string(),
        pid: i64::from(pid),
        pane: pane.clone(),
        pane_pid,
        tty: stdin_tty(),
    }));
    if let Err(e) = attach {
        eprintln!(
            "board run: could not attach the agent's process: {}",
            e.message
        );
    }
    pane
}

/// The agent's command `cmd` (program and arguments) with its session's environment
/// (`BOARD_SOCKET`, `BOARD_AGENT` = the session id, `BOARD_AGENT_NAME`, `BOARD_TOKEN`,
/// `BOARD_ROOT`, the profile's `[env]`, `BOARD_BIN`), set to end with its launcher.
fn agent_command(
    target: &client::Target,
    cmd: &[String],
    (agent, shown, token): (&str, &str, &str),
) -> tokio::process::Command {
    let root = target.paths.as_ref().map(|p| p.root.clone());
    let mut command = tokio::process::Command::new(&cmd[0]);
    command
        .args(&cmd[1..])
        .env("BOARD_SOCKET", &target.socket)
        .env("BOARD_AGENT", agent)
        .env("BOARD_AGENT_NAME", shown)
        .env("BOARD_TOKEN", token);
    if let Some(r) = &root {
        command.env("BOARD_ROOT", r);
        command.envs(profile_env(r, &cmd[0]));
    }
    // Agent CLIs may rebuild PATH from the login shell (Codex does), where `board` may be
    // missing: the instructions tell agents to fall back on this absolute path.
    if let Ok(exe) = std::env::current_exe() {
        command.env("BOARD_BIN", exe);
    }
    // If the launcher itself is killed (-9), nobody supervises the agent any more and the board
    // has already expelled its claims: ask the kernel to end the agent too.
    #[allow(
        unsafe_code,
        reason = "pre_exec runs between fork and exec; the closure only calls prctl"
    )]
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec here.
    unsafe {
        command.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    command
}

/// The `[env]` of the profile of the CLI `program` is (by file name: `gemini` is the `gemini`
/// profile, the project's `agents/gemini.toml` before the built-in one), so that `board run --
/// gemini` starts it as a `board up` pane does: Gemini CLI with the project trusted for this
/// session, without which its board MCP server stays disabled. Variables already set in our
/// environment win; nothing for a program no profile runs.
fn profile_env(root: &std::path::Path, program: &str) -> Vec<(String, String)> {
    use crate::agent_tools::profile::{CliKind, Profile};
    let name = std::path::Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let Some(kind) = CliKind::parse(name) else {
        return Vec::new();
    };
    let profile = match Profile::load(root, kind.as_str()) {
        Ok(p) => p,
        Err(e) => {
            tracing::debug!(error = %e, "no profile environment for {name}");
            return Vec::new();
        }
    };
    let runs_it = profile.cli == Some(kind)
        && profile.command.first().is_some_and(|c| {
            std::path::Path::new(c).file_name() == Some(std::ffi::OsStr::new(name))
        });
    if !runs_it {
        return Vec::new();
    }
    profile
        .env
        .into_iter()
        .filter(|(k, _)| std::env::var_os(k).is_none())
        .collect()
}

/// `session.exit` of `agent` (with its `token`): its exit status (`code`, `signal`) when it
/// exited, or the `reason` its session ends for.
fn exit_call(
    agent: &str,
    token: &str,
    status: Option<(Option<i32>, Option<i32>)>,
    reason: Option<&str>,
) -> Call {
    let (code, signal) = status.unwrap_or((None, None));
    Call::SessionExit(SessionExitParams {
        agent: agent.to_string(),
        token: token.to_string(),
        code: code.map(i64::from),
        signal: signal.map(i64::from),
        reason: reason.map(str::to_string),
    })
}

/// Reports the agent's exit; returns the board's reason for the session's end (the first
/// report wins: a watcher may have ended it a moment earlier, for its own reason).
fn report_exit(
    target: &Target,
    agent: &str,
    token: &str,
    code: Option<i32>,
    sig: Option<i32>,
) -> Option<String> {
    let exit = exit_call(agent, token, Some((code, sig)), None);
    // The board may be restarting: retry briefly. If it stays away, it finds the dead process
    // itself when it starts (ARCHITECTURE.md rule 8).
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let out = connect(target).and_then(|mut c| c.ask::<SessionExitResult>(exit.clone()));
        match out.map(|a| a.result) {
            Ok(r) if r.ended => return Some(r.reason),
            Ok(_) => return stored_end_reason(target, agent),
            Err(e) if Instant::now() > deadline => {
                eprintln!(
                    "board run: could not report the agent's exit: {}",
                    e.message
                );
                return None;
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

fn stored_end_reason(target: &Target, agent: &str) -> Option<String> {
    let all: AgentsResult = connect(target)
        .and_then(|mut c| c.ask(Call::Agents(AgentsParams { all: Some(true) })))
        .ok()?
        .result;
    all.agents.into_iter().find(|a| a.id == agent)?.end_reason
}

/// `[run] hangup_grace` of the board's board.toml (the default when it cannot be read).
fn configured_grace(target: &Target) -> Duration {
    let cfg = target
        .paths
        .as_ref()
        .and_then(|p| {
            crate::proto::config::Config::load(&p.root.join(crate::proto::config::CONFIG_FILE)).ok()
        })
        .unwrap_or_default();
    cfg.run.hangup_grace.0
}

/// The git branch checked out in the working directory (None outside a git work tree, on a
/// detached HEAD, or without git).
fn current_branch() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let b = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !b.is_empty()).then_some(b)
}

fn tmux_pane_pid(pane: &str) -> Option<i64> {
    let out = std::process::Command::new("tmux")
        .args(["display-message", "-p", "-t", pane, "#{pane_pid}"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Parses a `session.register` answer (for tests and tools).
pub fn registration(v: &Value) -> Option<(String, String)> {
    let r = crate::proto::client::answer_of::<SessionRegisterResult>(v.clone()).ok()?;
    Some((r.result.agent, r.result.token))
}

/// The terminal on our stdin (which the agent inherits), e.g. `/dev/pts/3`: the board counts
/// input there as the agent's activity and writes the lapse warning there.
fn stdin_tty() -> Option<String> {
    let stdin = std::io::stdin();
    nix::unistd::ttyname(std::os::fd::AsFd::as_fd(&stdin))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::profile_env;

    #[test]
    fn a_command_named_gemini_gets_its_profiles_environment_and_others_none() {
        let root = tempfile::tempdir().unwrap();
        let env = profile_env(root.path(), "/opt/bin/gemini");
        if std::env::var_os("GEMINI_CLI_TRUST_WORKSPACE").is_none() {
            assert_eq!(
                env,
                vec![("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into())]
            );
        }
        assert!(profile_env(root.path(), "bash").is_empty());
        assert!(profile_env(root.path(), "shell").is_empty());
        assert!(profile_env(root.path(), "").is_empty());
    }
}
