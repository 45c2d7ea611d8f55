//! The dialogs over the board: key help, forms, a waiting agent's question, confirmations.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, Clear, Widget};

use super::theme::{put, put_spans, Theme};
use crate::proto::sanitize::truncate_width;
use crate::tui::state::form::{Form, FormKind};
use crate::tui::update::detail::wrap;

/// A centered dialog box of at most `w`×`h`; clears what is under it. Returns the inside.
pub(super) fn dialog(buf: &mut Buffer, area: Rect, w: u16, h: u16, title: &str, t: Theme) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(r, buf);
    let title = truncate_width(title, usize::from(w.saturating_sub(4)));
    let block =
        Block::bordered()
            .border_style(t.fg(Color::Cyan))
            .title(ratatui::text::Span::styled(
                format!(" {title} "),
                t.bold(Color::Cyan),
            ));
    let inner = block.inner(r);
    block.render(r, buf);
    inner
}

const HELP: &[(&str, &str)] = &[
    ("j k ↓ ↑", "move in the focused panel"),
    ("g G Home End", "first / last"),
    ("PgUp PgDn ^u ^d", "a page up / down"),
    ("Tab", "switch between backlog and agents"),
    ("i", "needs you: questions, prompts, messages, …"),
    ("m A", "message the selected agent / answer a question"),
    ("F5 ^l", "refresh now"),
    ("", "backlog only:"),
    ("Enter", "details of the task: body, notes, history"),
    ("a", "add a task (title, priority, dependencies)"),
    ("e", "edit the task: title, body, priority, after"),
    ("s", "set the goal"),
    ("r", "force-release the task's claim (asks first)"),
    ("x", "cancel the task (asks first)"),
    ("/ Esc c", "filter · clear it · show cancelled tasks"),
    ("L", "filter by a label (again: the next one)"),
    ("", "agents only:"),
    ("Enter", "go to the agent's pane"),
    ("S R K U", "start · restart · stop (TERM, then KILL) · all"),
    ("?", "this help"),
    ("q ^c", "quit"),
];

pub(super) fn draw_help(buf: &mut Buffer, area: Rect, t: Theme) {
    let h = u16::try_from(HELP.len()).unwrap_or(20) + 4;
    let inner = dialog(buf, area, 66, h, "Keys", t);
    for (i, (k, what)) in HELP.iter().enumerate() {
        let Ok(i) = u16::try_from(i) else { break };
        if i >= inner.height {
            break;
        }
        put(buf, inner.x + 1, inner.y + i, 17, k, t.bold(Color::Cyan));
        put(
            buf,
            inner.x + 19,
            inner.y + i,
            inner.width.saturating_sub(19),
            what,
            Style::new(),
        );
    }
    if inner.height > 1 {
        put(
            buf,
            inner.x + 1,
            inner.bottom() - 1,
            inner.width.saturating_sub(1),
            "any key closes this help",
            t.dim(),
        );
    }
}

/// Draws a form; returns where the terminal cursor goes.
pub(super) fn draw_form(buf: &mut Buffer, area: Rect, f: &Form, t: Theme) -> Option<Position> {
    let n = u16::try_from(f.fields.len()).unwrap_or(4);
    let h = n * 2 + 4;
    let inner = dialog(buf, area, 78, h, &f.title(), t);
    let label_w = 10;
    let field_w = inner.width.saturating_sub(label_w + 2);
    let mut cursor = None;
    for (i, field) in f.fields.iter().enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(0) * 2;
        if y >= inner.bottom() {
            break;
        }
        let focused = i == f.focus;
        let label_style = if focused {
            t.bold(Color::Cyan)
        } else {
            Style::new()
        };
        put(buf, inner.x + 1, y, label_w, field.label, label_style);
        let fx = inner.x + 1 + label_w;
        let field_rect = Rect::new(fx, y, field_w, 1);
        let style = if t.color {
            Style::new().bg(Color::Indexed(236))
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED)
        };
        buf.set_style(field_rect, style);
        let (text, col) = field.input.window(usize::from(field_w));
        put(buf, fx, y, field_w, &text, Style::new());
        if focused && !f.pending {
            cursor = Some(Position::new(fx + u16::try_from(col).unwrap_or(0), y));
        }
        if y + 1 < inner.bottom() {
            let hint = match (field.label, &f.kind) {
                ("Priority", _) => "a whole number; higher runs first (default 0)",
                ("After", _) => "ids of tasks that must be done first, e.g. 3 7",
                ("Body", _) => "Alt-Enter or Ctrl-J for a new line",
                ("Labels", _) => "labels separated by spaces, e.g. ui bug",
                ("For", _) => "the agent name or role that may claim it (empty: any)",
                ("Review", _) => "yes, no, or empty: as [review] required",
                ("Title", FormKind::Add) => "one line",
                _ => "",
            };
            put(buf, fx, y + 1, field_w, hint, t.dim());
        }
    }
    let bottom = inner.bottom().saturating_sub(1);
    if bottom > inner.y {
        let (text, style) = match (&f.error, f.pending) {
            (Some(e), _) => (e.clone(), t.bold(Color::Red)),
            (None, true) => ("sending…".to_string(), t.dim()),
            (None, false) => (
                "Enter save · Tab/↑↓ field · Esc cancel".to_string(),
                t.dim(),
            ),
        };
        put(
            buf,
            inner.x + 1,
            bottom,
            inner.width.saturating_sub(1),
            &text,
            style,
        );
    }
    cursor
}

/// Draws a yes/no question dialog over `area` (a restart or stop of an agent).
pub fn draw_question(buf: &mut Buffer, area: Rect, question: &str, color: bool) {
    draw_confirm(buf, area, question, Theme { color });
}

pub(super) fn draw_confirm(buf: &mut Buffer, area: Rect, question: &str, t: Theme) {
    let w = 64.min(area.width);
    let lines = wrap(question, usize::from(w.saturating_sub(4)));
    let h = u16::try_from(lines.len()).unwrap_or(3) + 4;
    let inner = dialog(buf, area, w, h, "Are you sure?", t);
    for (i, l) in lines.iter().enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(0);
        if y >= inner.bottom() {
            break;
        }
        put(
            buf,
            inner.x + 1,
            y,
            inner.width.saturating_sub(1),
            l,
            Style::new().add_modifier(Modifier::BOLD),
        );
    }
    if inner.height > 1 {
        put_spans(
            buf,
            inner.x + 1,
            inner.bottom() - 1,
            inner.width.saturating_sub(1),
            &[
                (" y ", t.bar(Color::Red)),
                (" yes   ", Style::new()),
                (" n ", t.bar(Color::Cyan)),
                (" no (Esc)", Style::new()),
            ],
        );
    }
}
