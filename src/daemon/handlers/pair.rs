//! A client command's `hello` and the request it sends with it, answered as one request.
//!
//! Every client command writes `hello` (the protocol check) and its call in one write. Answered
//! one by one, each was authenticated on its own (a `/proc` ancestry walk and a store read) and
//! took its own hop to the blocking pool. When the call is already read with its `hello` and
//! both carry the same identity, the server hands both here in one hop: the caller is
//! authenticated once, `hello` is answered from that caller, and the call runs as it would
//! alone. The answers on the wire are the same two lines, in order, so an older client or a
//! board of another protocol tells what it told before.
//!
//! What `hello` did on its own for an agent (contact, a renewal the call then logs) the call
//! does anyway, so answering `hello` from the call's authentication changes nothing the board
//! keeps. When authentication refuses the caller, both are answered one by one as before, so
//! every refusal (and `hello`'s answer of a board whose store is down) reads as it did.

use std::sync::Arc;

use super::answer::{answer, Answer};
use super::cx::Cx;
use super::dispatch::{handle, handle_as, settle};
use super::table::HandleRead;
use crate::daemon::identity::{authenticate, Peer};
use crate::daemon::state::{Board, OffReactor};
use crate::proto::error::BoardResult;
use crate::proto::methods::{verb, Access, NoParams};
use crate::proto::{Method, Request};

/// Whether `req`, sent right after `hello`, can be answered together with it by
/// [`handle_after_hello`]: a `Read` or `Write` method (not a stream, not a launcher's call)
/// with the same `agent` and `token` as the `hello`.
pub fn rides_with_hello(hello: &Request, req: &Request) -> bool {
    hello.method == Method::Hello
        && matches!(
            req.method.access(),
            Access::Read | Access::Write | Access::Land
        )
        && hello.identity.agent == req.identity.agent
        && hello.identity.token == req.identity.token
}

/// The answers of `hello` and of `req` sent after it, with one authentication and one hop to
/// the blocking pool (see the module docs). `req` must [`rides_with_hello`]; otherwise each is
/// answered on its own by [`handle`].
pub fn handle_after_hello(
    board: &Arc<Board>,
    off: &OffReactor,
    hello: &Request,
    req: &Request,
    peer: Peer,
) -> (BoardResult<Answer>, BoardResult<Answer>) {
    let one_by_one = |board: &Arc<Board>| {
        let h = handle(board, off, hello, peer);
        (h, handle(board, off, req, peer))
    };
    if !rides_with_hello(hello, req) {
        return one_by_one(board);
    }
    let Ok(caller) = authenticate(board, off, &req.identity, peer) else {
        // A refusal reads exactly as before: each request tells its own.
        return one_by_one(board);
    };
    let cx = Cx {
        board,
        caller: &caller,
        now: board.now_ms(),
        off,
    };
    let hello_answer =
        answer(<verb::Hello as HandleRead>::handle(&cx, &NoParams {})).map(Answer::plain);
    let first = handle_as(board, off, req, &caller);
    (hello_answer, settle(board, off, req, peer, first))
}
