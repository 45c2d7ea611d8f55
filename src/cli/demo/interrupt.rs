//! Stopping the demo cleanly on SIGINT or SIGTERM: the pids it started, ended in order, and
//! the flag that tells the steps still running to wait for the end instead of going on.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Set when the demo was interrupted: the summary is not printed, the clean-up thread exits.
pub(super) static INTERRUPTED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Pids the demo started (launchers first, then the board), for clean-up on SIGINT/SIGTERM.
pub(super) type Started = Arc<Mutex<Vec<u32>>>;

/// On SIGINT or SIGTERM: end the agents (their launchers report and clean up), then the board,
/// remove the temporary directory, and exit 130 / 143. Without this, a stopped demo would leave
/// a board process and agents running.
pub(super) fn clean_up_on_interrupt(started: Started, remove: Option<PathBuf>) {
    use tokio::signal::unix::{signal, SignalKind};
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => return,
    };
    let (Ok(mut int), Ok(mut term)) = rt.block_on(async {
        (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        )
    }) else {
        return;
    };
    std::thread::spawn(move || {
        let code = rt.block_on(async {
            tokio::select! {
                _ = int.recv() => 130,
                _ = term.recv() => 143,
            }
        });
        INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
        let term = |pid: u32| {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        };
        let mut pids = started.lock().map(|p| p.clone()).unwrap_or_default();
        // The board (last) must outlive the launchers, which report their agents' exits to it.
        let board = pids.pop();
        pids.into_iter().for_each(term);
        std::thread::sleep(Duration::from_millis(300));
        board.into_iter().for_each(term);
        std::thread::sleep(Duration::from_millis(100));
        if let Some(dir) = remove {
            let _ = std::fs::remove_dir_all(dir);
        }
        eprintln!("board demo: interrupted; agents and board stopped");
        std::process::exit(code);
    });
}

/// While an interrupt is being handled, waits: the clean-up thread ends the process, and going
/// on (a summary of a cut-off run) would mislead.
pub(super) fn wait_unless_interrupted() {
    while INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
}
