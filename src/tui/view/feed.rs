//! The event feed: the board's events, newest first, one line each.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::theme::{panel, put, put_spans, Theme};
use crate::proto::glossary::{ClaimEnd, EventKind, TaskState};
use crate::tui::app::App;
use crate::tui::snapshot::EventItem;

/// Event kinds as shown in the feed (at most 7 columns).
pub(super) fn kind_label(kind: EventKind) -> &'static str {
    match kind {
        EventKind::SessionStart => "joined",
        EventKind::SessionEnd => "left",
        EventKind::BoardStart => "board",
        // The feed's kind column is 7 wide.
        EventKind::Question => "asked",
        other => other.as_str(),
    }
}

/// Reasons that only repeat the kind (the store's default reasons).
fn trivial_reason(kind: EventKind, reason: &str) -> bool {
    match kind {
        EventKind::Grant => reason == TaskState::Claimed.as_str(),
        EventKind::Done => reason == ClaimEnd::Done.as_str(),
        EventKind::Edit => reason == "edited",
        EventKind::Cancel => reason == TaskState::Cancelled.as_str(),
        EventKind::SessionStart => reason == "registered",
        EventKind::Resume => reason == "resumed",
        _ => false,
    }
}

pub(super) fn event_text(e: &EventItem) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(task) = e.view.task {
        parts.push(format!("#{task}"));
    }
    if let Some(g) = e.view.generation {
        parts.push(format!("g{g}"));
    }
    let has_reason = !e.reason.is_empty() && !trivial_reason(e.view.kind, &e.reason);
    if !e.agent.is_empty() {
        parts.push(if has_reason {
            format!("{}:", e.agent)
        } else {
            e.agent.clone()
        });
    }
    if has_reason {
        parts.push(e.reason.clone());
    }
    parts.join(" ")
}

pub(super) fn draw_events(buf: &mut Buffer, r: Rect, app: &App, t: Theme) {
    if r.height == 0 {
        return;
    }
    let inner = panel(buf, r, " Events ", false, t);
    for (n, e) in app
        .events
        .iter()
        .take(usize::from(inner.height))
        .enumerate()
    {
        let y = inner.y + u16::try_from(n).unwrap_or(0);
        let kind = kind_label(e.kind);
        let text = event_text(e);
        let style = t.event_kind(e.view.kind);
        let kind_padded = format!("{kind:<7} ");
        put_spans(
            buf,
            inner.x + 1,
            y,
            inner.width.saturating_sub(1),
            &[
                (&e.time, t.dim()),
                (" ", Style::new()),
                (&kind_padded, style),
                (&text, Style::new()),
            ],
        );
    }
    if app.events.is_empty() && inner.height > 0 && app.loaded {
        put(
            buf,
            inner.x + 1,
            inner.y,
            inner.width,
            "no events yet",
            t.dim(),
        );
    }
}
