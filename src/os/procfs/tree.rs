//! The process tree as `/proc` shows it: one scan indexed by parent ([`ProcTable`]), so the sweep
//! asks about every agent session for one pass over `/proc`; descendants (the leftovers `board
//! run` ends), ancestry (a request's caller walked up to its agent session), the CPU time of a
//! tree (an agent's progress), and zombie children waiting to be reaped.

use std::collections::{HashMap, HashSet, VecDeque};

use super::liveness::Liveness;
use super::stat::{read_stat, ProcStat};

impl ProcStat {
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

    /// As [`liveness`](super::liveness::liveness), from the scan: a process missing from it is [`Liveness::Gone`].
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
