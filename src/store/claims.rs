//! Claims: grants, renewals, the fenced holder writes (`done`, `release`, `note`, `check`) and
//! the lapse of expired claims. Every change is one conditional statement (design rule 6).

use rusqlite::{params, Connection, OptionalExtension};

use super::refusals::{explain_claim_refusal, explain_force_refusal, explain_write_refusal};
use super::tasks::{insert_note, task_view};
use super::*;
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::{NoteView, TaskView};

impl Store {
    // ----- claims -----------------------------------------------------------------------------

    /// Grants `agent` a claim on `task`, or on the best ready task when `task` is None (highest
    /// priority, then oldest). Design rule 1: one conditional UPDATE decides; the generation is
    /// incremented in the same transaction (and lifted above the floor of a new epoch, see
    /// `store::identity`). Claiming a task the caller already holds (live) answers
    /// `already: true` with the same generation; a named task whose live claim has expired is
    /// lapsed first, in the same transaction. Errors: `not_found`, `conflict` (held:
    /// `data.holder`, `data.generation`), `no_ready_task` (`data.remaining` = unfinished tasks;
    /// for a named task: `data.blocked_by` when it waits, `data.state` when it is done or
    /// cancelled), `lapsed` if the session has ended.
    pub fn claim(
        &mut self,
        agent: &str,
        task: Option<i64>,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<(ClaimOutcome, Events)> {
        let mark = self.mark.clone();
        self.tx(|tx, ev| {
            if let Some(id) = task {
                let mine: Option<(i64, i64)> = tx
                    .query_row(
                        "UPDATE claims SET expires_ms = MAX(expires_ms, ?3)
                         WHERE task_id = ?1 AND session_id = ?2 AND ended_at IS NULL
                           AND expires_ms > ?4
                         RETURNING generation, expires_ms",
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
                    "UPDATE tasks SET state = 'claimed', updated_at = ?3,
                            generation = MAX(generation, (SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0)
                                                           FROM meta WHERE key = 'generation_floor')) + 1
                     WHERE id = (
                         SELECT t.id FROM tasks t
                         WHERE t.state = 'open' AND (?1 IS NULL OR t.id = ?1)
                           AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks a ON a.id = d.after_id
                                           WHERE d.task_id = t.id AND a.state NOT IN ('done', 'cancelled'))
                         ORDER BY t.priority DESC, t.id ASC LIMIT 1)
                       AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = ?2 AND s.ended_at IS NULL)
                     RETURNING id, generation",
                    params![task, agent, now_wall()],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let Some((id, generation)) = granted else {
                return Err(explain_claim_refusal(tx, agent, task)?);
            };
            // Design rule 8a: the high-water mark covers this generation before it is issued.
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
            emit(tx, ev, "grant", Some(id), Some(agent), Some(generation), "claimed")?;
            Ok(ClaimOutcome {
                task: task_view(tx, id, now_ms)?,
                claim: ClaimInfo { task: id, generation, expires_ms },
                already: false,
            })
        })
    }

