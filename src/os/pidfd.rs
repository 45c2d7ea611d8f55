//! Awaiting the exit of any process (child or not) on tokio, with a pidfd (Linux ≥ 5.3).
//!
//! A pidfd refers to one process, not to a pid number: it becomes readable when that process
//! exits (turns into a zombie or is gone), however long ago the pid was looked up, and it never
//! reports the exit of a later process that reuses the number. Unlike `waitpid`, it works for
//! processes that are not children of the caller and does not reap them.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

use rustix::io::Errno;
use rustix::process::{pidfd_open, Pid, PidfdFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::os::procfs;

/// Error opening a [`ProcessWatch`].
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The kernel has no `pidfd_open` (before Linux 5.3: `ENOSYS`), or a sandbox forbids it
    /// (a seccomp filter answering `EPERM`), or the kernel lacks anonymous inodes (`ENODEV`).
    /// Fall back to polling [`procfs::liveness`].
    #[error("pidfd_open is not supported here")]
    Unsupported,
    /// No such process (`ESRCH`, or `pid <= 0`), or — for [`open_checked`] — the pid now belongs
    /// to another process.
    #[error("no such process")]
    Gone,
    /// Called outside a tokio runtime.
    #[error("no tokio runtime (a ProcessWatch must be opened inside one)")]
    NoRuntime,
    /// Any other error from `pidfd_open` (`EMFILE`, `EINVAL` for a thread id, …) or from
    /// registering the descriptor with tokio.
    #[error("watching process {pid}: {source}")]
    Io {
        /// The pid that was to be watched.
        pid: i32,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// A handle that resolves when one process exits. Dropping it closes the pidfd; it never
/// signals, waits for or reaps the process.
#[derive(Debug)]
pub struct ProcessWatch {
    fd: AsyncFd<OwnedFd>,
}

/// Opens a watch on process `pid` (a process id, i.e. thread-group id, as `getpid` returns).
///
/// Must be called inside a tokio runtime with I/O enabled (tokio panics when the runtime was
/// built without `enable_io`). A pid that exists but already exited and was not reaped yet (a
/// zombie) opens fine, and [`ProcessWatch::exited`] resolves at once.
///
/// The pid is resolved when this is called: if the number may have been reused since it was
/// recorded, use [`open_checked`].
///
/// # Errors
/// [`WatchError::Unsupported`], [`WatchError::Gone`], [`WatchError::NoRuntime`],
/// [`WatchError::Io`]; see there.
pub fn open(pid: i32) -> Result<ProcessWatch, WatchError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(WatchError::NoRuntime);
    }
    let fd = open_fd(pid)?;
    #[allow(
        unsafe_code,
        reason = "registering a raw descriptor with the reactor is unsafe by signature"
    )]
    // SAFETY: an `OwnedFd` is a valid open descriptor and `as_raw_fd` always returns that same
    // descriptor; it stays owned by the `AsyncFd` (never replaced through `get_mut`) until drop.
    let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.map_err(|e| {
        WatchError::Io {
            pid,
            source: e.into_parts().1,
        }
    })?;
    Ok(ProcessWatch { fd })
}

/// Opens a watch on process `pid` only if it is the process that started at `expected_start`
/// (clock ticks since boot, from [`procfs::start_time`]).
///
/// The pidfd is opened first and the start time checked after, so the watch cannot end up on a
/// process that took over the pid number in between: such a process would have started after
/// the check's expected start.
///
/// # Errors
/// As [`open`]; [`WatchError::Gone`] also when the start time differs.
pub fn open_checked(pid: i32, expected_start: u64) -> Result<ProcessWatch, WatchError> {
    let watch = open(pid)?;
    match procfs::start_time(pid) {
        Ok(start) if start == expected_start => Ok(watch),
        Ok(_) | Err(procfs::ProcError::Gone) => Err(WatchError::Gone),
        Err(e) => Err(WatchError::Io {
            pid,
            source: io::Error::other(e),
        }),
    }
}

