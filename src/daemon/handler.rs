//! Request dispatch: authenticates the caller, renews its claims, runs one store operation.

use std::sync::Arc;

use serde_json::{json, Value};

use super::identity::authenticate;
pub use super::identity::{hash_token, new_token, Caller, Peer};
use super::state::Board;
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::{Params, Request, PROTOCOL_VERSION};

/// Methods that change a task and may carry an `op_id`.
const WRITES: &[&str] = &[
    "add", "edit", "cancel", "goal", "claim", "done", "release", "note", "import", "send", "inbox",
];

/// Answers one request (everything but `subscribe`, which the server streams).
pub fn handle(board: &Arc<Board>, req: &Request, peer: Peer) -> BoardResult<Value> {
    let p = Params(&req.params);
    if req.method.starts_with("session.") {
        return session_method(board, req, peer);
    }
    let caller = authenticate(board, &p, peer)?;
    if let Caller::Agent(a) = &caller {
        // A hook saying "waiting" or "idle" must not end that very state; anything else the
        // agent does shows it is past it.
        let activity = (req.method == "activity")
            .then(|| p.opt_str("kind").ok().flatten())
            .flatten();
        let keeps_waiting = req.method == "wait" || activity == Some("waiting");
        if !keeps_waiting && board.is_waiting(a) {
            let (_, ev) = board.store().set_waiting(a, None)?;
            board.set_waiting_flag(a, false);
            board.publish(ev);
        }
        if activity != Some("idle") && board.is_idle(a) {
            board.store().set_idle(a, None)?;
            board.set_idle_flag(a, false);
        }
        board.note_contact(a)?;
        board.touch(a)?;
    }
    // Claims this agent lost without asking (lapse, expel, force-release, cancel), each told
    // once, on its next call, whatever that call is (`hello` is the handshake that clients
    // send before every call and whose answer they do not show).
    let lost = match &caller {
        Caller::Agent(a) if req.method != "hello" => board.store().take_lost(a)?,
        _ => Vec::new(),
    };
    let op_id = p
        .opt_str("op_id")?
        .filter(|_| WRITES.contains(&req.method.as_str()));
    if let Some(op) = op_id {
        if let Some(saved) = board.store().op_result(caller.name(), op)? {
            let v: Value =
                serde_json::from_str(&saved).map_err(|e| Board::internal("op result", e))?;
            return match v.get("error") {
                Some(e) => Err(BoardError::from_json(e)),
                None => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
            };
        }
    }
    let out = dispatch(board, &req.method, &p, &caller);
    if let Some(op) = op_id {
        let saved = match &out {
            Ok(v) => json!({ "result": v }),
            Err(e) => json!({ "error": e.to_json() }),
        };
        board
            .store()
            .save_op_result(caller.name(), op, &saved.to_string())?;
    }
    if let Err(e) = &out {
        record_rejection(board, &req.method, &p, &caller, e);
    }
    let mut out = with_lost(out, &lost);
    super::team::add_inbox_notice(board, &req.method, &caller, &mut out);
    out
}

/// Adds `lost` (every claim the caller lost since its previous call, see
/// [`crate::store::LostClaim`]) to an answer's result object or error data.
fn with_lost(out: BoardResult<Value>, lost: &[crate::store::LostClaim]) -> BoardResult<Value> {
    if lost.is_empty() {
        return out;
    }
    let list = serde_json::to_value(lost).unwrap_or_default();
    match out {
        Ok(Value::Object(mut m)) => {
            m.insert("lost".into(), list);
            Ok(Value::Object(m))
        }
        Ok(v) => Ok(v),
        Err(mut e) => {
            // A refusal may name claims it lapsed itself (`renew`): earlier losses come first.
            let mut all = list.as_array().cloned().unwrap_or_default();
            if let Some(Value::Array(own)) = e.data.get("lost") {
                all.extend(own.iter().cloned());
            }
            e = e.with("lost", Value::Array(all));
            Err(e)
        }
    }
}

fn record_rejection(board: &Board, method: &str, p: &Params, caller: &Caller, e: &BoardError) {
    if !matches!(e.kind, ErrorKind::Lapsed | ErrorKind::Conflict)
        || method == "claim"
        || method == "check"
    {
        return;
    }
    let task = p.opt_i64("task").ok().flatten();
    let generation = p.opt_i64("generation").ok().flatten();
    let reason = format!("{method} rejected: {}", e.message);
    match board
        .store()
        .record("reject", task, caller.agent(), generation, &reason)
    {
        Ok(ev) => board.publish(ev),
        Err(err) => tracing::warn!(%err, "could not record a rejected write"),
    }
}

