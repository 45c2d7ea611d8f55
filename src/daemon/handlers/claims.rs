//! Claims and the writes they fence: `claim`, `done`, `release`, `note` (writes), `renew`,
//! `check` (reads).

use super::answer::with_lost;
use super::cx::{Cx, RequireAgent};
use super::table::{HandleRead, HandleWrite};
use super::{review, team};
use crate::daemon::identity::Caller;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::methods::{verb, NoParams};
use crate::proto::methods::{CheckParams, ClaimParams, DoneParams, NoteParams, ReleaseParams};
use crate::proto::methods::{
    CheckResult, ClaimResult, ClaimView, DoneResult, NoteResult, RenewResult, TaskResult,
};
use crate::proto::{Call, Method, Request};
use crate::store::{Events, Store, TaskId};
use serde_json::Value;

/// `claim`: grants the caller a lease on the task, or on the best ready one (ARCHITECTURE.md rule 1).
impl HandleWrite for verb::Claim {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &ClaimParams,
    ) -> BoardResult<ClaimResult> {
        let agent = cx.caller.require_agent(Method::Claim)?;
        let rules = cx.board.rules();
        let (out, e) = match (&p.label, p.task) {
            (Some(label), None) => store.claim_labelled(agent, label, rules.lease(cx.now))?,
            _ => store.claim(agent, p.task, rules.lease(cx.now))?,
        };
        ev.extend(e);
        Ok(ClaimResult {
            task: out.task,
            generation: out.claim.generation,
            expires_in_ms: out.claim.expires_ms - cx.now,
            already: out.already,
        })
    }
}

/// An agent's `claim` of the best ready task or its `done` without a note, with an `op_id`, in
/// one round trip where the store can ([`crate::store::Store::claim_next_at_once`],
/// [`crate::store::Store::done_at_once`]): the answer with the claims the agent lost and its
/// inbox notice, as [`super::handle`] would give it. None when the request is another one, or
/// the store took no such path (the general path then runs).
///
/// Why: on a store across the network each statement is a round trip, and the general path of
/// these writes is about ten of them (BENCHMARKS.md).
pub fn at_once(cx: &Cx, req: &Request) -> BoardResult<Option<BoardResult<Value>>> {
    let (Caller::Agent(agent), Some(op)) = (cx.caller, req.identity.op_id.as_deref()) else {
        return Ok(None);
    };
    let done = match &req.call {
        Call::Claim(p) if p.task.is_none() && p.label.is_none() => {
            let lease = cx.board.rules().lease(cx.now);
            cx.store().claim_next_at_once(agent, op, agent, lease)?
        }
        // A task of its own `--review` is left to the general path by the store.
        Call::Done(p) if p.note.is_none() && !review::board_needs_commit(cx) => cx
            .store()
            .done_at_once(agent, op, agent, p.task, p.generation, cx.now)?,
        _ => return Ok(None),
    };
    let Some(r) = done else {
        return Ok(None);
    };
    cx.board.publish(r.events);
    let lost = match r.lost_waiting {
        true => cx.store().take_lost(agent)?,
        false => Vec::new(),
    };
    let mut out = with_lost(r.answer, &lost);
    team::put_inbox_notice(&r.unread, &mut out);
    Ok(Some(out))
}

/// `done`: finishes the caller's task (fenced; idempotent for one agent and generation).
impl HandleWrite for verb::Done {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &DoneParams,
    ) -> BoardResult<DoneResult> {
        let agent = cx.caller.require_agent(Method::Done)?;
        // The task's override picks the path; the write that follows is fenced on the claim as
        // ever (an `edit --review` racing this `done` counts from the task's next `done`).
        let lands = cx.board.config().git.lands();
        let review = match lands {
            true => None,
            false => store.task(p.task, cx.now)?.review,
        };
        if review::done_needs_commit(cx, review) {
            return done_with_commit(cx, store, ev, agent, p);
        }
        let (out, e) = store.done(agent, p.task, p.generation, p.note.as_deref(), cx.now)?;
        ev.extend(e);
        Ok(DoneResult {
            task: out.task,
            generation: out.generation,
            already: out.already,
        })
    }
}

