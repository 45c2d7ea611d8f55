//! The details dialog of one task: its fields, notes and history, wrapped to the dialog (the
//! text comes from [`crate::tui::update::detail`], which the scroll keys measure too).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::dialogs::dialog;
use super::theme::{put, width, Theme};
use crate::tui::state::app::{App, Detail};
use crate::tui::update::detail::{detail_box, detail_lines, Tone};

/// The style of a details line of tone `tone`.
fn style_of(tone: Tone, t: Theme) -> Style {
    match tone {
        Tone::Plain => Style::new(),
        Tone::Title => Style::new().add_modifier(Modifier::BOLD),
        Tone::Dim => t.dim(),
        Tone::Error => t.bold(Color::Red),
        Tone::Section => t.bold(Color::Cyan),
        Tone::Review => t.bold(Color::Magenta),
        Tone::Added => t.fg(Color::Green),
        Tone::Removed => t.fg(Color::Red),
        Tone::Hunk => t.fg(Color::Cyan),
        Tone::Event(kind) => t.event_kind(kind),
    }
}

pub(super) fn draw_detail(buf: &mut Buffer, area: Rect, app: &App, d: &Detail, t: Theme) {
    let (w, h) = detail_box(area);
    let inner = dialog(buf, area, w, h, &format!("Task #{}", d.task), t);
    if inner.width < 3 || inner.height == 0 {
        return;
    }
    let lines = detail_lines(app, d, usize::from(inner.width - 2));
    let h = usize::from(inner.height);
    let scroll = d.scroll.min(lines.len().saturating_sub(h));
    for (i, (l, tone)) in lines.iter().skip(scroll).take(h).enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(0);
        put(buf, inner.x + 1, y, inner.width - 2, l, style_of(*tone, t));
    }
    if lines.len() > h {
        let more = format!(" {}–{} of {} ", scroll + 1, scroll + h, lines.len());
        let mw = u16::try_from(width(&more)).unwrap_or(0);
        let bottom = inner.bottom();
        if w > mw + 4 && bottom < area.bottom() {
            put(buf, inner.right() - mw, bottom, mw, &more, t.dim());
        }
    }
}
