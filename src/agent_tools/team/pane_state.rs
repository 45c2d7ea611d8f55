//! What a pane records of its agent: the state its launcher sets (`ended`, or `setup-failed`
//! when the worktree's setup failed), and the start-time options it started with, held against
//! the slot's options now.

use super::slot::Slot;
use super::tmux;

/// `@board_state` of a pane whose worktree setup failed (the agent never started).
pub const SETUP_FAILED: &str = "setup-failed";

/// Whether a pane's agent has ended (its launcher said so, or tmux kept a dead pane), or never
/// started because its worktree's setup failed.
pub fn pane_ended(p: &tmux::Pane) -> bool {
    p.dead || p.state == "ended" || p.state == SETUP_FAILED
}

/// The options an agent takes only when it starts, recorded on its pane as JSON
/// `{"base","include","role","worktree"}` (`board up` names the running agents whose options
/// changed since). Members in that order, so the record reads as it always has; a member an
/// older record lacks reads as absent (null, `[]`, false).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct StartedWith {
    /// The worktree's base branch (None without a worktree, or from the project's `HEAD`).
    pub base: Option<String>,
    /// The worktree's `include` paths (empty without a worktree).
    pub include: Vec<String>,
    /// The agent's role.
    pub role: Option<String>,
    /// Whether it runs in a worktree of its own.
    pub worktree: bool,
}

/// The start-time options of `slot` now.
pub fn started_with(slot: &Slot) -> StartedWith {
    StartedWith {
        base: slot.worktree.as_ref().and_then(|wt| wt.base.clone()),
        include: slot
            .worktree
            .as_ref()
            .map(|wt| wt.include.clone())
            .unwrap_or_default(),
        role: slot.role.clone(),
        worktree: slot.worktree.is_some(),
    }
}

/// The start-time options (`worktree`, `base`, `include`, `role`) that changed since the running
/// agent of `pane` started; None when it is not running, nothing changed, or its pane has no
/// record.
pub(super) fn changed_options(pane: &tmux::Pane, slot: &Slot) -> Option<Vec<&'static str>> {
    if pane_ended(pane) {
        return None;
    }
    let then: StartedWith = serde_json::from_str(&pane.started_with).ok()?;
    let now = started_with(slot);
    let changed: Vec<&'static str> = [
        ("worktree", then.worktree != now.worktree),
        ("base", then.base != now.base),
        ("include", then.include != now.include),
        ("role", then.role != now.role),
    ]
    .into_iter()
    .filter_map(|(k, differs)| differs.then_some(k))
    .collect();
    (!changed.is_empty()).then_some(changed)
}
