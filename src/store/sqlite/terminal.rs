//! What the board keeps about agents' terminals: the tty a session runs on, and the live claims
//! the lapse warnings look at.

use rusqlite::params;

use super::SqliteStore;
use crate::proto::error::BoardResult;
use crate::store::LiveClaim;

impl SqliteStore {
    pub(in crate::store) fn set_session_tty(&mut self, id: &str, tty: &str) -> BoardResult<()> {
        self.tx(|tx, _| {
            tx.execute(
                "UPDATE sessions SET tty = ?2 WHERE id = ?1 AND ended_at IS NULL",
                params![id, tty],
            )?;
            Ok(())
        })?;
        Ok(())
    }

    pub(in crate::store) fn session_tty(&self, id: &str) -> BoardResult<Option<String>> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn
            .query_row("SELECT tty FROM sessions WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .flatten())
    }

    pub(in crate::store) fn live_claims_with_tty(&self) -> BoardResult<Vec<LiveClaim>> {
        let mut st = self.conn.prepare_cached(
            "SELECT c.task_id, c.session_id, c.generation, c.expires_ms, s.tty
             FROM claims c JOIN sessions s ON s.id = c.session_id
             WHERE c.ended_at IS NULL ORDER BY c.expires_ms",
        )?;
        let rows = st.query_map([], |r| {
            Ok(LiveClaim {
                task: r.get(0)?,
                agent: r.get(1)?,
                generation: r.get(2)?,
                expires_ms: r.get(3)?,
                tty: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
