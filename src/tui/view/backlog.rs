//! The backlog panel: tasks grouped by state, one row each, with holder and lease countdown.

use std::borrow::Cow;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};

use super::theme::{panel, put, put_right, scroll_offset, Theme};
use crate::proto::countdown;
use crate::proto::glossary::TaskId;
use crate::proto::sanitize::{one_line, truncate_width};
use crate::tui::state::app::{App, Focus, Mode};
use crate::tui::state::snapshot::{Group, Row, TaskItem};

pub(super) fn draw_backlog(buf: &mut Buffer, r: Rect, app: &App, t: Theme) {
    if r.height == 0 {
        return;
    }
    let total: usize = app.totals.iter().sum();
    let mut title = format!(" Backlog · {total} tasks ");
    if !app.filter.text().is_empty() || app.mode == Mode::Filter {
        title.push_str(&format!(
            "· filter “{}” ",
            truncate_width(&one_line(app.filter.text()), 30)
        ));
    }
    let focused = app.focus == Focus::Backlog;
    let inner = panel(buf, r, &title, focused, t);
    if inner.height == 0 {
        return;
    }
    if !app.loaded {
        put(buf, inner.x + 1, inner.y, inner.width, "loading…", t.dim());
        return;
    }
    let h = usize::from(inner.height);
    let sel = app.selected.unwrap_or(0);
    let offset = scroll_offset(sel, h, app.rows.len());
    let max_id = app
        .tasks
        .iter()
        .map(|t| t.task.id)
        .max()
        .unwrap_or(TaskId(1));
    let id_w = u16::try_from(max_id.to_string().len() + 1)
        .unwrap_or(6)
        .max(3);
    let cols = Cols::new(inner.width, id_w);
    for (n, row) in app.rows.iter().enumerate().skip(offset).take(h) {
        let y = inner.y + u16::try_from(n - offset).unwrap_or(0);
        match row {
            Row::Header(g, count) => {
                let mut x = inner.x;
                x += put(buf, x, y, inner.width, g.label(), t.group(*g));
                let shown_total = app.totals[*g as usize];
                let count = if *count == shown_total {
                    format!(" {count}")
                } else {
                    format!(" {count} of {shown_total}")
                };
                put(buf, x, y, inner.right().saturating_sub(x), &count, t.dim());
            }
            Row::Task(i) => {
                let item = &app.tasks[*i];
                let selected = app.selected == Some(n);
                let line = Rect::new(inner.x, y, inner.width, 1);
                if selected && focused {
                    buf.set_style(line, t.selected());
                }
                draw_task_row(buf, line, &cols, app, item, selected, t);
            }
        }
    }
    if app.rows.len() > h {
        let more = format!(" {}–{} of {} ", offset + 1, offset + h, app.rows.len());
        let w = u16::try_from(more.len()).unwrap_or(0);
        if r.width > w + 30 {
            put(buf, r.right() - w - 1, r.y, w, &more, t.dim());
        }
    }
}

/// Column positions of a backlog row.
struct Cols {
    id: (u16, u16),
    prio: (u16, u16),
    title: (u16, u16),
    who: (u16, u16),
    lease: (u16, u16),
}

impl Cols {
    pub(super) fn new(w: u16, id_w: u16) -> Cols {
        let lease_w = 7;
        let prio_w = 3;
        let who_w: u16 = if w >= 90 {
            18
        } else if w >= 60 {
            13
        } else {
            9
        };
        let fixed = 2 + id_w + 1 + prio_w + 1 + 1 + who_w + 1 + lease_w;
        let title_w = w.saturating_sub(fixed);
        let id = (2, id_w);
        let prio = (id.0 + id_w + 1, prio_w);
        let title = (prio.0 + prio_w + 1, title_w);
        let who = (title.0 + title_w + 1, who_w);
        let lease = (who.0 + who_w + 1, lease_w);
        Cols {
            id,
            prio,
            title,
            who,
            lease,
        }
    }
}

