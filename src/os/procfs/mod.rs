//! Reading process state from `/proc` (Linux).
//!
//! The parsing functions are pure functions over the text of a `/proc` file, so they can be
//! tested without a live process; the readers are thin wrappers that read one file and parse it.
//!
//! All times are in clock ticks (`USER_HZ`, see `sysconf(_SC_CLK_TCK)`, 100 on practically every
//! Linux system). Process start times are ticks since boot, so they identify a process only
//! together with the [`boot_id`]: a pid plus its start time names one process for the life of one
//! boot, even when the pid number is reused later.
//!
//! The parts, each a file of this folder:
//! - `stat`: `/proc/PID/stat` parsed ([`ProcStat`], [`parse_stat`]) and read in as few
//!   syscalls as the kernel allows ([`read_stat`]), process start times and the [`boot_id`].
//! - `liveness`: whether a process named by pid and start time is alive, stopped, a zombie or
//!   gone ([`Liveness`], the one process-state enum of the crate).
//! - `tree`: the process tree: one scan of `/proc` indexed by parent ([`ProcTable`]),
//!   descendants, ancestry, the CPU time of a tree (the agent's progress), zombie children.
//! - `program`: what program a process runs ([`is_board_daemon`]).
//! - `error`: what goes wrong reading or parsing `/proc` ([`ProcError`]).

mod error;
mod liveness;
mod program;
mod stat;
mod tree;

pub use error::ProcError;
pub use liveness::{liveness, try_liveness, Liveness};
pub use program::is_board_daemon;
pub use stat::{boot_id, parse_stat, read_stat, start_time, ProcStat};
pub use tree::{
    ancestry, descendants, descendants_pruned, is_descendant, tree_cpu_ticks,
    tree_cpu_ticks_pruned, zombie_children, ProcTable,
};

#[cfg(test)]
mod tests;
