//! Host sessions: one row per `board serve` on a host sharing the store, renewed by its
//! heartbeat; a host whose row expired (the server's clock) is ended by whichever host sweeps,
//! with its live agent sessions and their claims.

use super::{col, event_rows, Conn, PgStore};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::{HostView, StoreInfo};
use crate::store::db::Db;
use crate::store::{EventKind, Events, HostBeat};

/// SQL condition on host row `h` (with `$1` this board's host row id): this board may end it.
/// It is another host's; this board's own row is live and unexpired (it is in contact now) and
/// it regained the store (first beat, or a beat after a failed one or a gap, see `host_beat`)
/// at least `h`'s TTL ago. A host's silence is evidence of its death only when this
/// board was itself in contact meanwhile: after an outage of the whole store (the server
/// restarted, failed over, refused connections, or the network to it was down), the first
/// board back would otherwise end every other host before it could beat again.
macro_rules! declarer_in_contact {
    () => {
        "h.id <> $1
         AND EXISTS (SELECT 1 FROM hosts me WHERE me.id = $1 AND me.ended_at IS NULL
                       AND me.expires_ms > board_now_ms()
                       AND board_now_ms() - COALESCE(me.regained_ms, 0) >= h.expires_ms - h.beat_ms)"
    };
}

/// Renews host row `$1` for `$2` ms; a beat more than `$3` ms after the previous one (the CASE
/// sees the previous `beat_ms`) marks that this board just regained the store.
const RENEW: &str = "UPDATE hosts SET regained_ms = CASE WHEN board_now_ms() - beat_ms > $3
                                                        THEN board_now_ms() ELSE regained_ms END,
                                      beat_ms = board_now_ms(), expires_ms = board_now_ms() + $2
                     WHERE id = $1 AND ended_at IS NULL";

/// Why a host row ended when a new board took its host name.
const REPLACED: &str = "replaced by a new board on this host";

/// Whether a live host is past its expiry, and this host (`$1`) may declare it dead.
const ANY_DEAD_HOST: &str = concat!(
    "SELECT EXISTS (SELECT 1 FROM hosts h
                    WHERE h.ended_at IS NULL AND h.expires_ms <= board_now_ms()
                      AND ",
    declarer_in_contact!(),
    ")"
);

/// Ends, in one statement, every host past its expiry that this host (`$1`, named `$4`) may
/// declare dead; for each name left with no live host session, its live agent sessions and
/// their claims (expelled, `$2` events, then `$3` events for the sessions), reopening their
/// tasks. Returns the events in id order.
const END_DEAD_HOSTS: &str = concat!(
    "WITH dead AS (
         UPDATE hosts h SET ended_at = board_wall(),
                end_reason = format('no heartbeat for %s ms; ended by host %s',
                                    board_now_ms() - h.beat_ms, $4::text)
         WHERE h.ended_at IS NULL AND h.expires_ms <= board_now_ms() AND ",
    declarer_in_contact!(),
    "
         RETURNING h.name, h.beat_ms),
     lost AS (
         SELECT DISTINCT ON (d.name) d.name,
                format('host %s lost: no heartbeat for %s ms', d.name,
                       board_now_ms() - d.beat_ms) AS why
         FROM dead d
         WHERE NOT EXISTS (SELECT 1 FROM hosts h WHERE h.name = d.name
                             AND h.ended_at IS NULL
                             AND h.expires_ms > board_now_ms())
         ORDER BY d.name, d.beat_ms DESC),
     s AS (
         UPDATE sessions s SET ended_at = board_wall(), end_reason = l.why,
                waiting = NULL, question = NULL
         FROM lost l WHERE s.host = l.name AND s.ended_at IS NULL
         RETURNING s.id, l.why),
     cl AS (
         UPDATE claims c SET ended_at = board_wall(), end_kind = ",
    crate::sql_end!(expel),
    ", end_reason = s.why
         FROM s WHERE c.session_id = s.id AND c.ended_at IS NULL
         RETURNING c.task_id, c.session_id, c.generation, s.why),
     reopened AS (
         UPDATE tasks t SET state = ",
    crate::sql_state!(open),
    ", updated_at = board_wall()
         FROM cl WHERE t.id = cl.task_id AND t.state = ",
    crate::sql_state!(claimed),
    " RETURNING t.id),
     logged AS (
         INSERT INTO events (at, kind, task_id, session_id, generation, reason)
         SELECT board_wall(), k, task_id, session_id, generation, why FROM (
             SELECT 0 AS o, $2::text AS k, task_id, session_id, generation, why
             FROM cl
             UNION ALL
             SELECT 1, $3::text, NULL::bigint, id, NULL::bigint, why FROM s
         ) x ORDER BY o, session_id, task_id
         RETURNING id, at, kind, task_id, session_id, generation, reason)
     SELECT * FROM logged ORDER BY id"
);

