//! Notifications that leave the terminal (`[notify]` in `board.toml`): a question, a permission
//! prompt, an agent that needs attention, a message to the operator, a task that waits in
//! review for a person, an expelled claim, a finished backlog. The board's own event
//! publication offers each event to a bounded queue
//! ([`Notices::offer`](super::state::notices::Notices::offer), never blocking); this task turns
//! events into notices ([`classify::classify`], plus [`state`] for what no single event says),
//! gathers a burst for [`WINDOW`] into one, and hands it to each channel that is on: the
//! terminals of running `board tui`s (a broadcast to their streams), the desktop ([`desktop`])
//! and a command ([`command`]), each in a task of its own behind a small queue, so a slow or
//! hanging channel delays nothing but itself. Settings are read at each send: edits of
//! `[notify]` apply at once.

pub mod classify;
pub mod command;
pub mod desktop;
pub mod state;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::state::Board;
use crate::proto::{EventView, NoticeView};

/// Bursts waiting for one channel, at most: a channel that is still sending coalesces what
/// queued up into one summary; beyond this, bursts are dropped for it.
const CHANNEL_QUEUE: usize = 8;
/// Notices within this time of the first become one (a sweep that expels five claims is one
/// popup, not five).
pub const WINDOW: Duration = Duration::from_millis(200);
/// How often the board's state is looked at for `attention` (which no event announces).
const STATE_EVERY: Duration = Duration::from_secs(2);

/// Whether a channel's sends succeed, so a failing channel is logged once per change
/// (ok → failing → ok), not once per notice.
#[derive(Debug, Default)]
pub struct Health {
    failing: Option<String>,
}

impl Health {
    /// Records the outcome of one send of `channel`, logging only a change.
    pub fn record(&mut self, channel: &str, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => {
                if self.failing.take().is_some() {
                    tracing::info!(channel, "notify {channel} works again");
                }
            }
            Err(why) => {
                if self.failing.as_deref() != Some(why.as_str()) {
                    tracing::warn!(channel, error = %why, "notify {channel} failed; further failures alike are not logged");
                    self.failing = Some(why);
                }
            }
        }
    }
}

/// One channel's queue of bursts.
struct Channel {
    tx: mpsc::Sender<Vec<NoticeView>>,
    name: &'static str,
}

