//! Whether a process, named by its pid and start time, is alive, stopped, a zombie or gone: the
//! one process-state enum of the crate ([`Liveness`]), read from `/proc/PID/stat`'s state letter.

use super::error::ProcError;
use super::stat::{read_stat, ProcStat};

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

/// Whether the process `pid` that started at `expected_start` (clock ticks since boot, as from
/// [`start_time`](super::stat::start_time)) is alive, stopped, a zombie, or gone.
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
}