/// A fresh host session for name `$1` (pid `$2`, expiring `$3` ms from now), ending the
/// name's other live sessions with reason `$4`.
const NEW_HOST_SESSION: &str = "WITH fresh AS (
         INSERT INTO hosts (name, pid, started_at, beat_ms, expires_ms, regained_ms)
         VALUES ($1, $2, board_wall(), board_now_ms(), board_now_ms() + $3, board_now_ms())
         RETURNING id),
     replaced AS (
         UPDATE hosts SET ended_at = board_wall(), end_reason = $4
         WHERE name = $1 AND ended_at IS NULL)
     SELECT id FROM fresh";

/// Refuses to take a new host session when another board started under this host name and
/// took the session `id` over: taking it back would end that board's in turn, every beat.
/// The newer board keeps it.
fn refuse_if_taken(c: &mut Conn, id: i64, host: &str) -> BoardResult<()> {
    let taken = Conn::opt(
        c,
        "SELECT n.pid FROM hosts o JOIN hosts n ON n.name = o.name AND n.id > o.id
         WHERE o.id = $1 AND o.end_reason = $2 AND n.ended_at IS NULL
         ORDER BY n.id DESC LIMIT 1",
        &[&id, &REPLACED],
    )?;
    let Some(r) = taken else {
        return Ok(());
    };
    let pid: i64 = col(&r, 0)?;
    Err(BoardError::usage(format!(
        "another board (pid {pid}) took host name {host} over on the shared store; two boards \
         must not share one host name: set a host of its own in [store] host"
    ))
    .with("host_taken", host.to_string()))
}

/// Why our host session `id` ended (another host declared it dead), or that it is gone.
fn why_ended(c: &mut Conn, id: i64) -> BoardResult<String> {
    let why = c
        .opt("SELECT end_reason FROM hosts WHERE id = $1", &[&id])?
        .map(|r| col::<Option<String>>(&r, 0))
        .transpose()?
        .flatten();
    Ok(why.unwrap_or_else(|| "its host session is gone".to_string()))
}

impl PgStore {
    pub(in crate::store) fn describe(&self) -> StoreInfo {
        StoreInfo {
            kind: "postgres".to_string(),
            location: self.location.clone(),
            host: Some(self.host.clone()),
        }
    }

    pub(in crate::store) fn clock_ms(&self) -> BoardResult<Option<i64>> {
        self.read(|c| Ok(Some(col(&c.one("SELECT board_now_ms()", &[])?, 0)?)))
    }

    /// Renews this board's host row (one conditional UPDATE on the live row), or takes a new
    /// one: at the first beat, or when another host's sweep had ended ours (then a `warn` event
    /// says so). A new row ends any older live row of the same host name (a board restarted
    /// on this host replaces the old one, whose agent sessions it keeps). Also writes the
    /// local high-water mark when it moved.
    pub(in crate::store) fn host_beat(
        &mut self,
        ttl_ms: i64,
        regained_gap_ms: i64,
    ) -> BoardResult<HostBeat> {
        let host = self.host.clone();
        let pid = i64::from(std::process::id());
        let mine = *self.host_id();
        if let Some(id) = mine {
            // The common beat, one statement outside any write transaction: it must never wait
            // behind the write lock, which a host cut off mid-transaction may hold for seconds.
            let renewed = self.read(|c| c.exec(RENEW, &[&id, &ttl_ms, &regained_gap_ms]))?;
            if renewed == 1 {
                return Ok(HostBeat::default());
            }
        }
        let ((id, ended_by_others), events) = self.tx(|c, ev| {
            if let Some(id) = mine {
                let renewed = c.exec(RENEW, &[&id, &ttl_ms, &regained_gap_ms])?;
                if renewed == 1 {
                    return Ok((id, None));
                }
            }
            if let Some(id) = mine {
                refuse_if_taken(c, id, &host)?;
            }
            let ended = match mine {
                Some(id) => Some(why_ended(c, id)?),
                None => None,
            };
            let r = c.one(NEW_HOST_SESSION, &[&host, &pid, &ttl_ms, &REPLACED])?;
            let id: i64 = col(&r, 0)?;
            if let Some(why) = &ended {
                c.emit(
                    ev,
                    EventKind::Warn,
                    None,
                    None,
                    None,
                    &format!(
                        "host {host} had been declared dead by the others ({why}); its agent \
                         sessions and claims ended; it took a new host session"
                    ),
                )?;
            }
            Ok((id, ended))
        })?;
        *self.host_id() = Some(id);
        self.hwm().save(&self.hwm_path)?;
        Ok(HostBeat {
            ended_by_others,
            events,
        })
    }

