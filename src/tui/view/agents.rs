//! The agents panel: each agent session's state, pane, claim and when it was last heard.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::theme::{panel, put, put_right, scroll_offset, width, Theme};
use crate::proto::glossary::AgentState;
use crate::tui::state::app::{App, Focus};
use crate::tui::state::snapshot::AgentItem;

pub(super) fn ago(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..=59 => format!("{s}s ago"),
        60..=3599 => format!("{}m ago", s / 60),
        3600..=86_399 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}

/// The agents panel's column layout: where each of the seven columns (name, state, pid, pane,
/// claims, heard, note) starts and how wide it is, in cells.
struct Columns {
    /// Left edge of each column; the last is the note, which runs to `right`.
    xs: [u16; 7],
    /// Width of the first six columns; 0 hides a column.
    widths: [u16; 6],
    /// The panel's inner right edge (exclusive).
    right: u16,
}

impl Columns {
    /// Narrow panels shrink and drop the pane column when no agent has a pane; on a shared store
    /// the name column shows `name@host`, a few cells wider.
    fn new(app: &App, inner: Rect) -> Self {
        let any_pane = app.agents.iter().any(|a| !a.pane.is_empty());
        let narrow = inner.width < 78;
        let any_host = app.agents.iter().any(|a| a.view.host.is_some());
        let widths: [u16; 6] = [
            (if narrow { 12 } else { 14 }) + if any_host { 6 } else { 0 },
            8,
            7,
            if narrow && !any_pane { 0 } else { 5 },
            if narrow { 9 } else { 12 },
            7,
        ];
        let mut xs = [0u16; 7];
        let mut x = inner.x + 1;
        for (i, w) in widths.iter().enumerate() {
            xs[i] = x;
            if *w > 0 {
                x = x.saturating_add(w + 1);
            }
        }
        xs[6] = x;
        Self {
            xs,
            widths,
            right: inner.right(),
        }
    }

    /// Column `i`'s left edge and width, or `None` when it is hidden or past the right edge.
    fn cell(&self, i: usize) -> Option<(u16, u16)> {
        let w = if i == 6 {
            self.right.saturating_sub(self.xs[6])
        } else {
            self.widths[i]
        };
        (self.xs[i] < self.right && w > 0).then(|| (self.xs[i], w.min(self.right - self.xs[i])))
    }

    /// Writes one line of cells at row `y`; the pid and heard columns are right-aligned.
    fn put_line(&self, buf: &mut Buffer, y: u16, cells: &[(&str, Style)]) {
        for (i, (s, style)) in cells.iter().enumerate() {
            if let Some((cx, w)) = self.cell(i) {
                if i == 2 || i == 5 {
                    put_right(buf, cx, y, w, s, *style);
                } else {
                    put(buf, cx, y, w, s, *style);
                }
            }
        }
    }
}

pub(super) fn draw_agents(buf: &mut Buffer, r: Rect, app: &App, t: Theme) {
    if r.height == 0 {
        return;
    }
    let live = app
        .agents
        .iter()
        .filter(|a| a.view.ended_at.is_none())
        .count();
    let focused = app.focus == Focus::Agents;
    let title = format!(" Agents · {live} live ");
    let inner = panel(buf, r, &title, focused, t);
    if inner.height == 0 {
        return;
    }
    let cols = Columns::new(app, inner);
    let head_style = t.dim().add_modifier(Modifier::BOLD);
    let head = ["NAME", "STATE", "PID", "PANE", "CLAIMS", "HEARD"].map(|h| (h, head_style));
    cols.put_line(buf, inner.y, &head);
    if app.agents.is_empty() {
        if inner.height > 1 {
            put(
                buf,
                inner.x + 1,
                inner.y + 1,
                inner.width.saturating_sub(1),
                "no agents yet — start one with `board run --name NAME -- CMD`",
                t.dim(),
            );
        }
        return;
    }
    let h = usize::from(inner.height - 1);
    let offset = if focused {
        scroll_offset(app.agent_selected, h, app.agents.len())
    } else {
        0
    };
    for (n, a) in app.agents.iter().enumerate().skip(offset).take(h) {
        let y = inner.y + 1 + u16::try_from(n - offset).unwrap_or(0);
        if focused && n == app.agent_selected {
            buf.set_style(Rect::new(inner.x, y, inner.width, 1), t.selected());
        }
        draw_agent_row(buf, &cols, y, app, a, t);
    }
    if app.agents.len() > h && inner.height > 1 {
        draw_more_hint(buf, r, h, app.agents.len(), t);
    }
}

/// One agent session's line at row `y`: name, state, pid, pane, claims, heard, note.
fn draw_agent_row(buf: &mut Buffer, cols: &Columns, y: u16, app: &App, a: &AgentItem, t: Theme) {
    let name_style = if a.view.ended_at.is_some() {
        t.dim()
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    };
    let state = match a.state {
        AgentState::Waiting => "WAITING".to_string(),
        AgentState::NeedsAttention => "ATTENTION".to_string(),
        other => other.to_string(),
    };
    let pid = a.view.pid.map(|p| p.to_string()).unwrap_or_default();
    let claims: Vec<String> = a.view.claims.iter().map(|c| format!("#{c}")).collect();
    let heard = a
        .last_heard_ms
        .map(|ms| ago(app.now_wall_ms - ms))
        .unwrap_or_default();
    let note = agent_note(a);
    let name = match &a.view.host {
        Some(host) => format!("{}@{host}", a.name),
        None => a.name.clone(),
    };
    let note_style = if a.question.is_some() || a.permission.is_some() {
        t.bold(Color::Yellow)
    } else {
        t.dim()
    };
    let cells: [(&str, Style); 7] = [
        (&name, name_style),
        (&state, t.agent_state(a.state)),
        (&pid, t.dim()),
        (&a.pane, t.dim()),
        (&claims.join(" "), t.fg(Color::Cyan)),
        (&heard, t.dim()),
        (&note, note_style),
    ];
    cols.put_line(buf, y, &cells);
}

/// The note column: the open question or permission prompt first, else why the session ended or
/// needs attention, joined with the session's own note (`update::agents::note`) by ` · `.
fn agent_note(a: &AgentItem) -> String {
    let note = if let Some(q) = &a.question {
        format!("asks: {q}")
    } else if let Some(p) = &a.permission {
        format!("permission: {p}")
    } else {
        a.end_reason
            .clone()
            .or_else(|| a.attention.clone())
            .unwrap_or_default()
    };
    let extra = crate::tui::update::agents::note(&a.view);
    match (note.is_empty(), extra.is_empty()) {
        (_, true) => note,
        (true, false) => extra,
        (false, false) => format!("{note} · {extra}"),
    }
}

/// `N of M · Tab to scroll` on the panel's top border, when the panel is wide enough.
fn draw_more_hint(buf: &mut Buffer, r: Rect, shown: usize, total: usize, t: Theme) {
    let more = format!(" {shown} of {total} · Tab to scroll ");
    let w = u16::try_from(width(&more)).unwrap_or(0);
    if r.width > w + 24 {
        put(buf, r.right() - w - 1, r.y, w, &more, t.dim());
    }
}
