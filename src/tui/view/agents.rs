//! The agents panel: each agent session's state, pane, claim and when it was last heard.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::theme::{panel, put, put_right, scroll_offset, width, Theme};
use crate::proto::glossary::AgentState;
use crate::tui::state::app::{App, Focus};

pub(super) fn ago(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..=59 => format!("{s}s ago"),
        60..=3599 => format!("{}m ago", s / 60),
        3600..=86_399 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
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
    // name, state, pid, pane, claims, heard, note; narrow panels shrink and drop the pane
    // column when no agent has a pane.
    let any_pane = app.agents.iter().any(|a| !a.pane.is_empty());
    let narrow = inner.width < 78;
    // On a shared store the name column shows `name@host`, a few cells wider.
    let any_host = app.agents.iter().any(|a| a.view.host.is_some());
    let widths: [u16; 6] = [
        (if narrow { 12 } else { 14 }) + if any_host { 6 } else { 0 },
        8,
        7,
        if narrow && !any_pane { 0 } else { 5 },
        if narrow { 9 } else { 12 },
        7,
    ];
    let head = ["NAME", "STATE", "PID", "PANE", "CLAIMS", "HEARD"];
    let mut xs = [0u16; 7];
    let mut x = inner.x + 1;
    for (i, w) in widths.iter().enumerate() {
        xs[i] = x;
        if *w > 0 {
            x = x.saturating_add(w + 1);
        }
    }
    xs[6] = x;
    let right = inner.right();
    let cell = |i: usize| -> Option<(u16, u16)> {
        let w = if i == 6 {
            right.saturating_sub(xs[6])
        } else {
            widths[i]
        };
        (xs[i] < right && w > 0).then(|| (xs[i], w.min(right - xs[i])))
    };
    let head_style = t.dim().add_modifier(Modifier::BOLD);
    for (i, h) in head.iter().enumerate() {
        if let Some((cx, w)) = cell(i) {
            if i == 2 || i == 5 {
                put_right(buf, cx, inner.y, w, h, head_style);
            } else {
                put(buf, cx, inner.y, w, h, head_style);
            }
        }
    }
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
        let gone = a.view.ended_at.is_some();
        let name_style = if gone {
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
        let note = match (note.is_empty(), extra.is_empty()) {
            (_, true) => note,
            (true, false) => extra,
            (false, false) => format!("{note} · {extra}"),
        };
        let name = match &a.view.host {
            Some(host) => format!("{}@{host}", a.name),
            None => a.name.clone(),
        };
        let cells: [(&str, Style); 7] = [
            (&name, name_style),
            (&state, t.agent_state(a.state)),
            (&pid, t.dim()),
            (&a.pane, t.dim()),
            (&claims.join(" "), t.fg(Color::Cyan)),
            (&heard, t.dim()),
            (
                &note,
                if a.question.is_some() || a.permission.is_some() {
                    t.bold(Color::Yellow)
                } else {
                    t.dim()
                },
            ),
        ];
        for (i, (s, style)) in cells.iter().enumerate() {
            if let Some((cx, w)) = cell(i) {
                if i == 2 || i == 5 {
                    put_right(buf, cx, y, w, s, *style);
                } else {
                    put(buf, cx, y, w, s, *style);
                }
            }
        }
    }
    if app.agents.len() > h && inner.height > 1 {
        let more = format!(" {} of {} · Tab to scroll ", h, app.agents.len());
        let w = u16::try_from(width(&more)).unwrap_or(0);
        if r.width > w + 24 {
            put(buf, r.right() - w - 1, r.y, w, &more, t.dim());
        }
    }
}
