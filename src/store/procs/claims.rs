//! Claims: grants, `check`, the checked renewal, and the report of claims lost without
//! asking. The fenced holder writes are in `holder_writes`, the end of expired claims in
//! `lapse`. Every change is one conditional statement (ARCHITECTURE.md rule 6).

use crate::proto::error::{BoardResult, ErrorKind};
use crate::store::db::{get, word, Ask, Backend, Db, Lock, Row};
use crate::store::refusal;
use crate::store::{ClaimInfo, ClaimOutcome, Events, Generation, Lease, LostClaim, Store, TaskId};

use super::lapse::lapse_expired;
use super::refusals::explain_write_refusal;
use super::tasks::task_view;

pub(in crate::store) fn claim<B: Backend>(
    b: &mut B,
    agent: &str,
    task: Option<TaskId>,
    lease: Lease,
) -> BoardResult<(ClaimOutcome, Events)> {
    grant(b, agent, task, None, lease)
}

pub(in crate::store) fn claim_labelled<B: Backend>(
    b: &mut B,
    agent: &str,
    label: &str,
    lease: Lease,
) -> BoardResult<(ClaimOutcome, Events)> {
    crate::proto::labels::check_label("label", label)?;
    grant(b, agent, None, Some(label), lease)
}

/// A claim of task `task`, or of the best ready task (carrying `label`, when given): the
/// caller's own live claim on `task` is answered again (`already`, its expiry not lowered);
/// an expired one on it lapses first; then the backend's one grant statement decides.
fn grant<B: Backend>(
    b: &mut B,
    agent: &str,
    task: Option<TaskId>,
    label: Option<&str>,
    asked: Lease,
) -> BoardResult<(ClaimOutcome, Events)> {
    let now_ms = asked.now_ms;
    b.at(now_ms);
    let task = task.map(i64::from);
    let lease = asked.length_ms();
    b.write(Lock::Shared, |db, ev| {
        if let Some(id) = task {
            if let Some(claim) = keep_own(db, id, agent, lease)? {
                return Ok(ClaimOutcome {
                    task: task_view(db, TaskId(id), now_ms)?,
                    claim,
                    already: true,
                });
            }
            lapse_expired(db, ev, id, None, false)?;
        }
        let ask = Ask {
            agent,
            task,
            label,
            lease,
        };
        let claim = db.grant(ev, &ask)?;
        Ok(ClaimOutcome {
            task: task_view(db, claim.task, now_ms)?,
            claim,
            already: false,
        })
    })
}

/// The caller's own live, unexpired claim on task `id`, its expiry raised to at least `lease`
/// from now; None when it holds none.
fn keep_own(db: &mut impl Db, id: i64, agent: &str, lease: i64) -> BoardResult<Option<ClaimInfo>> {
    let mine = db.opt(
        concat!(
            "UPDATE claims SET expires_ms = CASE WHEN expires_ms > board_now_ms() + $3
                                                 THEN expires_ms
                                                 ELSE board_now_ms() + $3 END
             WHERE task_id = $1 AND session_id = $2 AND ",
            live_unexpired!("board_now_ms()"),
            " RETURNING task_id, generation, expires_ms"
        ),
        &args![id, agent, lease],
    )?;
    mine.map(|r| claim_info(&r)).transpose()
}

/// A row of `task_id, generation, expires_ms`.
pub(in crate::store) fn claim_info(r: &dyn Row) -> BoardResult<ClaimInfo> {
    Ok(ClaimInfo {
        task: get(r, 0)?,
        generation: get(r, 1)?,
        expires_ms: get(r, 2)?,
    })
}

pub(in crate::store) fn renew<B: Backend>(
    b: &mut B,
    agent: &str,
    lease: Lease,
) -> BoardResult<Vec<ClaimInfo>> {
    b.at(lease.now_ms);
    let (claims, _) = b.write(Lock::Shared, |db, _| db.renew(agent, lease.length_ms()))?;
    Ok(claims)
}

pub(in crate::store) fn renew_many<B: Backend>(
    b: &mut B,
    agents: &[&str],
    lease: Lease,
) -> BoardResult<Vec<String>> {
    if agents.is_empty() {
        return Ok(Vec::new());
    }
    b.at(lease.now_ms);
    let length = lease.length_ms();
    let (renewed, _) = b.write(Lock::Shared, |db, _| db.renew_many(agents, length))?;
    Ok(renewed)
}

