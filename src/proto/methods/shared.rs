//! What several methods share: no parameters, a task as the result, and the envelope's
//! members every answer may carry (`lost`, `inbox`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::proto::glossary::{Generation, TaskId};

use crate::proto::views::TaskView;

/// No parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// `add`, `edit`, `cancel`, `release`: the task after the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskResult {
    /// The task.
    pub task: TaskView,
}

/// Added to an agent's answers (results and error data) while it has unread messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "inbox_notice")]
pub struct InboxNotice {
    /// How many unread messages (at least 1).
    pub unread: i64,
    /// Senders, each once, oldest first.
    pub from: Vec<String>,
    /// Always `board inbox`.
    pub read_with: String,
}

/// A claim its holder lost without asking (lapse, expel, force-release, cancel, new epoch), as
/// reported on that agent's next call (`lost` in the answer). Shape on the wire:
/// `{"task":3,"generation":2,"end":"lapse","reason":"lease expired …","ended_at":"…"}`.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "lost_claim")]
pub struct LostClaim {
    /// Task id.
    pub task: TaskId,
    /// The generation the claim had.
    pub generation: Generation,
    /// How it ended: `lapse`, `expel`, `release` (forced by an operator), `cancel`, `epoch`.
    pub end: crate::proto::glossary::ClaimEnd,
    /// Why, in words.
    pub reason: Option<String>,
    /// When (RFC 3339 UTC).
    pub ended_at: Option<String>,
}
