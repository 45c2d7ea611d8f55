//! Review and land: `accept`, `reject`: their rows of the method table, their parameters and their
//! results.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::proto::glossary::TaskId;

use crate::proto::views::TaskView;

/// This group's rows of the method table (see [`super`]): passed on to the next group's rows.
macro_rules! review_rows {
    ([$next:ident $($rest:ident)*] $d:tt $($rows:tt)*) => { $next! { [$($rest)*] $d $($rows)*
        /// Accept a task in review: the board lands its commit on the base branch (`[git] land`),
        /// then it is done. Never by the task's last holder.
        Accept = "accept", Land + Cli, AcceptParams => AcceptResult;
        /// Reject a task in review: it goes back to ready with the note. Never by its last holder.
        Reject = "reject", Land + Cli, RejectParams => TaskResult;
    } };
}

/// `accept` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct AcceptParams {
    /// Id of the task in review.
    pub task: TaskId,
    /// Why it is good, kept as a note on the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub note: Option<String>,
}

/// `reject` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct RejectParams {
    /// Id of the task in review.
    pub task: TaskId,
    /// What is wrong and what to do instead: the next holder reads it.
    #[arg(long)]
    pub note: String,
}

/// `accept`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptResult {
    /// The task after the call: `done`, with `commit` and `landed`.
    pub task: TaskView,
    /// The base branch's head after the land (full commit id); None when the board lands
    /// nothing (`[git] land = "none"`).
    pub landed: Option<String>,
    /// The base branch it landed on.
    pub base: String,
}
