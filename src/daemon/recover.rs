//! What a starting board does with the agent sessions its store says are live
//! (ARCHITECTURE.md rule 8): re-check every session's processes by pid *and* start time and
//! boot id; expel the dead, re-attach watchers to the living. Stored expiries stand.

use std::sync::Arc;

use super::state::{Board, OffReactor};
use super::watchers;
use crate::os::procfs::{self, Liveness};
use crate::store::SessionRow;

/// Why a session found at start is over; `pid_reused`: its pid now names another process (so
/// no report of the old one can come).
struct Over {
    reason: String,
    pid_reused: bool,
}

/// ARCHITECTURE.md rule 8: on start, re-check every live session's processes by pid *and* start
/// time and boot id; expel the dead, re-attach watchers to the living.
///
/// Errors: the store's.
pub fn recover(board: &Arc<Board>, off: &OffReactor) -> anyhow::Result<()> {
    // Read first: the store is not held while sessions are expelled or re-attached.
    let sessions = board.store(off).live_sessions()?;
    for row in sessions {
        let launcher_alive = row.launcher.is_some_and(|(pid, start)| {
            matches!(
                procfs::liveness(pid, start),
                Liveness::Alive | Liveness::Stopped
            )
        });
        match over_at_start(board, &row) {
            // The agent died while the board was down but its launcher lives: the launcher's
            // report (which may be what started this board) carries the exit status.
            Some(Over {
                reason: r,
                pid_reused: false,
            }) if launcher_alive && row.boot_id == board.boot_id() => {
                let (board, id) = (Arc::clone(board), row.id.clone());
                tokio::spawn(async move {
                    watchers::wait_for_report(&board, &id).await;
                    let expelled = board.blocking(move |b, off| b.expel(off, &id, &r)).await;
                    if let Err(e) = expelled.and_then(|r| r) {
                        tracing::error!(error = %e, "expel at start failed");
                    }
                });
            }
            Some(Over { reason: r, .. }) => {
                board.expel(off, &row.id, &r)?;
            }
            None => reattach(board, off, &row)?,
        }
    }
    Ok(())
}

/// Why `row` is over, found at start: the machine rebooted, or its agent, launcher or pane is
/// gone (or its pid names another process now); None when it lives.
fn over_at_start(board: &Board, row: &SessionRow) -> Option<Over> {
    let over = |reason: String, pid_reused: bool| Some(Over { reason, pid_reused });
    if row.boot_id != board.boot_id() {
        return over("gone (the machine rebooted)".to_string(), false);
    }
    let dead = |p: Option<(i32, u64)>, what: &str| -> Option<Over> {
        let (pid, start) = p?;
        match procfs::liveness(pid, start) {
            Liveness::Gone if procfs::start_time(pid).is_ok() => over(
                format!("{what} pid {pid} now belongs to another process (found at board start)"),
                true,
            ),
            Liveness::Gone | Liveness::Zombie => {
                over(format!("{what} gone (found at board start)"), false)
            }
            _ => None,
        }
    };
    dead(row.agent, "agent")
        .or_else(|| dead(row.launcher, "launcher"))
        .or_else(|| dead(row.pane.as_ref().map(|p| (p.1, p.2)), "pane"))
        .or_else(|| {
            (row.agent.is_none() && row.launcher.is_none())
                .then(|| over("no process recorded".to_string(), false))
                .flatten()
        })
}

/// A session that lives on: its flags back in memory, one sweep of grace when it runs, and
/// its processes watched again.
fn reattach(board: &Arc<Board>, off: &OffReactor, row: &SessionRow) -> anyhow::Result<()> {
    board.set_waiting_flag(&row.id, row.waiting.is_some());
    board.set_question_flag(&row.id, row.question.is_some());
    board.set_idle_flag(&row.id, row.idle_since.is_some());
    // Rule 8: a living (not stopped) session gets one sweep of grace to show activity; the
    // stored expiry stands otherwise.
    let running = row
        .agent
        .or(row.launcher)
        .is_some_and(|(pid, start)| procfs::liveness(pid, start) == Liveness::Alive);
    if running {
        let rules = board.rules();
        board
            .store(off)
            .grace_session(&row.id, board.now_ms() + rules.sweep_ms)?;
    }
    if let Some((pid, start)) = row.launcher {
        watchers::watch(board, off, &row.id, pid, start, watchers::Role::Launcher);
    }
    if let Some((pid, start)) = row.agent {
        watchers::watch(board, off, &row.id, pid, start, watchers::Role::Agent);
    }
    if let Some((_, pid, start)) = &row.pane {
        watchers::watch(board, off, &row.id, *pid, *start, watchers::Role::Pane);
    }
    tracing::info!(agent = %row.id, "re-attached to a living session");
    Ok(())
}
