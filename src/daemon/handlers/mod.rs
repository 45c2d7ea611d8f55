//! Request dispatch: authenticates the caller, renews its claims, and runs the one handler
//! function of the request's method (grouped by concern: [`tasks`], [`claims`], [`board`],
//! [`launcher`]).
//!
//! A write ([`Method::is_write`]) with an `op_id` runs inside [`Store::with_op`]: the lookup of an
//! earlier answer, the operation (with the rejection it may record) and its saved answer are one
//! transaction, so a retry is applied once even when two attempts race. Events are published
//! after that transaction commits.

pub mod board;
pub mod claims;
pub mod launcher;
pub mod tasks;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::state::Board;
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::methods::Access;
use crate::proto::{Call, Identity, Method, Request};
use crate::store::{Events, Store, OPERATOR};

/// Who sent a request, from the socket's peer credentials (SO_PEERCRED).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// Peer process id (None when the kernel did not say).
    pub pid: Option<i32>,
    /// Peer user id.
    pub uid: u32,
}

/// The authenticated caller of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// No agent identity: a human in a shell or the TUI.
    Operator,
    /// An agent session, by id.
    Agent(String),
}

impl Caller {
    /// Session id, or `operator`.
    pub fn name(&self) -> &str {
        match self {
            Caller::Operator => OPERATOR,
            Caller::Agent(a) => a,
        }
    }

    /// The agent session id, or None for an operator.
    pub fn agent(&self) -> Option<&str> {
        match self {
            Caller::Operator => None,
            Caller::Agent(a) => Some(a),
        }
    }

    /// The agent session id; `unauthorized` for an operator (`what` names the method).
    pub fn require_agent(&self, what: Method) -> BoardResult<&str> {
        self.agent().ok_or_else(|| {
            BoardError::unauthorized(format!(
                "`{what}` needs an agent identity (BOARD_AGENT and BOARD_TOKEN); start the agent with `board run`"
            ))
        })
    }
}

/// What every handler gets: the board, the authenticated caller, and the lease-clock time (ms)
/// the request is handled at.
pub struct Cx<'a> {
    /// The board.
    pub board: &'a Arc<Board>,
    /// Who is calling.
    pub caller: &'a Caller,
    /// Lease-clock now, ms.
    pub now: i64,
}

/// SHA-256 of a token, hex: what the store keeps instead of the token.
pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new random token: 128 bits from the OS, hex.
pub fn new_token() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A typed handler result as the JSON the wire carries.
fn answer<T: Serialize>(r: BoardResult<T>) -> BoardResult<Value> {
    r.and_then(|v| {
        serde_json::to_value(v).map_err(|e| BoardError::internal(format!("serializing: {e}")))
    })
}

/// Answers one request (everything but `subscribe`, which the server streams).
pub fn handle(board: &Arc<Board>, req: &Request, peer: Peer) -> BoardResult<Value> {
    match req.method.access() {
        Access::Launcher => return launcher::handle(board, &req.call, peer),
        Access::Stream => {
            return Err(BoardError::invalid(format!(
                "`{}` is answered by the connection itself",
                req.method
            ))
            .with_code(-32601))
        }
        Access::Read | Access::Write => {}
    }
    let caller = authenticate(board, &req.identity, peer)?;
    if let Caller::Agent(a) = &caller {
        if req.method != Method::Wait && board.is_waiting(a) {
            let (_, ev) = board.store().set_waiting(a, None)?;
            board.set_waiting_flag(a, false);
            board.publish(ev);
        }
        board.touch(a)?;
    }
    let cx = Cx {
        board,
        caller: &caller,
        now: board.now_ms(),
    };
    if !req.method.is_write() {
        return read(&cx, &req.call);
    }
    let mut events = Vec::new();
    let out = {
        let mut store = board.store();
        let mut run = |store: &mut Store| {
            let out = write(&cx, store, &mut events, &req.call);
            if let Err(e) = &out {
                record_rejection(store, &mut events, &req.call, &caller, e);
            }
            out
        };
        match req.identity.op_id.as_deref() {
            Some(op) => store.with_op(caller.name(), op, run)?,
            None => run(&mut store),
        }
    };
    board.publish(events);
    out
}

