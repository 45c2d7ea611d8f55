//! `/proc/PID/stat`: its fields that the board uses, parsed from the text (a pure function,
//! tested without a live process) and read in four syscalls; process start times and the boot
//! id that makes a (pid, start time) pair name one process.

use std::io;

use super::error::ProcError;

/// The fields of `/proc/PID/stat` that the board uses.
///
/// Field numbers below are the 1-based ones of `proc(5)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// Field 1: the process id (thread-group id).
    pub pid: i32,
    /// Field 4: the parent's pid (0 for the init process and kernel roots).
    pub ppid: i32,
    /// Field 3: the state letter: `R` running, `S` sleeping, `D` disk sleep, `T` stopped,
    /// `t` tracing stop, `Z` zombie, `X` dead, `I` idle, …
    pub state: char,
    /// Field 14: user-mode CPU time of the process (all its threads), in clock ticks.
    pub utime_ticks: u64,
    /// Field 15: kernel-mode CPU time of the process (all its threads), in clock ticks.
    pub stime_ticks: u64,
    /// Field 16: user-mode CPU time of the children this process has waited for (reaped), in
    /// clock ticks. Includes their own reaped children, recursively.
    pub cutime_ticks: u64,
    /// Field 17: kernel-mode CPU time of the children this process has waited for, in clock ticks.
    pub cstime_ticks: u64,
    /// Field 22: when the process started, in clock ticks since boot. Together with the pid and
    /// the [`boot_id`] this identifies a process.
    pub start_time_ticks: u64,
    /// Field 52: the raw wait status (as `waitpid(2)` reports it) once the process has exited;
    /// 0 while it runs, or when the reader may not ptrace it. `None` when the kernel does not
    /// print the field (before Linux 3.5).
    pub exit_code: Option<i32>,
}

/// Parses the content of `/proc/PID/stat`.
///
/// The command name (field 2) is printed in parentheses and may itself contain spaces and
/// parentheses, so the fields after it are found after the *last* `)` of the text.
///
/// # Errors
/// [`ProcError::Malformed`] when the text lacks the parenthesised name or a required field
/// (fields up to 22), or a number does not parse. A missing field 52 is not an error.
pub fn parse_stat(text: &str) -> Result<ProcStat, ProcError> {
    let open = text
        .find('(')
        .ok_or_else(|| malformed("no '(' before the command name"))?;
    let close = text
        .rfind(')')
        .filter(|&close| close > open)
        .ok_or_else(|| malformed("no ')' after the command name"))?;
    let pid = text[..open]
        .trim()
        .parse::<i32>()
        .map_err(|e| malformed(&format!("field 1 (pid): {e}")))?;
    // `rest[0]` is field 3.
    let rest: Vec<&str> = text[close + 1..].split_ascii_whitespace().collect();
    let field = |n: usize| -> Result<&str, ProcError> {
        rest.get(n - 3)
            .copied()
            .ok_or_else(|| malformed(&format!("field {n} is missing")))
    };
    let number = |n: usize| -> Result<u64, ProcError> {
        let raw = field(n)?;
        raw.parse::<u64>()
            .map_err(|e| malformed(&format!("field {n} ({raw:?}): {e}")))
    };

    let mut state_chars = field(3)?.chars();
    let state = match (state_chars.next(), state_chars.next()) {
        (Some(c), None) => c,
        _ => return Err(malformed("field 3 (state) is not one letter")),
    };
    let ppid = field(4)?
        .parse::<i32>()
        .map_err(|e| malformed(&format!("field 4 (ppid): {e}")))?;
    let exit_code = match rest.get(52 - 3) {
        None => None,
        Some(raw) => Some(
            raw.parse::<i32>()
                .map_err(|e| malformed(&format!("field 52 (exit_code): {e}")))?,
        ),
    };
    Ok(ProcStat {
        pid,
        ppid,
        state,
        utime_ticks: number(14)?,
        stime_ticks: number(15)?,
        cutime_ticks: number(16)?,
        cstime_ticks: number(17)?,
        start_time_ticks: number(22)?,
        exit_code,
    })
}

/// Reads and parses `/proc/PID/stat`.
///
/// # Errors
/// [`ProcError::Gone`] when the process does not exist (also for `pid <= 0`, and when it vanishes
/// while being read); [`ProcError::Io`] for other read errors; [`ProcError::Malformed`] as in
/// [`parse_stat`].
pub fn read_stat(pid: i32) -> Result<ProcStat, ProcError> {
    if pid <= 0 {
        return Err(ProcError::Gone);
    }
    let path = format!("/proc/{pid}/stat");
    match read_proc_file(&path) {
        Ok(bytes) => parse_stat(&String::from_utf8_lossy(&bytes)),
        // ENOENT: no such pid. ESRCH: it exited between open and read.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc_errno::ENOENT | libc_errno::ESRCH)
            ) =>
        {
            Err(ProcError::Gone)
        }
        Err(source) => Err(ProcError::Io { path, source }),
    }
}

/// The start time of process `pid`, in clock ticks since boot (field 22 of `/proc/PID/stat`).
///
/// # Errors
/// As [`read_stat`].
pub fn start_time(pid: i32) -> Result<u64, ProcError> {
    read_stat(pid).map(|stat| stat.start_time_ticks)
}

/// The id of the current boot: `/proc/sys/kernel/random/boot_id`, trimmed (a UUID such as
/// `"6f1c…-…"`). It changes at every boot, so a stored (pid, start time) pair is only
/// meaningful while the boot id is the same.
///
/// # Errors
/// [`ProcError::Io`] when the file cannot be read; [`ProcError::Malformed`] when it is empty.
pub fn boot_id() -> Result<String, ProcError> {
    let path = "/proc/sys/kernel/random/boot_id";
    let text = std::fs::read_to_string(path).map_err(|source| ProcError::Io {
        path: path.to_owned(),
        source,
    })?;
    let id = text.trim();
    if id.is_empty() {
        return Err(malformed("empty boot_id"));
    }
    Ok(id.to_owned())
}

/// The bytes of a small `/proc` file in as few syscalls as the kernel allows: open, one read of
/// up to 1 KiB (a stat line is ~300 bytes), the read that sees the end, close.
///
/// Why not `std::fs::read`: procfs files report a size of 0, so it adds an `fstat` and grows its
/// buffer from 32 bytes, six reads for one stat line; the sweep reads every process on the
/// machine and each request's identity check every ancestor of its caller.
fn read_proc_file(path: &str) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut chunk = [0u8; 1024];
    let mut out = Vec::new();
    loop {
        match file.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn malformed(what: &str) -> ProcError {
    ProcError::Malformed(what.to_owned())
}

/// The two errno values `read_stat` tells apart (Linux numbering).
mod libc_errno {
    pub const ENOENT: i32 = 2;
    pub const ESRCH: i32 = 3;
}
