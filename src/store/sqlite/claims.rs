//! Claims on SQLite: the grant statement and the renewals (the rest is
//! `store::procs::claims`). Every change is one conditional statement (ARCHITECTURE.md rule 6).

use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};

use super::lite::Lite;
use super::*;
use crate::proto::error::BoardResult;
use crate::store::db::Ask;
use crate::store::identity::MarkFile;
use crate::store::procs::explain_claim_refusal;

/// The grant of task `?1` (or, when NULL, of the best ready task carrying label `?4`, when
/// not NULL) to agent session `?2` at wall time `?3`, by one conditional UPDATE: the task is
/// ready, meant for the session, the session is live; its generation is raised (above the
/// floor of a new epoch first). Returns the task and its new generation.
const GRANT: &str = concat!(
    "UPDATE tasks SET state = ",
    crate::sql_state!(claimed),
    ", updated_at = ?3,
        generation = MAX(generation, (SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0)
                                       FROM meta WHERE key = 'generation_floor')) + 1
     WHERE id = (
         SELECT t.id FROM tasks t
         WHERE (?1 IS NULL OR t.id = ?1) AND ",
    ready!("t"),
    " AND ",
    meant_for_ok!("t", "?2"),
    "
           AND (?4 IS NULL OR instr(',' || t.labels || ',', ',' || ?4 || ',') > 0)
         ORDER BY t.priority DESC, t.id ASC LIMIT 1)
       AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = ?2 AND s.ended_at IS NULL)
     RETURNING id, generation"
);

/// The one statement that grants `agent` a claim until `expires_ms` (see
/// [`crate::store::db::Db::grant`]), the high-water mark raised first (rule 8a), the claim row
/// and its `grant` event.
pub(super) fn grant(
    tx: &Connection,
    mark: Option<&Mutex<MarkFile>>,
    ev: &mut Events,
    ask: &Ask<'_>,
    expires_ms: i64,
) -> BoardResult<ClaimInfo> {
    let Ask {
        agent, task, label, ..
    } = *ask;
    let granted: Option<(i64, i64)> = tx
        .query_row(GRANT, params![task, agent, now_wall(), label], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let Some((id, generation)) = granted else {
        return Err(explain_claim_refusal(
            &mut super::lite::Lite::new(tx),
            agent,
            task,
        )?);
    };
    // ARCHITECTURE.md rule 8a: the high-water mark covers this generation before it is issued.
    if let Some(mark) = mark {
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
    let claimed = TaskState::Claimed.as_str();
    Lite::new(tx).emit(
        ev,
        EventKind::Grant,
        Some(id),
        Some(agent),
        Some(generation),
        claimed,
    )?;
    Ok(ClaimInfo {
        task: TaskId(id),
        generation: Generation(generation),
        expires_ms,
    })
}

/// The renewal of one agent's live, unexpired claims until `expires_ms` (and its
/// `last_seen_at`).
pub(super) fn renew(
    tx: &Connection,
    agent: &str,
    now_ms: i64,
    expires_ms: i64,
) -> BoardResult<Vec<ClaimInfo>> {
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
}

/// [`renew`] for each of `agents`: those that had a claim to renew.
pub(super) fn renew_many(
    tx: &Connection,
    agents: &[&str],
    now_ms: i64,
    expires_ms: i64,
) -> BoardResult<Vec<String>> {
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
}