fn draw_task_row(
    buf: &mut Buffer,
    line: Rect,
    c: &Cols,
    app: &App,
    item: &TaskItem,
    selected: bool,
    t: Theme,
) {
    let (x, y) = (line.x, line.y);
    let fits = |(off, w): (u16, u16)| {
        let end = off.saturating_add(w);
        (end <= line.width).then(|| (x + off, w))
    };
    if selected {
        put(buf, x, y, 2, "›", t.bold(Color::Cyan));
    }
    let task = &item.task;
    let dim_row = matches!(item.group, Group::Done | Group::Cancelled);
    let text_style = if dim_row { t.dim() } else { Style::new() };
    if let Some((cx, w)) = fits(c.id) {
        put_right(buf, cx, y, w, &format!("#{}", task.id), t.dim());
    }
    if let Some((cx, w)) = fits(c.prio) {
        if let Some((text, style)) = priority_cell(task.priority, t) {
            put(buf, cx, y, w, &text, style);
        }
    }
    let (who, who_style) = who_cell(item, t);
    // A row with nothing to say about holder and lease lends their columns to the title.
    let title_w = if who.is_empty() && !matches!(item.group, Group::Claimed | Group::Done) {
        line.width.saturating_sub(c.title.0)
    } else {
        c.title.1
    };
    if let Some((cx, w)) = fits((c.title.0, title_w)) {
        put(buf, cx, y, w, &title_text(item), text_style);
    }
    if let Some((cx, w)) = fits(c.who) {
        put(buf, cx, y, w, &who, who_style);
    }
    if let Some((cx, w)) = fits(c.lease) {
        if let Some((text, style)) = lease_cell(app, item, t) {
            put_right(buf, cx, y, w, &text, style);
        }
    }
}

/// The priority column: `pN` (bold when above 0, dim below), nothing for priority 0.
fn priority_cell(priority: i64, t: Theme) -> Option<(String, Style)> {
    if priority == 0 {
        return None;
    }
    let style = if priority > 0 {
        t.bold(Color::Magenta)
    } else {
        t.dim()
    };
    Some((format!("p{priority}"), style))
}

/// The holder column: the holder of a claimed task, what a blocked task waits for, who finished
/// a done or reviewed task; empty otherwise.
fn who_cell(item: &TaskItem, t: Theme) -> (String, Style) {
    match item.group {
        Group::Claimed => (item.holder.clone(), t.bold(Color::Cyan)),
        Group::Blocked => {
            let ids: Vec<String> = item
                .task
                .blocked_by
                .iter()
                .map(|i| format!("#{i}"))
                .collect();
            (format!("after {}", ids.join(" ")), t.fg(Color::Yellow))
        }
        Group::Done => (format!("✓ {}", item.done_by), t.dim()),
        Group::Review => (format!("review {}", item.done_by), t.bold(Color::Magenta)),
        _ => (String::new(), Style::new()),
    }
}

/// The title with the task's labels in brackets, when it has any.
fn title_text(item: &TaskItem) -> Cow<'_, str> {
    if item.labels.is_empty() {
        Cow::Borrowed(&item.title)
    } else {
        Cow::Owned(format!("{} [{}]", item.title, item.labels))
    }
}

/// The lease column: a claimed task's countdown, coloured (and marked) as it runs low; a done
/// task's `HH:MM`; nothing otherwise.
fn lease_cell(app: &App, item: &TaskItem, t: Theme) -> Option<(String, Style)> {
    match item.group {
        Group::Claimed => {
            let ms = app.remaining_ms(&item.task).unwrap_or(0);
            let low = app.lease_ms.map(|l| ms * 4 < l).unwrap_or(ms < 30_000);
            let style = if ms <= 0 {
                t.bold(Color::Red)
            } else if low {
                t.bold(Color::Yellow)
            } else {
                t.fg(Color::Green)
            };
            // The mark says it without colour too (NO_COLOR): the board warns the holder
            // at the same point (a quarter of the lease left).
            let text = if low && ms > 0 {
                format!("⚠ {}", countdown(ms))
            } else {
                countdown(ms)
            };
            Some((text, style))
        }
        Group::Done => {
            let at = item.task.done_at.as_deref().and_then(|d| d.get(11..16));
            Some((one_line(at.unwrap_or("")), t.dim()))
        }
        _ => None,
    }
}
