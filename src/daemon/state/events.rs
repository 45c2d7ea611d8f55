//! Event fan-out. Every committed transition is in the append-only log; this bus only *wakes*
//! the streams (the TUI, `log --follow`), which then read the log by id. Carrying the events
//! themselves let two transitions committed at nearly the same time by two threads reach a
//! subscriber out of id order, and a follower resuming with `after` = the highest id it saw
//! could lose the other one for good.

use std::sync::Arc;

use tokio::sync::{broadcast, watch};

use super::notices::Notices;
use crate::proto::EventView;

/// Wake-ups a stream may miss before it is told it lagged; harmless here, the stream re-reads.
const CAPACITY: usize = 1024;

/// Wakes event streams after a transaction committed. Sending never blocks the board.
#[derive(Clone)]
pub struct EventBus {
    tx: broadcast::Sender<i64>,
    /// The newest event id this board committed itself (0: none yet): what a shared store's
    /// other hosts are told of (`follow`).
    own: watch::Sender<i64>,
    /// The notifier's intake: events that may make a notice are offered to it.
    notices: Arc<Notices>,
}

impl Default for EventBus {
    fn default() -> Self {
        let (tx, _) = broadcast::channel(CAPACITY);
        let (own, _) = watch::channel(0);
        EventBus {
            tx,
            own,
            notices: Arc::default(),
        }
    }
}

impl EventBus {
    /// Logs committed events (to `board.log`) and wakes every stream (no stream is fine).
    pub fn publish(&self, events: Vec<EventView>) {
        let mut last = None;
        for e in events {
            self.notices.offer(&e);
            tracing::info!(id = e.id, kind = %e.kind, task = ?e.task, agent = ?e.agent, generation = ?e.generation, reason = ?e.reason, "event");
            last = Some(e.id);
        }
        if let Some(id) = last {
            let _ = self.tx.send(id);
            self.own.send_if_modified(|newest| {
                let newer = id > *newest;
                if newer {
                    *newest = id;
                }
                newer
            });
        }
    }

    /// The notifier's intake and the notices for `board tui` streams.
    pub fn notices(&self) -> &Notices {
        &self.notices
    }

    /// The newest event id this board committed itself, changing with each commit (several
    /// commits between two looks show as the last of them).
    pub fn own(&self) -> watch::Receiver<i64> {
        self.own.subscribe()
    }

    /// Wakes every stream for events committed elsewhere (another host's board on the shared
    /// store): they are in the log already, so there is nothing to log here.
    pub fn wake(&self, last_id: i64) {
        let _ = self.tx.send(last_id);
    }

    /// A wake-up receiver for one stream.
    pub fn subscribe(&self) -> Wake {
        Wake(self.tx.subscribe())
    }
}

/// The wake-ups of one event stream.
pub struct Wake(broadcast::Receiver<i64>);

impl Wake {
    /// Forgets pending wake-ups (call before reading the log).
    pub fn drain(&mut self) {
        use broadcast::error::TryRecvError;
        loop {
            match self.0.try_recv() {
                Ok(_) | Err(TryRecvError::Lagged(_)) => continue,
                Err(TryRecvError::Empty) | Err(TryRecvError::Closed) => return,
            }
        }
    }

    /// Waits for the next wake-up; false once the board is shutting down.
    pub async fn wait(&mut self) -> bool {
        use broadcast::error::RecvError;
        match self.0.recv().await {
            Ok(_) | Err(RecvError::Lagged(_)) => true,
            Err(RecvError::Closed) => false,
        }
    }
}
