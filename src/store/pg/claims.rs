//! Claims: grants, renewals, `check`, and the report of claims lost without asking
//! (PostgreSQL; see `store::sqlite::claims`). Leases are computed with the server's clock: of the
//! caller's `now_ms` and `expires_ms` only the lease length counts.

use super::lapse::lapse_expired;
use super::refusals::{explain_claim_refusal, explain_write_refusal};
use super::tasks::task_view;
use super::{col, word, Conn, PgStore};
use crate::proto::error::{BoardResult, ErrorKind};
use crate::proto::EventView;
use crate::store::refusal;
use crate::store::{
    ClaimInfo, ClaimOutcome, EventKind, Events, Generation, LostClaim, TaskId, TaskState,
};

/// The grant of a named task: its row is locked `FOR UPDATE` (a racing grant's lock is waited
/// for, then its result seen), its generation incremented (lifted above the floor of a new
/// epoch first), the claim row and the `grant` event inserted, in one statement. `$1` the task,
/// `$2` the agent, `$3` the lease (ms), `$4` the event kind, `$5` its reason. The grant of the
/// best ready task is the server function `board_grant_next` (`FOR UPDATE SKIP LOCKED`, in
/// `migrations/postgres/0004_claim_and_done_in_one_round_trip.sql`), which one-round-trip
/// claims share.
const GRANT_NAMED: &str = concat!(
    "WITH g AS (
         UPDATE tasks SET state = ", crate::sql_state!(claimed), ", updated_at = board_wall(),
             generation = GREATEST(generation,
                 COALESCE((SELECT MAX(value::bigint) FROM meta WHERE key = 'generation_floor'), 0)) + 1
         WHERE id = (
             SELECT t.id FROM tasks t WHERE t.id = $1 AND ", ready!("t"), " AND ", meant_for_ok!("t", "$2"), " FOR UPDATE)
           AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = $2 AND s.ended_at IS NULL)
         RETURNING id, generation),
     c AS (
         INSERT INTO claims (task_id, session_id, generation, granted_at, expires_ms)
         SELECT id, $2, generation, board_wall(), board_now_ms() + $3 FROM g
         RETURNING task_id, generation, expires_ms),
     e AS (
         INSERT INTO events (at, kind, task_id, session_id, generation, reason)
         SELECT board_wall(), $4, task_id, $2, generation, $5 FROM c
         RETURNING id, at)
     SELECT c.task_id, c.generation, c.expires_ms, e.id, e.at FROM c, e"
);

/// The grant of the best ready task carrying label `$6` (`claim --label`; the one-round-trip
/// `board_grant_next` takes any label), with the parameters of [`GRANT_NAMED`] (`$1` unused).
const GRANT_LABELLED: &str = concat!(
    "WITH g AS (
         UPDATE tasks SET state = ", crate::sql_state!(claimed), ", updated_at = board_wall(),
             generation = GREATEST(generation,
                 COALESCE((SELECT MAX(value::bigint) FROM meta WHERE key = 'generation_floor'), 0)) + 1
         WHERE id = (
             SELECT t.id FROM tasks t WHERE $1::bigint IS NULL AND ", ready!("t"), "
               AND ", meant_for_ok!("t", "$2"), "
               AND strpos(',' || t.labels || ',', ',' || $6::text || ',') > 0
             ORDER BY t.priority DESC, t.id ASC LIMIT 1 FOR UPDATE SKIP LOCKED)
           AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = $2 AND s.ended_at IS NULL)
         RETURNING id, generation),
     c AS (
         INSERT INTO claims (task_id, session_id, generation, granted_at, expires_ms)
         SELECT id, $2, generation, board_wall(), board_now_ms() + $3 FROM g
         RETURNING task_id, generation, expires_ms),
     e AS (
         INSERT INTO events (at, kind, task_id, session_id, generation, reason)
         SELECT board_wall(), $4, task_id, $2, generation, $5 FROM c
         RETURNING id, at)
     SELECT c.task_id, c.generation, c.expires_ms, e.id, e.at FROM c, e"
);

