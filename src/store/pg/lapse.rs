//! The end of expired claims (ARCHITECTURE.md rule 3) on the server's clock, and the helpers every path
//! that ends a claim shares: reopening its task and appending its event in the same
//! transaction (PostgreSQL; see `store::sqlite::lapse`).

use super::{event_rows, PgStore};
use crate::proto::error::BoardResult;
use crate::store::lapse_rules::due_reason;
use crate::store::Events;

impl PgStore {
    /// One statement: ends every live claim whose expiry passed on the server's clock, reopens
    /// their tasks and appends their `lapse` events. `now_ms` is not used (server time).
    pub(in crate::store) fn lapse_due(
        &mut self,
        now_ms: i64,
        lease_ms: i64,
    ) -> BoardResult<Events> {
        self.at(now_ms);
        let reason = due_reason(lease_ms);
        let (_, ev) = self.tx(|c, ev| {
            let rows = c.rows(
                concat!(
                    "WITH ended AS (
                         UPDATE claims SET ended_at = board_wall(), end_kind = ",
                    crate::sql_end!(lapse),
                    ", end_reason = $1 WHERE ",
                    live_expired!("board_now_ms()"),
                    " RETURNING task_id, session_id, generation),
                     reopened AS (
                         UPDATE tasks t SET state = ",
                    crate::sql_state!(open),
                    ", updated_at = board_wall() FROM ended e
                         WHERE t.id = e.task_id AND t.state = ",
                    crate::sql_state!(claimed),
                    " RETURNING t.id),
                     logged AS (
                         INSERT INTO events (at, kind, task_id, session_id, generation, reason)
                         SELECT board_wall(), ",
                    crate::sql_end!(lapse),
                    ", task_id, session_id, generation, $1 FROM ended ORDER BY task_id
                         RETURNING id, at, kind, task_id, session_id, generation, reason)
                     SELECT * FROM logged ORDER BY id"
                ),
                &[&reason],
            )?;
            ev.extend(event_rows(&rows)?);
            Ok(())
        })?;
        Ok(ev)
    }

    /// No-op on a shared store: a host that stalled looks cut off to the others, whose
    /// sweeps may already have ended its claims; the server's clock, which did not stall,
    /// is the truth. Returns no events.
    pub(in crate::store) fn extend_after_stall(
        &mut self,
        _stall_ms: i64,
        _floor_ms: i64,
        _reason: &str,
    ) -> BoardResult<Events> {
        Ok(Events::new())
    }

    /// This host's session `agent` gets one sweep of grace: its live claims expire no earlier
    /// than `until_ms` (the board's estimate of the server clock).
    pub(in crate::store) fn grace_session(
        &mut self,
        agent: &str,
        until_ms: i64,
    ) -> BoardResult<()> {
        let host = self.host.clone();
        self.tx(|c, _| {
            c.exec(
                "UPDATE claims SET expires_ms = GREATEST(expires_ms, $2)
                 WHERE session_id = $1 AND ended_at IS NULL
                   AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = $1 AND s.host = $3)",
                &[&agent, &until_ms, &host],
            )?;
            Ok(())
        })?;
        Ok(())
    }
}
