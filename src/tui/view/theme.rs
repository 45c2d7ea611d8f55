//! Colours (none under `NO_COLOR`) and the drawing primitives every panel uses: text cut to its
//! cell, right-aligned text, styled runs, a panel frame, scrolling.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, Borders, Widget};

use crate::proto::glossary::{AgentState, EventKind};
use crate::proto::sanitize::truncate_width;
use crate::tui::state::snapshot::Group;

/// Styles, with or without colour (`NO_COLOR`). Without colour only bold, dim, reverse and
/// underline are used.
#[derive(Debug, Clone, Copy)]
pub(super) struct Theme {
    pub(super) color: bool,
}

impl Theme {
    pub(super) fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }
    pub(super) fn bold(self, c: Color) -> Style {
        self.fg(c).add_modifier(Modifier::BOLD)
    }
    pub(super) fn dim(self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }
    /// A loud bar: coloured background, or reverse video without colour.
    pub(super) fn bar(self, bg: Color) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(bg)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }
    pub(super) fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
    pub(super) fn group(self, g: Group) -> Style {
        match g {
            Group::Ready => self.bold(Color::Green),
            Group::Blocked => self.bold(Color::Yellow),
            Group::Claimed => self.bold(Color::Cyan),
            Group::Review => self.bold(Color::Magenta),
            Group::Done | Group::Cancelled => self.dim().add_modifier(Modifier::BOLD),
        }
    }
    pub(super) fn agent_state(self, state: AgentState) -> Style {
        match state {
            AgentState::Working => self.fg(Color::Green),
            AgentState::Waiting => self.bar(Color::Yellow),
            AgentState::NeedsAttention => self.bar(Color::Magenta),
            AgentState::Stopped => self.bold(Color::Yellow),
            AgentState::Gone => self.fg(Color::Red),
            AgentState::Idle => Style::new(),
            AgentState::Starting => self.dim(),
        }
    }
    pub(super) fn event_kind(self, kind: EventKind) -> Style {
        match kind {
            EventKind::Grant => self.fg(Color::Cyan),
            EventKind::Done => self.fg(Color::Green),
            EventKind::Expel => self.bold(Color::Red),
            EventKind::Lapse => self.bold(Color::Yellow),
            EventKind::Reject => self.bold(Color::Magenta),
            EventKind::Release | EventKind::Cancel => self.fg(Color::Blue),
            EventKind::Wait | EventKind::Question => self.bold(Color::Yellow),
            EventKind::Answer => self.fg(Color::Green),
            EventKind::Renew => self.dim(),
            _ => Style::new(),
        }
    }
    fn border(self, focused: bool) -> Style {
        if focused {
            self.fg(Color::Cyan)
        } else {
            self.dim()
        }
    }
}

pub(super) use crate::tui::update::detail::width;

/// Writes `s` at (x, y), cut to `w` columns (with `…` when cut). Returns the columns used.
pub(super) fn put(buf: &mut Buffer, x: u16, y: u16, w: u16, s: &str, style: Style) -> u16 {
    if w == 0 {
        return 0;
    }
    let s = truncate_width(s, usize::from(w));
    let (end, _) = buf.set_stringn(x, y, &s, usize::from(w), style);
    end.saturating_sub(x)
}

/// Writes `s` right-aligned in the `w` columns starting at x.
pub(super) fn put_right(buf: &mut Buffer, x: u16, y: u16, w: u16, s: &str, style: Style) {
    let s = truncate_width(s, usize::from(w));
    let sw = u16::try_from(width(&s)).unwrap_or(w).min(w);
    buf.set_stringn(x + w - sw, y, &s, usize::from(sw), style);
}

/// Writes a sequence of styled pieces; returns the column after the last.
pub(super) fn put_spans(buf: &mut Buffer, x: u16, y: u16, w: u16, spans: &[(&str, Style)]) -> u16 {
    let mut at = x;
    for (s, style) in spans {
        let left = (x + w).saturating_sub(at);
        if left == 0 {
            break;
        }
        at += put(buf, at, y, left, s, *style);
    }
    at
}

/// A panel frame: a top rule with a title. Returns the inside.
pub(super) fn panel(buf: &mut Buffer, r: Rect, title: &str, focused: bool, t: Theme) -> Rect {
    let style = t.border(focused);
    let title_style = if focused {
        t.bold(Color::Cyan)
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    };
    let title = truncate_width(title, usize::from(r.width.saturating_sub(4)));
    let block = Block::new()
        .borders(Borders::TOP)
        .border_style(style)
        .title(ratatui::text::Span::styled(title, title_style));
    let inner = block.inner(r);
    block.render(r, buf);
    inner
}

/// First row to show so that `sel` is visible in `h` rows out of `total`.
pub(super) fn scroll_offset(sel: usize, h: usize, total: usize) -> usize {
    if total <= h || h == 0 {
        return 0;
    }
    sel.saturating_sub(h / 3).min(total - h)
}
