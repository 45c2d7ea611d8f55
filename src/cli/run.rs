//! `board run [--name N] -- CMD…`: the launcher that starts an agent under the board.
//!
//! It registers an agent session, makes itself a child subreaper (design rule 13), spawns CMD with
//! `BOARD_SOCKET`, `BOARD_AGENT`, `BOARD_TOKEN` (and `BOARD_ROOT`) in its environment, forwards
//! SIGINT/SIGTERM/SIGHUP, and when the child exits (SIGCHLD) reports the exit to the board at once
//! so its claims are expelled, then terminates leftover descendants (TERM, then KILL) and exits
//! with the child's status. It never renews claims: its own liveness proves nothing about the
//! agent (design rule 2).

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use serde_json::{json, Value};
use tokio::signal::unix::{signal, SignalKind};

use crate::os::procfs;
use crate::proto::client::{self, Client, Target};
use crate::proto::error::{BoardError, BoardResult};

/// Runs the launcher; returns the exit code (the child's, or 128 + signal; 8 if no board).
///
/// `attention_after`: the session needs attention when neither a board call nor a hook of its
/// agent came this long after its start (None: never).
pub fn run(
    name: &str,
    pane: Option<&str>,
    attention_after: Option<Duration>,
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
    match rt.block_on(launch(name, pane, attention_after, cmd)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("board run: {}", crate::proto::sanitize::inert(&e.message));
            e.kind.exit_code()
        }
    }
}

fn connect(target: &Target) -> BoardResult<Client> {
    let mut c = Client::connect(target, true)?;
    c.identity = None;
    Ok(c)
}

async fn launch(
    name: &str,
    pane: Option<&str>,
    attention_after: Option<Duration>,
    cmd: &[String],
) -> BoardResult<i32> {
    let target = client::target()?;
    let mut c = connect(&target)?;
    // Catch the signals from here on (the board is up), before there is a session or a child:
    // one that arrives while we start (a pane closed at once) is then handled by `supervise`
    // (reported, forwarded) instead of killing us with the agent orphaned and the wrong reason
    // on record.
    let signals = Signals::new();
    let attention_ms = attention_after.map(|d| d.as_millis() as u64);
    let reg = c.call(
        "session.register",
        json!({ "name": name, "attention_ms": attention_ms }),
    )?;
    let agent = reg["agent"].as_str().unwrap_or_default().to_string();
    let token = reg["token"].as_str().unwrap_or_default().to_string();
    // Helpers the agent double-forks are re-parented to us, not to init, so they stay in the
    // session's process tree and can be cleaned up.
    if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
        tracing::debug!(error = %e, "cannot become a child subreaper");
    }
    let root = target.paths.as_ref().map(|p| p.root.clone());
    let mut command = tokio::process::Command::new(&cmd[0]);
    command
        .args(&cmd[1..])
        .env("BOARD_SOCKET", &target.socket)
        .env("BOARD_AGENT", &agent)
        .env("BOARD_TOKEN", &token);
    if let Some(r) = &root {
        command.env("BOARD_ROOT", r);
    }
    // Agent CLIs may rebuild PATH from the login shell (Codex does), where `board` may be
    // missing: the instructions tell agents to fall back on this absolute path.
    if let Ok(exe) = std::env::current_exe() {
        command.env("BOARD_BIN", exe);
    }
    // If the launcher itself is killed (-9), nobody supervises the agent any more and the board
    // has already expelled its claims: ask the kernel to end the agent too.
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec here.
    unsafe {
        command.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    let mut child = match command.spawn() {
        Ok(ch) => ch,
        Err(e) => {
            let reason = format!("could not start {:?}: {e}", cmd[0]);
            let _ = c.call(
                "session.exit",
                json!({ "agent": agent, "token": token, "reason": reason }),
            );
            return Err(BoardError::usage(reason));
        }
    };
    let pid = child.id().map(|p| p as i32).unwrap_or(0);
    let pane = pane
        .map(str::to_string)
        .or_else(|| std::env::var("TMUX_PANE").ok());
    let pane_pid = pane.as_ref().and_then(|p| tmux_pane_pid(p));
    let attach = c.call(
        "session.attach",
        json!({ "agent": agent, "token": token, "pid": pid, "pane": pane, "pane_pid": pane_pid }),
    );
    if let Err(e) = attach {
        eprintln!(
            "board run: could not attach the agent's process: {}",
            e.message
        );
    }
    drop(c);

    let on_hangup = || {
        // The terminal or tmux pane is gone: that is a hard signal (design rule 4), so the claims
        // go now, not when (or if) the agent decides to exit on SIGHUP.
        let reason = if pane.is_some() {
            "pane closed (SIGHUP)"
        } else {
            "terminal closed (SIGHUP)"
        };
        let params = json!({ "agent": agent, "token": token, "reason": reason });
        if let Ok(mut c) = connect(&target) {
            let _ = c.call("session.exit", params);
        }
    };
    let status = supervise(&mut child, pid, signals, on_hangup).await;
    let (code, sig) = (status.code(), status.signal());
    // Report first (the claims must be freed at once), then clean up.
    report_exit(&target, &agent, &token, code, sig);
    terminate_leftovers();
    Ok(code.unwrap_or_else(|| 128 + sig.unwrap_or(0)))
}

