//! The details dialog's text and box, as the scroll keys and the view both need them: the
//! lines of a task's details wrapped to the dialog, each with the [`Tone`] the view draws it in,
//! and the dialog's size on a screen. Pure text and geometry: no drawing, no I/O.

use ratatui::layout::Rect;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::proto::countdown;
use crate::proto::glossary::{ClaimEnd, EventKind, TaskId, TaskState};
use crate::proto::sanitize::{inert, one_line};
use crate::proto::{EventView, NoteView, TaskView};
use crate::tui::state::app::{App, Detail};
use crate::tui::state::snapshot::EventItem;

/// What a line of the details dialog is, for the view to pick its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Ordinary text.
    Plain,
    /// The task's title.
    Title,
    /// Still loading.
    Dim,
    /// Why something could not be shown.
    Error,
    /// A section's heading (body, notes, history).
    Section,
    /// The heading of the diff under review.
    Review,
    /// A patch line that adds.
    Added,
    /// A patch line that removes.
    Removed,
    /// A patch's hunk header.
    Hunk,
    /// A history line, by its event's kind.
    Event(EventKind),
}

/// Display width of already-inert text, in columns.
pub fn width(s: &str) -> usize {
    let per_char: usize = s.chars().map(|c| c.width().unwrap_or(0)).sum();
    per_char.max(s.width())
}

/// Splits inert text into lines of at most `w` columns, at spaces where possible.
pub fn wrap(text: &str, w: usize) -> Vec<String> {
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

/// Event kinds as shown in the feed (at most 7 columns).
pub fn kind_label(kind: EventKind) -> &'static str {
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

/// An event's line in the feed after its time and kind: task, generation, agent and reason.
pub fn event_text(e: &EventItem) -> String {
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

/// For a task in review: the diff under review (stat, then patch), each line inert and cut to the
/// dialog; a patch's `+`/`-` lines coloured.
fn review_section(out: &mut Vec<(String, Tone)>, d: &Detail, w: usize) {
    let Some(task) = d.data.as_ref().map(|x| &x.task) else {
        return;
    };
    if task.state != TaskState::Review {
        return;
    }
    out.push((String::new(), Tone::Plain));
    out.push((
        "diff under review · y accept (lands it) · n reject".into(),
        Tone::Review,
    ));
    let text = match &d.diff {
        None => {
            out.push(("  loading…".into(), Tone::Dim));
            return;
        }
        Some(Err(e)) => {
            out.push((format!("  {e}"), Tone::Error));
            return;
        }
        Some(Ok(text)) => text,
    };
    for line in text.lines() {
        let style = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => Tone::Added,
            Some(b'-') if !line.starts_with("---") => Tone::Removed,
            Some(b'@') => Tone::Hunk,
            _ => Tone::Plain,
        };
        let shown = crate::proto::sanitize::truncate_width(&one_line(line), w.saturating_sub(2));
        out.push((format!("  {shown}"), style));
    }
}

/// The details dialog's lines for `d`, wrapped to `w` columns, each with its [`Tone`].
pub fn detail_lines(app: &App, d: &Detail, w: usize) -> Vec<(String, Tone)> {
    let mut out: Vec<(String, Tone)> = Vec::new();
    let Some(data) = &d.data else {
        let text = match &d.error {
            Some(e) => (e.clone(), Tone::Error),
            None => ("loading…".into(), Tone::Dim),
        };
        out.push(text);
        return out;
    };
    let task = &data.task;
    for l in wrap(&one_line(&task.title), w) {
        out.push((l, Tone::Title));
    }
    out.push((String::new(), Tone::Plain));
    fields_section(&mut out, app, task, w);
    if !task.body.is_empty() {
        section(&mut out, "body".into());
        for l in wrap(&inert(&task.body), w.saturating_sub(2)) {
            out.push((format!("  {l}"), Tone::Plain));
        }
    }
    review_section(&mut out, d, w);
    notes_section(&mut out, &data.notes, w);
    history_section(&mut out, &data.events, w);
    out
}

/// A blank line, then a section's heading.
fn section(out: &mut Vec<(String, Tone)>, heading: String) {
    out.push((String::new(), Tone::Plain));
    out.push((heading, Tone::Section));
}

/// The task's state in one phrase: its holder and lease, readiness, who finished it, with the
/// generation.
fn state_text(app: &App, task: &TaskView) -> String {
    match task.state {
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
    }
}

/// Task ids as `#1 #2`.
fn ids(v: &[TaskId]) -> String {
    v.iter()
        .map(|i| format!("#{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The labelled fields under the title (state, priority, created, after), each value wrapped
/// beside its 9-column label.
fn fields_section(out: &mut Vec<(String, Tone)>, app: &App, task: &TaskView, w: usize) {
    let mut fields = vec![
        ("state", state_text(app, task)),
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
            out.push((format!("{label:<9} {l}"), Tone::Plain));
        }
    }
}

/// The task's notes, oldest first: time, author (with the generation written as holder), text.
fn notes_section(out: &mut Vec<(String, Tone)>, notes: &[NoteView], w: usize) {
    section(out, format!("notes ({})", notes.len()));
    for n in notes {
        let who = match n.generation {
            Some(g) => format!("{} g{g}", one_line(&n.author)),
            None => one_line(&n.author),
        };
        let text = format!("{} {who}: {}", one_line(&n.at), one_line(&n.text));
        for l in wrap(&text, w.saturating_sub(2)) {
            out.push((format!("  {l}"), Tone::Plain));
        }
    }
}

/// The task's history, oldest first, each event as the feed shows it and toned by its kind.
fn history_section(out: &mut Vec<(String, Tone)>, events: &[EventView], w: usize) {
    section(out, format!("history ({})", events.len()));
    for e in events {
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
            out.push((format!("  {l}"), Tone::Event(e.kind)));
        }
    }
}

/// The details dialog's box on a screen of `area`.
pub fn detail_box(area: Rect) -> (u16, u16) {
    let w = (area.width * 9 / 10).max(area.width.min(60));
    let h = (area.height * 17 / 20).max(area.height.min(12));
    (w.min(area.width), h.min(area.height))
}

/// The largest useful scroll position of the details dialog on a `width`×`height` screen.
pub fn detail_max_scroll(app: &App, d: &Detail, width: u16, height: u16) -> usize {
    let (w, h) = detail_box(Rect::new(0, 0, width, height));
    let (inner_w, inner_h) = (w.saturating_sub(2), h.saturating_sub(2));
    if inner_w < 3 {
        return 0;
    }
    let lines = detail_lines(app, d, usize::from(inner_w - 2)).len();
    lines.saturating_sub(usize::from(inner_h))
}
