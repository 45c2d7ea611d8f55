//! Messages that reach an idle agent, and the nudge of an agent that finished its turn while
//! holding a claim (ARCHITECTURE.md rule 12, last sentence).
//!
//! A message waits in the recipient's inbox and is told on its next board call (the `inbox`
//! notice on every answer). An agent idle at its prompt makes no call, so this task tells it:
//!
//! - **Turn-end hooks** (Claude Code and Codex `Stop`, Gemini CLI `AfterAgent`) deliver the
//!   messages themselves as the CLI's "continue" decision ([`crate::agent_tools::agent_hooks`]);
//!   this task covers what is left: messages that came after the turn ended, and CLIs whose
//!   hooks cannot continue a turn.
//! - **A CLI idle at its prompt in a tmux pane** (its hook said the turn finished): one short
//!   line is typed into the pane and sent, `board: 2 unread messages (from operator) — run
//!   board inbox`, which the CLI takes as its next prompt.
//! - **A shell at its prompt** (the shell is its terminal's foreground process group): the line
//!   is written to the terminal as output, like the lapse warning. Never typed: typed text is
//!   input to whatever reads the terminal (a shell in vi mode, a half-finished command line, a
//!   shell without interactive comments), while output cannot run anything, needs no tmux, and
//!   works in any terminal.
//!
//! Never while a person typed in that terminal in the last [`QUIET_MS`], never while the agent
//! waits for a human (typed text would answer a CLI's permission dialog), and once per batch:
//! an agent is told again only after a newer message (the inbox notice of a board call, or
//! reading the inbox, counts as told).
//!
//! Everything here runs on this task: the sweep, the handlers and the event publisher only
//! mark agents and wake it ([`Mailbox`](super::state::mailbox::Mailbox)), so typing into a slow
//! tmux never delays a request.

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::state::{Board, OffReactor};
use super::terminal;
use crate::os::procfs::ProcTable;
use crate::proto::error::BoardResult;
use crate::store::SessionRow;

/// A person typed in the agent's terminal less than this long ago (ms): nothing is shown there.
pub const QUIET_MS: i64 = 10_000;
/// How often (ms) a held-back delivery is looked at again.
const RETRY_MS: u64 = 500;
/// Programs that are a shell at their prompt when they are their terminal's foreground group.
const SHELLS: &[&str] = &[
    "bash", "zsh", "sh", "dash", "ash", "fish", "ksh", "mksh", "tcsh", "csh", "nu",
];

/// Runs the delivery task until the board stops.
pub async fn run(board: Arc<Board>) {
    loop {
        let waiting = !board.mailbox().pending().is_empty();
        if waiting {
            tokio::select! {
                _ = board.mailbox().woken() => {}
                _ = tokio::time::sleep(Duration::from_millis(RETRY_MS)) => {}
            }
        } else {
            board.mailbox().woken().await;
        }
        match board.blocking(deliver_once).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "message delivery failed"),
            Err(e) => tracing::warn!(error = %e, "message delivery task failed"),
        }
    }
}

/// How a line reaches an agent at its prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Channel {
    /// Typed into its tmux pane and sent (a CLI idle at its prompt).
    Pane {
        pane: String,
        server: Option<PathBuf>,
    },
    /// Written to its terminal as output (a shell at its prompt).
    Terminal(String),
}

/// One look at every agent with something to be told.
fn deliver_once(board: &Arc<Board>, off: &OffReactor) -> BoardResult<()> {
    let agents = board.mailbox().pending();
    if agents.is_empty() {
        return Ok(());
    }
    // One pass over /proc for all, and only when some agent is at its prompt.
    let table = std::cell::OnceCell::new();
    for agent in agents {
        let row = board.store(off).session(&agent)?;
        match row {
            Some(row) if row.ended_at.is_none() => deliver_to(board, off, &table, &row)?,
            _ => board.mailbox().forget(&agent),
        }
    }
    Ok(())
}

/// Tells one agent what it has to be told, when it is at its prompt and its terminal quiet.
fn deliver_to(
    board: &Board,
    off: &OffReactor,
    table: &std::cell::OnceCell<ProcTable>,
    row: &SessionRow,
) -> BoardResult<()> {
    let agent = row.id.as_str();
    let idle = board.is_idle(agent);
    let nudge = board.mailbox().nudge_line(agent);
    if nudge.is_some() && !idle {
        // It acted since: the nudge is moot.
        board.mailbox().drop_nudge(agent);
    }
    let nudge = nudge.filter(|_| idle);
    let unread = board.store(off).unread(agent)?;
    if unread.count == 0 {
        board.mailbox().told(agent);
    }
    let untold = unread.count > 0 && board.mailbox().untold(agent);
    if nudge.is_none() && !untold {
        return Ok(());
    }
    if board.is_waiting(agent) {
        return Ok(());
    }
    let tty = board.store(off).session_tty(agent)?;
    let Some(channel) = channel(row, idle, tty.as_deref()) else {
        if nudge.is_some() && row.pane.is_none() && tty.is_none() {
            // Nowhere to show it: the `warn` event was the nudge.
            board.mailbox().drop_nudge(agent);
        }
        return Ok(());
    };
    if let Some(tty) = &tty {
        let table = table.get_or_init(ProcTable::scan);
        if terminal::quiet_ms(board, table, row, tty) < QUIET_MS {
            return Ok(());
        }
    }
    let line = match (&nudge, untold) {
        (Some(n), true) => format!("{n}; {}", unread_line(&unread)),
        (Some(n), false) => n.clone(),
        (None, _) => unread_line(&unread),
    };
    show(&channel, &line, agent);
    board.mailbox().drop_nudge(agent);
    board.mailbox().told(agent);
    Ok(())
}