/// `done` of a task that goes through review or lands: the task waits in review with the
/// commit `p` names (the land, when review is off, follows in [`super::handle`]).
fn done_with_commit(
    cx: &Cx,
    store: &mut dyn Store,
    ev: &mut Events,
    agent: &str,
    p: &DoneParams,
) -> BoardResult<DoneResult> {
    let branch_head = match p.commit {
        Some(_) => None,
        None => head_of_branch(cx, store, agent)?,
    };
    let Some(commit) = p.commit.as_deref().or(branch_head.as_deref()) else {
        return Err(BoardError::usage(format!(
            "task {} goes through review or lands ([review] required or its own --review, \
             [git] land): name the commit that finishes it: `board done {} --commit REV` \
             (the default, the head of the branch you started on, is known only for an agent \
             started in a git work tree on a branch)",
            p.task, p.task
        )));
    };
    crate::store::review_rules::check_commit(commit)?;
    let root = &cx.board.paths().root;
    if !crate::daemon::land::commit_exists(root, commit) {
        return Err(BoardError::invalid(format!(
            "commit {commit} is not in the repository at {}: commit in a worktree of it",
            root.display()
        )));
    }
    refuse_commit_on_base(cx, store, p.task, commit)?;
    let (out, e) = store.submit_for_review(
        agent,
        p.task,
        p.generation,
        commit,
        p.note.as_deref(),
        cx.board.config().review.required,
        cx.now,
    )?;
    ev.extend(e);
    Ok(DoneResult {
        task: out.task,
        generation: out.generation,
        already: out.already,
    })
}

/// Refuses a `done` of a task still claimed whose commit is already on the base branch: it
/// would go to review (and "land") with nothing of the task in it, usually because the agent
/// has not committed yet or works on the base itself. A repeated `done` of a task already in
/// review or done is left to the store, which answers `already`.
fn refuse_commit_on_base(
    cx: &Cx,
    store: &mut dyn Store,
    task: TaskId,
    commit: &str,
) -> BoardResult<()> {
    let base = cx.board.config().git.base.clone();
    let root = &cx.board.paths().root;
    if !crate::daemon::land::on_branch(root, commit, &base) {
        return Ok(());
    }
    if store.review_facts(task)?.state != crate::store::TaskState::Claimed {
        return Ok(());
    }
    Err(BoardError::invalid(format!(
        "commit {} is already on {base}: task {task} has nothing to review or land; commit \
         the task's work (on a branch of your own, not {base}), then `board done {task}`",
        &commit[..commit.len().min(12)]
    ))
    .with("commit", commit.to_string()))
}

/// The head of the branch `agent` started on (its worktree's `board/NAME`), when it started on
/// one: the commit its `done` names by default.
fn head_of_branch(cx: &Cx, store: &mut dyn Store, agent: &str) -> BoardResult<Option<String>> {
    let sessions = store.sessions(None, &|_| None)?;
    let Some(branch) = sessions
        .into_iter()
        .find(|s| s.id == agent)
        .and_then(|s| s.branch)
    else {
        return Ok(None);
    };
    let root = &cx.board.paths().root;
    Ok(crate::daemon::land::head_of(root, &branch))
}

/// `release`: the holder gives the task back, or an operator ends anyone's claim with `force`
/// (at `generation`, when given).
impl HandleWrite for verb::Release {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &ReleaseParams,
    ) -> BoardResult<TaskResult> {
        let force = p.force.unwrap_or(false);
        let agent = match cx.caller {
            Caller::Agent(a) if !force => Some(a.as_str()),
            Caller::Agent(_) => {
                return Err(BoardError::unauthorized(
                    "only an operator can force-release a claim",
                ))
            }
            Caller::Operator if force => None,
            Caller::Operator => {
                return Err(BoardError::usage(
                    "an operator holds no claim: to end someone's claim, release with force \
                     (`board release ID --force`; `\"force\": true` over JSON-RPC and MCP)",
                ))
            }
        };
        let (task, e) = store.release(agent, p.task, p.generation, p.note.as_deref(), cx.now)?;
        ev.extend(e);
        Ok(TaskResult { task })
    }
}

/// `note`: as holder (fenced, at `generation` when given) or as an operator (any task).
impl HandleWrite for verb::Note {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &NoteParams,
    ) -> BoardResult<NoteResult> {
        let (note, e) = store.note(cx.caller.agent(), p.task, &p.text, p.generation, cx.now)?;
        ev.extend(e);
        Ok(NoteResult { note })
    }
}

/// `renew`: renews every live claim of the caller now.
impl HandleRead for verb::Renew {
    fn handle(cx: &Cx, _: &NoParams) -> BoardResult<RenewResult> {
        let agent = cx.caller.require_agent(Method::Renew)?;
        let rules = cx.board.rules();
        let claims = cx.store().renew_checked(agent, rules.lease(cx.now))?;
        Ok(RenewResult {
            claims: claims
                .iter()
                .map(|c| ClaimView {
                    task: c.task,
                    generation: c.generation,
                    expires_in_ms: c.expires_ms - cx.now,
                })
                .collect(),
        })
    }
}

/// `check`: Ok only if the caller holds the live claim (on `task`, at `generation`).
impl HandleRead for verb::Check {
    fn handle(cx: &Cx, p: &CheckParams) -> BoardResult<CheckResult> {
        let agent = cx.caller.require_agent(Method::Check)?;
        let c = cx.store().check(agent, p.task, p.generation, cx.now)?;
        Ok(CheckResult {
            task: c.task,
            generation: c.generation,
            holder: agent.to_string(),
            expires_in_ms: c.expires_ms - cx.now,
        })
    }
}
