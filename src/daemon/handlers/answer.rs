//! What a handler answers: its result as the JSON the wire carries ([`Answer`]), with the
//! claims the caller lost added.

use serde::Serialize;
use serde_json::Value;

use crate::proto::error::{BoardError, BoardResult};

/// What a request is answered (`dispatch::handle`): the result as JSON, except that a task list (`list`, `ready`) keeps
/// its tasks typed, to be written straight into the answer line.
///
/// Why: building a `Value` tree for 10 000 tasks (a map per task), printing it and freeing it
/// cost several times the SQL that read them, and held ~20 MB per full list while doing so.
/// Serializes as `value` with its `tasks` member (a placeholder) replaced by `tasks`.
#[derive(Debug)]
pub struct Answer {
    /// The result; for a task list, an object whose `tasks` member is only a placeholder.
    pub value: Value,
    /// The tasks of a task list.
    pub tasks: Option<Vec<crate::proto::methods::TaskView>>,
}

impl Answer {
    /// An answer that is JSON only (no task list).
    pub(super) fn plain(value: Value) -> Answer {
        Answer { value, tasks: None }
    }
}

impl Serialize for Answer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match (&self.value, &self.tasks) {
            (Value::Object(m), Some(tasks)) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    if k == "tasks" {
                        map.serialize_entry(k, tasks)?;
                    } else {
                        map.serialize_entry(k, v)?;
                    }
                }
                map.end()
            }
            (v, _) => v.serialize(s),
        }
    }
}

/// A task list's result as an [`Answer`]: the rest of it as JSON, the tasks kept aside.
pub(super) fn task_list(r: BoardResult<crate::proto::methods::TasksResult>) -> BoardResult<Answer> {
    let mut r = r?;
    let tasks = std::mem::take(&mut r.tasks);
    Ok(Answer {
        value: answer(Ok(r))?,
        tasks: Some(tasks),
    })
}

/// A typed handler result as the JSON the wire carries.
pub(super) fn answer<T: Serialize>(r: BoardResult<T>) -> BoardResult<Value> {
    r.and_then(|v| {
        serde_json::to_value(v).map_err(|e| BoardError::internal(format!("serializing: {e}")))
    })
}

/// An answer's JSON part (which the loss and inbox notices extend) and its typed tasks.
pub(super) fn split(
    a: BoardResult<Answer>,
) -> (
    BoardResult<Value>,
    Option<Vec<crate::proto::methods::TaskView>>,
) {
    match a {
        Ok(Answer { value, tasks }) => (Ok(value), tasks),
        Err(e) => (Err(e), None),
    }
}

/// Adds `lost` (every claim the caller lost since its previous call, see
/// [`crate::store::LostClaim`]) to an answer's result object or error data. Outside the op
/// scope on purpose: a replayed answer does not repeat losses already told.
pub(super) fn with_lost(
    out: BoardResult<Value>,
    lost: &[crate::store::LostClaim],
) -> BoardResult<Value> {
    if lost.is_empty() {
        return out;
    }
    let list = serde_json::to_value(lost).unwrap_or_default();
    match out {
        Ok(Value::Object(mut m)) => {
            m.insert("lost".into(), list);
            Ok(Value::Object(m))
        }
        Ok(v) => Ok(v),
        Err(mut e) => {
            // A refusal may name claims it lapsed itself (`renew`): earlier losses come first.
            let mut all = list.as_array().cloned().unwrap_or_default();
            if let Some(Value::Array(own)) = e.data.get("lost") {
                all.extend(own.iter().cloned());
            }
            e = e.with("lost", Value::Array(all));
            Err(e)
        }
    }
}
