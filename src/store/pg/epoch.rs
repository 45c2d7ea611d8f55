//! Generations never go backwards across a failover or a restore (ARCHITECTURE.md rule 8a, on a shared
//! store). On every (re)connect the store compares:
//!
//! - the server's `system_identifier` (`pg_control_system()`) and timeline (from the current
//!   WAL file name: `pg_control_checkpoint()` lags behind a promotion until the next
//!   checkpoint) with the ones kept in `meta`: another cluster, or a promoted standby;
//! - this host's last written event (id and time, kept in the local high-water mark file) with
//!   the database: a database that lacks it was restored from an older state, or lost
//!   acknowledged writes in an asynchronous failover.
//!
//! Any difference opens a new epoch, in the same transaction (one per restore: a host whose
//! last event predates the newest epoch, `meta.epoch_at`, finds its loss covered by it): every live claim ends (end
//! `epoch`; holders are told on their next call), and every task's generation is raised by a
//! gap above the highest one the database knows ([`GAP`]), as is the floor later grants start
//! from, so a generation issued on the lost timeline (which this database never saw) is never
//! issued again. The SQLite store reserves generations in its mark file instead
//! (`store::identity`); with several hosts writing, no single host's file knows them all.

use std::path::Path;

use super::{col, Conn, PgStore};
use crate::proto::error::{BoardError, BoardResult};
use crate::store::db::Db;
use crate::store::{EventKind, Events};

/// How far a new epoch raises generations above the highest the database knows: more grants
/// than a lost stretch of a timeline (seconds of writes) can have made.
pub(super) const GAP: i64 = 1_000_000;

/// This host's high-water mark: the newest event it wrote to the store, and the server it
/// wrote it to. Kept in a small `key=value` text file beside the board's other local state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Hwm {
    system: Option<String>,
    timeline: Option<i64>,
    event: i64,
    at: Option<String>,
    dirty: bool,
}

impl Hwm {
    /// Reads the file; a missing file is an empty mark. Errors: `internal` naming the file
    /// when it cannot be read or parsed (a damaged mark must not pass as "nothing written").
    pub(super) fn read(path: &Path) -> BoardResult<Hwm> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Hwm::default()),
            Err(e) => {
                return Err(BoardError::internal(format!(
                    "reading {}: {e}",
                    path.display()
                )))
            }
        };
        let bad = |line: &str| {
            BoardError::internal(format!(
                "{} is damaged (line {line:?}); remove it only if this host never wrote to \
                 another copy of the store",
                path.display()
            ))
        };
        let mut hwm = Hwm::default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (k, v) = line.split_once('=').ok_or_else(|| bad(line))?;
            match k {
                "system" => hwm.system = Some(v.to_string()),
                "timeline" => hwm.timeline = Some(v.parse().map_err(|_| bad(line))?),
                "event" => hwm.event = v.parse().map_err(|_| bad(line))?,
                "at" => hwm.at = Some(v.to_string()),
                _ => return Err(bad(line)),
            }
        }
        Ok(hwm)
    }

    /// Records an event this host wrote (committed).
    pub(super) fn wrote(&mut self, id: i64, at: &str) {
        if id > self.event {
            self.event = id;
            self.at = Some(at.to_string());
            self.dirty = true;
        }
    }

    /// Writes the file when it changed (a temporary file renamed over it).
    pub(super) fn save(&mut self, path: &Path) -> BoardResult<()> {
        if !self.dirty {
            return Ok(());
        }
        let mut text = String::new();
        if let Some(s) = &self.system {
            text.push_str(&format!("system={s}\n"));
        }
        if let Some(t) = self.timeline {
            text.push_str(&format!("timeline={t}\n"));
        }
        text.push_str(&format!("event={}\n", self.event));
        if let Some(at) = &self.at {
            text.push_str(&format!("at={at}\n"));
        }
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| BoardError::internal(format!("writing {}: {e}", path.display())))?;
        self.dirty = false;
        Ok(())
    }
}

