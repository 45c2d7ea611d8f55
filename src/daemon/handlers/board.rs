//! The board and its sessions: `hello`, `status`, `agents`, `log`, `stop`, and an agent's own
//! `wait`/`resume`.

use super::table::{HandleRead, HandleWrite};
use crate::proto::methods::{verb, NoParams};
use std::sync::Arc;

use super::cx::{Cx, RequireAgent};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::methods::{
    ActivityKind, ActivityParams, AgentsParams, AgentsPruneParams, LogParams, SessionStopParams,
    WaitParams,
};
use crate::proto::methods::{
    ActivityResult, AgentsPruneResult, AgentsResult, HelloResult, LogResult, SessionStopResult,
    StatusResult, StopResult, WaitResult,
};
use crate::proto::sanitize::{one_line, truncate_width};
use crate::proto::{Method, PROTOCOL_VERSION};
use crate::store::{Events, Store};

/// `hello`: protocol version, board version and pid, and who the caller is.
impl HandleRead for verb::Hello {
    fn handle(cx: &Cx, _: &NoParams) -> BoardResult<HelloResult> {
        Ok(HelloResult {
            protocol: PROTOCOL_VERSION,
            version: env!("CARGO_PKG_VERSION").to_string(),
            pid: std::process::id(),
            caller: cx.caller.name().to_string(),
        })
    }
}

/// `status`: the board process and its settings.
impl HandleRead for verb::Status {
    fn handle(cx: &Cx, _: &NoParams) -> BoardResult<StatusResult> {
        Ok(crate::daemon::status::status(cx.board, cx.off))
    }
}

/// `wait`: the caller asks a person a question; it stays open, and the caller's claims are
/// kept, until it is answered, withdrawn or the session ends (ARCHITECTURE.md rule 12). `event` is the
/// newest event id once it is asked: its answer comes after it.
impl HandleRead for verb::Wait {
    fn handle(cx: &Cx, p: &WaitParams) -> BoardResult<WaitResult> {
        let agent = cx.caller.require_agent(Method::Wait)?;
        let mut store = cx.store();
        let (_, ev) = store.set_question(agent, Some(&p.question))?;
        let event = store.last_event_id()?;
        drop(store);
        cx.board.set_question_flag(agent, true);
        cx.board.publish(ev);
        Ok(WaitResult {
            waiting: Some(p.question.clone()),
            agent: agent.to_string(),
            event,
        })
    }
}

/// `resume`: the caller withdraws its open question (a permission prompt already ended in
/// `handle`, as on any call).
impl HandleRead for verb::Resume {
    fn handle(cx: &Cx, _: &NoParams) -> BoardResult<WaitResult> {
        let agent = cx.caller.require_agent(Method::Resume)?;
        let mut store = cx.store();
        let (_, ev) = store.set_question(agent, None)?;
        let event = store.last_event_id()?;
        drop(store);
        cx.board.set_question_flag(agent, false);
        cx.board.publish(ev);
        Ok(WaitResult {
            waiting: None,
            agent: agent.to_string(),
            event,
        })
    }
}

/// `activity`: what an agent CLI's hook reports (`board hook CLI EVENT`). Renewal already
/// happened in `handle`, as for any call.
impl HandleRead for verb::Activity {
    fn handle(cx: &Cx, p: &ActivityParams) -> BoardResult<ActivityResult> {
        let agent = cx.caller.require_agent(Method::Activity)?;
        match p.kind {
            ActivityKind::Renew => {}
            ActivityKind::Idle => {
                let reason = p.message.as_deref().unwrap_or("turn finished");
                let (_, ev) = cx.store().set_idle(agent, Some(reason))?;
                cx.board.set_idle_flag(agent, true);
                cx.board.publish(ev);
            }
            ActivityKind::Waiting => {
                let q = p.message.as_deref().ok_or_else(|| {
                    BoardError::invalid("`message` is required with kind \"waiting\"")
                        .with_code(-32602)
                })?;
                let (_, ev) = cx.store().set_waiting(agent, Some(q))?;
                cx.board.set_waiting_flag(agent, true);
                cx.board.publish(ev);
            }
        }
        Ok(ActivityResult { kind: p.kind })
    }
}

/// `agents`: live sessions and, for [`crate::proto::views::RECENT_ENDED_MS`], the last ended one of each name no
/// live session has; every session with `all`.
impl HandleRead for verb::Agents {
    fn handle(cx: &Cx, p: &AgentsParams) -> BoardResult<AgentsResult> {
        let b = Arc::clone(cx.board);
        let store = cx.store();
        let recent = (!p.all.unwrap_or(false)).then_some(crate::proto::views::RECENT_ENDED_MS);
        let agents = store.sessions(recent, &|row| crate::daemon::sweep::describe(&b, row))?;
        let ended = store.ended_session_count()?;
        Ok(AgentsResult {
            agents,
            ended,
            all: recent.is_none(),
        })
    }
}

