//! `board claim --wait`: claim, retrying while no task is ready.

use std::time::Duration;

use serde_json::{json, Value};

use super::print;
use crate::proto::client::{self, Client};
use crate::proto::error::BoardResult;

/// `claim --wait`: see [`crate::proto::claim_wait::claim_waiting`].
pub(super) fn claim_wait(task: Option<i64>, timeout: Duration) -> BoardResult<(Value, String)> {
    let target = client::target()?;
    let claim = || Client::connect(&target, true)?.call("claim", json!({ "task": task }));
    let v = crate::proto::claim_wait::claim_waiting(claim, task.is_some(), timeout)?;
    let human = print::human("claim", &v);
    Ok((v, human))
}
