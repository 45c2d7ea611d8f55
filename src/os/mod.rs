//! What the board reads of processes: `/proc` (state, start time, ancestry, CPU time), pidfd, and
//! how much memory it keeps itself (`memory`).

pub mod memory;
pub mod pidfd;
pub mod procfs;
pub mod stop;
