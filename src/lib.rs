pub mod pidfd;
pub mod procfs;
pub mod sanitize;
