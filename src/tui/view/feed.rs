//! The event feed: the board's events, newest first, one line each.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::theme::{panel, put, put_spans, Theme};
use crate::tui::state::app::App;
use crate::tui::update::detail::{event_text, kind_label};

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