/// Whether `pidfd_open` works here (kernel ≥ 5.3 and not blocked by a sandbox). Probes once, by
/// opening a pidfd on the calling process, and caches the answer. Errors other than those that
/// mean "unsupported" (see [`WatchError::Unsupported`]) count as supported.
pub fn supported() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        !matches!(
            open_fd(std::process::id() as i32),
            Err(WatchError::Unsupported)
        )
    })
}

impl ProcessWatch {
    /// Resolves when the watched process has exited (it may still be an unreaped zombie). Resolves
    /// at once if it already has, and again on every later call. Cancel-safe; several tasks may
    /// await it concurrently.
    pub async fn exited(&self) {
        // The readiness is deliberately not cleared: an exited process stays exited.
        if self.fd.readable().await.is_err() {
            // Only when the runtime is shutting down; never claim an exit that was not seen.
            std::future::pending::<()>().await;
        }
    }
}

fn open_fd(pid: i32) -> Result<OwnedFd, WatchError> {
    let Some(raw) = (pid > 0).then(|| Pid::from_raw(pid)).flatten() else {
        return Err(WatchError::Gone);
    };
    pidfd_open(raw, PidfdFlags::empty()).map_err(|errno| match errno {
        Errno::NOSYS | Errno::PERM | Errno::NODEV => WatchError::Unsupported,
        Errno::SRCH => WatchError::Gone,
        errno => WatchError::Io {
            pid,
            source: errno.into(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    use tokio::time::timeout;

    fn kill9(pid: i32) {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("SIGKILL");
    }

    #[test]
    fn is_supported_here() {
        assert!(supported());
    }

    #[test]
    fn needs_a_runtime() {
        let err = open(std::process::id() as i32).expect_err("no runtime");
        assert!(matches!(err, WatchError::NoRuntime), "{err:?}");
    }

    #[tokio::test]
    async fn sees_a_killed_child_exit() {
        let mut child = Command::new("sleep").arg("30").spawn().expect("spawn");
        let pid = child.id() as i32;
        let watch = open(pid).expect("open");
        assert!(
            timeout(Duration::from_millis(100), watch.exited())
                .await
                .is_err(),
            "resolved while the process runs"
        );
        let killed = Instant::now();
        kill9(pid);
        let seen = timeout(Duration::from_secs(1), watch.exited()).await;
        let delay = killed.elapsed();
        child.wait().expect("wait");
        eprintln!("child exit seen {delay:?} after SIGKILL");
        assert!(seen.is_ok(), "exit not seen within 1 s");
        // Stays resolved.
        assert!(timeout(Duration::from_millis(10), watch.exited())
            .await
            .is_ok());
    }

    #[tokio::test]
    async fn sees_a_non_child_exit() {
        let mut sh = Command::new("sh")
            .args(["-c", "sleep 30 >/dev/null 2>&1 & echo $!"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn sh");
        let mut line = String::new();
        BufReader::new(sh.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read pid");
        sh.wait().expect("wait sh");
        let pid: i32 = line.trim().parse().expect("pid");
        let me = std::process::id() as i32;
        assert!(!procfs::is_descendant(pid, me), "the sleep is still ours");

        let start = procfs::start_time(pid).expect("start time");
        let watch = open_checked(pid, start).expect("open");
        let killed = Instant::now();
        kill9(pid);
        let seen = timeout(Duration::from_secs(1), watch.exited()).await;
        eprintln!("non-child exit seen {:?} after SIGKILL", killed.elapsed());
        assert!(seen.is_ok(), "exit not seen within 1 s");
    }

    #[tokio::test]
    async fn refuses_gone_and_reused_pids() {
        let mut child = Command::new("true").spawn().expect("spawn");
        let pid = child.id() as i32;
        child.wait().expect("wait");
        assert!(matches!(open(pid), Err(WatchError::Gone)));
        assert!(matches!(open(0), Err(WatchError::Gone)));
        assert!(matches!(open(-4), Err(WatchError::Gone)));

        let me = std::process::id() as i32;
        let start = procfs::start_time(me).expect("start time");
        assert!(open_checked(me, start).is_ok());
        assert!(matches!(open_checked(me, start + 1), Err(WatchError::Gone)));
    }
}
