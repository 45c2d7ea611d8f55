//! The needs-you list and the operator's messages, as dialogs over the board.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::dialogs::dialog;
use super::theme::{put, Theme};
use crate::tui::state::app::App;
use crate::tui::state::needs::{Inbox, NeedKind};
use crate::tui::update::detail::wrap;
use crate::tui::update::needs::needs;

/// Columns of the kind label (the longest, `PERMISSION`).
const LABEL_W: u16 = 10;

fn kind_style(kind: NeedKind, t: Theme) -> Style {
    match kind {
        NeedKind::Question | NeedKind::Permission => t.bold(Color::Yellow),
        NeedKind::Attention | NeedKind::Review => t.bold(Color::Magenta),
        NeedKind::Messages => t.bold(Color::Cyan),
        NeedKind::Orphaned => t.bold(Color::Red),
    }
}

/// The needs-you list: one line per item (kind, what, what to do), `at` selected.
pub(super) fn draw_needs(buf: &mut Buffer, area: Rect, app: &App, at: usize, t: Theme) {
    let items = needs(app);
    let rows = u16::try_from(items.len().max(1)).unwrap_or(u16::MAX);
    let inner = dialog(
        buf,
        area,
        100,
        rows.saturating_add(3),
        &format!("Needs you · {}", items.len()),
        t,
    );
    if inner.height == 0 {
        return;
    }
    if items.is_empty() {
        put(
            buf,
            inner.x + 1,
            inner.y,
            inner.width.saturating_sub(1),
            "nothing waits for you: no question, prompt, message or abandoned claim",
            t.dim(),
        );
        return;
    }
    let at = at.min(items.len() - 1);
    let h = usize::from(inner.height.saturating_sub(1)).max(1);
    let offset = super::theme::scroll_offset(at, h, items.len());
    for (n, item) in items.iter().enumerate().skip(offset).take(h) {
        let y = inner.y + u16::try_from(n - offset).unwrap_or(0);
        if n == at {
            buf.set_style(Rect::new(inner.x, y, inner.width, 1), t.selected());
        }
        let right = inner.right();
        put(
            buf,
            inner.x + 1,
            y,
            LABEL_W.min(inner.width.saturating_sub(1)),
            item.kind.label(),
            kind_style(item.kind, t),
        );
        let x = (inner.x + 2 + LABEL_W).min(right);
        let todo_w = u16::try_from(super::theme::width(item.todo)).unwrap_or(0) + 1;
        let text_w = right.saturating_sub(x).saturating_sub(todo_w + 1);
        put(
            buf,
            x,
            y,
            text_w,
            &item.text,
            Style::new().add_modifier(Modifier::BOLD),
        );
        if right > todo_w + x {
            put(buf, right - todo_w, y, todo_w, item.todo, t.fg(Color::Cyan));
        }
    }
    if inner.height > 1 {
        put(
            buf,
            inner.x + 1,
            inner.bottom() - 1,
            inner.width.saturating_sub(1),
            "⏎ does what the item says · A answers a question · d dismisses · Esc closes",
            t.dim(),
        );
    }
}

/// The operator's messages just read: sender and time, then the text wrapped.
pub(super) fn draw_inbox(buf: &mut Buffer, area: Rect, inbox: &Inbox, t: Theme) {
    let w = 90.min(area.width);
    let text_w = usize::from(w.saturating_sub(4)).max(1);
    let mut lines: Vec<(String, Style)> = Vec::new();
    if let Some(e) = &inbox.error {
        lines.push((e.clone(), t.bold(Color::Red)));
    }
    if inbox.messages.is_empty() && inbox.error.is_none() {
        lines.push(("no unread messages".into(), t.dim()));
    }
    for (from, time, text) in &inbox.messages {
        lines.push((format!("{time}  from {from}"), t.bold(Color::Cyan)));
        for l in wrap(text, text_w) {
            lines.push((l, Style::new()));
        }
        lines.push((String::new(), Style::new()));
    }
    let h = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    let inner = dialog(buf, area, w, h, "Messages to you (now marked read)", t);
    let shown = usize::from(inner.height);
    let scroll = inbox.scroll.min(lines.len().saturating_sub(shown));
    for (i, (l, style)) in lines.iter().skip(scroll).take(shown).enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(0);
        put(
            buf,
            inner.x + 1,
            y,
            inner.width.saturating_sub(1),
            l,
            *style,
        );
    }
}
