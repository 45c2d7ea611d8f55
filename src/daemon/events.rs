//! Event broadcast: every committed transition goes to all subscribers (the TUI, `log --follow`).

use tokio::sync::broadcast;

use crate::proto::EventView;

/// How many events a slow subscriber may fall behind before it is told it lagged.
const CAPACITY: usize = 4096;

/// Fan-out of committed events to subscribers. Sending never blocks the board.
#[derive(Clone)]
pub struct EventBus {
    tx: broadcast::Sender<EventView>,
}

impl Default for EventBus {
    fn default() -> Self {
        let (tx, _) = broadcast::channel(CAPACITY);
        EventBus { tx }
    }
}

impl EventBus {
    /// Publishes events after their transaction committed (no subscribers is fine).
    pub fn publish(&self, events: Vec<EventView>) {
        for e in events {
            tracing::info!(kind = %e.kind, task = ?e.task, agent = ?e.agent, generation = ?e.generation, reason = ?e.reason, "event");
            let _ = self.tx.send(e);
        }
    }

    /// A new receiver that sees events published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<EventView> {
        self.tx.subscribe()
    }
}
