//! A slot's pane: opening it, starting it again in place, going to it, stopping its agent.
//! Used by `board up` (through `up` of the `session` module) and by the TUI's agent keys.

use std::path::Path;

use super::pane_state::started_with;
use super::slot::Slot;
use super::tmux;
use crate::proto::error::BoardResult;

/// Name of the window holding the agent panes.
pub const AGENTS_WINDOW: &str = "agents";

/// The `sh -c` line of a slot's pane: `board run --name SLOT --hold -- CMD…`.
pub fn pane_command(slot: &Slot, board_bin: &str) -> String {
    let mut cmd = vec![
        tmux::shell_quote(board_bin),
        "run".into(),
        "--name".into(),
        tmux::shell_quote(&slot.name),
        "--hold".into(),
    ];
    if let Some(role) = &slot.role {
        cmd.push("--role".into());
        cmd.push(tmux::shell_quote(role));
    }
    if let Some(d) = slot.attention_after {
        cmd.push("--attention-after".into());
        cmd.push(format!("{}ms", d.0.as_millis()));
    }
    if let Some(setup) = &slot.setup {
        cmd.push("--setup".into());
        cmd.push(tmux::shell_quote(setup));
    }
    cmd.push("--".into());
    cmd.extend(slot.argv(board_bin).iter().map(|a| tmux::shell_quote(a)));
    cmd.join(" ")
}

/// The pane's record of its agent's start-time options (JSON).
fn started_record(slot: &Slot) -> String {
    // Serializing plain strings, bools and lists cannot fail.
    serde_json::to_string(&started_with(slot)).unwrap_or_default()
}

fn env_args(slot: &Slot, root: &Path) -> Vec<String> {
    // The pane runs with the PATH the command was checked against, not the tmux server's; and
    // finds its board by BOARD_ROOT, since a worktree may hold its own copy of board.toml.
    let mut args = vec!["-e".into(), format!("BOARD_ROOT={}", root.display())];
    if let Ok(path) = std::env::var("PATH") {
        args.extend(["-e".into(), format!("PATH={path}")]);
    }
    for (k, v) in &slot.profile.env {
        args.extend(["-e".into(), format!("{k}={v}")]);
    }
    args
}

fn pane_of(out: &str) -> (String, i64) {
    let mut parts = out.split_whitespace();
    let pane = parts.next().unwrap_or_default().to_string();
    let pid = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (pane, pid)
}

/// Opens a new pane for `slot` in the `agents` window (creating the window when `new_window`).
pub fn open_pane(
    session: &str,
    slot: &Slot,
    root: &Path,
    board_bin: &str,
    new_window: bool,
) -> BoardResult<(String, i64)> {
    let target = format!("={session}:{AGENTS_WINDOW}");
    let mut args: Vec<String> = if new_window {
        vec![
            "new-window".into(),
            "-d".into(),
            "-t".into(),
            format!("={session}:"),
            "-n".into(),
            AGENTS_WINDOW.into(),
        ]
    } else {
        vec![
            "split-window".into(),
            "-d".into(),
            "-t".into(),
            target.clone(),
        ]
    };
    args.extend([
        "-c".into(),
        slot.workdir.to_string_lossy().to_string(),
        "-P".into(),
        "-F".into(),
        "#{pane_id} #{pane_pid}".into(),
    ]);
    args.extend(env_args(slot, root));
    args.push(pane_command(slot, board_bin));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (pane, pid) = pane_of(&tmux::run(&refs)?);
    tmux::set_pane_option(&pane, "@board_slot", &slot.name)?;
    tmux::set_pane_option(&pane, "@board_started_with", &started_record(slot))?;
    if !new_window {
        // Keep room for the next split.
        let _ = tmux::run(&["select-layout", "-t", &target, "tiled"]);
    }
    Ok((pane, pid))
}

/// Starts `slot` again in pane `pane`, ending whatever runs there (its launcher sees the pane's
/// SIGHUP, reports the agent's exit and ends it).
pub fn respawn(
    pane: &str,
    slot: &Slot,
    root: &Path,
    board_bin: &str,
) -> BoardResult<(String, i64)> {
    // The new launcher marks the pane `running` itself; until then it must not read as ended.
    tmux::run(&["set-option", "-p", "-u", "-t", pane, "@board_state"])?;
    tmux::set_pane_option(pane, "@board_started_with", &started_record(slot))?;
    let mut args: Vec<String> = vec![
        "respawn-pane".into(),
        "-k".into(),
        "-t".into(),
        pane.into(),
        "-c".into(),
        slot.workdir.to_string_lossy().to_string(),
    ];
    args.extend(env_args(slot, root));
    args.push(pane_command(slot, board_bin));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    tmux::run(&refs)?;
    let pid = tmux::run(&["display-message", "-p", "-t", pane, "#{pane_pid}"])?;
    Ok((pane.to_string(), pid.parse().unwrap_or(0)))
}

/// Brings `pane` on screen: makes its window its session's current one and the pane the active
/// one, and switches the calling client there when it shows another session.
pub fn attach(pane: &str) -> BoardResult<()> {
    tmux::run(&["select-window", "-t", pane])?;
    tmux::run(&["select-pane", "-t", pane])?;
    if std::env::var_os("TMUX").is_some() {
        // Only a client exists when a terminal is attached; a detached session needs none.
        let _ = tmux::run(&["switch-client", "-t", pane]);
    }
    Ok(())
}
