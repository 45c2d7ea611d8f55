//! The client side of the socket: finds the board, starts it when none runs, sends requests.
//!
//! Blocking std I/O on purpose: a client command makes one or two round trips, and skipping an
//! async runtime keeps `board claim` quick to start.
//!
//! The parts, each a file of this folder:
//! - `locate`: where the board is (`BOARD_SOCKET`, else `board.toml` found from the working
//!   directory or `BOARD_ROOT`), how long to wait for its answers (`BOARD_TIMEOUT`, else
//!   `[client] timeout`), and the agent identity in the environment.
//! - `autostart`: starting `board serve` detached when no board answers, and telling a sandbox
//!   that blocks the socket apart from a board that is not running.
//! - `connection`: one connection, [`Client`]: `hello` and the request in one write, every read
//!   and write bounded by the answer deadline, errors that name the board's pid and socket, and
//!   event streams.
//! - `retry`: the `op_id` of a write, and asking a lost answer again with it until the deadline
//!   ([`retrying`], [`call_once`]).
//! - `typed`: the same with a typed [`crate::proto::methods::Call`] ([`Client::send`],
//!   [`send_once`]): how the clients of this crate ask.
//!
//! Errors are tagged by a member of their `data` (the markers below), never told apart by their
//! message text.

mod autostart;
mod connection;
mod locate;
mod retry;
mod typed;

pub use autostart::{start_board, without_identity};
pub use connection::{check_protocol, split_answer, Client, Followed, StreamItem};
pub use locate::{env_identity, env_timeout, target, EnvIdentity, Target, TIMEOUT_ENV};
pub use retry::{answer_was_lost, call_once, new_op_id, retrying, with_op_id};
pub use typed::{answer_of, send_once, Answer};

/// Marks an `unavailable` error whose request may or may not have been applied because the
/// board closed the connection before answering (it stopped, crashed or restarted): asking
/// again with the same `op_id` tells which.
pub const ANSWER_LOST: &str = "answer_lost";

/// Marks an `unavailable` answer of a board that is stopping (nothing was applied).
const STOPPING: &str = "stopping";

/// Marks the `unavailable` error of a board that did not answer in time (never retried: a
/// stopped or stuck board would only be waited for again).
const TIMED_OUT: &str = "answer_timeout_ms";

/// Marks the `unavailable` error of a board of another protocol version.
const PROTOCOL: &str = "protocol";
