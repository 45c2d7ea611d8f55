//! `board`: a local teamwork board for terminal coding agents.
//!
//! Layout, by the processes of ARCHITECTURE.md:
//! - [`daemon`] — `board serve`, the board process: socket server, one handler per method, the
//!   lease rules as pure functions over a clock, sweep, process watchers, event broadcast,
//!   config reload. It alone opens the [`store`].
//! - [`store`] — the SQLite database the board owns: every SQL statement; each state change is
//!   one conditional statement in one transaction.
//! - [`cli`] — the client commands (one request each, printed), `board run` (the launcher that
//!   starts an agent under the board), `board up`/`down` (the team in tmux), `board demo`.
//! - [`tui`] — `board tui`: snapshot → update → view, free of I/O.
//! - [`agent_tools`] — `board json`, `board mcp`, the agent CLIs' hooks and profiles, the team
//!   of agent panes `board up` and the TUI start, `board init`'s extras.
//! - [`proto`] — what all of these share: the wire format (JSON-RPC 2.0 lines), error kinds,
//!   the client connection, `board.toml` and where a board lives, the backlog file shape, and
//!   what makes agent text inert on a terminal.
//! - [`os`] — what the board and the launcher read of processes (`/proc`, pidfd).

pub mod agent_tools;
pub mod cli;
pub mod daemon;
pub mod os;
pub mod proto;
pub mod store;
pub mod tui;

// The lease core stands on Linux interfaces: pidfd (process exit as an event), /proc (process
// start times, the process tree, CPU time) and PR_SET_CHILD_SUBREAPER (`board run`).
#[cfg(not(target_os = "linux"))]
compile_error!(
    "board runs on Linux only: it needs pidfd, /proc and PR_SET_CHILD_SUBREAPER (see README, Install)"
);
