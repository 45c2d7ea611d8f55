//! `board`: a local teamwork board for terminal coding agents.
//!
//! Layout: [`protocol`] is the wire format, [`store`] holds every SQL statement, [`lease`] the
//! lease rules as pure functions over a clock, [`daemon`] the board process and its tasks, and
//! [`cli`] the thin client commands.

pub mod config;
pub mod error;
pub mod lease;
pub mod protocol;
pub mod store;