pub(in crate::store) fn live_claims<B: Backend>(b: &B, agent: &str) -> BoardResult<Vec<ClaimInfo>> {
    b.read_with(|db| {
        let rows = db.rows(
            "SELECT task_id, generation, expires_ms FROM claims
             WHERE session_id = $1 AND ended_at IS NULL ORDER BY task_id",
            &args![agent],
        )?;
        rows.iter().map(|r| claim_info(r)).collect()
    })
}

pub(in crate::store) fn renew_checked<B: Backend + Store>(
    b: &mut B,
    agent: &str,
    lease: Lease,
) -> BoardResult<Vec<ClaimInfo>> {
    Backend::at(b, lease.now_ms);
    b.refusable(|db, ev| {
        let expired: Vec<i64> = db.column(
            concat!(
                "SELECT task_id FROM claims WHERE session_id = $1 AND ",
                live_expired!("board_now_ms()")
            ),
            &args![agent],
        )?;
        for task in expired {
            lapse_expired(db, ev, task, Some(agent), false)?;
        }
        Ok(Ok(()))
    })?;
    let claims = b.renew(agent, lease)?;
    if claims.is_empty() {
        let lost = b.take_lost(agent)?;
        if !lost.is_empty() {
            return Err(refusal::lost_claims(agent, &lost));
        }
        let err = b.read_with(|db| {
            let last = db.opt(
                "SELECT task_id, generation FROM claims WHERE session_id = $1
                 ORDER BY id DESC LIMIT 1",
                &args![agent],
            )?;
            let Some(r) = last else {
                return Ok(None);
            };
            let (task, generation): (i64, i64) = (get(&r, 0)?, get(&r, 1)?);
            Ok(Some(explain_write_refusal(
                db,
                agent,
                task,
                Some(generation),
            )?))
        })?;
        if let Some(err) = err.filter(|e| e.kind == ErrorKind::Lapsed) {
            return Err(err);
        }
    }
    Ok(claims)
}

pub(in crate::store) fn take_lost<B: Backend>(
    b: &mut B,
    agent: &str,
) -> BoardResult<Vec<LostClaim>> {
    let any = b.read_with(|db| {
        db.value::<bool>(
            "SELECT EXISTS (SELECT 1 FROM claims
                            WHERE session_id = $1 AND NOT told AND ended_at IS NOT NULL)",
            &args![agent],
        )
    })?;
    if any != Some(true) {
        return Ok(Vec::new());
    }
    let (mut lost, _) = b.write(Lock::Shared, |db, _| {
        let rows = db.rows(
            "UPDATE claims SET told = true
             WHERE session_id = $1 AND NOT told AND ended_at IS NOT NULL
             RETURNING id, task_id, generation, end_kind, end_reason, ended_at",
            &args![agent],
        )?;
        rows.iter()
            .map(|r| {
                Ok((
                    get::<i64>(r, 0)?,
                    LostClaim {
                        task: get(r, 1)?,
                        generation: get(r, 2)?,
                        end: word(r, 3)?,
                        reason: get(r, 4)?,
                        ended_at: get(r, 5)?,
                    },
                ))
            })
            .collect::<BoardResult<Vec<_>>>()
    })?;
    lost.sort_by_key(|(id, _)| *id);
    Ok(lost.into_iter().map(|(_, l)| l).collect())
}

pub(in crate::store) fn check<B: Backend>(
    b: &mut B,
    agent: &str,
    task: Option<TaskId>,
    generation: Option<Generation>,
    now_ms: i64,
) -> BoardResult<ClaimInfo> {
    b.at(now_ms);
    let task = task.map(i64::from);
    let generation = generation.map(i64::from);
    b.read_with(|db| {
        let found = db.opt(
            concat!(
                "SELECT task_id, generation, expires_ms FROM claims WHERE session_id = $1 AND ",
                live_unexpired!("board_now_ms()"),
                " AND (CAST($2 AS bigint) IS NULL OR task_id = $2)
                  AND (CAST($3 AS bigint) IS NULL OR generation = $3)
                 ORDER BY task_id LIMIT 1"
            ),
            &args![agent, task, generation],
        )?;
        match (found, task) {
            (Some(r), _) => claim_info(&r),
            (None, Some(t)) => Err(explain_write_refusal(db, agent, t, generation)?),
            (None, None) => Err(refusal::holds_no_claim(agent)),
        }
    })
}
