//! The team's slots as `board.toml` configures them: one per pane of every `[[agents]]` entry,
//! each with its profile loaded and, with `worktree = true`, its own worktree made and furnished.

use std::path::{Path, PathBuf};

use super::{worktree, worktree_files};
use crate::agent_tools::profile::Profile;
use crate::proto::config::{Config, Paths};
use crate::proto::error::{BoardError, BoardResult};

/// Most agent panes `board up` opens (tmux needs room for each in one window).
pub const MAX_PANES: u32 = 16;

/// One agent pane of the team, as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// Stable display name and requested session name.
    pub name: String,
    /// The profile's name (`claude` → `agents/claude.toml` or the built-in one).
    pub profile_name: String,
    /// The loaded profile.
    pub profile: Profile,
    /// Directory the agent starts in: the project root, or its place in the slot's worktree
    /// once [`prepare_worktrees`] made it.
    pub workdir: PathBuf,
    /// The slot's own git worktree and branch (`worktree = true`).
    pub worktree: Option<worktree::Worktree>,
    /// The worktree's `setup` command, when it is still to run before the agent starts (set by
    /// [`prepare_worktrees`]).
    pub setup: Option<String>,
    /// The project root (the profiles' `{root}`).
    pub root: PathBuf,
    /// The board's data directory (where the `shell` profile's rc file is).
    pub data_dir: PathBuf,
    /// Needs attention when no hook or board call came this long after the start: the entry's
    /// `attention_after`, else the profile's.
    pub attention_after: Option<crate::proto::config::Dur>,
    /// The entry's `role`, passed to `board run --role`.
    pub role: Option<String>,
}

impl Slot {
    /// The agent's command line (`board_bin` fills the profile's `{board}`).
    pub fn argv(&self, board_bin: &str) -> Vec<String> {
        self.profile.argv(board_bin, &self.root, &self.data_dir)
    }
}

/// The slot names of one `[[agents]]` entry: `name`, then `name-2`, `name-3`, … for `count` > 1.
pub fn slot_names(entry: &crate::proto::config::AgentEntry) -> Vec<String> {
    (1..=entry.count)
        .map(|i| {
            if i == 1 {
                entry.name.clone()
            } else {
                format!("{}-{i}", entry.name)
            }
        })
        .collect()
}

/// Creates (or keeps) the worktree of every slot that has one, furnishes it (`include` files,
/// the agent CLI's settings calling `board_bin`, see [`worktree_files::furnish`]) and moves the
/// slot's working directory into it. `root` is the board's project root. Returns the `include`
/// paths the project lacks, each once.
///
/// Errors (`usage`): no git repository or no commit at `root`, a `base` naming no commit, git
/// refusing, a settings file that cannot take the board's settings.
pub fn prepare_worktrees(
    slots: &mut [Slot],
    root: &Path,
    board_bin: &Path,
) -> BoardResult<Vec<String>> {
    let mut missing: Vec<String> = Vec::new();
    for s in slots.iter_mut() {
        if let Some(wt) = &s.worktree {
            s.workdir = worktree::ensure(root, wt)?;
            let f = worktree_files::furnish(root, wt, &s.workdir, &s.profile, board_bin)?;
            s.setup = f.setup;
            for m in f.missing {
                if !missing.contains(&m) {
                    missing.push(m);
                }
            }
        }
    }
    Ok(missing)
}

/// The slots of `cfg`, each profile loaded.
///
/// Errors (`usage`): a profile that cannot be loaded, two slots with one name, more than
/// [`MAX_PANES`] panes.
pub fn slots(cfg: &Config, paths: &Paths) -> BoardResult<Vec<Slot>> {
    let total: u32 = cfg.agents.iter().map(|a| a.count).sum();
    if total > MAX_PANES {
        return Err(BoardError::usage(format!(
            "board.toml asks for {total} agent panes; `board up` opens at most {MAX_PANES}"
        )));
    }
    let mut out: Vec<Slot> = Vec::new();
    for entry in &cfg.agents {
        let profile = Profile::load(&paths.root, &entry.profile)
            .map_err(|e| BoardError::usage(e.to_string()))?;
        for name in slot_names(entry) {
            if out.iter().any(|s| s.name == name) {
                return Err(BoardError::usage(format!(
                    "board.toml names two agent panes {name:?}; give each [[agents]] entry its own name"
                )));
            }
            let worktree = entry
                .worktree
                .then(|| worktree::Worktree::for_entry(&paths.data_dir, &name, entry));
            out.push(Slot {
                name,
                profile_name: entry.profile.clone(),
                profile: profile.clone(),
                workdir: paths.root.clone(),
                worktree,
                setup: None,
                root: paths.root.clone(),
                data_dir: paths.data_dir.clone(),
                attention_after: entry.attention_after.or(profile.attention_after),
                role: entry.role.clone(),
            });
        }
    }
    Ok(out)
}