    /// One statement: ends every host row whose expiry passed on the server's clock (once this
    /// board has been in contact for that host's TTL, see `declarer_in_contact`), the live
    /// agent sessions of those hosts (unless a live row of the same name took over) and their
    /// live claims (expelled; the reason names the host and how long it had been silent),
    /// reopens the tasks and appends the events. A cheap read skips the write when no host is
    /// due.
    pub(in crate::store) fn end_dead_hosts(&mut self) -> BoardResult<Events> {
        let Some(me_id) = *self.host_id() else {
            return Ok(Events::new());
        };
        let due = self.read(|c| col::<bool>(&c.one(ANY_DEAD_HOST, &[&me_id])?, 0))?;
        if !due {
            return Ok(Events::new());
        }
        let me = self.host.clone();
        let (_, ev) = self.tx(|c, ev| {
            let rows = c.rows(
                END_DEAD_HOSTS,
                &[
                    &me_id,
                    &EventKind::Expel.as_str(),
                    &EventKind::SessionEnd.as_str(),
                    &me,
                ],
            )?;
            ev.extend(event_rows(&rows)?);
            Ok(())
        })?;
        Ok(ev)
    }

    /// One statement at a clean stop of this board: ends its own host row (unless another
    /// host already ended it, or a newer board under its name replaced it), its host's live
    /// agent sessions and their live claims (expelled), all with reason `host NAME WHY`,
    /// reopens the tasks and appends the events. No host row yet (never beat): nothing.
    pub(in crate::store) fn end_host(&mut self, why: &str) -> BoardResult<Events> {
        let Some(me_id) = *self.host_id() else {
            return Ok(Events::new());
        };
        let reason = format!("host {} {why}", self.host);
        let (_, ev) = self.tx(|c, ev| {
            let rows = c.rows(
                concat!(
                    "WITH me AS (
                         UPDATE hosts SET ended_at = board_wall(), end_reason = $2
                         WHERE id = $1 AND ended_at IS NULL
                         RETURNING name),
                     s AS (
                         UPDATE sessions s SET ended_at = board_wall(), end_reason = $2,
                                waiting = NULL, question = NULL
                         FROM me WHERE s.host = me.name AND s.ended_at IS NULL
                         RETURNING s.id),
                     cl AS (
                         UPDATE claims c SET ended_at = board_wall(), end_kind = ",
                    crate::sql_end!(expel),
                    ", end_reason = $2
                         FROM s WHERE c.session_id = s.id AND c.ended_at IS NULL
                         RETURNING c.task_id, c.session_id, c.generation),
                     reopened AS (
                         UPDATE tasks t SET state = ",
                    crate::sql_state!(open),
                    ", updated_at = board_wall()
                         FROM cl WHERE t.id = cl.task_id AND t.state = ",
                    crate::sql_state!(claimed),
                    " RETURNING t.id),
                     logged AS (
                         INSERT INTO events (at, kind, task_id, session_id, generation, reason)
                         SELECT board_wall(), k, task_id, session_id, generation, $2 FROM (
                             SELECT 0 AS o, $3::text AS k, task_id, session_id, generation
                             FROM cl
                             UNION ALL
                             SELECT 1, $4::text, NULL::bigint, id, NULL::bigint FROM s
                         ) x ORDER BY o, session_id, task_id
                         RETURNING id, at, kind, task_id, session_id, generation, reason)
                     SELECT * FROM logged ORDER BY id"
                ),
                &[
                    &me_id,
                    &reason,
                    &EventKind::Expel.as_str(),
                    &EventKind::SessionEnd.as_str(),
                ],
            )?;
            ev.extend(event_rows(&rows)?);
            Ok(())
        })?;
        Ok(ev)
    }

    pub(in crate::store) fn hosts(&self) -> BoardResult<Vec<HostView>> {
        self.read(|c| {
            c.rows(
                "SELECT name, pid, started_at, board_now_ms() - beat_ms,
                        expires_ms - board_now_ms(), ended_at, end_reason
                 FROM hosts ORDER BY ended_at IS NULL DESC, id DESC LIMIT 100",
                &[],
            )?
            .iter()
            .map(|r| {
                Ok(HostView {
                    name: col(r, 0)?,
                    pid: col(r, 1)?,
                    started_at: col(r, 2)?,
                    beat_age_ms: col(r, 3)?,
                    expires_in_ms: col(r, 4)?,
                    ended_at: col(r, 5)?,
                    end_reason: col(r, 6)?,
                })
            })
            .collect()
        })
    }
}