/// `agents.prune`: operators only; forgets the sessions that ended at least `older_ms` ago.
///
/// Errors: `unauthorized` for an agent, `invalid` for a negative `older_ms`.
impl HandleWrite for verb::AgentsPrune {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        _: &mut Events,
        p: &AgentsPruneParams,
    ) -> BoardResult<AgentsPruneResult> {
        if cx.caller.agent().is_some() {
            return Err(BoardError::unauthorized(
                "only an operator can forget agent sessions",
            ));
        }
        let older_ms = p.older_ms.unwrap_or(0);
        if older_ms < 0 {
            return Err(BoardError::invalid("`older_ms` must not be negative").with_code(-32602));
        }
        let pruned = store.prune_sessions(older_ms)?;
        tracing::info!(count = pruned.len(), ids = ?pruned, "forgot ended agent sessions");
        Ok(AgentsPruneResult { pruned })
    }
}

/// `log`: the last `limit` events (default 200), or those after `after`.
impl HandleRead for verb::Log {
    fn handle(cx: &Cx, p: &LogParams) -> BoardResult<LogResult> {
        let limit = p.limit.unwrap_or(200).clamp(1, 100_000);
        let store = cx.store();
        let events = match p.after {
            Some(after) => store.events(after, limit)?,
            None => store.recent_events(limit)?,
        };
        Ok(LogResult { events })
    }
}

/// `session.stop`: operators only; a live agent session of this host (by id, or by the name of
/// one live session) gets SIGTERM, SIGKILL
/// after `[run] hangup_grace` ([`crate::daemon::stop_agent`]). Errors: `unauthorized` for an
/// agent caller, `not_found` for an unknown session or a process already gone, `usage` for an
/// ended session or one this board does not watch.
impl HandleRead for verb::SessionStop {
    fn handle(cx: &Cx, p: &SessionStopParams) -> BoardResult<SessionStopResult> {
        if cx.caller.agent().is_some() {
            return Err(BoardError::unauthorized(
                "only a person (an operator) can stop an agent session",
            ));
        }
        let shown = truncate_width(&one_line(&p.session), 80);
        let id = stop_target(cx, &p.session, &shown)?;
        let row = cx
            .store()
            .session(&id)?
            .ok_or_else(|| BoardError::not_found(format!("no agent session {shown}")))?;
        if row.ended_at.is_some() {
            return Err(BoardError::usage(format!(
                "agent session {shown} has ended already"
            )));
        }
        // A shared store lists every host's sessions; only this host's board can signal its own.
        let ours = cx.store().live_sessions()?.iter().any(|r| r.id == row.id);
        if !ours || row.boot_id != cx.board.boot_id() {
            return Err(BoardError::usage(format!(
                "agent session {shown} runs on another host: stop it from that host's board"
            )));
        }
        let (pid, start) = row.agent.ok_or_else(|| {
            BoardError::usage(format!("agent session {shown} has no agent process yet"))
        })?;
        let grace = cx.board.config().run.hangup_grace.0;
        crate::daemon::stop_agent::stop(pid, start, grace)?;
        Ok(SessionStopResult {
            session: row.id.clone(),
            pid: i64::from(pid),
            kill_after_ms: u64::try_from(grace.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

/// The session `session.stop` names: the name (`claude`) of a live session first, as `send`
/// finds its recipient (names are unique among live sessions, and an id such as `sh-9` may look
/// like another agent's name), else a session id.
fn stop_target(cx: &Cx, wanted: &str, shown: &str) -> BoardResult<String> {
    let store = cx.store();
    let live = store.sessions(Some(0), &|_| None)?;
    if let Some(named) = live
        .iter()
        .find(|s| s.ended_at.is_none() && s.name == wanted)
    {
        return Ok(named.id.clone());
    }
    if store.session(wanted)?.is_some() {
        return Ok(wanted.to_string());
    }
    Err(BoardError::not_found(format!("no agent session {shown}")))
}

/// `stop`: operators only; the board drains and exits after answering.
impl HandleRead for verb::Stop {
    fn handle(cx: &Cx, _: &NoParams) -> BoardResult<StopResult> {
        if cx.caller.agent().is_some() {
            return Err(BoardError::unauthorized(
                "only an operator can stop the board",
            ));
        }
        cx.board.shutdown().notify_one();
        Ok(StopResult::Stopping {
            stopping: true,
            pid: std::process::id(),
        })
    }
}