impl PgStore {
    pub(in crate::store) fn claim_labelled(
        &mut self,
        agent: &str,
        label: &str,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<(ClaimOutcome, Events)> {
        crate::proto::labels::check_label("label", label)?;
        self.grant(agent, None, Some(label), now_ms, expires_ms)
    }

    pub(in crate::store) fn claim(
        &mut self,
        agent: &str,
        task: Option<TaskId>,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<(ClaimOutcome, Events)> {
        self.grant(agent, task, None, now_ms, expires_ms)
    }

    /// A claim of task `task`, or of the best ready task (carrying `label`, when given).
    fn grant(
        &mut self,
        agent: &str,
        task: Option<TaskId>,
        label: Option<&str>,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<(ClaimOutcome, Events)> {
        self.at(now_ms);
        let task = task.map(i64::from);
        let lease = expires_ms - now_ms;
        self.tx_shared(|c, ev| {
            if let Some(id) = task {
                let mine = c.opt(
                    concat!(
                        "UPDATE claims SET expires_ms = GREATEST(expires_ms, board_now_ms() + $3)
                         WHERE task_id = $1 AND session_id = $2 AND ",
                        live_unexpired!("board_now_ms()"),
                        " RETURNING generation, expires_ms"
                    ),
                    &[&id, &agent, &lease],
                )?;
                if let Some(r) = mine {
                    return Ok(ClaimOutcome {
                        claim: ClaimInfo {
                            task: id,
                            generation: col(&r, 0)?,
                            expires_ms: col(&r, 1)?,
                        },
                        task: task_view(c, id)?,
                        already: true,
                    });
                }
                lapse_expired(c, ev, id, None, false)?;
            }
            let granted = match task {
                Some(id) => c.opt(
                    GRANT_NAMED,
                    &[
                        &id,
                        &agent,
                        &lease,
                        &EventKind::Grant.as_str(),
                        &TaskState::Claimed.as_str(),
                    ],
                )?,
                None if label.is_some() => c.opt(
                    GRANT_LABELLED,
                    &[
                        &task,
                        &agent,
                        &lease,
                        &EventKind::Grant.as_str(),
                        &TaskState::Claimed.as_str(),
                        &label,
                    ],
                )?,
                None => c.opt(
                    "SELECT granted_task, granted_generation, granted_expires_ms, event_id, event_at
                     FROM board_grant_next($1, $2)",
                    &[&agent, &lease],
                )?,
            };
            let Some(r) = granted else {
                return Err(explain_claim_refusal(c, agent, task)?);
            };
            let claim = ClaimInfo {
                task: col(&r, 0)?,
                generation: col(&r, 1)?,
                expires_ms: col(&r, 2)?,
            };
            ev.push(EventView {
                id: col(&r, 3)?,
                at: col(&r, 4)?,
                kind: EventKind::Grant,
                task: Some(claim.task),
                agent: Some(agent.to_string()),
                generation: Some(claim.generation),
                reason: Some(TaskState::Claimed.as_str().to_string()),
            });
            Ok(ClaimOutcome {
                task: task_view(c, claim.task)?,
                claim,
                already: false,
            })
        })
    }

    pub(in crate::store) fn renew(
        &mut self,
        agent: &str,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<Vec<ClaimInfo>> {
        self.at(now_ms);
        let lease = expires_ms - now_ms;
        let (claims, _) = self.tx_shared(|c, _| renew(c, agent, lease))?;
        Ok(claims)
    }

    pub(in crate::store) fn renew_many(
        &mut self,
        agents: &[&str],
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<Vec<String>> {
        if agents.is_empty() {
            return Ok(Vec::new());
        }
        self.at(now_ms);
        let lease = expires_ms - now_ms;
        let list: Vec<&str> = agents.to_vec();
        let (renewed, _) = self.tx_shared(|c, _| {
            let rows = c.rows(
                concat!(
                    "WITH seen AS (
                         UPDATE sessions SET last_seen_at = board_wall()
                         WHERE id = ANY($1) AND ended_at IS NULL),
                     r AS (
                         UPDATE claims SET expires_ms = board_now_ms() + $2
                         WHERE session_id = ANY($1) AND ",
                    live_unexpired!("board_now_ms()"),
                    " RETURNING session_id)
                     SELECT DISTINCT session_id FROM r"
                ),
                &[&list, &lease],
            )?;
            let got: Vec<String> = rows.iter().map(|r| col(r, 0)).collect::<BoardResult<_>>()?;
            Ok(agents
                .iter()
                .filter(|a| got.iter().any(|g| g == *a))
                .map(|a| a.to_string())
                .collect::<Vec<_>>())
        })?;
        Ok(renewed)
    }

    pub(in crate::store) fn live_claims(&self, agent: &str) -> BoardResult<Vec<ClaimInfo>> {
        self.read(|c| {
            let rows = c.rows(
                "SELECT task_id, generation, expires_ms FROM claims
                 WHERE session_id = $1 AND ended_at IS NULL ORDER BY task_id",
                &[&agent],
            )?;
            rows.iter().map(claim_info).collect()
        })
    }

    pub(in crate::store) fn renew_checked(
        &mut self,
        agent: &str,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<Vec<ClaimInfo>> {
        self.at(now_ms);
        self.refusable(|c, ev| {
            let rows = c.rows(
                concat!(
                    "SELECT task_id FROM claims WHERE session_id = $1 AND ",
                    live_expired!("board_now_ms()")
                ),
                &[&agent],
            )?;
            for r in &rows {
                let task: i64 = col(r, 0)?;
                lapse_expired(c, ev, task, Some(agent), false)?;
            }
            Ok(Ok(()))
        })?;
        let claims = self.renew(agent, now_ms, expires_ms)?;
        if claims.is_empty() {
            let lost = self.take_lost(agent)?;
            if !lost.is_empty() {
                return Err(refusal::lost_claims(agent, &lost));
            }
            let err = self.read(|c| {
                let last = c.opt(
                    "SELECT task_id, generation FROM claims WHERE session_id = $1
                     ORDER BY id DESC LIMIT 1",
                    &[&agent],
                )?;
                match last {
                    Some(r) => {
                        let (task, generation): (i64, i64) = (col(&r, 0)?, col(&r, 1)?);
                        Ok(Some(explain_write_refusal(
                            c,
                            agent,
                            task,
                            Some(generation),
                        )?))
                    }
                    None => Ok(None),
                }
            })?;
            if let Some(err) = err {
                if err.kind == ErrorKind::Lapsed {
                    return Err(err);
                }
            }
        }
        Ok(claims)
    }

    pub(in crate::store) fn take_lost(&mut self, agent: &str) -> BoardResult<Vec<LostClaim>> {
        let any = self.read(|c| {
            let r = c.one(
                "SELECT EXISTS (SELECT 1 FROM claims
                                WHERE session_id = $1 AND NOT told AND ended_at IS NOT NULL)",
                &[&agent],
            )?;
            col::<bool>(&r, 0)
        })?;
        if !any {
            return Ok(Vec::new());
        }
        let (mut lost, _) = self.tx_shared(|c, _| {
            let rows = c.rows(
                "UPDATE claims SET told = true
                 WHERE session_id = $1 AND NOT told AND ended_at IS NOT NULL
                 RETURNING id, task_id, generation, end_kind, end_reason, ended_at",
                &[&agent],
            )?;
            rows.iter()
                .map(|r| {
                    Ok((
                        col::<i64>(r, 0)?,
                        LostClaim {
                            task: col(r, 1)?,
                            generation: col(r, 2)?,
                            end: word(r, 3)?,
                            reason: col(r, 4)?,
                            ended_at: col(r, 5)?,
                        },
                    ))
                })
                .collect::<BoardResult<Vec<_>>>()
        })?;
        lost.sort_by_key(|(id, _)| *id);
        Ok(lost.into_iter().map(|(_, l)| l).collect())
    }

    pub(in crate::store) fn check(
        &mut self,
        agent: &str,
        task: Option<TaskId>,
        generation: Option<Generation>,
        now_ms: i64,
    ) -> BoardResult<ClaimInfo> {
        self.at(now_ms);
        let task = task.map(i64::from);
        let generation = generation.map(i64::from);
        self.read(|c| {
            let found = c.opt(
                concat!(
                    "SELECT task_id, generation, expires_ms FROM claims WHERE session_id = $1 AND ",
                    live_unexpired!("board_now_ms()"),
                    " AND ($2::bigint IS NULL OR task_id = $2)
                      AND ($3::bigint IS NULL OR generation = $3)
                     ORDER BY task_id LIMIT 1"
                ),
                &[&agent, &task, &generation],
            )?;
            match (found, task) {
                (Some(r), _) => claim_info(&r),
                (None, Some(t)) => Err(explain_write_refusal(c, agent, t, generation)?),
                (None, None) => Err(refusal::holds_no_claim(agent)),
            }
        })
    }
}

fn claim_info(r: &postgres::Row) -> BoardResult<ClaimInfo> {
    Ok(ClaimInfo {
        task: col(r, 0)?,
        generation: col(r, 1)?,
        expires_ms: col(r, 2)?,
    })
}

/// The renewal of one agent's live, unexpired claims (and its `last_seen_at`), one statement.
fn renew(c: &mut Conn, agent: &str, lease: i64) -> BoardResult<Vec<ClaimInfo>> {
    let rows = c.rows(
        concat!(
            "WITH seen AS (
                 UPDATE sessions SET last_seen_at = board_wall() WHERE id = $1 AND ended_at IS NULL)
             UPDATE claims SET expires_ms = board_now_ms() + $2 WHERE session_id = $1 AND ",
            live_unexpired!("board_now_ms()"),
            " RETURNING task_id, generation, expires_ms"
        ),
        &[&agent, &lease],
    )?;
    rows.iter().map(claim_info).collect()
}
