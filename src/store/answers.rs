//! Answers kept for retries (`op_id`): what an operation answered, as both backends save it in
//! `op_results` and give it back to a retry.

use serde_json::{json, Value};

use crate::proto::error::{BoardError, BoardResult, ErrorKind};

/// The answer an operation gives, as kept for retries: its result or its refusal.
pub type Answer = BoardResult<Value>;

/// The answer to keep for retries, as stored (`{"result": …}` or `{"error": …}`); `None` for
/// an `internal` or `unavailable` refusal, which a retry should run again rather than repeat.
pub(crate) fn encode(answer: &Answer) -> Option<String> {
    let saved = match answer {
        Ok(v) => json!({ "result": v }),
        Err(e) if matches!(e.kind, ErrorKind::Internal | ErrorKind::Unavailable) => return None,
        Err(e) => json!({ "error": e.to_json() }),
    };
    Some(saved.to_string())
}

/// A kept answer (see [`encode`]) as the operation gave it.
///
/// # Errors
/// `internal` when the stored text is not JSON.
pub(crate) fn decode(saved: &str) -> Answer {
    let v: Value = serde_json::from_str(saved)
        .map_err(|e| BoardError::internal(format!("a saved op answer is not JSON: {e}")))?;
    match v.get("error") {
        Some(e) => Err(BoardError::from_json(e)),
        None => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
    }
}
