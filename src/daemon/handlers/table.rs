//! The handler traits, and the routing from a [`Call`] to its handler generated from the method
//! table (`method_table!` in [`crate::proto::methods`]): each row's verb type implements the trait of
//! its access, in the handler file of its group, so a row without a handler does not compile and
//! no `match` over methods is written by hand.
//!
//! | access   | trait            | runs                                                         |
//! |----------|------------------|--------------------------------------------------------------|
//! | `Read`   | [`HandleRead`]   | on the blocking pool, taking the store as it needs it          |
//! | `Land`   | [`HandleRead`]   | the same: git work first, then one store transition (no scope) |
//! | `Write`  | [`HandleWrite`]  | inside one store write scope (and the op scope of its `op_id`) |
//! | `Launcher` | [`HandleLaunch`] | for the `board run` launcher, identified by its pid          |
//! | `Stream` | none             | the connection itself (`subscribe`, in `server.rs`)          |

use std::sync::Arc;

use serde_json::Value;

use super::answer::answer;
use super::cx::Cx;
use crate::daemon::state::{Board, OffReactor};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::methods::{verb, Verb};
use crate::proto::Call;
use crate::store::{Events, Store};

/// The handler of a `Read` or `Land` method.
pub trait HandleRead: Verb {
    /// Answers `p` for the caller of `cx`. Errors: the method's refusals ([`BoardError`]).
    fn handle(cx: &Cx, p: &Self::Params) -> BoardResult<Self::Result>;
}

/// The handler of a `Write` method: everything it changes goes through `store`, which may be
/// inside the op scope of the request's `op_id` (one transaction, possibly run again after a
/// conflict the store rolled back), and the events it appends to `ev` are published once that
/// scope commits.
pub trait HandleWrite: Verb {
    /// Applies `p` for the caller of `cx`. Errors: the method's refusals ([`BoardError`]).
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &Self::Params,
    ) -> BoardResult<Self::Result>;
}

/// The handler of a `Launcher` method, called by the `board run` launcher whose pid the kernel
/// reported (`launcher_pid`).
pub trait HandleLaunch: Verb {
    /// Answers `p` for the launcher. Errors: the method's refusals ([`BoardError`]).
    fn handle(
        board: &Arc<Board>,
        off: &OffReactor,
        launcher_pid: i32,
        p: &Self::Params,
    ) -> BoardResult<Self::Result>;
}

/// The answer to a call routed to a handler kind its method does not have (a bug of the
/// caller: [`super::dispatch`] routes by [`crate::proto::methods::Access`]).
fn not_here(call: &Call, what: &str) -> BoardResult<Value> {
    Err(BoardError::internal(format!(
        "`{}` is not {what}",
        call.method()
    )))
}

/// One arm of [`read`]: the handler for `Read` and `Land` rows, a refusal for the others.
macro_rules! read_arm {
    (Read, $var:ident, $cx:ident, $p:ident, $call:ident) => {
        answer(<verb::$var as HandleRead>::handle($cx, $p))
    };
    (Land, $var:ident, $cx:ident, $p:ident, $call:ident) => {
        answer(<verb::$var as HandleRead>::handle($cx, $p))
    };
    ($access:ident, $var:ident, $cx:ident, $p:ident, $call:ident) => {{
        let _ = $p;
        not_here($call, "answered here")
    }};
}

/// One arm of [`write`]: the handler for `Write` rows, a refusal for the others.
macro_rules! write_arm {
    (Write, $var:ident, $cx:ident, $store:ident, $ev:ident, $p:ident, $call:ident) => {
        answer(<verb::$var as HandleWrite>::handle($cx, $store, $ev, $p))
    };
    ($access:ident, $var:ident, $cx:ident, $store:ident, $ev:ident, $p:ident, $call:ident) => {{
        let _ = $p;
        not_here($call, "a write")
    }};
}

/// One arm of [`launch`]: the handler for `Launcher` rows, a refusal for the others.
macro_rules! launch_arm {
    (Launcher, $var:ident, $board:ident, $off:ident, $pid:ident, $p:ident, $call:ident) => {
        answer(<verb::$var as HandleLaunch>::handle($board, $off, $pid, $p))
    };
    ($access:ident, $var:ident, $board:ident, $off:ident, $pid:ident, $p:ident, $call:ident) => {{
        let _ = $p;
        not_here($call, "a launcher call")
    }};
}

/// [`read`], [`write`] and [`launch`], one arm per row of the method table.
macro_rules! routes {
    ($( $(#[$doc:meta])* $var:ident = $name:literal, $access:ident $(+ $cli:ident)?, $params:ident => $result:ty; )*) => {
        /// Runs the handler of a `Read` or `Land` call. Errors: the handler's, or `internal` for
        /// a call of another access.
        pub(super) fn read(cx: &Cx, call: &Call) -> BoardResult<Value> {
            match call {
                $( Call::$var(p) => read_arm!($access, $var, cx, p, call), )*
            }
        }

        /// Runs the handler of a `Write` call with `store` (maybe inside an op scope) and the
        /// events it appends to `ev`. Errors: the handler's, or `internal` for another access.
        pub(super) fn write(
            cx: &Cx,
            store: &mut dyn Store,
            ev: &mut Events,
            call: &Call,
        ) -> BoardResult<Value> {
            match call {
                $( Call::$var(p) => write_arm!($access, $var, cx, store, ev, p, call), )*
            }
        }

        /// Runs the handler of a `Launcher` call from the launcher with pid `launcher_pid`.
        /// Errors: the handler's, or `internal` for another access.
        pub(super) fn launch(
            board: &Arc<Board>,
            off: &OffReactor,
            launcher_pid: i32,
            call: &Call,
        ) -> BoardResult<Value> {
            match call {
                $( Call::$var(p) => launch_arm!($access, $var, board, off, launcher_pid, p, call), )*
            }
        }
    };
}

crate::proto::methods::method_table!(routes);
