//! The end of expired claims (ARCHITECTURE.md rule 3), the stall that does not count against a lease
//! (ARCHITECTURE.md rule 8), and the helpers every path that ends a claim shares: reopening its task and
//! appending its event in the same transaction.

use rusqlite::params;

use super::lite::Lite;
use super::*;
use crate::proto::error::BoardResult;
use crate::store::db::Db;
use crate::store::procs::reopen;

use crate::store::lapse_rules::due_reason;

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
                reopen(&mut Lite::new(tx), task)?;
                Lite::new(tx).emit(
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
            Lite::new(tx).emit(
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
}

/// A claim row ended by `… RETURNING task_id, session_id, generation`: (task, holder,
/// generation).
pub(in crate::store) fn ended_claim(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, String, i64)> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
}
