//! An agent's claims: `claim`, `done`, `release`, `note`, `renew`, `check`: their rows of the
//! method table, their parameters and their results.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::proto::glossary::{Generation, TaskId};

use super::shared::NoParams;
use crate::proto::views::{NoteView, TaskView};

/// This group's rows of the method table (see [`super`]): passed on to the next group's rows.
macro_rules! claims_rows {
    ([$next:ident $($rest:ident)*] $d:tt $($rows:tt)*) => { $next! { [$($rest)*] $d $($rows)*
        /// Agents only: claim the task, or without one the best ready task.
        Claim = "claim", Write, ClaimParams => ClaimResult;
        /// Agents only, as holder: finish the task (idempotent for one agent and generation).
        Done = "done", Write, DoneParams => DoneResult;
        /// Give a claimed task back (holder), or end anyone's claim (operator, `force`).
        Release = "release", Write, ReleaseParams => TaskResult;
        /// Add a note to a task, as its holder (fenced) or as an operator.
        Note = "note", Write + Cli, NoteParams => NoteResult;
        /// Agents only: renew all of the caller's live claims now.
        Renew = "renew", Read, RenewParams => RenewResult;
        /// Agents only: succeeds only if the caller holds a live claim (on task, at generation).
        Check = "check", Read, CheckParams => CheckResult;
    } };
}

/// `claim` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimParams {
    /// Task id; absent: the best ready task (highest priority, then oldest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskId>,
    /// Without `task`: the best ready task carrying this label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `done` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneParams {
    /// Id of the task you claimed and finished.
    pub task: TaskId,
    /// The `generation` claim returned (fencing token): refused when your claim is no longer
    /// that one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<Generation>,
    /// What you did, for the people and agents after you.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The commit that finishes the task (a full commit id; `board done --commit REV` resolves
    /// REV, default the HEAD of your branch). Needed when the board reviews or lands finished
    /// work (`[review] required`, `[git] land`): the task then waits in review with it, or lands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// `release` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseParams {
    /// Task id.
    pub task: TaskId,
    /// Require this claim generation (also with `force`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<Generation>,
    /// Why you give it back and what the next agent should know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Operator only: end whoever's claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
}

/// `note` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct NoteParams {
    /// Task id (you must hold its claim).
    pub task: TaskId,
    /// The note: a finding, a decision, a warning for the next agent.
    pub text: String,
    /// As holder: require this claim generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub generation: Option<Generation>,
}

/// `renew`: no parameters.
pub type RenewParams = NoParams;

/// `check` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckParams {
    /// Task id you believe you hold; leave it out to check that you hold any live claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskId>,
    /// The generation you hold it at (from claim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<Generation>,
}

/// `claim`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimResult {
    /// The task, now claimed by the caller.
    pub task: TaskView,
    /// The claim's generation (fencing token).
    pub generation: Generation,
    /// Until the claim lapses unless renewed (any call renews), ms.
    pub expires_in_ms: i64,
    /// True when the caller already held this live claim (same generation).
    pub already: bool,
}

/// `done`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneResult {
    /// The task after the call.
    pub task: TaskView,
    /// The generation it was finished at.
    pub generation: Generation,
    /// True when this repeated an earlier `done` of the same agent and generation.
    pub already: bool,
}

/// `note`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteResult {
    /// The note written.
    pub note: NoteView,
}

/// One live claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimView {
    /// Task id.
    pub task: TaskId,
    /// Its generation.
    pub generation: Generation,
    /// Until it lapses unless renewed, ms.
    pub expires_in_ms: i64,
}

/// `renew`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenewResult {
    /// The caller's live claims after renewal.
    pub claims: Vec<ClaimView>,
}

/// `check`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckResult {
    /// Task id of the live claim.
    pub task: TaskId,
    /// Its generation.
    pub generation: Generation,
    /// The caller's session id.
    pub holder: String,
    /// Until it lapses unless renewed, ms.
    pub expires_in_ms: i64,
}
