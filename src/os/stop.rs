//! Ending an agent's processes. `board run` uses it when a closed pane's grace runs out, the
//! board when a person stops an agent (`session.stop`): one way to end an agent, whoever asks.

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::{getpgid, Pid};

use super::procfs;

/// Sends `sig` to every descendant of `root` (not to `root` itself), leaving out a board
/// process (`board serve`) and its subtree: a board that a command inside the agent
/// autostarted outlives the agent.
pub fn signal_tree(root: i32, sig: Signal) {
    for p in procfs::descendants_pruned(root, procfs::is_board_daemon) {
        let _ = kill(Pid::from_raw(p), sig);
    }
}

/// Sends SIGTERM to the process group that `pid` leads (an interactive shell or agent CLI
/// makes its own group); to `pid` and its tree when it leads none (its group is its
/// launcher's, which must not get it). Errors: the process is gone or may not be signalled.
pub fn term_group(pid: i32) -> nix::Result<()> {
    let p = Pid::from_raw(pid);
    if getpgid(Some(p))? == p {
        return killpg(p, Signal::SIGTERM);
    }
    kill(p, Signal::SIGTERM)?;
    signal_tree(pid, Signal::SIGTERM);
    Ok(())
}

/// Sends SIGKILL to `pid` and its tree if `pid` is still the process that started at
/// `start_ticks` (a reused pid is another process and is left alone).
pub fn kill_tree_of(pid: i32, start_ticks: u64) {
    if procfs::start_time(pid).ok() != Some(start_ticks) {
        return;
    }
    signal_tree(pid, Signal::SIGKILL);
    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
}
