//! Whether the board reaches its shared store right now, since when it does not and why, when
//! it last did, and what it last knew of the store (for `board status` during an outage).

use std::sync::RwLock;

use crate::proto::methods::StatusAgent;
use crate::proto::{GoalView, HostView};

/// What `status` read from the store the last time it could (shown while it cannot).
#[derive(Debug, Clone, Default)]
pub struct LastKnown {
    /// Live agent sessions of this host.
    pub live_sessions: u64,
    /// Those sessions, with the branch each started on.
    pub agents: Vec<StatusAgent>,
    /// Open and claimed tasks.
    pub unfinished_tasks: i64,
    /// The goal.
    pub goal: Option<GoalView>,
    /// The host sessions.
    pub hosts: Vec<HostView>,
}

/// The store's health as this board sees it. Starts reachable (an embedded store always is).
#[derive(Debug, Default)]
pub struct StoreHealth {
    inner: RwLock<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Why the store is unreachable and since when (RFC 3339 UTC); None while it is reached.
    down: Option<(String, String)>,
    /// When the board last reached the store (RFC 3339 UTC).
    last_contact: Option<String>,
    /// The last `status` read of the store.
    known: Option<LastKnown>,
}

impl StoreHealth {
    fn inner(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn inner_mut(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Why the store is unreachable (the last failure's message), or None when it is reached.
    pub fn why(&self) -> Option<String> {
        self.inner().down.as_ref().map(|d| d.0.clone())
    }

    /// Since when (RFC 3339 UTC) the store is unreachable.
    pub fn since(&self) -> Option<String> {
        self.inner().down.as_ref().map(|d| d.1.clone())
    }

    /// When the board last reached the store (RFC 3339 UTC), if ever.
    pub fn last_contact(&self) -> Option<String> {
        self.inner().last_contact.clone()
    }

    /// Records a failure (`Some(why)`: the outage starts now unless it already runs; its reason
    /// is the latest) or a success (None: the outage, if any, is over).
    pub fn set(&self, why: Option<String>) {
        let mut inner = self.inner_mut();
        match why {
            Some(w) => {
                let since = match inner.down.take() {
                    Some((_, since)) => since,
                    None => {
                        tracing::warn!(why = %w, "the store is unreachable");
                        crate::store::now_wall()
                    }
                };
                inner.down = Some((w, since));
            }
            None => {
                if inner.down.take().is_some() {
                    tracing::info!("the store is reachable again");
                }
                inner.last_contact = Some(crate::store::now_wall());
            }
        }
    }

    /// Keeps what `status` read of the store.
    pub fn remember(&self, known: LastKnown) {
        self.inner_mut().known = Some(known);
    }

    /// What `status` last read of the store.
    pub fn last_known(&self) -> Option<LastKnown> {
        self.inner().known.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_keeps_its_start_and_takes_the_latest_reason_until_a_success() {
        let h = StoreHealth::default();
        assert_eq!(h.why(), None);
        h.set(Some("refused".into()));
        let since = h.since().unwrap();
        h.set(Some("shutting down".into()));
        assert_eq!(h.why().as_deref(), Some("shutting down"));
        assert_eq!(h.since(), Some(since));
        h.set(None);
        assert_eq!(h.why(), None);
        assert!(h.last_contact().is_some());
    }
}
