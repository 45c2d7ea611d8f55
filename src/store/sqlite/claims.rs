//! Claims: grants, renewals, `check`, and the report of claims lost without asking. The fenced
//! holder writes are in `holder_writes`, the end of expired claims in `lapse`. Every change is
//! one conditional statement (ARCHITECTURE.md rule 6).

use rusqlite::{params, OptionalExtension};

use super::lapse::lapse_expired;
use super::refusal;
use super::refusals::{explain_claim_refusal, explain_write_refusal};
use super::tasks::task_view;
use super::*;
use crate::proto::error::{BoardResult, ErrorKind};

impl SqliteStore {
    // ----- claims -----------------------------------------------------------------------------

    pub(in crate::store) fn claim(
        &mut self,
        agent: &str,
        task: Option<TaskId>,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<(ClaimOutcome, Events)> {
        self.grant(agent, task, None, now_ms, expires_ms)
    }

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

    /// A claim of task `task`, or of the best ready task (carrying `label`, when given).
    fn grant(
        &mut self,
        agent: &str,
        task: Option<TaskId>,
        label: Option<&str>,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<(ClaimOutcome, Events)> {
        let task = task.map(i64::from);
        let mark = self.mark.clone();
        self.tx(|tx, ev| {
            if let Some(id) = task {
                let mine: Option<(i64, i64)> = tx
                    .query_row(
                        concat!(
                            "UPDATE claims SET expires_ms = MAX(expires_ms, ?3)
                             WHERE task_id = ?1 AND session_id = ?2 AND ",
                            live_unexpired!("?4"),
                            " RETURNING generation, expires_ms"
                        ),
                        params![id, agent, expires_ms, now_ms],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?;
                if let Some((generation, expires_ms)) = mine {
                    return Ok(ClaimOutcome {
                        task: task_view(tx, id, now_ms)?,
                        claim: ClaimInfo { task: id, generation, expires_ms },
                        already: true,
                    });
                }
                lapse_expired(tx, ev, id, None, now_ms, false)?;
            }
            let granted: Option<(i64, i64)> = tx
                .query_row(
                    concat!(
                        "UPDATE tasks SET state = ", crate::sql_state!(claimed), ", updated_at = ?3,
                            generation = MAX(generation, (SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0)
                                                           FROM meta WHERE key = 'generation_floor')) + 1
                         WHERE id = (
                             SELECT t.id FROM tasks t
                             WHERE (?1 IS NULL OR t.id = ?1) AND ", ready!("t"), " AND ", meant_for_ok!("t", "?2"), "
                               AND (?4 IS NULL OR instr(',' || t.labels || ',', ',' || ?4 || ',') > 0)
                             ORDER BY t.priority DESC, t.id ASC LIMIT 1)
                           AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = ?2 AND s.ended_at IS NULL)
                         RETURNING id, generation"
                    ),
                    params![task, agent, now_wall(), label],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let Some((id, generation)) = granted else {
                return Err(explain_claim_refusal(tx, agent, task)?);
            };
            // ARCHITECTURE.md rule 8a: the high-water mark covers this generation before it is issued.
            if let Some(mark) = &mark {
                let mut f = mark.lock().unwrap_or_else(|p| p.into_inner());
                if generation > f.mark.reserved {
                    let events: i64 =
                        tx.query_row("SELECT COALESCE(MAX(id), 0) FROM events", [], |r| r.get(0))?;
                    f.reserve(generation, events)?;
                }
            }
            tx.execute(
                "INSERT INTO claims (task_id, session_id, generation, granted_at, expires_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, agent, generation, now_wall(), expires_ms],
            )?;
            emit(tx, ev, EventKind::Grant, Some(id), Some(agent), Some(generation), TaskState::Claimed.as_str())?;
            Ok(ClaimOutcome {
                task: task_view(tx, id, now_ms)?,
                claim: ClaimInfo { task: id, generation, expires_ms },
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
        let (claims, _) = self.tx(|tx, _| {
            tx.execute(
                "UPDATE sessions SET last_seen_at = ?2 WHERE id = ?1 AND ended_at IS NULL",
                params![agent, now_wall()],
            )?;
            let mut st = tx.prepare_cached(concat!(
                "UPDATE claims SET expires_ms = ?3 WHERE session_id = ?1 AND ",
                live_unexpired!("?2"),
                " RETURNING task_id, generation, expires_ms"
            ))?;
            let rows = st.query_map(params![agent, now_ms, expires_ms], |r| {
                Ok(ClaimInfo {
                    task: r.get(0)?,
                    generation: r.get(1)?,
                    expires_ms: r.get(2)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })?;
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
        let (renewed, _) = self.tx(|tx, _| {
            let at = now_wall();
            let mut seen = tx.prepare_cached(
                "UPDATE sessions SET last_seen_at = ?2 WHERE id = ?1 AND ended_at IS NULL",
            )?;
            let mut renew = tx.prepare_cached(concat!(
                "UPDATE claims SET expires_ms = ?3 WHERE session_id = ?1 AND ",
                live_unexpired!("?2")
            ))?;
            let mut renewed = Vec::new();
            for agent in agents {
                seen.execute(params![agent, at])?;
                if renew.execute(params![agent, now_ms, expires_ms])? > 0 {
                    renewed.push(agent.to_string());
                }
            }
            Ok(renewed)
        })?;
        Ok(renewed)
    }

    pub(in crate::store) fn live_claims(&self, agent: &str) -> BoardResult<Vec<ClaimInfo>> {
        let mut st = self.conn.prepare(
            "SELECT task_id, generation, expires_ms FROM claims
             WHERE session_id = ?1 AND ended_at IS NULL ORDER BY task_id",
        )?;
        let rows = st.query_map([agent], |r| {
            Ok(ClaimInfo {
                task: r.get(0)?,
                generation: r.get(1)?,
                expires_ms: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub(in crate::store) fn renew_checked(
        &mut self,
        agent: &str,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<Vec<ClaimInfo>> {
        let lost = self.tx_refusable(|tx, ev| {
            let ended = {
                let mut st = tx.prepare(concat!(
                    "SELECT task_id FROM claims WHERE session_id = ?1 AND ",
                    live_expired!("?2")
                ))?;
                let rows = st.query_map(params![agent, now_ms], |r| r.get::<_, i64>(0))?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            for task in ended {
                lapse_expired(tx, ev, task, Some(agent), now_ms, false)?;
            }
            Ok(Ok(()))
        });
        lost?;
        let claims = self.renew(agent, now_ms, expires_ms)?;
        if claims.is_empty() {
            let lost = self.take_lost(agent)?;
            if !lost.is_empty() {
                return Err(refusal::lost_claims(agent, &lost));
            }
            let last: Option<(i64, i64)> = self
                .conn
                .query_row(
                    "SELECT task_id, generation FROM claims WHERE session_id = ?1
                     ORDER BY id DESC LIMIT 1",
                    [agent],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            if let Some((task, generation)) = last {
                let tx = self.conn.unchecked_transaction()?;
                let err = explain_write_refusal(&tx, agent, task, Some(generation))?;
                if err.kind == ErrorKind::Lapsed {
                    return Err(err);
                }
            }
        }
        Ok(claims)
    }

    pub(in crate::store) fn take_lost(&mut self, agent: &str) -> BoardResult<Vec<LostClaim>> {
        let any: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM claims
                            WHERE session_id = ?1 AND told = 0 AND ended_at IS NOT NULL)",
            [agent],
            |r| r.get(0),
        )?;
        if !any {
            return Ok(Vec::new());
        }
        let (mut lost, _) = self.tx(|tx, _| {
            let mut st = tx.prepare(
                "UPDATE claims SET told = 1
                 WHERE session_id = ?1 AND told = 0 AND ended_at IS NOT NULL
                 RETURNING id, task_id, generation, end_kind, end_reason, ended_at",
            )?;
            let rows = st.query_map([agent], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    LostClaim {
                        task: r.get(1)?,
                        generation: r.get(2)?,
                        end: r.get(3)?,
                        reason: r.get(4)?,
                        ended_at: r.get(5)?,
                    },
                ))
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
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
        let found: Option<ClaimInfo> = self
            .conn
            .query_row(
                concat!(
                    "SELECT task_id, generation, expires_ms FROM claims WHERE session_id = ?1 AND ",
                    live_unexpired!("?2"),
                    " AND (?3 IS NULL OR task_id = ?3) AND (?4 IS NULL OR generation = ?4)
                     ORDER BY task_id LIMIT 1"
                ),
                params![agent, now_ms, task, generation],
                |r| {
                    Ok(ClaimInfo {
                        task: r.get(0)?,
                        generation: r.get(1)?,
                        expires_ms: r.get(2)?,
                    })
                },
            )
            .optional()?;
        match (found, task) {
            (Some(c), _) => Ok(c),
            (None, Some(t)) => {
                let tx = self.conn.unchecked_transaction()?;
                Err(explain_write_refusal(
                    &tx,
                    agent,
                    t.0,
                    generation.map(i64::from),
                )?)
            }
            (None, None) => Err(refusal::holds_no_claim(agent)),
        }
    }
}