/// The one line that says `unread` is waiting: `board: 2 unread messages (from operator,
/// codex) — run board inbox`.
pub fn unread_line(unread: &crate::store::Unread) -> String {
    let n = unread.count;
    let from = unread.from.join(", ");
    format!(
        "board: {n} unread message{} (from {from}) — run board inbox",
        if n == 1 { "" } else { "s" }
    )
}

/// Where a line for `row` goes now: its pane when its CLI is idle at its prompt, its
/// terminal when it is a shell at its prompt; None when it is busy (or has neither).
fn channel(row: &SessionRow, idle: bool, tty: Option<&str>) -> Option<Channel> {
    let (pid, _) = row.agent?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    if shell_at_prompt(&stat) {
        return tty.map(|t| Channel::Terminal(t.to_string()));
    }
    if !idle {
        return None;
    }
    let (pane, _, _) = row.pane.as_ref()?;
    let server = row.launcher.and_then(|(l, _)| tmux_server_of(l));
    Some(Channel::Pane {
        pane: pane.clone(),
        server,
    })
}

/// Whether `/proc/PID/stat` text shows a shell that is its terminal's foreground process
/// group: at its prompt, not running a command (a foreground job has a group of its own).
fn shell_at_prompt(stat: &str) -> bool {
    let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
        return false;
    };
    let comm = &stat[open + 1..close.max(open + 1)];
    // After the name: state, ppid, pgrp, session, tty_nr, tpgid.
    let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    let (Some(pgrp), Some(tty), Some(tpgid)) = (f.get(2), f.get(4), f.get(5)) else {
        return false;
    };
    SHELLS.contains(&comm) && *tty != "0" && pgrp == tpgid
}

/// The tmux server (socket path) a `board run` launcher runs under: the first part of `TMUX`
/// in its environment (`/tmp/tmux-1000/default,123,0`). None outside tmux.
fn tmux_server_of(launcher: i32) -> Option<PathBuf> {
    let env = std::fs::read(format!("/proc/{launcher}/environ")).ok()?;
    env.split(|b| *b == 0).find_map(|var| {
        let v = var.strip_prefix(b"TMUX=")?;
        let socket = v.split(|b| *b == b',').next()?;
        (!socket.is_empty()).then(|| PathBuf::from(std::ffi::OsStr::from_bytes(socket)))
    })
}

/// Shows `line` on `channel`; a failure is logged (the message stays in the inbox).
fn show(channel: &Channel, line: &str, agent: &str) {
    match channel {
        Channel::Terminal(tty) => terminal::write_line(tty, line),
        Channel::Pane { pane, server } => {
            let text = crate::agent_tools::team::tmux::pane_text(line);
            if let Err(e) =
                crate::agent_tools::team::tmux::type_into_pane(server.as_deref(), pane, &text)
            {
                tracing::warn!(agent, pane, error = %e, "could not type into the agent's pane");
                return;
            }
        }
    }
    tracing::info!(agent, line, "told an agent at its prompt");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_is_at_its_prompt_only_while_it_is_the_foreground_group() {
        // pid (comm) state ppid pgrp session tty_nr tpgid …
        let at_prompt = "4242 (bash) S 4200 4242 4242 34816 4242 4194560 0";
        let running_make = "4242 (bash) S 4200 4242 4242 34816 4300 4194560 0";
        let claude = "5000 (claude) S 4200 5000 5000 34816 5000 4194560 0";
        let no_tty = "4242 (bash) S 4200 4242 4242 0 -1 4194560 0";
        assert!(shell_at_prompt(at_prompt));
        assert!(!shell_at_prompt(running_make));
        assert!(!shell_at_prompt(claude));
        assert!(!shell_at_prompt(no_tty));
        assert!(!shell_at_prompt("garbage"));
    }

    #[test]
    fn the_line_names_the_count_and_the_senders() {
        let u = crate::store::Unread {
            count: 2,
            from: vec!["operator".into(), "codex".into()],
        };
        assert_eq!(
            unread_line(&u),
            "board: 2 unread messages (from operator, codex) — run board inbox"
        );
    }
}