    /// Moves the expiry of every live, unexpired claim of `agent` to `expires_ms` (design rule 2)
    /// and records `last_seen_at`. Returns the claims renewed.
    pub fn renew(
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
            let mut st = tx.prepare_cached(
                "UPDATE claims SET expires_ms = ?3
                 WHERE session_id = ?1 AND ended_at IS NULL AND expires_ms > ?2
                 RETURNING task_id, generation, expires_ms",
            )?;
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

    /// [`Store::renew`] for several agents in one transaction (the sweep's renewals: one write
    /// transaction per sweep, not one per agent). Returns the agents that had a claim renewed.
    pub fn renew_many(
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
            let mut renew = tx.prepare_cached(
                "UPDATE claims SET expires_ms = ?3
                 WHERE session_id = ?1 AND ended_at IS NULL AND expires_ms > ?2",
            )?;
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

    /// Live claims of `agent`.
    pub fn live_claims(&self, agent: &str) -> BoardResult<Vec<ClaimInfo>> {
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

    /// Explicit `renew`: like [`Store::renew`], but the caller's claims whose expiry has passed
    /// are lapsed first (in the same transaction, design rule 5), and an agent left with no live
    /// claim that lost one gets `lapsed` naming every claim it lost (`data.lost`).
    pub fn renew_checked(
        &mut self,
        agent: &str,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<Vec<ClaimInfo>> {
        let lost = self.tx_refusable(|tx, ev| {
            let ended = {
                let mut st = tx.prepare(
                    "SELECT task_id FROM claims
                     WHERE session_id = ?1 AND ended_at IS NULL AND expires_ms <= ?2",
                )?;
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
                let list = lost
                    .iter()
                    .map(|l| format!("task {} ({})", l.task, l.end))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(BoardError::new(
                    ErrorKind::Lapsed,
                    format!("agent session {agent} holds no live claim; it lost {list}"),
                )
                .with("lost", serde_json::to_value(&lost).unwrap_or_default()));
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

    /// Claims of `agent` that ended without its asking and were not reported to it yet, oldest
    /// first; marks them reported (one conditional UPDATE). A cheap read first skips the write
    /// transaction on the common path, where there is nothing to tell.
    pub fn take_lost(&mut self, agent: &str) -> BoardResult<Vec<LostClaim>> {
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
                        end: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
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

    /// Finishes `task` for its holder `agent` (design rules 5 and 7). With `generation`, it must
    /// equal the live claim's. Repeating a successful `done` answers `already: true`. Errors:
    /// `lapsed` (the caller's claim ended or the generation is stale), `conflict`, `not_found`.
    pub fn done(
        &mut self,
        agent: &str,
        task: i64,
        generation: Option<i64>,
        note: Option<&str>,
        now_ms: i64,
    ) -> BoardResult<(DoneOutcome, Events)> {
        if let Some(n) = note {
            check_text("note", n, MAX_TEXT, false)?;
        }
        self.tx_refusable(|tx, ev| {
            let ended = end_own_claim(tx, agent, task, generation, now_ms, "done", "done")?;
            let Some(generation) = ended else {
                let already: Option<i64> = tx
                    .query_row(
                        "SELECT done_generation FROM tasks WHERE id = ?1 AND state = 'done'
                         AND done_by = ?2 AND (?3 IS NULL OR done_generation = ?3)",
                        params![task, agent, generation],
                        |r| r.get(0),
                    )
                    .optional()?;
                if let Some(g) = already {
                    return Ok(Ok(DoneOutcome {
                        task: task_view(tx, task, now_ms)?,
                        generation: g,
                        already: true,
                    }));
                }
                return refuse_write(tx, ev, agent, task, generation, now_ms);
            };
            let now = now_wall();
            tx.execute(
                "UPDATE tasks SET state = 'done', done_by = ?2, done_generation = ?3, done_at = ?4,
                        updated_at = ?4
                 WHERE id = ?1 AND state = 'claimed'",
                params![task, agent, generation, now],
            )?;
            if let Some(n) = note {
                insert_note(tx, task, agent, Some(generation), n)?;
            }
            emit(
                tx,
                ev,
                "done",
                Some(task),
                Some(agent),
                Some(generation),
                note.unwrap_or("done"),
            )?;
            Ok(Ok(DoneOutcome {
                task: task_view(tx, task, now_ms)?,
                generation,
                already: false,
            }))
        })
    }

    /// Gives a claimed task back: by its holder (fenced like `done`), or by an operator with
    /// `force` (ends whoever's live claim; with `generation`, only a live claim at exactly that
    /// generation, else `lapsed`: the operator's view is stale). The task becomes open again.
    pub fn release(
        &mut self,
        agent: Option<&str>,
        task: i64,
        generation: Option<i64>,
        note: Option<&str>,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        if let Some(n) = note {
            check_text("note", n, MAX_TEXT, false)?;
        }
        self.tx_refusable(|tx, ev| {
            let (generation, holder) = match agent {
                Some(agent) => {
                    match end_own_claim(tx, agent, task, generation, now_ms, "release", "released")? {
                        Some(g) => (g, agent.to_string()),
                        None => return refuse_write(tx, ev, agent, task, generation, now_ms),
                    }
                }
                None => {
                    let ended: Option<(i64, String)> = tx
                        .query_row(
                            "UPDATE claims SET ended_at = ?2, end_kind = 'release',
                                    end_reason = 'force-released by operator'
                             WHERE task_id = ?1 AND ended_at IS NULL
                               AND (?3 IS NULL OR generation = ?3)
                             RETURNING generation, session_id",
                            params![task, now_wall(), generation],
                            |r| Ok((r.get(0)?, r.get(1)?)),
                        )
                        .optional()?;
                    match ended {
                        Some(x) => x,
                        None => return Ok(Err(explain_force_refusal(tx, task, generation)?)),
                    }
                }
            };
            tx.execute(
                "UPDATE tasks SET state = 'open', updated_at = ?2 WHERE id = ?1 AND state = 'claimed'",
                params![task, now_wall()],
            )?;
            let author = agent.unwrap_or(OPERATOR);
            if let Some(n) = note {
                insert_note(tx, task, author, Some(generation), n)?;
            }
            let reason = match agent {
                Some(_) => "released by holder".to_string(),
                None => format!("force-released by operator (held by {holder})"),
            };
            emit(tx, ev, "release", Some(task), Some(&holder), Some(generation), &reason)?;
            Ok(Ok(task_view(tx, task, now_ms)?))
        })
    }

    /// Adds a note. From an agent it is a write as holder (fenced: `lapsed`/`conflict`; with
    /// `generation`, it must be the live claim's); from an operator it is accepted on any task.
    pub fn note(
        &mut self,
        agent: Option<&str>,
        task: i64,
        text: &str,
        generation: Option<i64>,
        now_ms: i64,
    ) -> BoardResult<(NoteView, Events)> {
        check_text("note", text, MAX_TEXT, false)?;
        self.tx_refusable(|tx, ev| {
            let (author, generation) = match agent {
                Some(a) => {
                    let generation: Option<i64> = tx
                        .query_row(
                            "UPDATE claims SET expires_ms = expires_ms
                             WHERE task_id = ?1 AND session_id = ?2 AND ended_at IS NULL
                               AND expires_ms > ?3 AND (?4 IS NULL OR generation = ?4)
                             RETURNING generation",
                            params![task, a, now_ms, generation],
                            |r| r.get(0),
                        )
                        .optional()?;
                    match generation {
                        Some(g) => (a.to_string(), Some(g)),
                        None => return refuse_write(tx, ev, a, task, generation, now_ms),
                    }
                }
                None => {
                    task_state(tx, task)?;
                    (OPERATOR.to_string(), None)
                }
            };
            let id = insert_note(tx, task, &author, generation, text)?;
            emit(tx, ev, "note", Some(task), agent, generation, text)?;
            Ok(Ok(NoteView {
                id,
                task,
                author,
                generation,
                text: text.to_string(),
                at: now_wall(),
            }))
        })
    }

    /// `board check`: Ok when `agent` holds a live claim on `task` (any live claim when None) at
    /// `generation` (when given). Errors as for `done`.
    pub fn check(
        &mut self,
        agent: &str,
        task: Option<i64>,
        generation: Option<i64>,
        now_ms: i64,
    ) -> BoardResult<ClaimInfo> {
        let found: Option<ClaimInfo> = self
            .conn
            .query_row(
                "SELECT task_id, generation, expires_ms FROM claims
                 WHERE session_id = ?1 AND ended_at IS NULL AND expires_ms > ?2
                   AND (?3 IS NULL OR task_id = ?3) AND (?4 IS NULL OR generation = ?4)
                 ORDER BY task_id LIMIT 1",
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
                Err(explain_write_refusal(&tx, agent, t, generation)?)
            }
            (None, None) => Err(BoardError::new(
                ErrorKind::Lapsed,
                format!("agent session {agent} holds no live claim"),
            )),
        }
    }

    /// Ends every live claim whose expiry is at or before `now_ms` (design rule 3, last step).
    pub fn lapse_due(&mut self, now_ms: i64, lease_ms: i64) -> BoardResult<Events> {
        let (_, ev) = self.tx(|tx, ev| {
            let reason = format!("lease expired (not renewed for {})", fmt_ms(lease_ms));
            let ended = {
                let mut st = tx.prepare(
                    "UPDATE claims SET ended_at = ?2, end_kind = 'lapse', end_reason = ?3
                     WHERE ended_at IS NULL AND expires_ms <= ?1
                     RETURNING task_id, session_id, generation",
                )?;
                let rows = st.query_map(params![now_ms, now_wall(), reason], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            for (task, agent, generation) in ended {
                reopen(tx, task)?;
                emit(
                    tx,
                    ev,
                    "lapse",
                    Some(task),
                    Some(&agent),
                    Some(generation),
                    &reason,
                )?;
            }
            Ok(())
        })?;
        Ok(ev)
    }

    /// The earliest expiry (lease clock, ms) among live claims.
    pub fn earliest_expiry(&self) -> BoardResult<Option<i64>> {
        Ok(self.conn.query_row(
            "SELECT MIN(expires_ms) FROM claims WHERE ended_at IS NULL",
            [],
            |r| r.get(0),
        )?)
    }

    /// After a stall of `stall_ms` found at `now_ms` (the board was not running: suspend,
    /// SIGSTOP): every live claim's expiry becomes `max(expiry + stall_ms, now_ms + sweep_ms)`
    /// ([`crate::daemon::lease::LeaseRules::expiry_after_stall`]), so the stall does not count
    /// against any lease, in one UPDATE; a `stall` event says so. Returns the events.
    pub fn extend_after_stall(
        &mut self,
        now_ms: i64,
        stall_ms: i64,
        sweep_ms: i64,
        reason: &str,
    ) -> BoardResult<Events> {
        let (_, ev) = self.tx(|tx, ev| {
            let n = tx.execute(
                "UPDATE claims SET expires_ms = MAX(expires_ms + ?2, ?1 + ?3)
                 WHERE ended_at IS NULL",
                params![now_ms, stall_ms.max(0), sweep_ms],
            )?;
            emit(
                tx,
                ev,
                "stall",
                None,
                None,
                None,
                &format!("{reason}; {n} live claim(s) extended"),
            )?;
            Ok(())
        })?;
        Ok(ev)
    }

    /// Design rule 8 at start: a living session gets one sweep of grace to show activity —
    /// its live claims expire no earlier than `until_ms`; a restart never shortens nor, beyond
    /// that, extends a lease.
    pub fn grace_session(&mut self, agent: &str, until_ms: i64) -> BoardResult<()> {
        self.tx(|tx, _| {
            tx.execute(
                "UPDATE claims SET expires_ms = MAX(expires_ms, ?2)
                 WHERE session_id = ?1 AND ended_at IS NULL",
                params![agent, until_ms],
            )?;
            Ok(())
        })?;
        Ok(())
    }

    /// Whether any live claim is due to lapse at `now_ms` (cheap read to skip empty sweeps).
    pub fn any_due(&self, now_ms: i64) -> BoardResult<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM claims WHERE ended_at IS NULL AND expires_ms <= ?1)",
            [now_ms],
            |r| r.get(0),
        )?)
    }
}

/// The fenced step of every holder write: ends the caller's own live, unexpired claim on `task`
/// (at `generation` when given) in one conditional UPDATE. None when no such claim exists.
pub(super) fn end_own_claim(
    tx: &Connection,
    agent: &str,
    task: i64,
    generation: Option<i64>,
    now_ms: i64,
    kind: &str,
    reason: &str,
) -> BoardResult<Option<i64>> {
    Ok(tx
        .query_row(
            "UPDATE claims SET ended_at = ?5, end_kind = ?6, end_reason = ?7, told = 1
             WHERE task_id = ?1 AND session_id = ?2 AND ended_at IS NULL AND expires_ms > ?3
               AND (?4 IS NULL OR generation = ?4)
             RETURNING generation",
            params![task, agent, now_ms, generation, now_wall(), kind, reason],
            |r| r.get(0),
        )
        .optional()?)
}

pub(super) fn end_live_claims_of_task(
    tx: &Connection,
    ev: &mut Events,
    task: i64,
    kind: &str,
    reason: &str,
) -> BoardResult<()> {
    let ended: Option<(String, i64)> = tx
        .query_row(
            "UPDATE claims SET ended_at = ?2, end_kind = ?3, end_reason = ?4
             WHERE task_id = ?1 AND ended_at IS NULL RETURNING session_id, generation",
            params![task, now_wall(), kind, reason],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((agent, generation)) = ended {
        emit(
            tx,
            ev,
            "release",
            Some(task),
            Some(&agent),
            Some(generation),
            reason,
        )?;
    }
    Ok(())
}

pub(super) fn reopen(tx: &Connection, task: i64) -> BoardResult<()> {
    tx.execute(
        "UPDATE tasks SET state = 'open', updated_at = ?2 WHERE id = ?1 AND state = 'claimed'",
        params![task, now_wall()],
    )?;
    Ok(())
}

/// A holder write found no live, unexpired claim of the caller at the given generation: lapse
/// the caller's own expired claim on `task` now (so the log shows its end before the refusal,
/// design rule 5), then answer why the write is refused. The refusal names the lapse itself,
/// so that claim counts as told.
fn refuse_write<T>(
    tx: &Connection,
    ev: &mut Events,
    agent: &str,
    task: i64,
    generation: Option<i64>,
    now_ms: i64,
) -> BoardResult<BoardResult<T>> {
    lapse_expired(tx, ev, task, Some(agent), now_ms, true)?;
    Ok(Err(explain_write_refusal(tx, agent, task, generation)?))
}

/// Lapses the live claim on `task` (only `holder`'s, when given) if its expiry is at or before
/// `now_ms`: ends it, reopens the task, appends the `lapse` event. `told` marks the claim as
/// reported to its holder (the refusal that found it says so). Returns the ended claim.
pub(super) fn lapse_expired(
    tx: &Connection,
    ev: &mut Events,
    task: i64,
    holder: Option<&str>,
    now_ms: i64,
    told: bool,
) -> BoardResult<Option<(String, i64)>> {
    let reason = "lease expired (not renewed in time; found by a later call)";
    let ended: Option<(String, i64)> = tx
        .query_row(
            "UPDATE claims SET ended_at = ?4, end_kind = 'lapse', end_reason = ?5, told = ?6
             WHERE task_id = ?1 AND ended_at IS NULL AND expires_ms <= ?2
               AND (?3 IS NULL OR session_id = ?3)
             RETURNING session_id, generation",
            params![task, now_ms, holder, now_wall(), reason, told],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((agent, generation)) = &ended {
        reopen(tx, task)?;
        emit(
            tx,
            ev,
            "lapse",
            Some(task),
            Some(agent),
            Some(*generation),
            reason,
        )?;
    }
    Ok(ended)
}