/// The epoch check of a new connection (see the module docs), in one write transaction.
/// Returns the events of a new epoch (none when nothing changed).
pub(super) fn check(store: &PgStore, c: &mut Conn) -> BoardResult<Events> {
    // The stores of a pool connect one after another through here, each comparing with the
    // mark the previous check left: held across the transaction, so a second connection never
    // sees the mark from before a new epoch and opens another one.
    let mut hwm = store.hwm();
    c.batch(&format!("BEGIN; {}", super::Lock::Exclusive.sql()))?;
    let mut ev = Events::new();
    let r = decide(store, &hwm, c, &mut ev);
    match r {
        Ok(server) => {
            c.batch("COMMIT")?;
            if hwm.system.as_ref() != Some(&server.0) || hwm.timeline != Some(server.1) {
                hwm.system = Some(server.0);
                hwm.timeline = Some(server.1);
                hwm.dirty = true;
            }
            if let Some(last) = ev.last() {
                // The epoch event is the newest this host wrote; the lost ones are forgotten.
                hwm.event = last.id;
                hwm.at = Some(last.at.clone());
                hwm.dirty = true;
            }
            hwm.save(&store.hwm_path)?;
            Ok(ev)
        }
        Err(e) => {
            let _ = c.batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Decides and, when needed, opens the new epoch. Returns the server's (system, timeline).
fn decide(store: &PgStore, hwm: &Hwm, c: &mut Conn, ev: &mut Events) -> BoardResult<(String, i64)> {
    let r = c.one(
        "SELECT (pg_control_system()).system_identifier::text,
                ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint",
        &[],
    )?;
    let system: String = col(&r, 0)?;
    let timeline: i64 = col(&r, 1)?;
    let meta = |c: &mut Conn, key: &str| -> BoardResult<Option<String>> {
        match c.opt("SELECT value FROM meta WHERE key = $1", &[&key])? {
            Some(r) => Ok(Some(col(&r, 0)?)),
            None => Ok(None),
        }
    };
    let known_system = meta(c, "system_identifier")?;
    let known_timeline = meta(c, "timeline")?.and_then(|t| t.parse::<i64>().ok());
    let mut reasons = Vec::new();
    if let Some(s) = &known_system {
        if *s != system {
            reasons.push(format!(
                "the server is another cluster (system identifier {system}, was {s})"
            ));
        }
    }
    if let Some(t) = known_timeline {
        if t != timeline && known_system.as_deref() == Some(system.as_str()) {
            reasons.push(format!(
                "the server is on timeline {timeline}, was {t} (a standby was promoted or a \
                 backup restored)"
            ));
        }
    }
    if hwm.event > 0 && hwm.system.as_deref() == Some(system.as_str()) {
        // One statement decides: the database lacks this host's last event (or has another
        // under its id), and no epoch opened since that event was written already covers the
        // loss. Several hosts that lost writes to one restore each notice it; the first opens
        // the epoch (its gap covers every grant of the lost stretch, whoever made it), and the
        // others, whose last events are older than that epoch, find it and open none.
        let lost: bool = col(
            &c.one(
                "SELECT NOT EXISTS (SELECT 1 FROM events
                                    WHERE id = $1 AND ($2::text IS NULL OR at = $2))
                    AND NOT EXISTS (SELECT 1 FROM meta
                                    WHERE key = 'epoch_at' AND $2::text IS NOT NULL
                                      AND value > $2)",
                &[&hwm.event, &hwm.at],
            )?,
            0,
        )?;
        if lost {
            reasons.push(format!(
                "host {} wrote event {} that the database does not have (restored from an older \
                 state, or writes lost in a failover)",
                store.host, hwm.event
            ));
        }
    }
    if !reasons.is_empty() {
        open_epoch(c, ev, &reasons.join("; "))?;
    }
    c.exec(
        "INSERT INTO meta (key, value) VALUES ('system_identifier', $1), ('timeline', $2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[&system, &timeline.to_string()],
    )?;
    Ok((system, timeline))
}

/// A new epoch (inside the check's transaction): every live claim ends, every generation and
/// the floor of later grants are raised by [`GAP`] above the highest known.
fn open_epoch(c: &mut Conn, ev: &mut Events, reason: &str) -> BoardResult<()> {
    let r = c.one(
        "SELECT COALESCE((SELECT value::bigint FROM meta WHERE key = 'epoch'), 0) + 1,
                GREATEST(COALESCE((SELECT MAX(generation) FROM tasks), 0),
                         COALESCE((SELECT value::bigint FROM meta WHERE key = 'generation_floor'), 0))
                + $1",
        &[&GAP],
    )?;
    let epoch: i64 = col(&r, 0)?;
    let floor: i64 = col(&r, 1)?;
    let why = format!("new epoch {epoch}: {reason}; every claim ended");
    crate::store::procs::end_claims_for_epoch(c, ev, &why)?;
    c.exec(
        "UPDATE tasks SET generation = GREATEST(generation, $1) WHERE generation < $1",
        &[&floor],
    )?;
    c.exec(
        "INSERT INTO meta (key, value)
         VALUES ('generation_floor', $1), ('epoch', $2), ('epoch_at', board_wall())
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[&floor.to_string(), &epoch.to_string()],
    )?;
    c.emit(ev, EventKind::Epoch, None, None, Some(floor), &why)?;
    Ok(())
}

impl PgStore {
    pub(in crate::store) fn mark_clean_stop(&mut self) -> BoardResult<()> {
        self.hwm().save(&self.hwm_path)
    }

    /// "ok" when the server answers: PostgreSQL checks its own pages (checksums, WAL); there
    /// is no whole-database check a client can run cheaply.
    pub(in crate::store) fn integrity_check(&self) -> BoardResult<String> {
        self.read(|c| {
            c.one("SELECT 1", &[])?;
            Ok("ok".to_string())
        })
    }
}
