//! The TUI's agent operations carried out (the I/O side of [`super::agents`]): tmux calls and
//! signals through [`crate::agent_tools::team`], the same code `board up` uses.

use std::path::Path;

use super::state::agents::{TeamAction, TeamOp};
use crate::agent_tools::team;
use crate::proto::client;
use crate::proto::config::Config;
use crate::proto::error::{BoardError, BoardResult};

/// Carries out `op`; the text for the footer, or the error's.
pub fn perform(op: &TeamOp) -> Result<String, String> {
    run(op).map_err(|e| e.message)
}

fn board_paths() -> BoardResult<(Config, crate::proto::config::Paths)> {
    let paths = client::target()?.paths.ok_or_else(|| {
        BoardError::usage("no board.toml found for this TUI; start agents with `board up`")
    })?;
    let cfg = Config::load(&paths.config).map_err(|e| BoardError::usage(e.to_string()))?;
    Ok((cfg, paths))
}

fn run(op: &TeamOp) -> BoardResult<String> {
    let slot = &op.slot;
    match op.action {
        TeamAction::Attach => {
            // The slot's tagged pane first: the board learns a new agent's pane a moment after
            // its session starts, and the snapshot may predate it.
            let tagged = board_paths().ok().and_then(|(cfg, paths)| {
                let session = team::session_name(&cfg, &paths.root);
                team::tmux::panes(&session)
                    .ok()?
                    .into_iter()
                    .find(|p| &p.slot == slot)
                    .map(|p| p.id)
            });
            let pane = tagged.or_else(|| op.pane.clone()).ok_or_else(|| {
                BoardError::usage(format!(
                    "{slot} has no tmux pane (not started by `board up`)"
                ))
            })?;
            team::attach(&pane)?;
            Ok(format!("showing {slot} (pane {pane})"))
        }
        // The board stops agents (`session.stop`, see `update::agents`), so that a stop ends an
        // agent the one way a closed pane does and finishes even if this TUI quits.
        TeamAction::Stop => Err(BoardError::internal(format!(
            "{slot}: a stop is sent to the board, not carried out by the TUI"
        ))),
        TeamAction::Start | TeamAction::Restart | TeamAction::Up => {
            let (cfg, paths) = board_paths()?;
            let exe = std::env::current_exe()
                .map_err(|e| BoardError::internal(format!("cannot find the board binary: {e}")))?
                .to_string_lossy()
                .to_string();
            let session = team::session_name(&cfg, &paths.root);
            let mut slots = team::slots(&cfg, &paths)?;
            if op.action == TeamAction::Up {
                team::check_commands(&slots, &exe)?;
                team::prepare_worktrees(&mut slots, &paths.root, Path::new(&exe))?;
                let panes = team::up(&session, &slots, &paths.root, &exe)?;
                let started = panes
                    .iter()
                    .filter(|p| p.outcome != team::Outcome::Running)
                    .count();
                return Ok(format!(
                    "started {started} of {} agents (the others were running)",
                    panes.len()
                ));
            }
            let mut one: Vec<team::Slot> = slots.drain(..).filter(|s| &s.name == slot).collect();
            if one.is_empty() {
                return Err(BoardError::usage(format!(
                    "{slot} is not an agent of board.toml ([[agents]]); start it with `board run`"
                )));
            }
            team::check_commands(&one, &exe)?;
            team::prepare_worktrees(&mut one, &paths.root, Path::new(&exe))?;
            let restart = op.action == TeamAction::Restart;
            let outcome = team::start_slot(&session, &one[0], &paths.root, &exe, restart)?;
            Ok(match (restart, outcome) {
                (true, _) => format!("restarted {slot}"),
                (false, team::Outcome::Restarted) => format!("started {slot} again in its pane"),
                (false, _) => format!("started {slot}"),
            })
        }
    }
}
