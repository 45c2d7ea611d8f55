//! Reading the append-only event log.

use rusqlite::params;

use super::*;
use crate::proto::error::BoardResult;
use crate::proto::EventView;

impl SqliteStore {
    pub(in crate::store) fn last_event_id(&self) -> BoardResult<i64> {
        Ok(self
            .conn
            .query_row("SELECT COALESCE(MAX(id), 0) FROM events", [], |r| r.get(0))?)
    }

    // ----- events -----------------------------------------------------------------------------

    pub(in crate::store) fn events(&self, after: i64, limit: i64) -> BoardResult<Vec<EventView>> {
        let mut st = self.conn.prepare(
            "SELECT id, at, kind, task_id, session_id, generation, reason FROM events
             WHERE id > ?1 ORDER BY id LIMIT ?2",
        )?;
        let rows = st.query_map(params![after, limit], event_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub(in crate::store) fn recent_events(&self, limit: i64) -> BoardResult<Vec<EventView>> {
        let mut st = self.conn.prepare(
            "SELECT * FROM (SELECT id, at, kind, task_id, session_id, generation, reason
             FROM events ORDER BY id DESC LIMIT ?1) ORDER BY id",
        )?;
        let rows = st.query_map([limit], event_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub(in crate::store) fn task_events(&self, task: TaskId) -> BoardResult<Vec<EventView>> {
        let mut st = self.conn.prepare(
            "SELECT id, at, kind, task_id, session_id, generation, reason FROM events
             WHERE task_id = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([task], event_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

pub(in crate::store) fn event_row(r: &rusqlite::Row) -> rusqlite::Result<EventView> {
    Ok(EventView {
        id: r.get(0)?,
        at: r.get(1)?,
        kind: r.get(2)?,
        task: r.get(3)?,
        agent: r.get(4)?,
        generation: r.get(5)?,
        reason: r.get(6)?,
    })
}
