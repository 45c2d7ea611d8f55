//! `board`: a local teamwork board for terminal coding agents.
//!
//! Layout, by the processes of DESIGN.md:
//! - [`proto`] — the wire format (JSON-RPC 2.0 lines), error kinds, the client connection, and
//!   what makes agent text inert on a terminal.
//! - [`store`] — every SQL statement; each state change is one conditional statement in one
//!   transaction.
//! - [`daemon`] — `board serve`: socket server, request handling, the lease rules as pure
//!   functions over a clock, sweep, process watchers, event broadcast, config reload.
//! - [`os`] — what the board reads of processes (`/proc`, pidfd).
//! - [`agent_tools`] — how agents reach the board besides the CLI: `board json`, `board mcp`,
//!   agent profiles, `board init` extras (instructions, MCP entries, git hooks).
//! - [`cli`] — the client commands, `board run` (the launcher), `board up` (tmux), `board demo`.
//! - [`team`] — the team in tmux: slots from `[[agents]]`, their panes, start and restart.
//! - [`tui`] — `board tui`: state → view, rendering free of I/O.
//! - [`config`] — `board.toml`.
//! - [`backlog`] — a backlog as a file (Markdown checklist, TOML, JSON) for import and export.

pub mod agent_tools;
pub mod backlog;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod os;
pub mod proto;
pub mod store;
pub mod team;
pub mod tui;

// The lease core stands on Linux interfaces: pidfd (process exit as an event), /proc (process
// start times, the process tree, CPU time) and PR_SET_CHILD_SUBREAPER (`board run`).
#[cfg(not(target_os = "linux"))]
compile_error!(
    "board runs on Linux only: it needs pidfd, /proc and PR_SET_CHILD_SUBREAPER (see README, Install)"
);
