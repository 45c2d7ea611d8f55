//! The tmux session of a team: its name, `board up` opening or completing it, and one slot
//! started in it.

use std::path::Path;

use super::commands::check_commands;
use super::pane_state::{changed_options, pane_ended, SETUP_FAILED};
use super::panes::{open_pane, respawn, AGENTS_WINDOW};
use super::slot::Slot;
use super::tmux;
use crate::proto::config::Config;
use crate::proto::error::{BoardError, BoardResult};

/// Name of the window holding the TUI.
pub const BOARD_WINDOW: &str = "board";

/// The tmux session name of a board: its name (characters tmux reserves replaced) and a short
/// hash of its root (the first 4 hex digits of SHA-256, [`crate::proto::config::path_hash`]), so two
/// projects with the same name never share (or end) a session, whatever toolchain built it.
pub fn session_name(cfg: &Config, root: &Path) -> String {
    let n: String = cfg
        .board
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let n = if n.is_empty() { "board".into() } else { n };
    format!("{n}-{}", crate::proto::config::path_hash(root, 4))
}

/// What happened to one slot in [`up`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// A new pane was opened.
    Started,
    /// An ended pane was started again in place.
    Restarted,
    /// Its agent was running; left alone.
    Running,
}

impl Outcome {
    /// `started`, `restarted`, `running`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Started => "started",
            Outcome::Restarted => "restarted",
            Outcome::Running => "running",
        }
    }
}

/// What [`up`] reports of one slot: one element of `board up`'s `panes`. Shape:
/// `{"agent_name","profile","pane","pid","outcome"}`, and `branch` (with a worktree),
/// `needs_restart` (the start-time options that changed since its running agent started),
/// `setup` (the setup that runs first in a started pane), `setup_had_failed` only when they
/// apply.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PaneReport {
    /// The slot's name.
    pub agent_name: String,
    /// Its profile.
    pub profile: String,
    /// tmux pane id.
    pub pane: String,
    /// The pane's process id.
    pub pid: i64,
    /// Started, restarted or left running.
    pub outcome: Outcome,
    /// Its worktree's branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The start-time options that changed since its running agent started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_restart: Option<Vec<String>>,
    /// The worktree setup that runs first in a pane started now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    /// A pane started now whose setup had failed before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub setup_had_failed: bool,
}

/// Opens the session `session` or completes it: the TUI window if missing, and for every slot
/// without a pane a new pane, for every slot whose agent ended its pane started again in place.
/// Running agents are left alone. Returns one [`PaneReport`] per slot.
///
/// Errors: a missing command (before anything is created), tmux failures. A session this call
/// created is removed again when a later step fails.
pub fn up(
    session: &str,
    slots: &[Slot],
    root: &Path,
    board_bin: &str,
) -> BoardResult<Vec<PaneReport>> {
    check_commands(slots, board_bin)?;
    let created = !tmux::has_session(session);
    let root_s = root.to_string_lossy().to_string();
    if created {
        let tui = format!("{} tui", tmux::shell_quote(board_bin));
        tmux::run(&[
            "new-session",
            "-d",
            "-s",
            session,
            "-n",
            BOARD_WINDOW,
            "-c",
            &root_s,
            "-x",
            "200",
            "-y",
            "50",
            &tui,
        ])?;
    }
    let res = complete(session, slots, root, board_bin);
    if res.is_err() && created {
        // Leave nothing half-built behind; agents already started are expelled as their panes
        // close.
        let _ = tmux::run(&["kill-session", "-t", &format!("={session}")]);
    }
    res
}

/// The rest of [`up`]: the TUI window and every slot's pane, once the session exists.
fn complete(
    session: &str,
    slots: &[Slot],
    root: &Path,
    board_bin: &str,
) -> BoardResult<Vec<PaneReport>> {
    let existing = tmux::panes(session)?;
    let root_s = root.to_string_lossy().to_string();
    if !existing.iter().any(|p| p.window == BOARD_WINDOW) {
        let tui = format!("{} tui", tmux::shell_quote(board_bin));
        tmux::run(&[
            "new-window",
            "-d",
            "-b",
            "-t",
            &format!("={session}:"),
            "-n",
            BOARD_WINDOW,
            "-c",
            &root_s,
            &tui,
        ])?;
    }
    // The TUI's notifications (OSC 9 / OSC 777) reach the outer terminal only through tmux's
    // passthrough, which is off by default; a tmux before 3.3 has no such option (ignored).
    let _ = tmux::run(&[
        "set-option",
        "-w",
        "-t",
        &format!("={session}:{BOARD_WINDOW}"),
        "allow-passthrough",
        "on",
    ]);
    let mut has_agents_window = existing.iter().any(|p| p.window == AGENTS_WINDOW);
    let mut out = Vec::new();
    for slot in slots {
        let pane = existing.iter().find(|p| p.slot == slot.name);
        let (outcome, id, pid) = match pane {
            Some(p) if !pane_ended(p) => (Outcome::Running, p.id.clone(), p.pid),
            Some(p) => {
                let (id, pid) = respawn(&p.id, slot, root, board_bin)?;
                (Outcome::Restarted, id, pid)
            }
            None => {
                let (id, pid) = open_pane(session, slot, root, board_bin, !has_agents_window)?;
                has_agents_window = true;
                (Outcome::Started, id, pid)
            }
        };
        let starting = outcome != Outcome::Running;
        out.push(PaneReport {
            agent_name: slot.name.clone(),
            profile: slot.profile_name.clone(),
            pane: id,
            pid,
            outcome,
            branch: slot.worktree.as_ref().map(|wt| wt.branch.clone()),
            needs_restart: pane
                .and_then(|p| changed_options(p, slot))
                .map(|c| c.into_iter().map(String::from).collect()),
            setup: slot.setup.clone().filter(|_| starting),
            setup_had_failed: starting && pane.is_some_and(|p| p.state == SETUP_FAILED),
        });
    }
    if has_agents_window {
        tmux::run(&[
            "select-layout",
            "-t",
            &format!("={session}:{AGENTS_WINDOW}"),
            "tiled",
        ])?;
    }
    Ok(out)
}

/// Starts `slot` in session `session`: a new pane when it has none (the whole session when
/// there is none), its pane again when its agent ended, or (with `restart`) even while it runs.
///
/// Errors: `usage` when the agent runs and `restart` is false; a missing command; tmux failures.
pub fn start_slot(
    session: &str,
    slot: &Slot,
    root: &Path,
    board_bin: &str,
    restart: bool,
) -> BoardResult<Outcome> {
    check_commands(std::slice::from_ref(slot), board_bin)?;
    if !tmux::has_session(session) {
        up(session, std::slice::from_ref(slot), root, board_bin)?;
        return Ok(Outcome::Started);
    }
    let panes = tmux::panes(session)?;
    match panes.iter().find(|p| p.slot == slot.name) {
        Some(p) if !pane_ended(p) && !restart => Err(BoardError::usage(format!(
            "agent {} is running; restart it instead",
            slot.name
        ))),
        Some(p) => {
            respawn(&p.id, slot, root, board_bin)?;
            Ok(Outcome::Restarted)
        }
        None => {
            let new_window = !panes.iter().any(|p| p.window == AGENTS_WINDOW);
            open_pane(session, slot, root, board_bin, new_window)?;
            let _ = tmux::run(&[
                "select-layout",
                "-t",
                &format!("={session}:{AGENTS_WINDOW}"),
                "tiled",
            ]);
            Ok(Outcome::Started)
        }
    }
}
