//! Hosts of a shared store, as the embedded SQLite store sees them: there is one host, the
//! board itself, so there is no host session to keep, nor another host to end; the lease clock
//! is the board's own (`clock_ms` None).

use super::*;
use crate::proto::error::BoardResult;
use crate::proto::{HostView, StoreInfo};

impl SqliteStore {
    pub(super) fn describe(&self) -> StoreInfo {
        StoreInfo {
            kind: "sqlite".to_string(),
            location: self.conn.path().unwrap_or(":memory:").to_string(),
            host: None,
        }
    }

    pub(super) fn clock_ms(&self) -> BoardResult<Option<i64>> {
        Ok(None)
    }

    pub(super) fn host_beat(&mut self, _ttl_ms: i64, _gap_ms: i64) -> BoardResult<HostBeat> {
        Ok(HostBeat::default())
    }

    pub(super) fn end_dead_hosts(&mut self) -> BoardResult<Events> {
        Ok(Events::new())
    }

    pub(super) fn end_host(&mut self, _why: &str) -> BoardResult<Events> {
        Ok(Events::new())
    }

    pub(super) fn hosts(&self) -> BoardResult<Vec<HostView>> {
        Ok(Vec::new())
    }
}
