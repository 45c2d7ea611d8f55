//! Hosts of a shared store, as the embedded SQLite store sees them: there is one host, the
//! board itself, so there is no host session to keep, nor another host to end; the lease clock
//! is the board's own. Those calls are the `Store` trait's defaults; only the description is
//! the store's own.

use super::*;
use crate::proto::StoreInfo;

impl SqliteStore {
    pub(in crate::store) fn describe(&self) -> StoreInfo {
        StoreInfo {
            kind: "sqlite".to_string(),
            location: self.conn.path().unwrap_or(":memory:").to_string(),
            host: None,
        }
    }
}