/// The handler of each write method; `store` may be inside an op scope (one transaction).
fn write(cx: &Cx, store: &mut Store, ev: &mut Events, call: &Call) -> BoardResult<Value> {
    match call {
        Call::Goal(p) => answer(tasks::goal(cx, store, ev, p)),
        Call::Add(p) => answer(tasks::add(cx, store, ev, p)),
        Call::Edit(p) => answer(tasks::edit(cx, store, ev, p)),
        Call::Cancel(p) => answer(tasks::cancel(cx, store, ev, p)),
        Call::Claim(p) => answer(claims::claim(cx, store, ev, p)),
        Call::Done(p) => answer(claims::done(cx, store, ev, p)),
        Call::Release(p) => answer(claims::release(cx, store, ev, p)),
        Call::Note(p) => answer(claims::note(cx, store, ev, p)),
        other => Err(BoardError::internal(format!(
            "`{}` is not a write",
            other.method()
        ))),
    }
}

/// The handler of each other method.
fn read(cx: &Cx, call: &Call) -> BoardResult<Value> {
    match call {
        Call::Hello(_) => answer(board::hello(cx)),
        Call::Status(_) => answer(board::status(cx)),
        Call::List(p) => answer(tasks::list(cx, p)),
        Call::Ready(_) => answer(tasks::ready(cx)),
        Call::Show(p) => answer(tasks::show(cx, p)),
        Call::Renew(_) => answer(claims::renew(cx)),
        Call::Check(p) => answer(claims::check(cx, p)),
        Call::Wait(p) => answer(board::wait(cx, p)),
        Call::Resume(_) => answer(board::resume(cx)),
        Call::Agents(p) => answer(board::agents(cx, p)),
        Call::Log(p) => answer(board::log(cx, p)),
        Call::Stop(_) => answer(board::stop(cx)),
        other => Err(BoardError::internal(format!(
            "`{}` is not answered here",
            other.method()
        ))),
    }
}

/// Logs a holder's write that the fence refused (design rule 9), in the same store scope.
fn record_rejection(
    store: &mut Store,
    events: &mut Events,
    call: &Call,
    caller: &Caller,
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
    match store.record("reject", Some(task), caller.agent(), generation, &reason) {
        Ok(ev) => events.extend(ev),
        Err(err) => tracing::warn!(%err, "could not record a rejected write"),
    }
}

/// Checks `agent` + `token` against the stored session, and (design: identity) that the calling
/// process descends from the agent's process or its launcher. Operators send no identity.
fn authenticate(board: &Board, id: &Identity, peer: Peer) -> BoardResult<Caller> {
    let agent = id.agent.as_deref().filter(|a| !a.is_empty());
    let token = id.token.as_deref().filter(|t| !t.is_empty());
    let (agent, token) = match (agent, token) {
        (None, None) => return Ok(Caller::Operator),
        (Some(a), Some(t)) => (a, t),
        (Some(a), None) => {
            let shown: String = a.chars().take(64).collect();
            return Err(BoardError::unauthorized(format!(
                "agent {shown:?} sent no token (BOARD_TOKEN)"
            )));
        }
        (None, Some(_)) => {
            return Err(BoardError::unauthorized(
                "a token was sent without an agent (BOARD_AGENT)",
            ))
        }
    };
    let shown: String = agent.chars().take(64).collect();
    let row = board
        .store()
        .session(agent)?
        .ok_or_else(|| BoardError::unauthorized(format!("no agent session {shown:?}")))?;
    if row.token_hash != hash_token(token) {
        return Err(BoardError::unauthorized(format!(
            "wrong token for agent session {shown:?}"
        )));
    }
    if let Some(ended) = &row.ended_at {
        let reason = board.store().session_end_reason(agent)?.unwrap_or_default();
        return Err(BoardError::new(
            ErrorKind::Lapsed,
            format!("agent session {agent} ended at {ended} ({reason}); its claims were expelled"),
        )
        .with("ended_at", ended.clone())
        .with("end_reason", reason));
    }
    if board.check_process_tree() {
        if let Some(pid) = peer.pid {
            let in_tree = |root: Option<(i32, u64)>, exclude_root: bool| {
                root.is_some_and(|(r, _)| {
                    (!exclude_root || pid != r) && crate::os::procfs::is_descendant(pid, r)
                })
            };
            if !in_tree(row.agent, false) && !in_tree(row.launcher, true) {
                return Err(BoardError::unauthorized(format!(
                    "process {pid} is not inside agent session {agent}'s process tree; \
                     a token works only in the agent it was issued to"
                )));
            }
        }
    }
    Ok(Caller::Agent(agent.to_string()))
}
