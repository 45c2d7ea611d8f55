//! What the board reads of processes: `/proc` (state, start time, ancestry, CPU time) and pidfd.

pub mod memory;
pub mod pidfd;
pub mod procfs;
