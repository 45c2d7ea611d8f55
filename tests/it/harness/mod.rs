//! The one test harness: what every behaviour module starts from.
//!
//! - this module: the binary under test ([`BOARD`]), the environment a test must not pass on
//!   ([`SCRUB`], [`scrub`]), `PATH` with the binary first ([`path_env`]), and the one way to
//!   wait for something ([`poll`], [`poll_until`]: a condition polled with a deadline, never a
//!   fixed sleep).
//! - [`test_board`]: the one [`test_board::TestBoard`] and its [`test_board::Builder`]
//!   (`board.toml`, served or autostarted, killed with all it started on drop); [`queries`]:
//!   what a test asks it and does with it.
//! - [`agent`]: the one [`agent::Agent`], an agent session under `board run` (a shell driven
//!   line by line, or a script).
//! - [`command`]: a command's [`command::Out`], run with a deadline; [`rpc`]: the socket
//!   without the CLI; [`events`]: the live event stream and timing figures.
//! - [`tmux`]: the one private tmux server; [`process`]: pids, process states, FIFOs.
//! - [`schema`]: the printed JSON Schema every `--json` output is checked against.
//! - [`mcp`]: a client of `board mcp` over its stdio.
//! - [`real_clis`]: the real agent CLIs in a throwaway HOME.
//! - [`postgres`]: a private PostgreSQL cluster, for boards sharing a PostgreSQL store.
//! - [`netns`]: hosts in network namespaces whose links to the store can be cut.

// Each test module uses a different subset of these helpers.
#![allow(dead_code)]

pub mod agent;
pub mod command;
pub mod events;
pub mod mcp;
pub mod netns;
pub mod postgres;
pub mod process;
pub mod queries;
pub mod real_clis;
pub mod rpc;
pub mod schema;
pub mod scripted;
pub mod test_board;
pub mod tmux;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// The board binary under test.
pub const BOARD: &str = env!("CARGO_BIN_EXE_board");

/// How long any single step may take before a test gives up (generous: CI has 2 cores).
pub const STEP: Duration = Duration::from_secs(15);

/// How often [`poll`] looks again.
const POLL_EVERY: Duration = Duration::from_millis(5);

/// Variables a test must not pass on to what it starts: the test itself may run inside an agent
/// session or a tmux pane, and its log settings would change what the board writes.
pub const SCRUB: &[&str] = &[
    "BOARD_AGENT",
    "BOARD_TOKEN",
    "BOARD_SOCKET",
    "BOARD_ROOT",
    "BOARD_TASK",
    "BOARD_LOG",
    "RUST_LOG",
    "TMUX",
    "TMUX_PANE",
];

/// Removes [`SCRUB`] from `cmd`'s environment and puts the board binary first on `PATH`.
pub fn scrub(cmd: &mut Command) -> &mut Command {
    for v in SCRUB {
        cmd.env_remove(v);
    }
    cmd.env("PATH", path_env())
}

/// `PATH` with the board binary's directory first, for agents' shells.
pub fn path_env() -> String {
    let dir = Path::new(BOARD).parent().expect("binary directory");
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Calls `f` every few milliseconds until it returns `Some`, or `None` once `timeout` passed.
pub fn poll<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL_EVERY);
    }
}

/// [`poll`] for a condition: whether `cond` held before `timeout` passed.
pub fn poll_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    poll(timeout, || cond().then_some(())).is_some()
}

/// Waits for a child process to exit, with a deadline.
pub fn wait_child(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    poll(timeout, || child.try_wait().ok().flatten())
}

/// The exit code of `st`, or 128 + the signal that ended it.
pub fn exit_code(st: ExitStatus) -> i32 {
    st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0))
}

/// Quotes one word for `sh`.
pub fn sh_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}
