//! `[review]` and `[git]` of `board.toml`: whether a finished task waits for a person's review,
//! and how the board brings its commit into the base branch (see `daemon::land`). Parsed as part
//! of [`Config`](crate::proto::config::Config).

use serde::{Deserialize, Serialize};

/// `[review]`: whether a holder's `board done` waits for an accept before it counts as done.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReviewSection {
    /// With review, `board done` moves the task to `review` with its commit; a person (or an
    /// agent session other than its last holder) accepts or rejects it (default false).
    pub required: bool,
}

/// How the board brings a task's commit into the base branch (`[git] land`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LandMode {
    /// Land nothing: the commit stays on its branch (a person merges it by hand).
    #[default]
    None,
    /// A merge commit of the base's head and the task's commit (`git merge --no-ff`).
    Merge,
    /// The task's commits replayed on the base's head (`git rebase`), then a fast-forward.
    Rebase,
    /// Only a fast-forward: the base must be an ancestor of the task's commit.
    FfOnly,
}

impl LandMode {
    /// The word `board.toml` spells it with.
    pub fn as_str(self) -> &'static str {
        match self {
            LandMode::None => "none",
            LandMode::Merge => "merge",
            LandMode::Rebase => "rebase",
            LandMode::FfOnly => "ff-only",
        }
    }
}

/// `[git]`: the base branch and how a finished task's commit lands on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GitSection {
    /// The branch a task's commit lands on (default `main`).
    pub base: String,
    /// How it lands: `merge`, `rebase`, `ff-only` or `none` (default: today's behaviour, the
    /// board lands nothing).
    pub land: LandMode,
}

impl Default for GitSection {
    fn default() -> Self {
        GitSection {
            base: "main".into(),
            land: LandMode::None,
        }
    }
}

impl GitSection {
    /// Whether a finished task goes through the board's land or review at all: then its `done`
    /// names a commit.
    pub fn lands(&self) -> bool {
        self.land != LandMode::None
    }
}
