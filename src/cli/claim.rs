//! `board claim --wait`: claim, retrying while no task is ready.

use std::time::Duration;

use serde_json::Value;

use super::print;
use crate::proto::client;
use crate::proto::error::BoardResult;
use crate::proto::methods::{Call, ClaimParams, TaskId};

/// `claim --wait`: see [`crate::proto::claim_wait::claim_waiting`].
pub(super) fn claim_wait(
    task: Option<TaskId>,
    label: Option<&str>,
    timeout: Duration,
) -> BoardResult<(Value, String)> {
    let target = client::target()?;
    // Each attempt is a new request (a new op_id): a refusal is kept under its op_id.
    let call = Call::Claim(ClaimParams {
        task,
        label: label.map(String::from),
    });
    let claim = || client::send_once(&target, true, call.clone());
    let v = crate::proto::claim_wait::claim_waiting(claim, task.is_some(), timeout)?;
    let human = print::human(call.method(), &v);
    Ok((v, human))
}
