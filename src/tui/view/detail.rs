//! The details dialog of one task: its fields, notes and history, wrapped to the dialog.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use unicode_width::UnicodeWidthChar;

use super::dialogs::dialog;
use super::feed::{event_text, kind_label};
use super::theme::{put, width, Theme};
use crate::proto::countdown;
use crate::proto::glossary::TaskState;
use crate::proto::sanitize::{inert, one_line};
use crate::tui::app::{App, Detail};
use crate::tui::layout::detail_box;
use crate::tui::snapshot::EventItem;

/// Splits inert text into lines of at most `w` columns, at spaces where possible.
pub(super) fn wrap(text: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut out = Vec::new();
    for para in text.split('\n') {
        let mut line = String::new();
        let mut line_w = 0;
        for word in para.split_inclusive(' ') {
            let ww = width(word);
            if line_w + width(word.trim_end()) > w && !line.is_empty() {
                out.push(std::mem::take(&mut line).trim_end().to_string());
                line_w = 0;
            }
            if ww > w {
                // A word longer than the line: cut it by columns.
                for c in word.chars() {
                    let cw = c.width().unwrap_or(0);
                    if line_w + cw > w {
                        out.push(std::mem::take(&mut line));
                        line_w = 0;
                    }
                    line.push(c);
                    line_w += cw;
                }
            } else {
                line.push_str(word);
                line_w += ww;
            }
        }
        out.push(line.trim_end().to_string());
    }
    out
}

/// For a task in review: the diff under review (stat, then patch), each line inert and cut to the
/// dialog; a patch's `+`/`-` lines coloured.
fn review_section(out: &mut Vec<(String, Style)>, d: &Detail, w: usize, t: &Theme) {
    let Some(task) = d.data.as_ref().map(|x| &x.task) else {
        return;
    };
    if task.state != TaskState::Review {
        return;
    }
    out.push((String::new(), Style::new()));
    out.push((
        "diff under review · y accept (lands it) · n reject".into(),
        t.bold(Color::Magenta),
    ));
    let text = match &d.diff {
        None => {
            out.push(("  loading…".into(), t.dim()));
            return;
        }
        Some(Err(e)) => {
            out.push((format!("  {e}"), t.bold(Color::Red)));
            return;
        }
        Some(Ok(text)) => text,
    };
    for line in text.lines() {
        let style = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => t.fg(Color::Green),
            Some(b'-') if !line.starts_with("---") => t.fg(Color::Red),
            Some(b'@') => t.fg(Color::Cyan),
            _ => Style::new(),
        };
        let shown = crate::proto::sanitize::truncate_width(&one_line(line), w.saturating_sub(2));
        out.push((format!("  {shown}"), style));
    }
}

pub(crate) fn detail_lines(app: &App, d: &Detail, w: usize) -> Vec<(String, Style)> {
    let t = Theme { color: app.color };
    let mut out: Vec<(String, Style)> = Vec::new();
    let Some(data) = &d.data else {
        let text = match &d.error {
            Some(e) => (e.clone(), t.bold(Color::Red)),
            None => ("loading…".into(), t.dim()),
        };
        out.push(text);
        return out;
    };
    let task = &data.task;
    let head = Style::new().add_modifier(Modifier::BOLD);
    for l in wrap(&one_line(&task.title), w) {
        out.push((l, head));
    }
    out.push((String::new(), Style::new()));
    let state = match task.state {
        TaskState::Claimed => format!(
            "claimed by {} · generation {} · lease {}",
            one_line(task.holder.as_deref().unwrap_or("?")),
            task.generation,
            countdown(app.remaining_ms(task).unwrap_or(0))
        ),
        TaskState::Open if task.ready => {
            format!("open · ready · generation {}", task.generation)
        }
        TaskState::Open => format!("open · blocked · generation {}", task.generation),
        TaskState::Done => format!(
            "done by {} at {} · generation {}",
            one_line(task.done_by.as_deref().unwrap_or("?")),
            one_line(task.done_at.as_deref().unwrap_or("?")),
            task.generation
        ),
        TaskState::Cancelled => TaskState::Cancelled.to_string(),
        TaskState::Review => format!(
            "in review · commit {} · finished by {} · generation {} · y accept · n reject",
            one_line(task.commit.as_deref().unwrap_or("?")),
            one_line(task.done_by.as_deref().unwrap_or("?")),
            task.generation
        ),
    };
    let ids = |v: &[i64]| {
        v.iter()
            .map(|i| format!("#{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut fields = vec![
        ("state", state),
        ("priority", task.priority.to_string()),
        (
            "created",
            format!(
                "{} · updated {}",
                one_line(&task.created_at),
                one_line(&task.updated_at)
            ),
        ),
    ];
    if !task.after.is_empty() {
        let mut s = ids(&task.after);
        if !task.blocked_by.is_empty() {
            s.push_str(&format!(" (waiting for {})", ids(&task.blocked_by)));
        }
        fields.push(("after", s));
    }
    for (k, v) in fields {
        for (i, l) in wrap(&v, w.saturating_sub(10)).into_iter().enumerate() {
            let label = if i == 0 { k } else { "" };
            out.push((format!("{label:<9} {l}"), Style::new()));
        }
    }
    let section = |out: &mut Vec<(String, Style)>, s: String| {
        out.push((String::new(), Style::new()));
        out.push((s, t.bold(Color::Cyan)));
    };
    if !task.body.is_empty() {
        section(&mut out, "body".into());
        for l in wrap(&inert(&task.body), w.saturating_sub(2)) {
            out.push((format!("  {l}"), Style::new()));
        }
    }
    review_section(&mut out, d, w, &t);
    section(&mut out, format!("notes ({})", data.notes.len()));
    for n in &data.notes {
        let who = match n.generation {
            Some(g) => format!("{} g{g}", one_line(&n.author)),
            None => one_line(&n.author),
        };
        let text = format!("{} {who}: {}", one_line(&n.at), one_line(&n.text));
        for l in wrap(&text, w.saturating_sub(2)) {
            out.push((format!("  {l}"), Style::new()));
        }
    }
    section(&mut out, format!("history ({})", data.events.len()));
    for e in &data.events {
        let item = EventItem {
            time: one_line(&e.at),
            kind: e.kind,
            agent: e.agent.as_deref().map(one_line).unwrap_or_default(),
            reason: e.reason.as_deref().map(one_line).unwrap_or_default(),
            view: e.clone(),
        };
        let text = format!(
            "{} {:<7} {}",
            item.time,
            kind_label(item.kind),
            event_text(&item)
        );
        for l in wrap(&text, w.saturating_sub(2)) {
            out.push((format!("  {l}"), t.event_kind(e.kind)));
        }
    }
    out
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
    for (i, (l, style)) in lines.iter().skip(scroll).take(h).enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(0);
        put(buf, inner.x + 1, y, inner.width - 2, l, *style);
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
