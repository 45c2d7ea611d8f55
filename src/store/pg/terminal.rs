//! The terminals of this host's agent sessions (PostgreSQL; see `store::terminal`).

use super::{col, PgStore};
use crate::proto::error::BoardResult;
use crate::store::LiveClaim;

impl PgStore {
    pub(in crate::store) fn set_session_tty(&mut self, id: &str, tty: &str) -> BoardResult<()> {
        self.tx_shared(|c, _| {
            c.exec(
                "UPDATE sessions SET tty = $2 WHERE id = $1 AND ended_at IS NULL",
                &[&id, &tty],
            )?;
            Ok(())
        })?;
        Ok(())
    }

    pub(in crate::store) fn session_tty(&self, id: &str) -> BoardResult<Option<String>> {
        self.read(|c| {
            let r = c.opt("SELECT tty FROM sessions WHERE id = $1", &[&id])?;
            Ok(r.map(|r| col::<Option<String>>(&r, 0))
                .transpose()?
                .flatten())
        })
    }

    /// Live claims of this host's sessions with their terminals (the lapse warnings are typed
    /// on this host's terminals), earliest expiry first; expiries on the server's clock.
    pub(in crate::store) fn live_claims_with_tty(&self) -> BoardResult<Vec<LiveClaim>> {
        self.read(|c| {
            let rows = c.rows(
                "SELECT c.task_id, c.session_id, c.generation, c.expires_ms, s.tty
                 FROM claims c JOIN sessions s ON s.id = c.session_id
                 WHERE c.ended_at IS NULL AND s.host = $1 ORDER BY c.expires_ms",
                &[&self.host],
            )?;
            rows.iter()
                .map(|r| {
                    Ok(LiveClaim {
                        task: col(r, 0)?,
                        agent: col(r, 1)?,
                        generation: col(r, 2)?,
                        expires_ms: col(r, 3)?,
                        tty: col(r, 4)?,
                    })
                })
                .collect()
        })
    }
}
