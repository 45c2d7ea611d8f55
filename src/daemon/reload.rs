//! Configuration reload: watches `board.toml` (notify) and applies valid edits while the board
//! runs; an invalid edit is logged and shown by `status`, and the previous settings stay.

use std::sync::Arc;
use std::time::Duration;

use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecursiveMode, Watcher};

use super::state::{Board, OffReactor};
use crate::proto::config::Config;

/// Watches the project root for changes to `board.toml` until the board stops.
pub async fn run(board: Arc<Board>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let cfg_path = board.paths().config.clone();
    let mut watcher =
        match notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            if let Ok(ev) = res {
                let _ = tx.send(ev);
            }
        }) {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch board.toml; edits need a restart");
                return;
            }
        };
    // Watch the directory: editors replace the file by renaming, which a file watch would lose.
    if let Err(e) = watcher.watch(&board.paths().root, RecursiveMode::NonRecursive) {
        tracing::warn!(error = %e, "cannot watch the project root; edits need a restart");
        return;
    }
    // An edit made after the board read board.toml at start but before the watch began would
    // otherwise wait for the next edit.
    apply_off_reactor(&board).await;
    while let Some(ev) = rx.recv().await {
        if !changes_content(&ev.kind)
            || !ev
                .paths
                .iter()
                .any(|p| p.file_name() == cfg_path.file_name())
        {
            continue;
        }
        // Let a burst of writes from an editor settle, then read once.
        tokio::time::sleep(Duration::from_millis(50)).await;
        while rx.try_recv().is_ok() {}
        apply_off_reactor(&board).await;
    }
}

/// Whether an event can mean new content. Opening or reading the file cannot, and must not
/// count: `apply` itself opens it (and every client command reads it), so reacting to those
/// would re-read the file forever.
fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

async fn apply_off_reactor(board: &Arc<Board>) {
    if let Err(e) = board.blocking(|b, off| apply(b, off)).await {
        tracing::error!(error = %e, "could not apply board.toml");
    }
}

/// Reads `board.toml` and applies it, or records why it was refused.
pub fn apply(board: &Board, off: &OffReactor) {
    match Config::load(&board.paths().config) {
        Ok(new) => {
            let (old, error) = board.replace_config(new);
            let (changed, sweep_changed) = {
                let cur = board.config();
                // Any lease change can move the next sweep (a shorter lease must be looked at
                // sooner).
                (old != *cur, old.lease != cur.lease)
            };
            if error.is_some() {
                log_event(board, off, "board.toml fixed: its settings are in force");
            }
            if changed {
                tracing::info!("board.toml reloaded");
            }
            if sweep_changed {
                board.sweep_changed().notify_one();
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "board.toml edit refused; previous settings stay in force");
            let text = e.to_string();
            let prev = board.set_config_error(text.clone());
            // Once per change: the watcher sees several writes of one save, and a reread of the
            // same broken file is no news.
            if prev.as_deref() != Some(text.as_str()) {
                let line = crate::proto::config_notice::one_line(&text);
                log_event(
                    board,
                    off,
                    &format!("board.toml edit refused, previous settings stay: {line}"),
                );
            }
        }
    }
}

/// A `config` event in the log (the TUI refreshes on it and shows the banner at once).
fn log_event(board: &Board, off: &OffReactor, reason: &str) {
    match board
        .store(off)
        .record(crate::store::EventKind::Config, None, None, None, reason)
    {
        Ok(ev) => board.publish(ev),
        Err(e) => tracing::warn!(error = %e, "could not record a config event"),
    }
}
