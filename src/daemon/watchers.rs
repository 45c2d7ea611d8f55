//! Process watchers: a pidfd per watched process, awaited on the tokio reactor, so the exit of an
//! agent, its launcher or its pane's process expels the session's claims at once (ARCHITECTURE.md rule 4)
//! instead of after a lease.

use std::sync::Arc;
use std::time::Duration;

use super::state::Board;
use crate::daemon::lease::exit_reason;
use crate::daemon::state::OffReactor;
use crate::os::pidfd::{self, WatchError};
use crate::os::procfs;

/// Which process of a session a watcher follows; names the expulsion reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The `board run` launcher.
    Launcher,
    /// The agent process itself.
    Agent,
    /// The tmux pane's process.
    Pane,
}

impl Role {
    fn gone_reason(self) -> &'static str {
        match self {
            Role::Launcher => "launcher (board run) exited",
            Role::Agent => "exited",
            Role::Pane => "pane closed",
        }
    }
}

/// Starts watching `pid` (which must still have start time `start`) for session `agent`.
/// When pidfd is unsupported the sweep alone finds the death (logged once at start). The wait
/// runs on the reactor; each store step after the exit goes to the blocking pool.
pub fn watch(board: &Arc<Board>, off: &OffReactor, agent: &str, pid: i32, start: u64, role: Role) {
    if !board.pidfd() {
        return;
    }
    let agent = agent.to_string();
    // The pidfd names whatever process has `pid` now: open_checked makes sure it is still ours.
    let watch = match pidfd::open_checked(pid, start) {
        Ok(w) => w,
        Err(WatchError::Gone) => {
            expel_now(board, off, &agent, role.gone_reason());
            return;
        }
        Err(e) => {
            tracing::warn!(%agent, pid, error = %e, "cannot watch process; the sweep will find its exit");
            return;
        }
    };
    let board = Arc::clone(board);
    tokio::spawn(async move {
        let started = std::time::Instant::now();
        watch.exited().await;
        let mut reason = role.gone_reason().to_string();
        let launcher_died = role == Role::Agent && {
            let agent = agent.clone();
            board
                .blocking(move |b, off| launcher_gone(b, off, &agent))
                .await
                .unwrap_or(false)
        };
        if launcher_died {
            // The launcher died first (killed -9, say) and the kernel ended the agent with the
            // launcher's death signal (PDEATHSIG): that is the launcher's exit, not the agent's
            // own, whichever of the two watchers fires first.
            reason = Role::Launcher.gone_reason().to_string();
        } else if role == Role::Agent {
            match procfs::read_stat(pid).ok().and_then(|s| s.exit_code) {
                // Still a zombie: its wait status tells how it died.
                Some(status) => {
                    reason = decode_wait_status(status);
                    // A hangup comes from a closing pane or terminal, which sent it to the
                    // launcher too: let the launcher's report say so ("pane closed (SIGHUP)").
                    if status & 0x7f == nix::libc::SIGHUP {
                        tokio::time::sleep(Duration::from_millis(30)).await;
                    }
                }
                // Already reaped by the launcher, whose report carries the status: let it land.
                None => wait_for_report(&board, &agent).await,
            }
        }
        tracing::debug!(%agent, pid, ?role, after_ms = started.elapsed().as_millis() as u64, "watched process exited");
        let expelled = board
            .blocking(move |b, off| expel_now(b, off, &agent, &reason))
            .await;
        if let Err(e) = expelled {
            tracing::error!(error = %e, "expel failed");
        }
    });
}

/// Whether `agent`'s session has a launcher and it has exited. When the agent's watcher fires
/// the launcher can only be gone already if it died before reaping the agent: a launcher that
/// outlives its agent reports the exit (ending the session) before it exits.
fn launcher_gone(board: &Board, off: &OffReactor, agent: &str) -> bool {
    let launcher = match board.store(off).session(agent) {
        Ok(Some(row)) => row.launcher,
        _ => None,
    };
    launcher.is_some_and(|(pid, start)| {
        matches!(
            procfs::liveness(pid, start),
            procfs::Liveness::Gone | procfs::Liveness::Zombie
        )
    })
}

/// Waits until `agent`'s session has ended (its launcher reported the exit), while the launcher
/// lives, at most 1 s. A fixed short wait lost that race on a busy machine, and the expulsion
/// then said `exited` instead of `exited (status 3)`.
pub(crate) async fn wait_for_report(board: &Arc<Board>, agent: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    while std::time::Instant::now() < deadline {
        let id = agent.to_string();
        let row = match board.with_store(move |s| s.session(&id)).await {
            Ok(Ok(Some(row))) => row,
            _ => return,
        };
        let launcher_alive = row.launcher.is_some_and(|(pid, start)| {
            !matches!(
                procfs::liveness(pid, start),
                procfs::Liveness::Gone | procfs::Liveness::Zombie
            )
        });
        if row.ended_at.is_some() || !launcher_alive {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn expel_now(board: &Board, off: &OffReactor, agent: &str, reason: &str) {
    if let Err(e) = board.expel(off, agent, reason) {
        tracing::error!(%agent, error = %e, "expel failed");
    }
}

/// Turns a `waitpid` status word (as in /proc/PID/stat field 52) into a reason.
pub fn decode_wait_status(status: i32) -> String {
    let sig = status & 0x7f;
    if sig == 0 {
        exit_reason(Some((status >> 8) & 0xff), None)
    } else {
        exit_reason(None, Some(sig))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_statuses_decode_like_waitpid() {
        assert_eq!(decode_wait_status(3 << 8), "exited (status 3)");
        assert_eq!(decode_wait_status(9), "killed by SIGKILL");
        assert_eq!(decode_wait_status(0), "exited (status 0)");
    }
}
