//! Stopping an agent at a person's request (`session.stop`, the TUI's agents panel): the way a
//! closed pane ends it. SIGTERM to its process group now; SIGKILL to its process tree when it
//! still runs after `[run] hangup_grace` (an interactive shell ignores SIGTERM, so do some agent
//! CLIs). The board does not end the session itself: the agent's launcher sees it exit and
//! reports it, so the session ends, and its claims with it, the usual way (`session_end`).

use std::time::Duration;

use crate::os::stop::{kill_tree_of, term_group};
use crate::proto::error::{BoardError, BoardResult};

/// Sends SIGTERM to agent `pid` (started at `start_ticks`) and its group, and starts the
/// thread that sends SIGKILL to its tree after `grace`. Errors: `not_found` when the process
/// is gone, `unauthorized` when it may not be signalled, `internal` when no thread starts.
pub fn stop(pid: i32, start_ticks: u64, grace: Duration) -> BoardResult<()> {
    if crate::os::procfs::start_time(pid).ok() != Some(start_ticks) {
        return Err(BoardError::not_found(format!(
            "the agent's process (pid {pid}) has ended already"
        )));
    }
    term_group(pid).map_err(|e| match e {
        nix::errno::Errno::ESRCH => {
            BoardError::not_found(format!("the agent's process (pid {pid}) has ended already"))
        }
        e => BoardError::unauthorized(format!("cannot signal pid {pid}: {e}")),
    })?;
    tracing::info!(
        pid,
        ?grace,
        "stopping an agent: SIGTERM to its group, SIGKILL after the grace"
    );
    std::thread::Builder::new()
        .name("board-stop-agent".into())
        .spawn(move || {
            std::thread::sleep(grace);
            kill_tree_of(pid, start_ticks);
        })
        .map(|_| ())
        .map_err(|e| BoardError::internal(format!("cannot start the stop timer: {e}")))
}
