//! How `board run` supervises its agent once it runs: signals a user may send to the launcher
//! reach the agent, a hangup ends the agent within a grace period, and helpers the agent
//! double-forked (adopted by the launcher as child subreaper) are reaped as they exit and
//! terminated when the agent is gone (ARCHITECTURE.md rule 13).
//!
//! Forwarded: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT — every
//! catchable signal a user sends, and the launcher survives each unless the agent exits. A signal
//! the terminal itself generated (Ctrl-C, Ctrl-\, a resize: `si_code` SI_KERNEL) already reached
//! the agent when it shares the terminal's foreground process group, so that one is not sent
//! twice; a directed `kill -INT <launcher>` (SI_USER) always is, in a tmux pane too.

use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

use crate::os::procfs;

/// The signals forwarded to the agent.
pub const FORWARDED: [Signal; 8] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
    Signal::SIGWINCH,
    Signal::SIGCONT,
];

/// Signals a terminal generates for its whole foreground process group.
const FROM_TERMINAL: [Signal; 3] = [Signal::SIGINT, Signal::SIGQUIT, Signal::SIGWINCH];

/// `si_code` of the latest delivery of each of [`FROM_TERMINAL`], written by a signal handler.
static LAST_CODE: [AtomicI32; 3] = [AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0)];

/// `si_code` of a signal the kernel sent on its own (the tty driver for Ctrl-C, a resize).
const SI_KERNEL: i32 = 0x80;

/// How long the agent's tree has between SIGTERM and SIGKILL.
const TERM_TO_KILL: Duration = Duration::from_secs(1);

/// The forwarded signals plus SIGCHLD, caught from creation on (tokio keeps one that arrives
/// before anyone waits for it), delivered in arrival order.
pub struct Signals {
    rx: mpsc::UnboundedReceiver<Signal>,
    child: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    /// Installs the handlers. Must run inside the tokio runtime. If a handler cannot be
    /// installed the launcher still supervises, with that signal's default action.
    pub fn new() -> Self {
        for (i, sig) in FROM_TERMINAL.iter().enumerate() {
            #[allow(
                unsafe_code,
                reason = "installing a signal action is unsafe by signature"
            )]
            // Registered before tokio's handler, so the code is stored before tokio wakes us.
            // SAFETY: the action only stores an integer in an atomic: async-signal-safe.
            let out = unsafe {
                signal_hook_registry::register_sigaction(*sig as i32, move |info| {
                    LAST_CODE[i].store(info.si_code, Ordering::SeqCst);
                })
            };
            if let Err(e) = out {
                tracing::debug!(error = %e, signal = ?sig, "cannot see where signals come from");
            }
        }
        let (tx, rx) = mpsc::unbounded_channel();
        for sig in FORWARDED {
            match signal(SignalKind::from_raw(sig as i32)) {
                Ok(mut stream) => {
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        while stream.recv().await.is_some() {
                            if tx.send(sig).is_err() {
                                return;
                            }
                        }
                    });
                }
                Err(e) => tracing::warn!(error = %e, signal = ?sig, "cannot forward signal"),
            }
        }
        Signals {
            rx,
            child: signal(SignalKind::child()).ok(),
        }
    }

    /// The next forwarded signal that arrived (None when no handler could be installed).
    pub async fn next(&mut self) -> Option<Signal> {
        self.rx.recv().await
    }
}

impl Default for Signals {
    fn default() -> Self {
        Signals::new()
    }
}

