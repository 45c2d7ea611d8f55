//! Request dispatch: authenticates the caller, renews its claims, and runs the one handler of
//! the request's method, routed by [`super::table`] (generated from the method table).
//!
//! A write ([`Method::is_write`]) with an `op_id` runs inside [`Store::with_op`]: the lookup of an
//! earlier answer, the operation (with the rejection it may record) and its saved answer are one
//! transaction, so a retry is applied once even when two attempts race. Events are published
//! after that transaction commits.

use std::sync::Arc;

use serde_json::Value;

use super::answer::{split, task_list, with_lost, Answer};
use super::cx::Cx;
use super::table::{launch, read, write, HandleRead};
use super::{claims, review, team};
use crate::daemon::identity::{authenticate, Caller, Peer};
use crate::daemon::lease::RenewSource;
use crate::daemon::state::{Board, OffReactor};
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::methods::{verb, Access, ActivityKind, ActivityParams};
use crate::proto::{Call, Method, Request};
use crate::store::{Events, Store};

/// Answers one request (everything but `subscribe`, which the server streams), on the blocking
/// pool (`off`).
///
/// A write whose outcome the store left unknown (it went away around the commit, see
/// [`crate::store::OUTCOME_UNKNOWN`]) is never answered as failed: the board asks the store
/// again with the same `op_id` (which finds the saved answer, or applies the write now that it
/// surely was not) for up to [`RESOLVE_FOR`]; when the store is still away by then, the answer
/// is `unavailable` marked `answer_lost`, which every client asks again with the same `op_id`.
pub fn handle(
    board: &Arc<Board>,
    off: &OffReactor,
    req: &Request,
    peer: Peer,
) -> BoardResult<Answer> {
    let first = handle_once(board, off, req, peer);
    settle(board, off, req, peer, first)
}

/// `first`, the answer of one attempt of `req`, told to the store's health and, for a write
/// whose outcome is unknown, resolved by its `op_id` (see [`handle`]).
pub(super) fn settle(
    board: &Arc<Board>,
    off: &OffReactor,
    req: &Request,
    peer: Peer,
    first: BoardResult<Answer>,
) -> BoardResult<Answer> {
    note_store_health(board, req.method, &first);
    match &first {
        Err(e) if req.identity.op_id.is_some() && unknown_outcome(e) => {
            tracing::warn!(error = %e.message, method = %req.method, "a write's outcome is unknown; resolving it by its op_id");
            resolve(board, off, req, peer, first)
        }
        _ => first,
    }
}

/// What a request's answer says of the shared store: a failure to reach it starts (or goes on
/// with) the outage that `status` and the TUI show; an answer of a method that needs the store
/// ends it at once, without waiting for the next heartbeat. `status`, `hello` and `stop` are
/// answered without the store and say nothing.
fn note_store_health(board: &Board, method: Method, out: &BoardResult<Answer>) {
    if matches!(method, Method::Status | Method::Hello | Method::Stop) {
        return;
    }
    match out {
        Err(e) if e.data.contains_key(crate::proto::error::STORE_DOWN) => {
            board.set_store_unreachable(Some(e.message.clone()));
        }
        Ok(_) if board.store_unreachable().is_some() => board.set_store_unreachable(None),
        _ => {}
    }
}

/// How long the board asks the store again for a write of unknown outcome before it leaves
/// that to the client: well under the clients' answer timeout (5 s by default).
pub const RESOLVE_FOR: std::time::Duration = std::time::Duration::from_millis(2_500);

fn unknown_outcome(e: &BoardError) -> bool {
    e.kind == ErrorKind::Unavailable && e.data.contains_key(crate::store::OUTCOME_UNKNOWN)
}

