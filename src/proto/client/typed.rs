//! The typed face of the client: a [`Call`] of the method table goes out, its result comes
//! back. Callers never spell a method name or build its params by hand.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::connection::Client;
use super::locate::Target;
use super::retry::call_once;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::methods::Call;
use crate::proto::methods::{InboxNotice, LostClaim};

/// An answer taken apart: the method's own result and the envelope members the board adds to
/// an agent's answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer<R> {
    /// The method's result.
    pub result: R,
    /// Claims the caller lost since its previous call (empty for operators and launchers).
    pub lost: Vec<LostClaim>,
    /// Unread messages waiting for the caller, if any.
    pub inbox: Option<InboxNotice>,
}

/// Splits an answer `v` into [`Answer`], the result read as `R` (the result type of the call
/// that was sent; see the method table).
///
/// Errors: `internal` naming what did not match (a board of another version).
pub fn answer_of<R: DeserializeOwned>(mut v: Value) -> BoardResult<Answer<R>> {
    let take = |v: &mut Value, key: &str| v.as_object_mut().and_then(|m| m.remove(key));
    let lost = take(&mut v, "lost")
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| BoardError::internal(format!("the board's `lost` is not understood: {e}")))?
        .unwrap_or_default();
    let inbox = take(&mut v, "inbox")
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| BoardError::internal(format!("the board's `inbox` is not understood: {e}")))?;
    let result = serde_json::from_value(v)
        .map_err(|e| BoardError::internal(format!("the board's answer is not understood: {e}")))?;
    Ok(Answer {
        result,
        lost,
        inbox,
    })
}

impl Client {
    /// Sends `call` (with `hello` in the same write) and returns its result.
    /// Errors: as [`Client::call`].
    pub fn send(&mut self, call: Call) -> BoardResult<Value> {
        let (method, params) = call.wire();
        self.call(method.name(), params)
    }

    /// Sends `call` (as [`Client::send`]) and reads the answer as `R`, the result type the method
    /// table gives its method. Errors: as [`Client::call`], and [`answer_of`]'s.
    pub fn ask<R: DeserializeOwned>(&mut self, call: Call) -> BoardResult<Answer<R>> {
        answer_of(self.send(call)?)
    }

    /// Sends `call` alone, on a connection that has said `hello` already.
    /// Errors: as [`Client::call_raw`].
    pub fn send_raw(&mut self, call: Call) -> BoardResult<Value> {
        let (method, params) = call.wire();
        self.call_raw(method.name(), params)
    }

    /// Sends `call` (after `hello` when `hello`) and returns the answer line unparsed, as
    /// [`Client::call_line`] does. Errors: as [`Client::call_line`].
    pub fn send_line(&mut self, call: Call, hello: bool) -> BoardResult<String> {
        let (method, params) = call.wire();
        self.call_line(method.name(), params, hello)
    }

    /// Sends `call` alone (as [`Client::send_raw`]) and reads the answer as `R`, as
    /// [`Client::ask`] does. Errors: as [`Client::call_raw`], and [`answer_of`]'s.
    pub fn ask_raw<R: DeserializeOwned>(&mut self, call: Call) -> BoardResult<Answer<R>> {
        answer_of(self.send_raw(call)?)
    }
}

/// [`call_once`] of a typed call: a write gets its `op_id` and a lost answer is asked again.
/// Errors: as [`call_once`].
pub fn send_once(target: &Target, autostart: bool, call: Call) -> BoardResult<Value> {
    let (method, params) = call.wire();
    call_once(target, autostart, method.name(), params)
}
