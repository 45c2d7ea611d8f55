//! The notifier's intake (see [`crate::daemon::notify`]): the board's event publication offers
//! each committed event to a bounded queue, never blocking, and the streams of `board tui`s
//! subscribe here to the notices the notifier makes.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use tokio::sync::{broadcast, mpsc};

use crate::proto::glossary::EventKind;
use crate::proto::{EventView, NoticeView};

/// Events waiting for the notifier, at most; more are dropped (counted and logged).
const QUEUE: usize = 256;

/// Whether the notifier needs an event of `kind`: those that can become a notice, and a task
/// finished or cancelled (work was done: `finished` may follow). A cheap test before the event
/// is copied for the notifier, so most events (renewals, grants, …) cost nothing.
pub fn may_notify(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::Question
            | EventKind::Wait
            | EventKind::Message
            | EventKind::Expel
            | EventKind::Review
            | EventKind::Done
            | EventKind::Cancel
    )
}

/// The notifier's intake, shared by the event publication and the streams of `board tui`s.
pub struct Notices {
    tx: mpsc::Sender<EventView>,
    rx: Mutex<Option<mpsc::Receiver<EventView>>>,
    terminal: broadcast::Sender<NoticeView>,
    dropped: AtomicU64,
    /// Dropping now (logged once when it starts, once when it stops).
    dropping: AtomicBool,
}

impl Default for Notices {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let (terminal, _) = broadcast::channel(64);
        Notices {
            tx,
            rx: Mutex::new(Some(rx)),
            terminal,
            dropped: AtomicU64::new(0),
            dropping: AtomicBool::new(false),
        }
    }
}

impl Notices {
    /// Offers a committed event to the notifier; never blocks. Events that can make no notice
    /// are not even copied. A full queue drops the event (counted, logged once per episode).
    pub fn offer(&self, e: &EventView) {
        if !may_notify(e.kind) {
            return;
        }
        match self.tx.try_send(e.clone()) {
            Ok(()) => {
                if self.dropping.swap(false, Ordering::Relaxed) {
                    tracing::info!(
                        dropped = self.dropped.load(Ordering::Relaxed),
                        "the notifier keeps up again"
                    );
                }
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if !self.dropping.swap(true, Ordering::Relaxed) {
                    tracing::warn!(dropped = n, "the notifier is behind: events dropped");
                }
            }
            // No notifier runs (a board in a test harness, or stopping): nothing to tell.
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    /// Notices for the streams of running `board tui`s that asked for them.
    pub fn terminal(&self) -> broadcast::Receiver<NoticeView> {
        self.terminal.subscribe()
    }

    /// Hands a notice to the streams of running `board tui`s that asked for them (none running
    /// is fine).
    pub fn tell_terminals(&self, n: NoticeView) {
        let _ = self.terminal.send(n);
    }

    /// Events dropped because the notifier was behind, since the board started.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The notifier's end of the intake: the first call takes it, any later one gets None (one
    /// notifier runs).
    pub fn take_receiver(&self) -> Option<mpsc::Receiver<EventView>> {
        self.rx.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}
