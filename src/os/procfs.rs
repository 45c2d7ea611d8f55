//! Reading process state from `/proc` (Linux).
//!
//! The parsing functions are pure functions over the text of a `/proc` file, so they can be
//! tested without a live process; the readers are thin wrappers that read one file and parse it.
//!
//! All times are in clock ticks (`USER_HZ`, see `sysconf(_SC_CLK_TCK)`, 100 on practically every
//! Linux system). Process start times are ticks since boot, so they identify a process only
//! together with the [`boot_id`]: a pid plus its start time names one process for the life of one
//! boot, even when the pid number is reused later.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::os::unix::ffi::OsStrExt;

/// Error reading or parsing `/proc`.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    /// The process does not exist (any more), or the pid is not positive.
    #[error("no such process")]
    Gone,
    /// The file was read but its content is not in the expected format.
    #[error("malformed /proc data: {0}")]
    Malformed(String),
    /// Any other I/O error while reading `path`.
    #[error("reading {path}: {source}")]
    Io {
        /// The file that could not be read.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

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

/// Whether a process, identified by pid and start time, still runs. See [`liveness`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// It exists and is neither stopped nor a zombie (it may be sleeping).
    Alive,
    /// It is stopped by a signal (`SIGSTOP`, `SIGTSTP`, …; state `T`) or by a tracer (`t`).
    Stopped,
    /// It has exited but was not reaped yet (state `Z`), or is being torn down (`X`).
    Zombie,
    /// It does not exist, or the pid now belongs to another process (different start time).
    Gone,
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

/// Whether the process `pid` that started at `expected_start` (clock ticks since boot, as from
/// [`start_time`]) is alive, stopped, a zombie, or gone.
///
/// A pid that now names a process with another start time is [`Liveness::Gone`]: the original
/// process ended and the number was reused.
///
/// An unexpected error reading `/proc` (anything but "no such process") yields
/// [`Liveness::Alive`]: absence is not proven, and a wrongly expelled agent is worse than one
/// whose lease runs out. Use [`try_liveness`] to see such errors.
pub fn liveness(pid: i32, expected_start: u64) -> Liveness {
    try_liveness(pid, expected_start).unwrap_or(Liveness::Alive)
}

/// As [`liveness`], but reports errors other than "no such process".
///
/// # Errors
/// [`ProcError::Io`] or [`ProcError::Malformed`] from [`read_stat`]; never [`ProcError::Gone`]
/// (that is `Ok(Liveness::Gone)`).
pub fn try_liveness(pid: i32, expected_start: u64) -> Result<Liveness, ProcError> {
    match read_stat(pid) {
        Err(ProcError::Gone) => Ok(Liveness::Gone),
        Err(e) => Err(e),
        Ok(stat) => Ok(stat.liveness(expected_start)),
    }
}

impl ProcStat {
    /// This process's [`Liveness`] if it is the one that started at `expected_start`.
    pub fn liveness(&self, expected_start: u64) -> Liveness {
        if self.start_time_ticks != expected_start {
            return Liveness::Gone;
        }
        match self.state {
            'T' | 't' => Liveness::Stopped,
            'Z' | 'X' | 'x' => Liveness::Zombie,
            _ => Liveness::Alive,
        }
    }

    /// CPU time of the process and of the children it reaped, in clock ticks.
    fn cpu_ticks(&self) -> u64 {
        self.utime_ticks + self.stime_ticks + self.cutime_ticks + self.cstime_ticks
    }
}

/// Total CPU time of the process tree rooted at `root`, in clock ticks: for `root` and each of
/// its live descendants, utime + stime + cutime + cstime.
///
/// The children's times (cutime, cstime) are included because a helper that has finished and
/// been reaped (a compiler run, a test) did work too: when it is reaped its time moves from its
/// own entry into its parent's cutime/cstime, so the sum does not drop when helpers finish.
///
/// Scans `/proc` once. Returns 0 when `root` does not exist. The value is only approximately
/// monotonic: a reap racing with the scan can count a child twice or not at all for one sample,
/// and work of a descendant that was re-parented out of the tree (double-forked, its parent
/// died) is no longer counted — re-parented to a child subreaper such as `board run`, it stays in
/// the subreaper's tree. To detect progress compare samples with `!=` rather than `>`.
pub fn tree_cpu_ticks(root: i32) -> u64 {
    tree_cpu_ticks_pruned(root, |_| false)
}

/// Like [`tree_cpu_ticks`], leaving out every process for which `prune` is true together with
/// its descendants (the board itself, when a client inside an agent's tree started it and the
/// launcher, a subreaper, adopted it: its work is not the agent's progress).
pub fn tree_cpu_ticks_pruned(root: i32, prune: impl Fn(i32) -> bool) -> u64 {
    ProcTable::scan().tree_cpu_ticks_pruned(root, prune)
}

/// One scan of `/proc`: every readable process's stat, indexed by pid and by parent, so many
/// questions about many processes (the sweep asks about every agent session) cost one pass over
/// `/proc` instead of one per question.
#[derive(Debug, Default)]
pub struct ProcTable {
    stats: Vec<ProcStat>,
    by_pid: HashMap<i32, usize>,
    children: HashMap<i32, Vec<i32>>,
}

impl ProcTable {
    /// Reads `/proc` once; processes that vanish mid-scan are left out.
    pub fn scan() -> ProcTable {
        ProcTable::from_stats(all_stats())
    }

    /// A table over given stats (for tests and for callers that already scanned).
    pub fn from_stats(stats: Vec<ProcStat>) -> ProcTable {
        let mut by_pid = HashMap::with_capacity(stats.len());
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for (i, st) in stats.iter().enumerate() {
            by_pid.insert(st.pid, i);
            children.entry(st.ppid).or_default().push(st.pid);
        }
        ProcTable {
            stats,
            by_pid,
            children,
        }
    }

    /// The stat of `pid` as scanned.
    pub fn get(&self, pid: i32) -> Option<&ProcStat> {
        self.by_pid.get(&pid).map(|&i| &self.stats[i])
    }

    /// As [`liveness`], from the scan: a process missing from it is [`Liveness::Gone`].
    pub fn liveness(&self, pid: i32, expected_start: u64) -> Liveness {
        self.get(pid)
            .map_or(Liveness::Gone, |st| st.liveness(expected_start))
    }

    /// As [`tree_cpu_ticks_pruned`], from the scan.
    pub fn tree_cpu_ticks_pruned(&self, root: i32, prune: impl Fn(i32) -> bool) -> u64 {
        let Some(root_stat) = self.get(root) else {
            return 0;
        };
        root_stat.cpu_ticks()
            + self
                .descendants_pruned(root, &prune)
                .iter()
                .filter_map(|&pid| self.get(pid))
                .map(ProcStat::cpu_ticks)
                .sum::<u64>()
    }

    /// Live descendants of `root` in the scan, breadth-first, excluding `root` and every pruned
    /// process with its subtree.
    pub fn descendants_pruned(&self, root: i32, prune: &dyn Fn(i32) -> bool) -> Vec<i32> {
        let mut seen = HashSet::from([root]);
        let mut queue = VecDeque::from([root]);
        let mut out = Vec::new();
        while let Some(parent) = queue.pop_front() {
            for &child in self.children.get(&parent).into_iter().flatten() {
                // A pid reused during the scan could make a cycle; visit each pid once.
                if !prune(child) && seen.insert(child) {
                    out.push(child);
                    queue.push_back(child);
                }
            }
        }
        out
    }
}

/// Whether `pid` is `ancestor` or one of its descendants, following the parent chain in `/proc`
/// (at most 1024 steps). False when either pid is not positive or the chain cannot be read.
pub fn is_descendant(pid: i32, ancestor: i32) -> bool {
    const MAX_DEPTH: usize = 1024;
    if pid <= 0 || ancestor <= 0 {
        return false;
    }
    let mut current = pid;
    for _ in 0..MAX_DEPTH {
        if current == ancestor {
            return true;
        }
        match read_stat(current) {
            Ok(stat) if stat.ppid > 0 => current = stat.ppid,
            _ => return false,
        }
    }
    false
}

/// The process `pid` and its ancestors, nearest first, each as (pid, start time in clock ticks
/// since boot), following the parent chain in `/proc` up to (not including) pid 0, at most 1024
/// steps. Stops early where a parent cannot be read (it exited meanwhile). Empty when `pid` itself
/// cannot be read (not positive, or gone).
pub fn ancestry(pid: i32) -> Vec<(i32, u64)> {
    const MAX_DEPTH: usize = 1024;
    let mut out = Vec::new();
    let mut current = pid;
    while current > 0 && out.len() < MAX_DEPTH {
        let Ok(stat) = read_stat(current) else {
            break;
        };
        out.push((current, stat.start_time_ticks));
        // A pid reused during the walk could point back into the chain; stop rather than loop.
        if out.iter().any(|&(p, _)| p == stat.ppid) {
            break;
        }
        current = stat.ppid;
    }
    out
}

/// The pids of all live descendants of `root` (children, grandchildren, …), excluding `root`
/// itself, parents before their children (breadth-first). Scans `/proc` once; empty when `root`
/// has no children or does not exist.
pub fn descendants(root: i32) -> Vec<i32> {
    ProcTable::scan().descendants_pruned(root, &|_| false)
}

/// The pids of the children of `parent` that have exited and wait to be reaped (state `Z`).
/// Scans `/proc` once.
pub fn zombie_children(parent: i32) -> Vec<i32> {
    all_stats()
        .into_iter()
        .filter(|stat| stat.ppid == parent && stat.state == 'Z')
        .map(|stat| stat.pid)
        .collect()
}

/// Like [`descendants`], leaving out every process for which `prune` is true together with its
/// descendants.
pub fn descendants_pruned(root: i32, prune: impl Fn(i32) -> bool) -> Vec<i32> {
    ProcTable::scan().descendants_pruned(root, &prune)
}

/// Whether `pid` is a board process (`board serve`) of this binary: the leftover cleanup of
/// `board run` must never end a board that a command inside the agent autostarted and that the
/// launcher, a child subreaper, adopted when that command exited.
pub fn is_board_daemon(pid: i32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let mut args = cmdline.split(|b| *b == 0);
    let argv0 = args.next().unwrap_or_default();
    if args.next() != Some(b"serve".as_slice()) {
        return false;
    }
    let me = std::env::current_exe().ok();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    let same_exe = match (&me, &exe) {
        // A rebuilt binary shows as "PATH (deleted)".
        (Some(me), Some(exe)) => {
            let exe = exe.to_string_lossy();
            exe.trim_end_matches(" (deleted)") == me.to_string_lossy()
        }
        _ => false,
    };
    let name_of = |p: &[u8]| {
        std::path::Path::new(std::ffi::OsStr::from_bytes(p))
            .file_name()
            .map(|f| f.to_os_string())
    };
    let same_name = me
        .as_ref()
        .and_then(|m| m.file_name().map(|f| f.to_os_string()))
        .is_some_and(|n| name_of(argv0) == Some(n));
    same_exe || same_name
}

/// The stat of every process in `/proc` that could be read; processes that vanish mid-scan are
/// skipped.
fn all_stats() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| read_stat(pid).ok())
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    /// A realistic stat line (Linux 6.x, 52 fields) for a process named `comm`.
    fn line(comm: &str) -> String {
        format!(
            "4242 ({comm}) S 17 4242 17 34816 4242 4194304 120 0 0 0 \
             7 3 11 5 20 0 1 0 987654 9375744 812 18446744073709551615 1 1 0 0 0 0 0 \
             4096 65536 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 256\n"
        )
    }

    fn spawn_sleep() -> Child {
        Command::new("sleep")
            .arg("30")
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn sleep")
    }

    /// Polls `f` until it returns true or 5 s pass.
    fn eventually(mut f: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if f() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        f()
    }

    fn pid_of(child: &Child) -> i32 {
        i32::try_from(child.id()).expect("pid fits i32")
    }

    #[test]
    fn parses_a_name_with_spaces_and_parens() {
        for comm in ["(a) b (c))", "a) b (c)", ") ) S 1 2 3", "plain"] {
            let stat = parse_stat(&line(comm)).expect(comm);
            assert_eq!(
                stat,
                ProcStat {
                    pid: 4242,
                    ppid: 17,
                    state: 'S',
                    utime_ticks: 7,
                    stime_ticks: 3,
                    cutime_ticks: 11,
                    cstime_ticks: 5,
                    start_time_ticks: 987654,
                    exit_code: Some(256),
                },
                "comm {comm:?}"
            );
        }
    }

    #[test]
    fn exit_code_is_optional_and_garbage_is_rejected() {
        let full = line("x");
        // Drop the last field: a kernel before 3.5 prints 44 fields; the parser only needs 22.
        let short: String = full.split(' ').take(30).collect::<Vec<_>>().join(" ");
        let stat = parse_stat(&short).expect("short line");
        assert_eq!(stat.exit_code, None);
        assert_eq!(stat.start_time_ticks, 987654);

        for bad in [
            "",
            "4242 no parens S 1",
            "4242 (x) S 17 1 2",
            "abc (x) S 17 4242 17 34816 4242 4194304 120 0 0 0 7 3 11 5 20 0 1 0 9",
            &full.replace(" S ", " SS "),
            &full.replace(" 987654 ", " -1 "),
        ] {
            assert!(
                matches!(parse_stat(bad), Err(ProcError::Malformed(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn reads_own_process() {
        let me = std::process::id() as i32;
        let stat = read_stat(me).expect("own stat");
        assert_eq!(stat.pid, me);
        let start = start_time(me).expect("own start time");
        assert_eq!(liveness(me, start), Liveness::Alive);
        assert_eq!(liveness(me, start + 1), Liveness::Gone);
        assert!(matches!(read_stat(0), Err(ProcError::Gone)));
        assert!(matches!(read_stat(-1), Err(ProcError::Gone)));
        let id = boot_id().expect("boot id");
        assert_eq!(id.len(), 36, "{id:?}");
    }

    #[test]
    fn reaped_child_is_gone() {
        let mut child = Command::new("true").spawn().expect("spawn true");
        let pid = pid_of(&child);
        let start = start_time(pid).unwrap_or(0);
        child.wait().expect("wait");
        assert_eq!(liveness(pid, start), Liveness::Gone);
        assert!(matches!(read_stat(pid), Err(ProcError::Gone)));
    }

    #[test]
    fn stopped_child_is_stopped() {
        let mut child = spawn_sleep();
        let pid = pid_of(&child);
        let start = start_time(pid).expect("start time");
        assert_eq!(liveness(pid, start), Liveness::Alive);
        kill(Pid::from_raw(pid), Signal::SIGSTOP).expect("SIGSTOP");
        let stopped = eventually(|| liveness(pid, start) == Liveness::Stopped);
        kill(Pid::from_raw(pid), Signal::SIGCONT).expect("SIGCONT");
        let resumed = eventually(|| liveness(pid, start) == Liveness::Alive);
        child.kill().expect("kill");
        child.wait().expect("wait");
        assert!(stopped, "never saw state T");
        assert!(resumed, "never saw it running again");
    }

    #[test]
    fn killed_unreaped_child_is_zombie_then_gone() {
        let mut child = spawn_sleep();
        let pid = pid_of(&child);
        let start = start_time(pid).expect("start time");
        child.kill().expect("kill");
        let zombie = eventually(|| liveness(pid, start) == Liveness::Zombie);
        let exit_code = read_stat(pid).ok().and_then(|stat| stat.exit_code);
        child.wait().expect("wait");
        assert!(zombie, "never saw state Z");
        // Raw wait status of a SIGKILLed process: the signal number.
        assert_eq!(exit_code, Some(9));
        assert_eq!(liveness(pid, start), Liveness::Gone);
    }

    #[test]
    fn child_is_a_descendant() {
        let me = std::process::id() as i32;
        let mut child = spawn_sleep();
        let pid = pid_of(&child);
        let results = (
            is_descendant(pid, me),
            is_descendant(pid, pid),
            is_descendant(me, pid),
            is_descendant(pid, 1),
            descendants(me).contains(&pid),
        );
        child.kill().expect("kill");
        child.wait().expect("wait");
        assert_eq!(results, (true, true, false, true, true));
        assert!(!is_descendant(pid, 0));
        assert!(!is_descendant(0, me));
    }

    #[test]
    fn ancestry_lists_the_chain_nearest_first() {
        let me = std::process::id() as i32;
        let mut child = spawn_sleep();
        let pid = pid_of(&child);
        let chain = ancestry(pid);
        child.kill().expect("kill");
        child.wait().expect("wait");
        let pids: Vec<i32> = chain.iter().map(|&(p, _)| p).collect();
        assert_eq!(pids.first(), Some(&pid), "{pids:?}");
        assert_eq!(pids.get(1), Some(&me), "{pids:?}");
        assert_eq!(chain[1].1, start_time(me).expect("own start"));
        assert!(!pids.contains(&0), "{pids:?}");
        assert!(ancestry(0).is_empty());
        assert!(ancestry(pid).is_empty(), "a reaped child has no chain");
    }

    #[test]
    fn grandchildren_are_descendants() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .expect("spawn sh");
        let sh = pid_of(&child);
        let mut found = Vec::new();
        let ok = eventually(|| {
            found = descendants(sh);
            !found.is_empty()
        });
        child.kill().expect("kill");
        child.wait().expect("wait");
        for &pid in &found {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        assert!(ok, "the sleep never showed up under sh");
        assert_eq!(found.len(), 1, "{found:?}");
    }

    #[test]
    fn tree_cpu_counts_reaped_helpers() {
        // The busy subshell is a child of sh; once sh has waited for it, its CPU time shows
        // only in sh's cutime/cstime.
        let mut child = Command::new("sh")
            .args([
                "-c",
                "(i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done) & wait; exec sleep 30",
            ])
            .spawn()
            .expect("spawn sh");
        let pid = pid_of(&child);
        let counted = eventually(|| {
            read_stat(pid).is_ok_and(|stat| stat.cutime_ticks + stat.cstime_ticks > 0)
                && tree_cpu_ticks(pid) > 0
        });
        child.kill().expect("kill");
        child.wait().expect("wait");
        assert!(counted, "the helper's CPU time was never counted");
        assert_eq!(tree_cpu_ticks(pid), 0, "a gone root has no tree");
    }

    /// A sleeping process `pid` under `ppid` that used 1 tick of CPU time.
    fn stat(pid: i32, ppid: i32) -> ProcStat {
        ProcStat {
            pid,
            ppid,
            state: 'S',
            utime_ticks: 1,
            stime_ticks: 0,
            cutime_ticks: 0,
            cstime_ticks: 0,
            start_time_ticks: 0,
            exit_code: None,
        }
    }

    #[test]
    fn a_scan_visits_each_pid_once_even_in_a_cycle() {
        let table = ProcTable::from_stats(vec![
            stat(10, 1),
            stat(11, 10),
            stat(12, 11),
            stat(10, 12),
            stat(13, 10),
        ]);
        assert_eq!(table.descendants_pruned(10, &|_| false), vec![11, 13, 12]);
        assert_eq!(table.descendants_pruned(99, &|_| false), Vec::<i32>::new());
        // A pruned process takes its subtree with it.
        assert_eq!(table.descendants_pruned(10, &|p| p == 11), vec![13]);
    }

    #[test]
    fn a_scan_answers_liveness_and_prunes_subtrees() {
        let table = ProcTable::from_stats(vec![
            stat(10, 1),
            stat(11, 10),
            stat(12, 11),
            stat(13, 10),
            stat(14, 13),
        ]);
        assert_eq!(
            table.descendants_pruned(10, &|_| false),
            vec![11, 13, 12, 14]
        );
        assert_eq!(table.descendants_pruned(10, &|p| p == 13), vec![11, 12]);
        assert_eq!(table.tree_cpu_ticks_pruned(10, |p| p == 13), 3);
        assert_eq!(table.tree_cpu_ticks_pruned(99, |_| false), 0);
        assert_eq!(table.liveness(13, 0), Liveness::Alive);
        assert_eq!(table.liveness(13, 1), Liveness::Gone, "another start time");
        assert_eq!(table.liveness(99, 0), Liveness::Gone);
    }
}
