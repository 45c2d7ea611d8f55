//! Agent sessions: registration, attachment of the agent's processes, expulsion, waiting
//! (PostgreSQL; see `store::procs::sessions`). A session belongs to the host whose board registered it
//! (`sessions.host`); its id is unique across hosts.

use super::{col, event_rows, Conn, PgStore};
use crate::proto::error::BoardResult;
use crate::proto::SessionView;
use crate::store::procs;
use crate::store::{EventKind, Events, SessionRow};

impl PgStore {
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
}

/// The one statement that expels every live claim of session `id` (see
/// [`crate::store::db::Db::expel_claims`]).
pub(super) fn expel_claims(
    c: &mut Conn,
    ev: &mut Events,
    id: &str,
    reason: &str,
) -> BoardResult<()> {
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
    Ok(())
}

/// The sessions for display (see [`crate::store::db::Db::session_views`]): the cutoff on the
/// server's clock.
pub(super) fn session_views(
    c: &mut Conn,
    recent_ended_ms: Option<i64>,
) -> BoardResult<Vec<SessionView>> {
    let now = std::time::SystemTime::now();
    let rows = c.rows(
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
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let mut s = procs::session_view(r, now)?;
        s.claims = col(r, 10)?;
        s.host = Some(col(r, 17)?);
        out.push(s);
    }
    Ok(out)
}
