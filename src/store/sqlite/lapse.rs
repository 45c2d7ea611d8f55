//! The end of expired claims (ARCHITECTURE.md rule 3), the stall that does not count against a lease
//! (ARCHITECTURE.md rule 8), and the helpers every path that ends a claim shares: reopening its task and
//! appending its event in the same transaction.

use rusqlite::{params, Connection, OptionalExtension};

use super::*;
use crate::proto::error::BoardResult;

use crate::store::lapse_rules::{due_reason, FOUND_LATE};

impl SqliteStore {
    pub(in crate::store) fn lapse_due(
        &mut self,
        now_ms: i64,
        lease_ms: i64,
    ) -> BoardResult<Events> {
        let (_, ev) = self.tx(|tx, ev| {
            let reason = due_reason(lease_ms);
            let ended = {
                let mut st = tx.prepare(concat!(
                    "UPDATE claims SET ended_at = ?2, end_kind = ",
                    crate::sql_end!(lapse),
                    ", end_reason = ?3 WHERE ",
                    live_expired!("?1"),
                    " RETURNING task_id, session_id, generation"
                ))?;
                let rows = st.query_map(params![now_ms, now_wall(), reason], ended_claim)?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            for (task, agent, generation) in ended {
                reopen(tx, task)?;
                emit(
                    tx,
                    ev,
                    EventKind::Lapse,
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

    pub(in crate::store) fn earliest_expiry(&self) -> BoardResult<Option<i64>> {
        Ok(self.conn.query_row(
            "SELECT MIN(expires_ms) FROM claims WHERE ended_at IS NULL",
            [],
            |r| r.get(0),
        )?)
    }

    pub(in crate::store) fn extend_after_stall(
        &mut self,
        stall_ms: i64,
        floor_ms: i64,
        reason: &str,
    ) -> BoardResult<Events> {
        let (_, ev) = self.tx(|tx, ev| {
            let n = tx.execute(
                "UPDATE claims SET expires_ms = MAX(expires_ms + ?1, ?2)
                 WHERE ended_at IS NULL",
                params![stall_ms.max(0), floor_ms],
            )?;
            emit(
                tx,
                ev,
                EventKind::Stall,
                None,
                None,
                None,
                &format!("{reason}; {n} live claim(s) extended"),
            )?;
            Ok(())
        })?;
        Ok(ev)
    }

    pub(in crate::store) fn grace_session(
        &mut self,
        agent: &str,
        until_ms: i64,
    ) -> BoardResult<()> {
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

    pub(in crate::store) fn any_due(&self, now_ms: i64) -> BoardResult<bool> {
        Ok(self.conn.query_row(
            concat!(
                "SELECT EXISTS (SELECT 1 FROM claims WHERE ",
                live_expired!("?1"),
                ")"
            ),
            [now_ms],
            |r| r.get(0),
        )?)
    }
}

pub(in crate::store) fn end_live_claims_of_task(
    tx: &Connection,
    ev: &mut Events,
    task: i64,
    kind: ClaimEnd,
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
            EventKind::Release,
            Some(task),
            Some(&agent),
            Some(generation),
            reason,
        )?;
    }
    Ok(())
}

/// A claim row ended by `… RETURNING task_id, session_id, generation`: (task, holder,
/// generation).
pub(in crate::store) fn ended_claim(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, String, i64)> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
}

pub(in crate::store) fn reopen(tx: &Connection, task: i64) -> BoardResult<()> {
    tx.execute(
        concat!(
            "UPDATE tasks SET state = ",
            crate::sql_state!(open),
            ", updated_at = ?2 WHERE id = ?1 AND state = ",
            crate::sql_state!(claimed)
        ),
        params![task, now_wall()],
    )?;
    Ok(())
}

/// Lapses the live claim on `task` (only `holder`'s, when given) if its expiry is at or before
/// `now_ms`: ends it, reopens the task, appends the `lapse` event. `told` marks the claim as
/// reported to its holder (the refusal that found it says so). Returns the ended claim.
pub(in crate::store) fn lapse_expired(
    tx: &Connection,
    ev: &mut Events,
    task: i64,
    holder: Option<&str>,
    now_ms: i64,
    told: bool,
) -> BoardResult<Option<(String, i64)>> {
    let reason = FOUND_LATE;
    let ended: Option<(String, i64)> = tx
        .query_row(
            concat!(
                "UPDATE claims SET ended_at = ?4, end_kind = ",
                crate::sql_end!(lapse),
                ", end_reason = ?5, told = ?6 WHERE task_id = ?1 AND ",
                live_expired!("?2"),
                " AND (?3 IS NULL OR session_id = ?3) RETURNING session_id, generation"
            ),
            params![task, now_ms, holder, now_wall(), reason, told],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((agent, generation)) = &ended {
        reopen(tx, task)?;
        emit(
            tx,
            ev,
            EventKind::Lapse,
            Some(task),
            Some(agent),
            Some(*generation),
            reason,
        )?;
    }
    Ok(ended)
}
