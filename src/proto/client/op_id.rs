//! The `op_id` of a write: the board keeps each write's answer under it, so a request whose
//! answer was lost can be sent again and is applied once.

use serde_json::{json, Value};

/// A new `op_id`: 128 random bits as 32 hex digits, unique per request (not per attempt: every
/// retry of one request sends the same one).
pub fn new_op_id() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `params` with an `op_id` when `method` is a write ([`crate::proto::Method::is_write`]) and
/// the params carry none; otherwise unchanged.
pub fn with_op_id(method: &str, mut params: Value) -> Value {
    let write = crate::proto::Method::from_name(method).is_some_and(|m| m.is_write());
    if let (true, Value::Object(m)) = (write, &mut params) {
        m.entry("op_id").or_insert_with(|| json!(new_op_id()));
    }
    params
}
