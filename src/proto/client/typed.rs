//! The typed face of the client: a [`Call`] of the method table goes out, its result comes
//! back. Callers never spell a method name or build its params by hand.

use serde_json::Value;

use super::{call_once, Client, Target};
use crate::proto::error::BoardResult;
use crate::proto::methods::Call;

impl Client {
    /// Sends `call` (with `hello` in the same write) and returns its result.
    /// Errors: as [`Client::call`].
    pub fn send(&mut self, call: Call) -> BoardResult<Value> {
        let (method, params) = call.wire();
        self.call(method.name(), params)
    }

    /// Sends `call` alone, on a connection that has said `hello` already.
    /// Errors: as [`Client::call_raw`].
    pub fn send_raw(&mut self, call: Call) -> BoardResult<Value> {
        let (method, params) = call.wire();
        self.call_raw(method.name(), params)
    }
}

/// [`call_once`] of a typed call: a write gets its `op_id` and a lost answer is asked again.
/// Errors: as [`call_once`].
pub fn send_once(target: &Target, autostart: bool, call: Call) -> BoardResult<Value> {
    let (method, params) = call.wire();
    call_once(target, autostart, method.name(), params)
}
