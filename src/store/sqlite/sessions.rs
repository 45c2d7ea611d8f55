//! Agent sessions: registration, attachment of the agent's processes, expulsion, waiting.

use rusqlite::params;

use super::db::Lite;
use super::session_rules;
use super::*;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::SessionView;
use crate::store::db::{get, Db};
use crate::store::procs;
use crate::store::procs::reopen;
use crate::store::session_rules::session_base_name;

impl SqliteStore {
    // ----- sessions ---------------------------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    pub(in crate::store) fn register_session_as(
        &mut self,
        name: &str,
        role: Option<&str>,
        token_hash: &str,
        boot_id: &str,
        launcher: Option<(i32, u64)>,
        branch: Option<&str>,
        attention_ms: Option<i64>,
    ) -> BoardResult<(String, Events)> {
        let base = session_base_name(name)?;
        if let Some(role) = role {
            crate::proto::labels::check_label("role", role)?;
        }
        self.tx(|tx, ev| {
            let now = now_wall();
            for id in session_rules::candidate_ids(&base) {
                // The name people see: `base` unless a live session has it, else the first
                // free `base-N`, chosen by the same statement that inserts.
                let inserted = tx.execute(
                    "INSERT INTO sessions (id, name, token_hash, boot_id, launcher_pid,
                                           launcher_start, started_at, branch, attention_ms,
                                           role)
                     SELECT ?1,
                            (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL
                                                     SELECT i + 1 FROM n WHERE i < 10000),
                                  c(i, name) AS (SELECT i, CASE i WHEN 1 THEN ?2
                                                              ELSE ?2 || '-' || i END FROM n)
                             SELECT c.name FROM c
                              WHERE NOT EXISTS (SELECT 1 FROM sessions l
                                                 WHERE l.ended_at IS NULL AND l.name = c.name)
                              ORDER BY c.i LIMIT 1),
                            ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10
                     WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)
                       AND NOT EXISTS (SELECT 1 FROM retired_session_ids WHERE id = ?1)",
                    params![
                        id,
                        base,
                        token_hash,
                        boot_id,
                        launcher.map(|l| l.0),
                        launcher.map(|l| l.1 as i64),
                        now,
                        branch,
                        attention_ms,
                        role
                    ],
                )?;
                if inserted == 1 {
                    emit(
                        tx,
                        ev,
                        EventKind::SessionStart,
                        None,
                        Some(&id),
                        None,
                        "registered",
                    )?;
                    return Ok(id);
                }
            }
            Err(session_rules::no_free_id(&base))
        })
    }

    pub(in crate::store) fn expel_session(
        &mut self,
        id: &str,
        reason: &str,
    ) -> BoardResult<(bool, Events)> {
        self.tx(|tx, ev| {
            let n = tx.execute(
                "UPDATE sessions SET ended_at = ?2, end_reason = ?3, waiting = NULL, question = NULL
                 WHERE id = ?1 AND ended_at IS NULL",
                params![id, now_wall(), reason],
            )?;
            if n == 0 {
                return Ok(false);
            }
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
                emit(
                    tx,
                    ev,
                    EventKind::Expel,
                    Some(task),
                    Some(id),
                    Some(generation),
                    reason,
                )?;
            }
            emit(tx, ev, EventKind::SessionEnd, None, Some(id), None, reason)?;
            Ok(true)
        })
    }

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

    pub(in crate::store) fn sessions(
        &self,
        recent_ended_ms: Option<i64>,
        state_of: &dyn Fn(&SessionRow) -> Option<AgentState>,
    ) -> BoardResult<Vec<SessionView>> {
        let cutoff = recent_ended_ms.map(session_rules::wall_before);
        let rows = Lite::new(&self.conn).rows(
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
            procs::settle_view(self, &mut s, true, state_of)?;
            out.push(s);
        }
        Ok(out)
    }
}