/// Asks again (same request, same `op_id`) until the store answers something else than
/// `unavailable` or [`RESOLVE_FOR`] has passed; see [`handle`]. Claims the caller lost that an
/// earlier attempt told in its error are kept in the answer.
fn resolve(
    board: &Arc<Board>,
    off: &OffReactor,
    req: &Request,
    peer: Peer,
    first: BoardResult<Answer>,
) -> BoardResult<Answer> {
    let deadline = std::time::Instant::now() + RESOLVE_FOR;
    let mut told = Vec::new();
    let mut last = first;
    loop {
        let e = match last {
            Err(e) if e.kind == ErrorKind::Unavailable => e,
            other => return with_told(other, told),
        };
        if let Some(Value::Array(lost)) = e.data.get("lost") {
            told.extend(lost.iter().cloned());
        }
        if std::time::Instant::now() >= deadline {
            tracing::warn!(error = %e.message, "a write's outcome is still unknown; the client asks again");
            let e = e.with(crate::proto::client::ANSWER_LOST, true);
            return match told.is_empty() {
                true => Err(e),
                false => Err(e.with("lost", Value::Array(told))),
            };
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        last = handle_once(board, off, req, peer);
        note_store_health(board, req.method, &last);
        if let Err(e) = &mut last {
            if e.kind == ErrorKind::Unavailable && !unknown_outcome(e) {
                // This attempt surely did not apply it, but an earlier one may have.
                *e = e.clone().with(crate::store::OUTCOME_UNKNOWN, true);
            }
        }
    }
}

/// `out` with the claims `told` (lost, told by an earlier attempt's error) in front of its own.
fn with_told(out: BoardResult<Answer>, told: Vec<Value>) -> BoardResult<Answer> {
    if told.is_empty() {
        return out;
    }
    let merge = |own: Option<&Value>| {
        let mut all = told.clone();
        if let Some(Value::Array(own)) = own {
            all.extend(own.iter().cloned());
        }
        Value::Array(all)
    };
    match out {
        Ok(mut a) => {
            if let Value::Object(m) = &mut a.value {
                let all = merge(m.get("lost"));
                m.insert("lost".into(), all);
            }
            Ok(a)
        }
        Err(e) => {
            let all = merge(e.data.get("lost"));
            Err(e.with("lost", all))
        }
    }
}

/// One attempt of [`handle`].
fn handle_once(
    board: &Arc<Board>,
    off: &OffReactor,
    req: &Request,
    peer: Peer,
) -> BoardResult<Answer> {
    match req.method.access() {
        Access::Launcher => return launch_call(board, off, &req.call, peer).map(Answer::plain),
        Access::Stream => {
            return Err(BoardError::invalid(format!(
                "`{}` is answered by the connection itself",
                req.method
            ))
            .with_code(-32601))
        }
        Access::Read | Access::Write | Access::Land => {}
    }
    let caller = match authenticate(board, off, &req.identity, peer) {
        // The shared store is down, so nobody can be told apart: `status` and the handshake
        // before it are answered anyway, from what the board knows without the store.
        Err(e)
            if matches!(req.method, Method::Status | Method::Hello)
                && e.data.contains_key(crate::proto::error::STORE_DOWN) =>
        {
            Caller::Operator
        }
        other => other.map_err(|e| refuse_ended_session(board, off, req, e))?,
    };
    handle_as(board, off, req, &caller)
}

/// A request of a `Read` or `Write` method from `caller`, already authenticated: its activity,
/// renewal and lost claims, then its handler.
pub(super) fn handle_as(
    board: &Arc<Board>,
    off: &OffReactor,
    req: &Request,
    caller: &Caller,
) -> BoardResult<Answer> {
    if let Caller::Agent(a) = caller {
        note_agent_request(board, off, req, a)?;
    }
    // Claims this agent lost without asking (lapse, expel, force-release, cancel), each told
    // once, on its next call, whatever that call is (`hello` is the handshake that clients
    // send before every call and whose answer they do not show).
    let cx = Cx {
        board,
        caller,
        now: board.now_checked(off)?,
        off,
    };
    if let Some(out) = claims::at_once(&cx, req)? {
        return out.map(Answer::plain);
    }
    let lost = match caller {
        Caller::Agent(a) if req.method != Method::Hello => board.store(off).take_lost(a)?,
        _ => Vec::new(),
    };
    // A land (`accept`, `reject`) does git work before its one store transition, so it runs
    // outside the write scope, as a read does.
    if matches!(req.method.access(), Access::Read | Access::Land) {
        let (value, tasks) = match &req.call {
            Call::List(p) => split(task_list(verb::List::handle(&cx, p))),
            Call::Ready(p) => split(task_list(verb::Ready::handle(&cx, p))),
            call => (read(&cx, call), None),
        };
        let mut out = with_lost(value, &lost);
        team::add_inbox_notice(board, off, req.method, caller, &mut out);
        return out.map(|value| Answer { value, tasks });
    }
    let out = write_in_scope(&cx, req)?;
    let out = land_after_done(&cx, &req.call, out);
    let mut out = with_lost(out, &lost);
    team::add_inbox_notice(board, off, req.method, caller, &mut out);
    out.map(Answer::plain)
}

/// What a request of agent session `agent` says before its handler runs: it ends a permission
/// prompt or a finished turn it is past, records the first contact, and renews its claims
/// (ARCHITECTURE.md rule 2).
fn note_agent_request(
    board: &Board,
    off: &OffReactor,
    req: &Request,
    agent: &str,
) -> BoardResult<()> {
    // A hook saying "waiting" or "idle" must not end that very state; anything else the
    // agent does shows it is past it. This is the permission prompt only: a question
    // (`board wait`) ends by an answer, a withdrawal or the session's end, never by
    // activity (ARCHITECTURE.md rule 12).
    let activity = match &req.call {
        Call::Activity(p) => Some(p.kind),
        _ => None,
    };
    // `hello` is the handshake before every call, a hook's included: it says nothing about
    // what the agent does (a hook's `hello` ending a permission prompt logged a spurious
    // resume and wait in the middle of the dialog).
    let hello = req.method == Method::Hello;
    let keeps_waiting =
        hello || req.method == Method::Wait || activity == Some(ActivityKind::Waiting);
    if !keeps_waiting && board.is_waiting(agent) {
        let (_, ev) = board.store(off).set_waiting(agent, None)?;
        board.set_waiting_flag(agent, false);
        board.publish(ev);
    }
    if !hello && activity != Some(ActivityKind::Idle) && board.is_idle(agent) {
        board.store(off).set_idle(agent, None)?;
        board.set_idle_flag(agent, false);
    }
    board.note_contact(off, agent)?;
    let source = match &req.call {
        Call::Activity(ActivityParams { hook: Some(h), .. }) => RenewSource::Hook(h),
        _ if req.method == Method::Hello => RenewSource::Handshake,
        _ => RenewSource::Call(req.method.name()),
    };
    board.renew_on_request(off, agent, &source)
}

/// Runs the handler of a write in one store scope (inside the op scope of its `op_id`, if
/// any), with the rejection it may record, then publishes the events of the attempt that
/// committed. Errors: the op scope's own (the handler's error is the answer).
fn write_in_scope(cx: &Cx, req: &Request) -> BoardResult<BoardResult<Value>> {
    let (board, caller) = (cx.board, cx.caller);
    let mut events = Vec::new();
    let out = {
        let mut store = board.store(cx.off);
        let mut run = |store: &mut dyn Store| {
            // A store may run the scope again after a conflict it rolled back: only the events
            // of the attempt that committed count.
            events.clear();
            let out = write(cx, store, &mut events, &req.call);
            if let Err(e) = &out {
                record_rejection(store, &mut events, &req.call, caller.agent(), e);
            }
            out
        };
        match req.identity.op_id.as_deref() {
            Some(op) => store.with_op(caller.name(), op, &mut run)?,
            None => run(&mut **store),
        }
    };
    board.publish(events);
    Ok(out)
}

/// A `done` that left its task in review while review is off: the board lands it now, outside
/// the write scope, and the answer carries the task as it is after the land (or the refusal).
fn land_after_done(cx: &Cx, call: &Call, out: BoardResult<Value>) -> BoardResult<Value> {
    if !matches!(call, Call::Done(_)) {
        return out;
    }
    let mut value = out?;
    let Some(task) = value
        .get("task")
        .and_then(|t| serde_json::from_value::<crate::proto::methods::TaskView>(t.clone()).ok())
    else {
        return Ok(value);
    };
    let landed = review::land_after_done(cx, &task)?;
    if let Value::Object(m) = &mut value {
        m.insert(
            "task".into(),
            serde_json::to_value(landed).unwrap_or_default(),
        );
    }
    Ok(value)
}

/// A launcher call: its handler, for the launcher the kernel names as the caller (its pid
/// becomes the session's launcher). Errors: `unauthorized` when the kernel did not say.
fn launch_call(
    board: &Arc<Board>,
    off: &OffReactor,
    call: &Call,
    peer: Peer,
) -> BoardResult<Value> {
    let launcher_pid = peer
        .pid
        .ok_or_else(|| BoardError::unauthorized("the kernel did not report the caller's pid"))?;
    launch(board, off, launcher_pid, call)
}

/// Logs a holder's write that the fence refused (ARCHITECTURE.md rule 9), in the same store scope.
fn record_rejection(
    store: &mut dyn Store,
    events: &mut Events,
    call: &Call,
    agent: Option<&str>,
    e: &BoardError,
) {
    if !matches!(e.kind, ErrorKind::Lapsed | ErrorKind::Conflict) {
        return;
    }
    let (task, generation) = match call {
        Call::Done(p) => (p.task, p.generation),
        Call::Release(p) => (p.task, p.generation),
        Call::Note(p) => (p.task, p.generation),
        _ => return,
    };
    let reason = format!("{} rejected: {}", call.method(), e.message);
    match store.record(
        crate::store::EventKind::Reject,
        Some(task),
        agent,
        generation,
        &reason,
    ) {
        Ok(ev) => events.extend(ev),
        Err(err) => tracing::warn!(%err, "could not record a rejected write"),
    }
}

/// A request of an ended agent session (`lapsed` from authentication): a holder write says
/// where its task stands now (see [`with_current_holder`]) and is logged as a `reject` event,
/// as a write the store's fence refused is. Any other error passes unchanged.
fn refuse_ended_session(
    board: &Board,
    off: &OffReactor,
    req: &Request,
    e: BoardError,
) -> BoardError {
    let e = with_current_holder(board, off, &req.call, e);
    if e.kind == ErrorKind::Lapsed {
        let mut events = Events::new();
        let agent = req.identity.agent.as_deref();
        record_rejection(&mut **board.store(off), &mut events, &req.call, agent, &e);
        board.publish(events);
    }
    e
}

/// A holder write of an ended agent session (`lapsed` from authentication) also says where
/// the task it names stands now, as a refusal from the store does: `…; task 3 is now held by
/// codex (generation 4)` with `data.holder` and `data.generation`, or `…; task 3 is done (by
/// codex)` once nobody holds it. Any other error passes unchanged.
fn with_current_holder(board: &Board, off: &OffReactor, call: &Call, e: BoardError) -> BoardError {
    let (ErrorKind::Lapsed, Some(task)) = (e.kind, call.held_task()) else {
        return e;
    };
    let Ok(view) = board.store(off).task(task, board.now_ms()) else {
        return e;
    };
    let Some(holder) = view.holder else {
        let stands =
            crate::store::refusal::unclaimed_stands(task.0, view.state, view.done_by.as_deref());
        let message = format!("{}; {stands}", e.message);
        return BoardError { message, ..e }
            .with("task", task)
            .with("state", view.state.as_str())
            .with("generation", view.generation);
    };
    let message = format!(
        "{}; {}",
        e.message,
        crate::store::refusal::now_held_by(task.0, &holder, view.generation.0)
    );
    BoardError { message, ..e }
        .with("task", task)
        .with("holder", holder)
        .with("generation", view.generation)
}