/// SIGINT, SIGTERM and SIGHUP, caught from creation on (tokio keeps one that arrives before
/// anyone waits for it).
struct Signals(Option<(Sig, Sig, Sig)>);

type Sig = tokio::signal::unix::Signal;

impl Signals {
    fn new() -> Self {
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            (Ok(a), Ok(b), Ok(c)) => Signals(Some((a, b, c))),
            _ => Signals(None),
        }
    }
}

/// Waits for the child, forwarding SIGINT/SIGTERM/SIGHUP to it.
async fn supervise(
    child: &mut tokio::process::Child,
    pid: i32,
    signals: Signals,
    on_hangup: impl Fn(),
) -> std::process::ExitStatus {
    let (mut int, mut term, mut hup) = match signals.0 {
        Some(s) => s,
        None => {
            return child
                .wait()
                .await
                .unwrap_or_else(|_| std::process::ExitStatus::from_raw(1 << 8))
        }
    };
    loop {
        let sig = tokio::select! {
            st = child.wait() => return st.unwrap_or_else(|_| std::process::ExitStatus::from_raw(1 << 8)),
            _ = int.recv() => Signal::SIGINT,
            _ = term.recv() => Signal::SIGTERM,
            _ = hup.recv() => Signal::SIGHUP,
        };
        // A Ctrl-C typed in our terminal already reached the child (same foreground process
        // group): forwarding it again would make the agent see two.
        if sig == Signal::SIGINT && terminal_delivers_to_child() {
            continue;
        }
        if sig == Signal::SIGHUP {
            on_hangup();
        }
        let _ = kill(Pid::from_raw(pid), sig);
    }
}

fn terminal_delivers_to_child() -> bool {
    use std::os::fd::AsFd;
    let stdin = std::io::stdin();
    match nix::unistd::tcgetpgrp(stdin.as_fd()) {
        Ok(fg) => fg == nix::unistd::getpgrp(),
        Err(_) => false,
    }
}

fn report_exit(target: &Target, agent: &str, token: &str, code: Option<i32>, sig: Option<i32>) {
    let params = json!({ "agent": agent, "token": token, "code": code, "signal": sig });
    // The board may be restarting: retry briefly. If it stays away, it finds the dead process
    // itself when it starts (design rule 8).
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let out = connect(target).and_then(|mut c| c.call("session.exit", params.clone()));
        match out {
            Ok(_) => return,
            Err(e) if Instant::now() > deadline => {
                eprintln!(
                    "board run: could not report the agent's exit: {}",
                    e.message
                );
                return;
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// TERM every remaining descendant, wait up to 1 s, then KILL; reap them all.
fn terminate_leftovers() {
    let me = std::process::id() as i32;
    let left = procfs::descendants(me);
    if left.is_empty() {
        reap();
        return;
    }
    for p in &left {
        let _ = kill(Pid::from_raw(*p), Signal::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        reap();
        if procfs::descendants(me).is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for p in procfs::descendants(me) {
        let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
    }
    std::thread::sleep(Duration::from_millis(20));
    reap();
}

fn reap() {
    while let Ok(st) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
        if st == nix::sys::wait::WaitStatus::StillAlive {
            break;
        }
    }
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
    Some((
        v["agent"].as_str()?.to_string(),
        v["token"].as_str()?.to_string(),
    ))
}
