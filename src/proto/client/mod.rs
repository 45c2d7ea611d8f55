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
//! - `op_id`: the `op_id` of a write ([`with_op_id`]).
//! - `retry`: asking a lost answer again with its `op_id` until the deadline ([`retrying`],
//!   [`call_once`]).
//! - `typed`: the same with a typed [`crate::proto::methods::Call`] ([`Client::send`],
//!   [`send_once`]): how the clients of this crate ask.
//!
//! - `markers`: the members of an error's `data` that tag it ([`ANSWER_LOST`]): errors are told
//!   apart by them, never by their message text.

mod autostart;
mod connection;
mod locate;
mod markers;
mod op_id;
mod retry;
mod typed;

pub use autostart::{start_board, without_identity};
pub use connection::{check_protocol, split_answer, Client, Followed, StreamItem};
pub use locate::{env_identity, env_timeout, target, EnvIdentity, Target, TIMEOUT_ENV};
pub use markers::ANSWER_LOST;
pub use op_id::{new_op_id, with_op_id};
pub use retry::{answer_was_lost, call_once, retrying};
pub use typed::{answer_of, send_once, Answer};
