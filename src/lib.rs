//! `board`: a local teamwork board for terminal coding agents.
//!
//! Layout: [`protocol`] is the wire format, [`store`] holds every SQL statement, [`lease`] the
//! lease rules as pure functions over a clock, [`daemon`] the board process and its tasks (socket
//! server, sweep, process watchers, event broadcast, config reload), [`client`] and [`cli`] the
//! thin client commands, [`runner`] the `board run` launcher, [`procfs`]/[`pidfd`] what the board
//! reads of processes, [`sanitize`] what makes agent text inert on a terminal, and [`tui`] the
//! live board in a terminal pane.

pub mod agents_init;
pub mod cli;
pub mod client;
pub mod config;
pub mod daemon;
pub mod demo;
pub mod error;
pub mod hooks;
pub mod lease;
pub mod mcp;
pub mod pidfd;
pub mod procfs;
pub mod profile;
pub mod protocol;
pub mod runner;
pub mod sanitize;
pub mod stdio_json;
pub mod store;
pub mod tui;
pub mod up;