fn dispatch(board: &Arc<Board>, method: &str, p: &Params, caller: &Caller) -> BoardResult<Value> {
    let now = board.now_checked()?;
    let by = caller.name();
    match method {
        "hello" => Ok(json!({
            "protocol": PROTOCOL_VERSION,
            "version": env!("CARGO_PKG_VERSION"),
            "pid": std::process::id(),
            "caller": by,
        })),
        "status" => Ok(super::status::status(board)),
        "goal" => match p.opt_str("text")? {
            Some(text) => {
                let (g, ev) = board.store().set_goal(text, by)?;
                board.publish(ev);
                Ok(json!({ "goal": g }))
            }
            None => Ok(json!({ "goal": board.store().goal()? })),
        },
        "add" => {
            let after = p.opt_ids("after")?.unwrap_or_default();
            let (t, ev) = board.store().add_task(
                p.str("title")?,
                p.opt_str("body")?.unwrap_or(""),
                p.opt_i64("priority")?.unwrap_or(0),
                &after,
                by,
                now,
            )?;
            board.publish(ev);
            Ok(json!({ "task": t }))
        }
        "edit" => {
            let after = p.opt_ids("after")?;
            let (t, ev) = board.store().edit_task(
                p.i64("task")?,
                p.opt_str("title")?,
                p.opt_str("body")?,
                p.opt_i64("priority")?,
                after.as_deref(),
                by,
                now,
            )?;
            board.publish(ev);
            Ok(json!({ "task": t }))
        }
        "cancel" => {
            let (t, ev) = board.store().cancel_task(p.i64("task")?, by, now)?;
            board.publish(ev);
            Ok(json!({ "task": t }))
        }
        "list" => {
            let states = match p.0.get("state") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(vec![s.clone()]),
                Some(Value::Array(a)) => Some(
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect(),
                ),
                Some(_) => {
                    return Err(BoardError::invalid(
                        "`state` must be a string or a list of strings",
                    ))
                }
            };
            if let Some(bad) = states
                .iter()
                .flatten()
                .find(|s| !crate::store::LIST_STATES.contains(&s.as_str()))
            {
                let shown: String = bad.chars().take(32).collect();
                return Err(BoardError::usage(format!(
                    "unknown state {shown:?}: use {}",
                    crate::store::LIST_STATES.join(", ")
                )));
            }
            let limit = page_limit(p)?;
            let after = p.opt_i64("after")?.unwrap_or(0);
            let (tasks, next) = board
                .store()
                .list_page(states.as_deref(), after, limit, now)?;
            Ok(match limit {
                Some(_) => json!({ "tasks": tasks, "next": next }),
                None => json!({ "tasks": tasks }),
            })
        }
        "ready" => Ok(json!({ "tasks": board.store().ready_tasks(now, page_limit(p)?)? })),
        "show" => {
            let id = p.i64("task")?;
            let store = board.store();
            Ok(json!({
                "task": store.task(id, now)?,
                "notes": store.notes(id)?,
                "events": store.task_events(id)?,
            }))
        }
        "claim" => {
            let agent = require_agent(caller, "claim")?;
            let rules = board.rules();
            let (out, ev) =
                board
                    .store()
                    .claim(agent, p.opt_i64("task")?, now, rules.expiry(now))?;
            board.publish(ev);
            Ok(json!({
                "task": out.task, "generation": out.claim.generation,
                "expires_in_ms": out.claim.expires_ms - now, "already": out.already
            }))
        }
        "done" => {
            let agent = require_agent(caller, "done")?;
            let (out, ev) = board.store().done(
                agent,
                p.i64("task")?,
                p.opt_i64("generation")?,
                p.opt_str("note")?,
                now,
            )?;
            board.publish(ev);
            Ok(json!({ "task": out.task, "generation": out.generation, "already": out.already }))
        }
        "release" => {
            let force = p.flag("force")?;
            let agent =
                match caller {
                    Caller::Agent(a) if !force => Some(a.as_str()),
                    Caller::Agent(_) => {
                        return Err(BoardError::unauthorized(
                            "only an operator can force-release a claim",
                        ))
                    }
                    Caller::Operator if force => None,
                    Caller::Operator => return Err(BoardError::usage(
                        "an operator holds no claim: use `release --force` to end someone's claim",
                    )),
                };
            let (t, ev) = board.store().release(
                agent,
                p.i64("task")?,
                p.opt_i64("generation")?,
                p.opt_str("note")?,
                now,
            )?;
            board.publish(ev);
            Ok(json!({ "task": t }))
        }
        "note" => {
            let (n, ev) = board.store().note(
                caller.agent(),
                p.i64("task")?,
                p.str("text")?,
                p.opt_i64("generation")?,
                now,
            )?;
            board.publish(ev);
            Ok(json!({ "note": n }))
        }
        "renew" => {
            let agent = require_agent(caller, "renew")?;
            let rules = board.rules();
            let claims = board.store().renew_checked(agent, now, rules.expiry(now))?;
            Ok(json!({ "claims": claims.iter().map(|c| json!({
                "task": c.task, "generation": c.generation, "expires_in_ms": c.expires_ms - now
            })).collect::<Vec<_>>() }))
        }
        "check" => {
            let agent = require_agent(caller, "check")?;
            let c =
                board
                    .store()
                    .check(agent, p.opt_i64("task")?, p.opt_i64("generation")?, now)?;
            Ok(
                json!({ "task": c.task, "generation": c.generation, "holder": agent,
                       "expires_in_ms": c.expires_ms - now }),
            )
        }
        "wait" => {
            let agent = require_agent(caller, "wait")?;
            let q = p.str("question")?;
            let (_, ev) = board.store().set_waiting(agent, Some(q))?;
            board.set_waiting_flag(agent, true);
            board.publish(ev);
            Ok(json!({ "waiting": q }))
        }
        "activity" => {
            // What an agent CLI's hook reports (`board hook CLI EVENT`). Renewal already
            // happened in `handle`, as for any call.
            let agent = require_agent(caller, "activity")?;
            let kind = p.str("kind")?;
            let message = p.opt_str("message")?;
            match kind {
                "renew" => {}
                "idle" => {
                    let reason = message.unwrap_or("turn finished");
                    let (_, ev) = board.store().set_idle(agent, Some(reason))?;
                    board.set_idle_flag(agent, true);
                    board.publish(ev);
                }
                "waiting" => {
                    let q = message.ok_or_else(|| {
                        BoardError::invalid("`message` is required with kind \"waiting\"")
                    })?;
                    let (_, ev) = board.store().set_waiting(agent, Some(q))?;
                    board.set_waiting_flag(agent, true);
                    board.publish(ev);
                }
                other => {
                    let shown: String = other.chars().take(32).collect();
                    return Err(BoardError::invalid(format!(
                        "unknown activity kind {shown:?}: use renew, idle or waiting"
                    )));
                }
            }
            Ok(json!({ "kind": kind }))
        }
        "resume" => {
            // The wait already ended in `handle` (any call ends it); this answers what it was.
            require_agent(caller, "resume")?;
            Ok(json!({ "waiting": Value::Null }))
        }
        "agents" => {
            let all = p.flag("all")?;
            let b = Arc::clone(board);
            let sessions = board
                .store()
                .sessions(all, &|row| super::sweep::describe(&b, row))?;
            let ended = board.store().ended_session_count()?;
            Ok(json!({ "agents": sessions, "ended": ended }))
        }
        "log" => {
            let limit = p.opt_i64("limit")?.unwrap_or(200).clamp(1, 100_000);
            let events = match p.opt_i64("after")? {
                Some(after) => board.store().events(after, limit)?,
                None => board.store().recent_events(limit)?,
            };
            Ok(json!({ "events": events }))
        }
        "stop" => {
            if caller.agent().is_some() {
                return Err(BoardError::unauthorized(
                    "only an operator can stop the board",
                ));
            }
            board.shutdown.notify_one();
            Ok(json!({ "stopping": true, "pid": std::process::id() }))
        }
        other if super::team::METHODS.contains(&other) => {
            super::team::dispatch(board, other, p, caller)
        }
        other => Err(
            BoardError::invalid(format!("method {other:?} cannot be called here"))
                .with_code(-32601),
        ),
    }
}