/// Waits for the agent `child` (pid `pid`) to exit while forwarding signals to it. At a hangup
/// (SIGHUP) it calls `on_hangup` (the claims go at once), forwards it, and if the agent is still
/// running after `hangup_grace`, sends SIGTERM to the launcher's whole process tree, then
/// SIGKILL 1 s later. Reaps adopted orphans as they exit. Returns the agent's exit status, and
/// when the tree already got SIGTERM, the time its SIGKILL is due (for [`terminate_leftovers`]).
pub async fn supervise(
    child: &mut tokio::process::Child,
    pid: i32,
    signals: &mut Signals,
    hangup_grace: Duration,
    on_hangup: impl Fn(),
) -> (std::process::ExitStatus, Option<Instant>) {
    let failed = || std::process::ExitStatus::from_raw(1 << 8);
    let Signals { rx, child: sigchld } = signals;
    // Escalation after a hangup: when to TERM the tree, then when to KILL it.
    let mut term_at: Option<Instant> = None;
    let mut kill_at: Option<Instant> = None;
    loop {
        let next = kill_at.or(term_at);
        let timer = async {
            match next {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        let reap_tick = async {
            match sigchld.as_mut() {
                Some(s) => s.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            st = child.wait() => return (st.unwrap_or_else(|_| failed()), kill_at),
            Some(sig) = rx.recv() => {
                if sig == Signal::SIGHUP {
                    on_hangup();
                    if term_at.is_none() && kill_at.is_none() {
                        term_at = Some(Instant::now() + hangup_grace);
                    }
                }
                if !already_delivered(sig, pid) {
                    let _ = kill(Pid::from_raw(pid), sig);
                }
            }
            _ = reap_tick => reap_orphans(pid),
            _ = timer => {
                if kill_at.is_some() {
                    tracing::info!(pid, "agent still running after SIGTERM: SIGKILL to its tree");
                    signal_tree(Signal::SIGKILL);
                    kill_at = None;
                } else {
                    tracing::info!(pid, ?hangup_grace, "agent outlived the hangup: SIGTERM to its tree");
                    signal_tree(Signal::SIGTERM);
                    term_at = None;
                    kill_at = Some(Instant::now() + TERM_TO_KILL);
                }
            }
        }
    }
}

/// Whether `sig` came from our terminal and so also reached the agent `pid`, which is in the
/// terminal's foreground process group.
fn already_delivered(sig: Signal, pid: i32) -> bool {
    let Some(i) = FROM_TERMINAL.iter().position(|s| *s == sig) else {
        return false;
    };
    LAST_CODE[i].load(Ordering::SeqCst) == SI_KERNEL && terminal_delivers_to(pid)
}

fn terminal_delivers_to(pid: i32) -> bool {
    use std::os::fd::AsFd;
    let stdin = std::io::stdin();
    match (
        nix::unistd::tcgetpgrp(stdin.as_fd()),
        nix::unistd::getpgid(Some(Pid::from_raw(pid))),
    ) {
        (Ok(fg), Ok(group)) => fg == group,
        _ => false,
    }
}

/// Every descendant of this launcher (the agent, its children, adopted orphans) but a board
/// process (`board serve`) that a command inside the agent autostarted and that we adopted as
/// the subreaper when that command exited: it is not the agent's, and it and its subtree are
/// left alone so the board outlives the agent session that started it.
fn agent_tree() -> Vec<i32> {
    procfs::descendants_pruned(std::process::id() as i32, procfs::is_board_daemon)
}

/// Sends `sig` to the agent's whole tree ([`agent_tree`]), the way the board's
/// `session.stop` does ([`crate::os::stop`]).
fn signal_tree(sig: Signal) {
    crate::os::stop::signal_tree(std::process::id() as i32, sig);
}

/// Reaps exited children other than the agent (orphans adopted as child subreaper), leaving the
/// agent's status to its own wait.
fn reap_orphans(agent: i32) {
    let me = std::process::id() as i32;
    for z in procfs::zombie_children(me) {
        if z != agent {
            let _ = waitpid(Pid::from_raw(z), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// After the agent exited: TERM every remaining process of its tree (`agent_tree`), wait up to 1 s (or until `kill_at`,
/// when an escalation already sent them SIGTERM), then KILL; reap them all.
pub fn terminate_leftovers(kill_at: Option<Instant>) {
    let left = agent_tree();
    if left.is_empty() {
        reap();
        return;
    }
    for p in &left {
        let _ = kill(Pid::from_raw(*p), Signal::SIGTERM);
    }
    let deadline = kill_at.unwrap_or_else(|| Instant::now() + TERM_TO_KILL);
    while Instant::now() < deadline {
        reap();
        if agent_tree().is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for p in agent_tree() {
        let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
    }
    std::thread::sleep(Duration::from_millis(20));
    reap();
}

fn reap() {
    while let Ok(st) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
        if st == WaitStatus::StillAlive {
            break;
        }
    }
}
