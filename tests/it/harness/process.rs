//! Processes and FIFOs as a test sees them: whether a pid runs, what it runs, its parent, and
//! FIFOs that let a test release an agent script at a moment of its choosing.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::{poll, poll_until};

/// Whether `pid` exists and is not a zombie.
pub fn running(pid: i32) -> bool {
    !matches!(proc_state(pid), Some('Z') | Some('X') | None)
}

/// The state letter of `pid` (`S`, `T`, `Z`, …).
pub fn proc_state(pid: i32) -> Option<char> {
    board::os::procfs::read_stat(pid).ok().map(|s| s.state)
}

/// The parent pid of `pid`, from `/proc`.
pub fn parent_of(pid: i32) -> i32 {
    board::os::procfs::read_stat(pid).expect("/proc stat").ppid
}

/// Waits (≤ 10 s) until process `pid` runs the program `comm` (e.g. an agent script reached
/// its final `exec sleep`), so a test does not kill it half way through a board call.
pub fn wait_exec(pid: i32, comm: &str) {
    let ok = poll_until(Duration::from_secs(10), || {
        fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == comm)
    });
    assert!(ok, "process {pid} never became {comm:?}");
}

/// Makes a FIFO at `path` and returns it.
pub fn mkfifo(path: PathBuf) -> PathBuf {
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600))
        .unwrap_or_else(|e| panic!("mkfifo {}: {e}", path.display()));
    path
}

/// Opens `fifo` for reading and writing: neither side's open blocks, and whoever reads it never
/// sees end of input while this end is open.
pub fn fifo_rw(fifo: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(fifo)
        .unwrap_or_else(|e| panic!("open {}: {e}", fifo.display()))
}

/// Opens `fifo` for writing once someone has opened it for reading (≤ 5 s).
pub fn fifo_writer(fifo: &Path) -> File {
    let f = poll(Duration::from_secs(5), || {
        OpenOptions::new()
            .write(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(fifo)
            .ok()
    });
    f.unwrap_or_else(|| panic!("nobody reads {}", fifo.display()))
}

/// Wakes whoever reads `fifo`, waiting (≤ 5 s) for a reader to open it.
pub fn poke(fifo: &Path) {
    fifo_writer(fifo).write_all(b"go\n").unwrap();
}

/// SIGKILLs every process of ours whose working directory is inside `root` (boards too when
/// `boards`), except this test process.
pub fn kill_processes_in(root: &Path, boards: bool) {
    let me = std::process::id();
    let Ok(entries) = fs::read_dir("/proc") else {
        return;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cwd) = fs::read_link(e.path().join("cwd")) else {
            continue;
        };
        if !cwd.starts_with(root) {
            continue;
        }
        let cmdline = fs::read(e.path().join("cmdline")).unwrap_or_default();
        let is_board = cmdline
            .split(|b| *b == 0)
            .nth(1)
            .is_some_and(|a| a == b"serve");
        if is_board && !boards {
            continue;
        }
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
    }
}
