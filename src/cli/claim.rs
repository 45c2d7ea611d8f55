//! `board claim --wait`: claim, retrying while no task is ready.

use std::time::Duration;

use serde_json::{json, Value};

use super::print;
use crate::proto::client;
use crate::proto::error::BoardResult;

/// `claim --wait`: see [`crate::proto::claim_wait::claim_waiting`].
pub(super) fn claim_wait(
    task: Option<i64>,
    label: Option<&str>,
    timeout: Duration,
) -> BoardResult<(Value, String)> {
    let target = client::target()?;
    // Each attempt is a new request (a new op_id): a refusal is kept under its op_id.
    let claim = || {
        client::call_once(
            &target,
            true,
            "claim",
            json!({ "task": task, "label": label }),
        )
    };
    let v = crate::proto::claim_wait::claim_waiting(claim, task.is_some(), timeout)?;
    let human = print::human("claim", &v);
    Ok((v, human))
}