/// Largest page of `list` / `ready`.
pub const MAX_PAGE: i64 = 10_000;

/// The optional `limit` of `list` / `ready`. Errors: `invalid` outside 1..=[`MAX_PAGE`].
fn page_limit(p: &Params) -> BoardResult<Option<i64>> {
    match p.opt_i64("limit")? {
        Some(l) if !(1..=MAX_PAGE).contains(&l) => Err(BoardError::invalid(format!(
            "`limit` must be between 1 and {MAX_PAGE}, not {l}"
        ))),
        other => Ok(other),
    }
}

fn require_agent<'a>(caller: &'a Caller, what: &str) -> BoardResult<&'a str> {
    caller.agent().ok_or_else(|| {
        BoardError::unauthorized(format!(
            "`{what}` needs an agent identity (BOARD_AGENT and BOARD_TOKEN); start the agent with `board run`"
        ))
    })
}

/// `session.register`, `session.attach`, `session.exit`: the launcher's own calls. They never
/// renew claims (design rule 2: the launcher's liveness proves nothing about the agent).
fn session_method(board: &Arc<Board>, req: &Request, peer: Peer) -> BoardResult<Value> {
    let p = Params(&req.params);
    let launcher_pid = peer
        .pid
        .ok_or_else(|| BoardError::unauthorized("the kernel did not report the caller's pid"))?;
    match req.method.as_str() {
        "session.register" => {
            let name = p.str("name")?;
            let branch = p.opt_str("branch")?;
            let token = new_token();
            let start = crate::os::procfs::start_time(launcher_pid).ok();
            let launcher = start.map(|s| (launcher_pid, s));
            let attention_ms = p.opt_i64("attention_ms")?;
            if attention_ms.is_some_and(|ms| ms < 0) {
                return Err(BoardError::invalid("`attention_ms` must not be negative"));
            }
            let (id, ev) = board.store().register_session(
                name,
                &hash_token(&token),
                &board.boot_id,
                launcher,
                branch,
                attention_ms,
            )?;
            board.publish(ev);
            if let Some((pid, start)) = launcher {
                super::watchers::watch(board, &id, pid, start, super::watchers::Role::Launcher);
            }
            Ok(json!({ "agent": id, "token": token }))
        }
        "session.attach" | "session.exit" => {
            let agent = p.str("agent")?;
            let row = board
                .store()
                .session(agent)?
                .ok_or_else(|| BoardError::not_found(format!("no agent session {agent:?}")))?;
            if row.token_hash != hash_token(p.str("token")?)
                || row.launcher.map(|l| l.0) != Some(launcher_pid)
            {
                return Err(BoardError::unauthorized(format!(
                    "only the launcher of agent session {agent} may do this"
                )));
            }
            if req.method == "session.exit" {
                let code = p.opt_i64("code")?.map(|c| c as i32);
                let signal = p.opt_i64("signal")?.map(|s| s as i32);
                let reason = match p.opt_str("reason")? {
                    Some(r) => r.to_string(),
                    None => crate::daemon::lease::exit_reason(code, signal),
                };
                let ended = board.expel(agent, &reason)?;
                return Ok(json!({ "ended": ended, "reason": reason }));
            }
            let pid = p.i64("pid")? as i32;
            let start = crate::os::procfs::start_time(pid)
                .map_err(|e| BoardError::not_found(format!("agent process {pid}: {e}")))?;
            let pane = match (p.opt_str("pane")?, p.opt_i64("pane_pid")?) {
                (Some(id), Some(pp)) => crate::os::procfs::start_time(pp as i32)
                    .ok()
                    .map(|s| (id, pp as i32, s)),
                _ => None,
            };
            board.store().attach_session(agent, (pid, start), pane)?;
            // The terminal the agent runs on: input there is activity (`terminal`). Only a
            // character device path is kept: the board stats and writes to it.
            if let Some(tty) = p.opt_str("tty")?.filter(|t| t.starts_with("/dev/")) {
                board.store().set_session_tty(agent, tty)?;
            }
            super::watchers::watch(board, agent, pid, start, super::watchers::Role::Agent);
            if let Some((_, pp, ps)) = pane {
                super::watchers::watch(board, agent, pp, ps, super::watchers::Role::Pane);
            }
            Ok(json!({ "agent": agent, "pid": pid }))
        }
        other => Err(BoardError::invalid(format!("unknown method {other:?}")).with_code(-32601)),
    }
}
