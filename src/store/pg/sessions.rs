//! Agent sessions: registration, attachment of the agent's processes, expulsion, waiting
//! (PostgreSQL; see `store::sqlite::sessions`). A session belongs to the host whose board registered it
//! (`sessions.host`); its id is unique across hosts.

use super::{col, emit, event_rows, PgStore};
use crate::proto::error::BoardResult;
use crate::proto::SessionView;
use crate::store::procs;
use crate::store::session_rules;
use crate::store::session_rules::session_base_name;
use crate::store::{AgentState, EventKind, Events, SessionRow};

impl PgStore {
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
        let host = self.host.clone();
        let launcher_pid = launcher.map(|l| i64::from(l.0));
        let launcher_start = launcher.map(|l| l.1 as i64);
        self.tx(|c, ev| {
            for id in session_rules::candidate_ids(&base) {
                // The name people see: `base` unless a live session has it, else the first
                // free `base-N`, chosen by the same statement that inserts (under the
                // exclusive write lock, so two hosts cannot pick the same one).
                let inserted = c.exec(
                    "INSERT INTO sessions (id, host, name, token_hash, boot_id, launcher_pid,
                                           launcher_start, started_at, branch, attention_ms,
                                           role)
                     SELECT $1, $2,
                            (SELECT c.name
                               FROM (SELECT i, CASE WHEN i = 1 THEN $3::text
                                                    ELSE $3::text || '-' || i::text END AS name
                                       FROM generate_series(1, 10000) AS i) AS c
                              WHERE NOT EXISTS (SELECT 1 FROM sessions l
                                                 WHERE l.ended_at IS NULL AND l.name = c.name)
                              ORDER BY c.i LIMIT 1),
                            $4, $5, $6, $7, board_wall(), $8, $9, $10
                      WHERE NOT EXISTS (SELECT 1 FROM retired_session_ids WHERE id = $1)
                     ON CONFLICT (id) DO NOTHING",
                    &[
                        &id,
                        &host,
                        &base,
                        &token_hash,
                        &boot_id,
                        &launcher_pid,
                        &launcher_start,
                        &branch,
                        &attention_ms,
                        &role,
                    ],
                )?;
                if inserted == 1 {
                    emit(
                        c,
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
        self.tx(|c, ev| {
            let n = c.exec(
                "UPDATE sessions SET ended_at = board_wall(), end_reason = $2, waiting = NULL,
                        question = NULL
                 WHERE id = $1 AND ended_at IS NULL",
                &[&id, &reason],
            )?;
            if n == 0 {
                return Ok(false);
            }
            // Every claim of the session in one statement: an agent may hold hundreds, and
            // this transaction holds the write lock exclusively, so every other writer waits.
            let short: String = reason.chars().take(500).collect();
            let rows = c.rows(
                concat!(
                    "WITH ended AS (
                         UPDATE claims SET ended_at = board_wall(), end_kind = ",
                    crate::sql_end!(expel),
                    ", end_reason = $2 WHERE session_id = $1 AND ended_at IS NULL
                         RETURNING task_id, generation),
                     reopened AS (
                         UPDATE tasks SET state = ",
                    crate::sql_state!(open),
                    ", updated_at = board_wall()
                         WHERE id IN (SELECT task_id FROM ended) AND state = ",
                    crate::sql_state!(claimed),
                    ")
                     INSERT INTO events (at, kind, task_id, session_id, generation, reason)
                     SELECT board_wall(), $3, task_id, $1, generation, $4 FROM ended
                     ORDER BY task_id
                     RETURNING id, at, kind, task_id, session_id, generation, reason"
                ),
                &[&id, &reason, &EventKind::Expel.as_str(), &short],
            )?;
            let mut expelled = event_rows(&rows)?;
            expelled.sort_by_key(|e| e.id);
            ev.extend(expelled);
            emit(c, ev, EventKind::SessionEnd, None, Some(id), None, reason)?;
            Ok(true)
        })
    }

    /// Live sessions of this host.
    pub(in crate::store) fn live_sessions(&self) -> BoardResult<Vec<SessionRow>> {
        self.read(|c| {
            let rows = c.rows(
                session_row_sql!("WHERE ended_at IS NULL AND host = $1 ORDER BY started_at, seq"),
                &[&self.host],
            )?;
            rows.iter().map(|r| procs::session_row(r)).collect()
        })
    }

    /// Sessions of this host started in boot `boot_id` with one of `pids`.
    pub(in crate::store) fn sessions_with_pids(
        &self,
        boot_id: &str,
        pids: &[i32],
    ) -> BoardResult<Vec<SessionRow>> {
        let pids: Vec<i64> = pids.iter().map(|p| i64::from(*p)).collect();
        self.read(|c| {
            let rows = c.rows(
                session_row_sql!(
                    "WHERE boot_id = $1 AND host = $3 AND (pid = ANY($2) OR launcher_pid = ANY($2))"
                ),
                &[&boot_id, &pids, &self.host],
            )?;
            rows.iter().map(|r| procs::session_row(r)).collect()
        })
    }

    pub(in crate::store) fn prune_sessions(&mut self, older_ms: i64) -> BoardResult<Vec<String>> {
        let (ids, _) = self.tx(|c, _| {
            // One statement: the cutoff on the server's clock; retire the ids, drop their
            // (ended) claims and unread mail, then the sessions. The tasks keep their
            // generations and the event log keeps every grant and end.
            let rows = c.rows(
                "WITH old AS (
                     SELECT id, name FROM sessions
                      WHERE ended_at IS NOT NULL
                        AND ended_at <= to_char((clock_timestamp()
                                                 - ($1::bigint)::float8 * interval '1 millisecond')
                                                AT TIME ZONE 'UTC',
                                                'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')
                        AND NOT EXISTS (SELECT 1 FROM claims c
                                         WHERE c.session_id = sessions.id AND c.ended_at IS NULL)
                      FOR UPDATE),
                 retired AS (
                     INSERT INTO retired_session_ids (id, name, retired_at)
                     SELECT id, name, board_wall() FROM old ON CONFLICT (id) DO NOTHING),
                 claims_gone AS (
                     DELETE FROM claims WHERE session_id IN (SELECT id FROM old)),
                 mail_gone AS (
                     DELETE FROM messages WHERE recipient IN (SELECT id FROM old))
                 DELETE FROM sessions WHERE id IN (SELECT id FROM old) RETURNING id",
                &[&older_ms],
            )?;
            rows.iter().map(|r| col::<String>(r, 0)).collect()
        })?;
        Ok(ids)
    }

    pub(in crate::store) fn sessions(
        &self,
        recent_ended_ms: Option<i64>,
        state_of: &dyn Fn(&SessionRow) -> Option<AgentState>,
    ) -> BoardResult<Vec<SessionView>> {
        let now = std::time::SystemTime::now();
        let rows = self.read(|c| {
            c.rows(
                "SELECT s.id, s.name, s.pid, s.launcher_pid, s.pane_id, s.waiting, s.started_at,
                        s.last_seen_at, s.ended_at, s.end_reason,
                        ARRAY(SELECT task_id FROM claims c
                              WHERE c.session_id = s.id AND c.ended_at IS NULL ORDER BY task_id),
                        (SELECT COUNT(*) FROM sessions p WHERE p.name = s.name AND p.seq < s.seq),
                        s.branch, s.idle_since, s.contacted_at, s.attention_ms, s.question,
                        s.host
                 FROM sessions s
                 WHERE $1::bigint IS NULL OR s.ended_at IS NULL
                    OR (s.ended_at >= to_char((clock_timestamp()
                                               - ($1::bigint)::float8 * interval '1 millisecond')
                                              AT TIME ZONE 'UTC',
                                              'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')
                        AND NOT EXISTS (SELECT 1 FROM sessions n
                                         WHERE n.name = s.name AND n.seq > s.seq))
                 ORDER BY s.started_at, s.id",
                &[&recent_ended_ms],
            )
        })?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let mut s = procs::session_view(r, now)?;
            let host: String = col(r, 17)?;
            s.claims = col(r, 10)?;
            s.host = Some(host.clone());
            procs::settle_view(self, &mut s, host == self.host, state_of)?;
            out.push(s);
        }
        Ok(out)
    }
}
