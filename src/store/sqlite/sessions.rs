//! Agent sessions: registration, attachment of the agent's processes, expulsion, waiting.

use rusqlite::params;

use super::lite::Lite;
use super::session_rules;
use super::*;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::SessionView;
use crate::store::db::{get, Db};
use crate::store::procs;
use crate::store::procs::reopen;

impl SqliteStore {
    // ----- sessions ---------------------------------------------------------------------------

    pub(in crate::store) fn live_sessions(&self) -> BoardResult<Vec<SessionRow>> {
        procs::session_rows(
            &mut Lite::new(&self.conn),
            session_row_sql!("WHERE ended_at IS NULL ORDER BY started_at"),
            &[],
        )
    }

    pub(in crate::store) fn sessions_with_pids(
        &self,
        boot_id: &str,
        pids: &[i32],
    ) -> BoardResult<Vec<SessionRow>> {
        let list = serde_json::to_string(pids).map_err(|e| BoardError::internal(e.to_string()))?;
        procs::session_rows(
            &mut Lite::new(&self.conn),
            session_row_sql!(
                "WHERE boot_id = $1 AND (pid IN (SELECT value FROM json_each($2))
                    OR launcher_pid IN (SELECT value FROM json_each($2)))"
            ),
            &args![boot_id, &list],
        )
    }

    pub(in crate::store) fn prune_sessions(&mut self, older_ms: i64) -> BoardResult<Vec<String>> {
        let cutoff = session_rules::wall_before(older_ms);
        let (ids, _) = self.tx(|tx, _| {
            // Same predicate in each statement: ended at or before the cutoff.
            tx.execute(
                "INSERT OR IGNORE INTO retired_session_ids (id, name, retired_at)
                 SELECT id, name, ?2 FROM sessions
                  WHERE ended_at IS NOT NULL AND ended_at <= ?1",
                params![cutoff, now_wall()],
            )?;
            // Their claims ended with them; the tasks keep their generations and the event
            // log keeps every grant and end.
            tx.execute(
                "DELETE FROM claims WHERE ended_at IS NOT NULL AND session_id IN
                   (SELECT id FROM sessions WHERE ended_at IS NOT NULL AND ended_at <= ?1)",
                [&cutoff],
            )?;
            // Nobody will read what was sent to them.
            tx.execute(
                "DELETE FROM messages WHERE recipient IN
                   (SELECT id FROM sessions WHERE ended_at IS NOT NULL AND ended_at <= ?1)",
                [&cutoff],
            )?;
            let mut st = tx.prepare(
                "DELETE FROM sessions WHERE ended_at IS NOT NULL AND ended_at <= ?1
                   AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.session_id = sessions.id)
                 RETURNING id",
            )?;
            let ids = st.query_map([&cutoff], |r| r.get::<_, String>(0))?;
            Ok(ids.collect::<Result<Vec<_>, _>>()?)
        })?;
        Ok(ids)
    }
}

/// Expels every live claim of session `id`, one by one (see
/// [`crate::store::db::Db::expel_claims`]).
pub(super) fn expel_claims(
    tx: &rusqlite::Connection,
    ev: &mut Events,
    id: &str,
    reason: &str,
) -> BoardResult<()> {
    let ended = {
        let mut st = tx.prepare(concat!(
            "UPDATE claims SET ended_at = ?2, end_kind = ",
            crate::sql_end!(expel),
            ", end_reason = ?3 WHERE session_id = ?1 AND ended_at IS NULL
                 RETURNING task_id, generation"
        ))?;
        let rows = st.query_map(params![id, now_wall(), reason], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
        })?;
        rows.collect::<Result<Vec<_>, _>>()?
    };
    for (task, generation) in ended {
        reopen(&mut Lite::new(tx), task)?;
        Lite::new(tx).emit(
            ev,
            EventKind::Expel,
            Some(task),
            Some(id),
            Some(generation),
            reason,
        )?;
    }
    Ok(())
}

/// The sessions for display (see [`crate::store::db::Db::session_views`]): the cutoff on this
/// process's wall clock.
pub(super) fn session_views(
    db: &mut Lite<'_>,
    recent_ended_ms: Option<i64>,
) -> BoardResult<Vec<SessionView>> {
    let cutoff = recent_ended_ms.map(session_rules::wall_before);
    let rows = db.rows(
        "SELECT s.id, s.name, s.pid, s.launcher_pid, s.pane_id, s.waiting, s.started_at,
                s.last_seen_at, s.ended_at, s.end_reason,
                (SELECT group_concat(task_id) FROM claims c
                  WHERE c.session_id = s.id AND c.ended_at IS NULL),
                (SELECT COUNT(*) FROM sessions p WHERE p.name = s.name AND p.rowid < s.rowid),
                s.branch, s.idle_since, s.contacted_at, s.attention_ms, s.question
         FROM sessions s
         WHERE $1 IS NULL OR s.ended_at IS NULL
            OR (s.ended_at >= $1
                AND NOT EXISTS (SELECT 1 FROM sessions n
                                 WHERE n.name = s.name AND n.rowid > s.rowid))
         ORDER BY s.started_at, s.id",
        &args![cutoff.as_deref()],
    )?;
    let now = std::time::SystemTime::now();
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let mut s = procs::session_view(r, now)?;
        let claims: Option<String> = get(r, 10)?;
        s.claims = claims
            .map(|c| c.split(',').filter_map(|x| x.parse().ok()).collect())
            .unwrap_or_default();
        out.push(s);
    }
    Ok(out)
}