impl Channel {
    fn spawn<F, Fut>(board: &Arc<Board>, name: &'static str, send: F) -> Channel
    where
        F: Fn(Arc<Board>, NoticeView) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<(), String>> + Send,
    {
        let (tx, mut rx) = mpsc::channel::<Vec<NoticeView>>(CHANNEL_QUEUE);
        let board = Arc::clone(board);
        tokio::spawn(async move {
            let mut health = Health::default();
            while let Some(mut burst) = rx.recv().await {
                // What queued up while the last send ran goes out as one.
                while let Ok(more) = rx.try_recv() {
                    burst.extend(more);
                }
                if let Some(n) = classify::summarize(&burst) {
                    let outcome = send(Arc::clone(&board), n).await;
                    health.record(name, outcome);
                }
            }
        });
        Channel { tx, name }
    }

    fn hand(&self, burst: &[NoticeView]) {
        if self.tx.try_send(burst.to_vec()).is_err() {
            tracing::debug!(
                channel = self.name,
                "notify channel busy: a burst was dropped"
            );
        }
    }
}

/// Runs the notifier until the board stops.
pub async fn run(board: Arc<Board>) {
    let Some(mut rx) = board.events().notices().take_receiver() else {
        tracing::error!("the notifier started twice; the second one does nothing");
        return;
    };
    let desktop = Channel::spawn(&board, "desktop", desktop::send);
    let command = Channel::spawn(&board, "command", command::send);
    let mut memo = state::Memo::default();
    let mut tick = tokio::time::interval(STATE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let mut burst = Vec::new();
        tokio::select! {
            ev = rx.recv() => {
                let Some(ev) = ev else { return };
                let mut take = |ev: &EventView| {
                    if classify::ends_work(ev.kind) {
                        memo.note_work();
                    }
                    burst.extend(classify::classify(ev));
                };
                take(&ev);
                // Gather the rest of the burst.
                let until = tokio::time::Instant::now() + WINDOW;
                while let Ok(Some(ev)) = tokio::time::timeout_at(until, rx.recv()).await {
                    take(&ev);
                }
            }
            _ = tick.tick() => {}
        }
        let cfg = board.config().notify.clone();
        burst.retain(|n| cfg.wants(n.kind));
        let burst = awaiting_review(&board, burst).await;
        let mut burst = by_name(&board, burst).await;
        burst.extend(look_at_state(&board, &mut memo).await);
        burst.retain(|n| cfg.wants(n.kind));
        if burst.is_empty() {
            continue;
        }
        if cfg.terminal {
            if let Some(n) = classify::summarize(&burst) {
                board.events().notices().tell_terminals(n);
            }
        }
        if cfg.desktop {
            desktop.hand(&burst);
        }
        if cfg.command.is_some() {
            command.hand(&burst);
        }
    }
}

/// `burst` with each `review` notice kept only while its task still waits in review for a
/// person (not one the board lands itself because it skips review, nor one already accepted),
/// its text the task's title and the commit under review.
async fn awaiting_review(board: &Arc<Board>, burst: Vec<NoticeView>) -> Vec<NoticeView> {
    use crate::proto::glossary::{NoticeKind, TaskState};
    if burst.iter().all(|n| n.kind != NoticeKind::Review) {
        return burst;
    }
    let required = board.config().review.required;
    let kept = board
        .blocking(move |b, off| {
            let store = b.store(off);
            let waiting = |n: &mut NoticeView| -> bool {
                let Some(t) = n.task.and_then(|id| store.task(id, 0).ok()) else {
                    return false;
                };
                if t.state != TaskState::Review || !t.review.unwrap_or(required) {
                    return false;
                }
                let commit = t.commit.as_deref().unwrap_or_default();
                let short = commit.get(..12).unwrap_or(commit);
                n.text = format!("{} (commit {short})", t.title);
                true
            };
            burst
                .into_iter()
                .filter_map(|mut n| (n.kind != NoticeKind::Review || waiting(&mut n)).then_some(n))
                .collect::<Vec<_>>()
        })
        .await;
    kept.unwrap_or_default()
}

/// `burst` with each agent shown by the name people see (`sh`, not the session id `sh-7`
/// behind it); an agent whose name cannot be read keeps its id.
async fn by_name(board: &Arc<Board>, burst: Vec<NoticeView>) -> Vec<NoticeView> {
    if burst.iter().all(|n| n.agent.is_none()) {
        return burst;
    }
    let named = board
        .blocking(move |b, off| {
            let store = b.store(off);
            burst
                .into_iter()
                .map(|mut n| {
                    if let Some(id) = &n.agent {
                        if let Ok(Some(name)) = store.session_name(id) {
                            n.agent = Some(name);
                        }
                    }
                    n
                })
                .collect::<Vec<_>>()
        })
        .await;
    named.unwrap_or_default()
}

/// The notices the board's state makes now (`attention`, `finished`), when any channel is on
/// and either kind is wanted; a store that cannot be read makes none.
async fn look_at_state(board: &Arc<Board>, memo: &mut state::Memo) -> Vec<NoticeView> {
    let cfg = board.config().notify.clone();
    let wanted = [
        crate::proto::glossary::NoticeKind::Attention,
        crate::proto::glossary::NoticeKind::Finished,
    ];
    if !cfg.any_channel() || !wanted.iter().any(|k| cfg.wants(*k)) {
        return Vec::new();
    }
    let seen = board.blocking(state::look).await;
    match seen {
        Ok(Ok(now)) => memo.changes(now, &crate::store::now_wall()),
        Ok(Err(e)) | Err(e) => {
            tracing::debug!(error = %e, "notifier could not read the board's state");
            Vec::new()
        }
    }
}
