//! `session.register`, `session.attach`, `session.exit`: the `board run` launcher's own calls.
//! They never renew claims (ARCHITECTURE.md rule 2: the launcher's liveness proves nothing about the
//! agent), and only the launcher that registered a session may attach or end it.

use super::table::HandleLaunch;
use crate::proto::methods::verb;
use std::sync::Arc;

use crate::daemon::identity::{hash_token, new_token};
use crate::daemon::state::Board;
use crate::daemon::state::OffReactor;
use crate::daemon::watchers::{watch, Role};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::methods::{SessionAttachParams, SessionExitParams, SessionRegisterParams};
use crate::proto::methods::{SessionAttachResult, SessionExitResult, SessionRegisterResult};

/// `session.register`: a new agent session with a fresh token; the caller is its launcher.
impl HandleLaunch for verb::SessionRegister {
    fn handle(
        board: &Arc<Board>,
        off: &OffReactor,
        launcher_pid: i32,
        p: &SessionRegisterParams,
    ) -> BoardResult<SessionRegisterResult> {
        if p.attention_ms.is_some_and(|ms| ms < 0) {
            return Err(
                BoardError::invalid("`attention_ms` must not be negative").with_code(-32602)
            );
        }
        let token = new_token();
        let start = crate::os::procfs::start_time(launcher_pid).ok();
        let launcher = start.map(|s| (launcher_pid, s));
        let (id, ev) = board.store(off).register_session_as(
            &p.name,
            p.role.as_deref(),
            &hash_token(&token),
            board.boot_id(),
            launcher,
            p.branch.as_deref(),
            p.attention_ms,
        )?;
        board.publish(ev);
        if let Some((pid, start)) = launcher {
            watch(board, off, &id, pid, start, Role::Launcher);
        }
        let name = board
            .store(off)
            .session_name(&id)?
            .unwrap_or_else(|| id.clone());
        Ok(SessionRegisterResult {
            agent: id,
            name,
            token,
        })
    }
}

/// Checks the caller is the launcher of `agent` and knows its token.
fn check_launcher(
    board: &Board,
    off: &OffReactor,
    launcher_pid: i32,
    agent: &str,
    token: &str,
) -> BoardResult<()> {
    let shown: String = agent.chars().take(64).collect();
    let row = board
        .store(off)
        .session(agent)?
        .ok_or_else(|| BoardError::not_found(format!("no agent session {shown:?}")))?;
    if row.token_hash != hash_token(token) || row.launcher.map(|l| l.0) != Some(launcher_pid) {
        return Err(BoardError::unauthorized(format!(
            "only the launcher of agent session {shown} may do this"
        )));
    }
    Ok(())
}

/// `session.attach`: records the agent's process (and pane) and watches them.
impl HandleLaunch for verb::SessionAttach {
    fn handle(
        board: &Arc<Board>,
        off: &OffReactor,
        launcher_pid: i32,
        p: &SessionAttachParams,
    ) -> BoardResult<SessionAttachResult> {
        check_launcher(board, off, launcher_pid, &p.agent, &p.token)?;
        let pid = i32::try_from(p.pid)
            .map_err(|_| BoardError::invalid(format!("`pid` {} is not a process id", p.pid)))?;
        let start = crate::os::procfs::start_time(pid)
            .map_err(|e| BoardError::not_found(format!("agent process {pid}: {e}")))?;
        let pane = match (
            p.pane.as_deref(),
            p.pane_pid.and_then(|pp| i32::try_from(pp).ok()),
        ) {
            (Some(id), Some(pp)) => crate::os::procfs::start_time(pp).ok().map(|s| (id, pp, s)),
            _ => None,
        };
        board
            .store(off)
            .attach_session(&p.agent, (pid, start), pane)?;
        // The terminal the agent runs on: input there is activity (`terminal`). Only a character
        // device path is kept: the board stats and writes to it.
        if let Some(tty) = p.tty.as_deref().filter(|t| t.starts_with("/dev/")) {
            board.store(off).set_session_tty(&p.agent, tty)?;
        }
        watch(board, off, &p.agent, pid, start, Role::Agent);
        if let Some((_, pp, ps)) = pane {
            watch(board, off, &p.agent, pp, ps, Role::Pane);
        }
        Ok(SessionAttachResult {
            agent: p.agent.clone(),
            pid: p.pid,
        })
    }
}

/// `session.exit`: the agent exited (or its pane closed); the session ends and its claims are
/// expelled at once (ARCHITECTURE.md rule 4).
impl HandleLaunch for verb::SessionExit {
    fn handle(
        board: &Arc<Board>,
        off: &OffReactor,
        launcher_pid: i32,
        p: &SessionExitParams,
    ) -> BoardResult<SessionExitResult> {
        check_launcher(board, off, launcher_pid, &p.agent, &p.token)?;
        let code = p.code.and_then(|c| i32::try_from(c).ok());
        let signal = p.signal.and_then(|s| i32::try_from(s).ok());
        let reason = match &p.reason {
            Some(r) => r.clone(),
            None => crate::daemon::lease::exit_reason(code, signal),
        };
        let ended = board.expel(off, &p.agent, &reason)?;
        Ok(SessionExitResult { ended, reason })
    }
}
