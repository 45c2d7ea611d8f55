//! Reading the append-only event log (PostgreSQL; see `store::events`). Ids commit in id order
//! (every write transaction holds the write lock), so `id > after` misses nothing.

use super::{col, event_rows, PgStore};
use crate::proto::error::BoardResult;
use crate::proto::EventView;

impl PgStore {
    pub(in crate::store) fn last_event_id(&self) -> BoardResult<i64> {
        self.read(|c| {
            col(
                &c.one("SELECT COALESCE(MAX(id), 0)::bigint FROM events", &[])?,
                0,
            )
        })
    }

    pub(in crate::store) fn events(&self, after: i64, limit: i64) -> BoardResult<Vec<EventView>> {
        self.read(|c| {
            event_rows(&c.rows(
                "SELECT id, at, kind, task_id, session_id, generation, reason FROM events
                 WHERE id > $1 ORDER BY id LIMIT $2",
                &[&after, &limit],
            )?)
        })
    }

    pub(in crate::store) fn recent_events(&self, limit: i64) -> BoardResult<Vec<EventView>> {
        self.read(|c| {
            event_rows(&c.rows(
                "SELECT * FROM (SELECT id, at, kind, task_id, session_id, generation, reason
                 FROM events ORDER BY id DESC LIMIT $1) e ORDER BY id",
                &[&limit],
            )?)
        })
    }

    pub(in crate::store) fn task_events(&self, task: i64) -> BoardResult<Vec<EventView>> {
        self.read(|c| {
            event_rows(&c.rows(
                "SELECT id, at, kind, task_id, session_id, generation, reason FROM events
                 WHERE task_id = $1 ORDER BY id",
                &[&task],
            )?)
        })
    }
}
