//! Agent sessions: registration, attachment of the agent's processes, expulsion, waiting.

use rusqlite::{params, OptionalExtension};

use super::lapse::reopen;
use super::session_rules;
use super::*;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::SessionView;
use crate::store::session_rules::session_base_name;

impl SqliteStore {
    // ----- sessions ---------------------------------------------------------------------------

    pub(in crate::store) fn register_session(
        &mut self,
        name: &str,
        token_hash: &str,
        boot_id: &str,
        launcher: Option<(i32, u64)>,
        branch: Option<&str>,
        attention_ms: Option<i64>,
    ) -> BoardResult<(String, Events)> {
        self.register_session_as(
            name,
            None,
            token_hash,
            boot_id,
            launcher,
            branch,
            attention_ms,
        )
    }

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

    pub(in crate::store) fn attach_session(
        &mut self,
        id: &str,
        agent: (i32, u64),
        pane: Option<(&str, i32, u64)>,
    ) -> BoardResult<()> {
        let (n, _) = self.tx(|tx, _| {
            Ok(tx.execute(
                "UPDATE sessions SET pid = ?2, pid_start = ?3,
                        pane_id = COALESCE(?4, pane_id), pane_pid = COALESCE(?5, pane_pid),
                        pane_start = COALESCE(?6, pane_start)
                 WHERE id = ?1 AND ended_at IS NULL",
                params![
                    id,
                    agent.0,
                    agent.1 as i64,
                    pane.map(|p| p.0),
                    pane.map(|p| p.1),
                    pane.map(|p| p.2 as i64)
                ],
            )?)
        })?;
        if n == 0 {
            return Err(session_rules::attach_ended(id));
        }
        Ok(())
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
                reopen(tx, task)?;
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

    pub(in crate::store) fn set_waiting(
        &mut self,
        id: &str,
        question: Option<&str>,
    ) -> BoardResult<(bool, Events)> {
        if let Some(q) = question {
            check_text("question", q, MAX_TEXT, false)?;
        }
        self.tx(|tx, ev| {
            let n = tx.execute(
                "UPDATE sessions SET waiting = ?2 WHERE id = ?1 AND ended_at IS NULL
                   AND waiting IS NOT ?2",
                params![id, question],
            )?;
            if n == 1 {
                match question {
                    Some(q) => emit(tx, ev, EventKind::Wait, None, Some(id), None, q)?,
                    None => emit(tx, ev, EventKind::Resume, None, Some(id), None, "resumed")?,
                };
            }
            Ok(n == 1)
        })
    }

    pub(in crate::store) fn set_question(
        &mut self,
        id: &str,
        question: Option<&str>,
    ) -> BoardResult<(bool, Events)> {
        if let Some(q) = question {
            check_text("question", q, MAX_TEXT, false)?;
        }
        self.tx(|tx, ev| {
            let n = tx.execute(
                "UPDATE sessions SET question = ?2
                 WHERE id = ?1 AND ended_at IS NULL AND question IS NOT ?2",
                params![id, question],
            )?;
            if n == 1 {
                let (kind, reason) = session_rules::question_event(question);
                emit(tx, ev, kind, None, Some(id), None, &reason)?;
            }
            Ok(n == 1)
        })
    }

    pub(in crate::store) fn mark_contacted(&mut self, id: &str) -> BoardResult<bool> {
        let (n, _) = self.tx(|tx, _| {
            Ok(tx.execute(
                "UPDATE sessions SET contacted_at = ?2
                 WHERE id = ?1 AND ended_at IS NULL AND contacted_at IS NULL",
                params![id, now_wall()],
            )?)
        })?;
        Ok(n == 1)
    }

    pub(in crate::store) fn set_idle(
        &mut self,
        id: &str,
        reason: Option<&str>,
    ) -> BoardResult<(bool, Events)> {
        if let Some(r) = reason {
            check_text("reason", r, MAX_TEXT, false)?;
        }
        self.tx(|tx, ev| {
            let n = match reason {
                Some(r) => {
                    let n = tx.execute(
                        "UPDATE sessions SET idle_since = ?2
                         WHERE id = ?1 AND ended_at IS NULL AND idle_since IS NULL",
                        params![id, now_wall()],
                    )?;
                    if n == 1 {
                        emit(tx, ev, EventKind::Idle, None, Some(id), None, r)?;
                    }
                    n
                }
                None => tx.execute(
                    "UPDATE sessions SET idle_since = NULL WHERE id = ?1 AND idle_since IS NOT NULL",
                    [id],
                )?,
            };
            Ok(n == 1)
        })
    }

    pub(in crate::store) fn session(&self, id: &str) -> BoardResult<Option<SessionRow>> {
        Ok(self
            .conn
            .query_row(&format!("{SESSION_ROW} WHERE id = ?1"), [id], session_row)
            .optional()?)
    }

    pub(in crate::store) fn session_end_reason(&self, id: &str) -> BoardResult<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT end_reason FROM sessions WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?
            .flatten())
    }

    pub(in crate::store) fn ended_session_count(&self) -> BoardResult<i64> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM sessions WHERE ended_at IS NOT NULL",
            [],
            |r| r.get(0),
        )?)
    }

    pub(in crate::store) fn live_sessions(&self) -> BoardResult<Vec<SessionRow>> {
        let mut st = self.conn.prepare(&format!(
            "{SESSION_ROW} WHERE ended_at IS NULL ORDER BY started_at"
        ))?;
        let rows = st.query_map([], session_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub(in crate::store) fn sessions_with_pids(
        &self,
        boot_id: &str,
        pids: &[i32],
    ) -> BoardResult<Vec<SessionRow>> {
        let list = serde_json::to_string(pids).map_err(|e| BoardError::internal(e.to_string()))?;
        let mut st = self.conn.prepare_cached(&format!(
            "{SESSION_ROW} WHERE boot_id = ?1 AND (pid IN (SELECT value FROM json_each(?2)) \
             OR launcher_pid IN (SELECT value FROM json_each(?2)))"
        ))?;
        let rows = st.query_map(params![boot_id, list], session_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub(in crate::store) fn session_name(&self, id: &str) -> BoardResult<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT name FROM sessions WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?)
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
        let mut st = self.conn.prepare(
            "SELECT s.id, s.name, s.pid, s.launcher_pid, s.pane_id, s.waiting, s.started_at,
                    s.last_seen_at, s.ended_at, s.end_reason,
                    (SELECT group_concat(task_id) FROM claims c
                      WHERE c.session_id = s.id AND c.ended_at IS NULL),
                    (SELECT COUNT(*) FROM sessions p WHERE p.name = s.name AND p.rowid < s.rowid),
                    s.branch, s.idle_since, s.contacted_at, s.attention_ms, s.question
             FROM sessions s
             WHERE ?1 IS NULL OR s.ended_at IS NULL
                OR (s.ended_at >= ?1
                    AND NOT EXISTS (SELECT 1 FROM sessions n
                                     WHERE n.name = s.name AND n.rowid > s.rowid))
             ORDER BY s.started_at, s.id",
        )?;
        let now = std::time::SystemTime::now();
        let rows = st.query_map([cutoff], |r| {
            let claims: Option<String> = r.get(10)?;
            let started_at: String = r.get(6)?;
            let contacted: Option<String> = r.get(14)?;
            let attention_ms: Option<i64> = r.get(15)?;
            let attention =
                session_rules::attention_of(&started_at, contacted.as_deref(), attention_ms, now);
            Ok(SessionView {
                id: r.get(0)?,
                name: r.get(1)?,
                pid: r.get(2)?,
                launcher_pid: r.get(3)?,
                pane: r.get(4)?,
                waiting: r.get(5)?,
                question: r.get(16)?,
                started_at: r.get(6)?,
                last_seen_at: r.get(7)?,
                ended_at: r.get(8)?,
                end_reason: r.get(9)?,
                claims: claims
                    .map(|c| c.split(',').filter_map(|x| x.parse().ok()).collect())
                    .unwrap_or_default(),
                restarts: r.get(11)?,
                branch: r.get(12)?,
                idle_since: r.get(13)?,
                attention,
                contacted_at: contacted,
                host: None,
                state: AgentState::Starting,
            })
        })?;
        let mut out: Vec<SessionView> = rows.collect::<Result<_, _>>()?;
        for s in &mut out {
            // None from `state_of`: its process runs, and what it does decides.
            let known = match session_rules::known_state(s) {
                Some(state) => Some(state),
                None => match self.session(&s.id)? {
                    Some(row) => state_of(&row),
                    None => Some(AgentState::Gone),
                },
            };
            session_rules::settle_state(s, known);
        }
        Ok(out)
    }
}

pub(in crate::store) const SESSION_ROW: &str =
    "SELECT id, token_hash, boot_id, launcher_pid, launcher_start, pid,
    pid_start, pane_id, pane_pid, pane_start, waiting, ended_at, idle_since, question FROM sessions";

pub(in crate::store) fn session_row(r: &rusqlite::Row) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        id: r.get(0)?,
        token_hash: r.get(1)?,
        boot_id: r.get(2)?,
        launcher: session_rules::pid_pair(r.get(3)?, r.get(4)?),
        agent: session_rules::pid_pair(r.get(5)?, r.get(6)?),
        pane: session_rules::pane_triple(r.get(7)?, r.get(8)?, r.get(9)?),
        waiting: r.get(10)?,
        ended_at: r.get(11)?,
        idle_since: r.get(12)?,
        question: r.get(13)?,
    })
}
