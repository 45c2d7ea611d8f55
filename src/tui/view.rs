//! Drawing: a pure function of [`App`] onto a ratatui [`Frame`]. No I/O, no clock.
//!
//! Layout, top to bottom: the goal; loud one-line banners (board unreachable, `board.toml`
//! error, agents waiting for a human); the backlog, grouped by state; the agents panel; the event
//! feed; the key footer. From 120 columns up the agents and the feed move to a right-hand column.
//! Every string drawn was made inert when the snapshot was taken in, and is cut to its cell
//! with [`truncate_width`], so nothing can spill out of its place.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use ratatui::Frame;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::state::{
    AgentItem, App, Conn, Detail, EventItem, Focus, Form, FormKind, Group, Mode, Row, TaskItem,
};
use crate::proto::countdown;
use crate::proto::sanitize::{inert, one_line, truncate_width};

/// Widths from which the agents and the feed sit to the right of the backlog.
pub const WIDE: u16 = 120;

/// Styles, with or without colour (`NO_COLOR`). Without colour only bold, dim, reverse and
/// underline are used.
#[derive(Debug, Clone, Copy)]
struct Theme {
    color: bool,
}

impl Theme {
    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }
    fn bold(self, c: Color) -> Style {
        self.fg(c).add_modifier(Modifier::BOLD)
    }
    fn dim(self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }
    /// A loud bar: coloured background, or reverse video without colour.
    fn bar(self, bg: Color) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(bg)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }
    fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
    fn group(self, g: Group) -> Style {
        match g {
            Group::Ready => self.bold(Color::Green),
            Group::Blocked => self.bold(Color::Yellow),
            Group::Claimed => self.bold(Color::Cyan),
            Group::Done | Group::Cancelled => self.dim().add_modifier(Modifier::BOLD),
        }
    }
    fn agent_state(self, state: &str) -> Style {
        match state {
            "working" => self.fg(Color::Green),
            "waiting" => self.bar(Color::Yellow),
            "needs_attention" => self.bar(Color::Magenta),
            "stopped" => self.bold(Color::Yellow),
            "gone" => self.fg(Color::Red),
            "idle" => Style::new(),
            _ => self.dim(),
        }
    }
    fn event_kind(self, kind: &str) -> Style {
        match kind {
            "grant" => self.fg(Color::Cyan),
            "done" => self.fg(Color::Green),
            "expel" => self.bold(Color::Red),
            "lapse" => self.bold(Color::Yellow),
            "reject" => self.bold(Color::Magenta),
            "release" | "cancel" => self.fg(Color::Blue),
            "wait" => self.bold(Color::Yellow),
            "renew" => self.dim(),
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

/// Display width of already-inert text.
fn width(s: &str) -> usize {
    let per_char: usize = s.chars().map(|c| c.width().unwrap_or(0)).sum();
    per_char.max(s.width())
}

/// Writes `s` at (x, y), cut to `w` columns (with `…` when cut). Returns the columns used.
fn put(buf: &mut Buffer, x: u16, y: u16, w: u16, s: &str, style: Style) -> u16 {
    if w == 0 {
        return 0;
    }
    let s = truncate_width(s, usize::from(w));
    let (end, _) = buf.set_stringn(x, y, &s, usize::from(w), style);
    end.saturating_sub(x)
}

/// Writes `s` right-aligned in the `w` columns starting at x.
fn put_right(buf: &mut Buffer, x: u16, y: u16, w: u16, s: &str, style: Style) {
    let s = truncate_width(s, usize::from(w));
    let sw = u16::try_from(width(&s)).unwrap_or(w).min(w);
    buf.set_stringn(x + w - sw, y, &s, usize::from(sw), style);
}

/// Writes a sequence of styled pieces; returns the column after the last.
fn put_spans(buf: &mut Buffer, x: u16, y: u16, w: u16, spans: &[(&str, Style)]) -> u16 {
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

fn ago(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..=59 => format!("{s}s ago"),
        60..=3599 => format!("{}m ago", s / 60),
        3600..=86_399 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}

/// Columns of the backlog on a screen `width` columns wide (all of it below [`WIDE`]; from
/// there on the agents and the feed get the rest, at least 54 columns).
pub fn backlog_width(width: u16) -> u16 {
    if width < WIDE {
        width
    } else {
        width - (width * 2 / 5).max(54)
    }
}

/// Where each part of the main screen goes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Areas {
    header: Rect,
    banners: Rect,
    backlog: Rect,
    agents: Rect,
    events: Rect,
    footer: Rect,
}

fn layout(area: Rect, banners: u16, agents: usize) -> Areas {
    let row = |y: u16, h: u16| Rect::new(area.x, y, area.width, h);
    let header = row(area.y, area.height.min(1));
    let footer = row(area.bottom().saturating_sub(1), area.height.min(1));
    let body_top = header.bottom();
    let body_h = footer.y.saturating_sub(body_top);
    let banners = banners.min(body_h / 3);
    let banners_r = row(body_top, banners);
    let main = row(banners_r.bottom(), body_h - banners);
    let agents_want = u16::try_from(agents.max(1))
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    if area.width >= WIDE {
        let left_w = backlog_width(area.width);
        let backlog = Rect::new(main.x, main.y, left_w, main.height);
        let right = Rect::new(main.x + left_w, main.y, main.width - left_w, main.height);
        let agents_h = agents_want.min(right.height / 2).max(right.height.min(3));
        Areas {
            header,
            banners: banners_r,
            backlog,
            agents: Rect::new(right.x, right.y, right.width, agents_h),
            events: Rect::new(
                right.x,
                right.y + agents_h,
                right.width,
                right.height - agents_h,
            ),
            footer,
        }
    } else {
        let avail = main.height;
        let agents_h = agents_want.min((avail * 3 / 10).max(4)).min(avail / 3);
        let events_h = (avail * 2 / 7).clamp(3, 14).min(avail / 3);
        let backlog_h = avail - agents_h - events_h;
        Areas {
            header,
            banners: banners_r,
            backlog: row(main.y, backlog_h),
            agents: row(main.y + backlog_h, agents_h),
            events: row(main.y + backlog_h + agents_h, events_h),
            footer,
        }
    }
}

/// One loud line under the goal.
struct Banner {
    text: String,
    style: Style,
}

fn banners(app: &App, t: Theme) -> Vec<Banner> {
    let mut out = Vec::new();
    match &app.conn {
        Conn::Live => {}
        Conn::Connecting => out.push(Banner {
            text: "… connecting to the board".into(),
            style: t.bar(Color::Yellow),
        }),
        Conn::Reconnecting { attempt, error } => out.push(Banner {
            text: format!(
                "⟳ board restarting / reconnecting (attempt {attempt}): {error} — showing the last known board"
            ),
            style: t.bar(Color::Red),
        }),
    }
    if let Some(e) = &app.config_error {
        out.push(Banner {
            text: format!("board.toml error, previous settings in force: {e}"),
            style: t.bar(Color::Red),
        });
    }
    let stuck: Vec<&AgentItem> = app.needing_attention().collect();
    if !stuck.is_empty() {
        let names: Vec<&str> = stuck.iter().map(|a| a.id.as_str()).collect();
        out.push(Banner {
            text: format!(
                "⚠ NEEDS ATTENTION: {} never reached the prompt (no hook, no board call): answer the dialog in its pane",
                names.join(", ")
            ),
            style: t.bar(Color::Magenta),
        });
    }
    let waiting: Vec<&AgentItem> = app.waiting().collect();
    let shown = if waiting.len() > 3 { 2 } else { waiting.len() };
    for a in &waiting[..shown] {
        out.push(Banner {
            text: format!(
                "⚠ WAITING FOR YOU: {} asks: {}  (A answers)",
                a.id,
                a.waiting.as_deref().unwrap_or("")
            ),
            style: t.bar(Color::Yellow),
        });
    }
    if waiting.len() > shown {
        let names: Vec<&str> = waiting[shown..].iter().map(|a| a.id.as_str()).collect();
        out.push(Banner {
            text: format!(
                "⚠ {} more agents waiting for you: {}",
                waiting.len() - shown,
                names.join(", ")
            ),
            style: t.bar(Color::Yellow),
        });
    }
    out
}

/// Draws the whole screen for `app`.
pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    let t = Theme { color: app.color };
    let banners = banners(app, t);
    let areas = layout(
        area,
        u16::try_from(banners.len()).unwrap_or(u16::MAX),
        app.agents.len(),
    );
    let buf = frame.buffer_mut();
    draw_header(buf, areas.header, app, t);
    for (i, b) in banners.iter().enumerate() {
        let Ok(i) = u16::try_from(i) else { break };
        if i >= areas.banners.height {
            break;
        }
        let r = Rect::new(areas.banners.x, areas.banners.y + i, areas.banners.width, 1);
        buf.set_style(r, b.style);
        put(
            buf,
            r.x + 1,
            r.y,
            r.width.saturating_sub(2),
            &b.text,
            b.style,
        );
    }
    draw_backlog(buf, areas.backlog, app, t);
    draw_agents(buf, areas.agents, app, t);
    draw_events(buf, areas.events, app, t);
    draw_footer(buf, areas.footer, app, t);
    let cursor = match &app.mode {
        Mode::Normal | Mode::Filter => None,
        Mode::Help => {
            draw_help(buf, area, t);
            None
        }
        Mode::Form(f) => draw_form(buf, area, f, t),
        Mode::Confirm(c) => {
            draw_confirm(buf, area, &c.question, t);
            None
        }
        Mode::Detail(d) => {
            draw_detail(buf, area, app, d, t);
            None
        }
    };
    super::agents::draw_pending(buf, area, app);
    let cursor = cursor.or_else(|| {
        (app.mode == Mode::Filter).then(|| {
            let (_, col) = app.filter.window(filter_width(areas.footer));
            let col = u16::try_from(col).unwrap_or(0);
            Position::new(areas.footer.x + FILTER_PROMPT + col, areas.footer.y)
        })
    });
    if let Some(p) = cursor {
        frame.set_cursor_position(p);
    }
}

fn draw_header(buf: &mut Buffer, r: Rect, app: &App, t: Theme) {
    if r.height == 0 {
        return;
    }
    let name = if app.board_name.is_empty() {
        " board ".to_string()
    } else {
        format!(" board · {} ", truncate_width(&app.board_name, 24))
    };
    let (live, live_style) = match app.conn {
        Conn::Live => ("● live", t.fg(Color::Green)),
        Conn::Connecting => ("… connecting", t.bold(Color::Yellow)),
        Conn::Reconnecting { .. } => ("⟳ reconnecting", t.bold(Color::Red)),
    };
    let live_w = u16::try_from(width(live)).unwrap_or(0) + 1;
    let mut x = r.x;
    x += put(buf, x, r.y, r.width, &name, t.bar(Color::Cyan));
    let goal_w = r.right().saturating_sub(x).saturating_sub(live_w + 1);
    if app.goal.is_some() {
        let used = put(
            buf,
            x,
            r.y,
            goal_w,
            " GOAL ",
            Style::new().add_modifier(Modifier::BOLD),
        );
        put(
            buf,
            x + used,
            r.y,
            goal_w.saturating_sub(used),
            &app.goal_text,
            t.bold(Color::White),
        );
    } else if app.loaded {
        put(
            buf,
            x,
            r.y,
            goal_w,
            " no goal yet — press s to set one",
            t.dim(),
        );
    }
    if r.width > live_w + 10 {
        put_right(buf, r.right() - live_w, r.y, live_w - 1, live, live_style);
    }
}

/// A panel frame: a top rule with a title. Returns the inside.
fn panel(buf: &mut Buffer, r: Rect, title: &str, focused: bool, t: Theme) -> Rect {
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
fn scroll_offset(sel: usize, h: usize, total: usize) -> usize {
    if total <= h || h == 0 {
        return 0;
    }
    sel.saturating_sub(h / 3).min(total - h)
}

fn draw_backlog(buf: &mut Buffer, r: Rect, app: &App, t: Theme) {
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
    let max_id = app.tasks.iter().map(|t| t.task.id).max().unwrap_or(1);
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
    fn new(w: u16, id_w: u16) -> Cols {
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
        if task.priority != 0 {
            let style = if task.priority > 0 {
                t.bold(Color::Magenta)
            } else {
                t.dim()
            };
            put(buf, cx, y, w, &format!("p{}", task.priority), style);
        }
    }
    let (who, who_style) = match item.group {
        Group::Claimed => (item.holder.clone(), t.bold(Color::Cyan)),
        Group::Blocked => {
            let ids: Vec<String> = task.blocked_by.iter().map(|i| format!("#{i}")).collect();
            (format!("after {}", ids.join(" ")), t.fg(Color::Yellow))
        }
        Group::Done => (format!("✓ {}", item.done_by), t.dim()),
        _ => (String::new(), Style::new()),
    };
    // A row with nothing to say about holder and lease lends their columns to the title.
    let title_w = if who.is_empty() && !matches!(item.group, Group::Claimed | Group::Done) {
        line.width.saturating_sub(c.title.0)
    } else {
        c.title.1
    };
    if let Some((cx, w)) = fits((c.title.0, title_w)) {
        put(buf, cx, y, w, &item.title, text_style);
    }
    if let Some((cx, w)) = fits(c.who) {
        put(buf, cx, y, w, &who, who_style);
    }
    if let Some((cx, w)) = fits(c.lease) {
        match item.group {
            Group::Claimed => {
                let ms = app.remaining_ms(task).unwrap_or(0);
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
                put_right(buf, cx, y, w, &text, style);
            }
            Group::Done => {
                let at = task.done_at.as_deref().and_then(|d| d.get(11..16));
                put_right(buf, cx, y, w, &one_line(at.unwrap_or("")), t.dim());
            }
            _ => {}
        }
    }
}

fn draw_agents(buf: &mut Buffer, r: Rect, app: &App, t: Theme) {
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
    let widths: [u16; 6] = [
        if narrow { 12 } else { 14 },
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
        let state = match a.state.as_str() {
            "waiting" => "WAITING".to_string(),
            "needs_attention" => "ATTENTION".to_string(),
            _ => a.state.clone(),
        };
        let pid = a.view.pid.map(|p| p.to_string()).unwrap_or_default();
        let claims: Vec<String> = a.view.claims.iter().map(|c| format!("#{c}")).collect();
        let heard = a
            .last_heard_ms
            .map(|ms| ago(app.now_wall_ms - ms))
            .unwrap_or_default();
        let note = match (&a.waiting, &a.end_reason, &a.attention) {
            (Some(q), _, _) => q.clone(),
            (None, Some(r), _) => r.clone(),
            (None, None, Some(why)) => why.clone(),
            _ => String::new(),
        };
        let extra = super::agents::note(&a.view);
        let note = match (note.is_empty(), extra.is_empty()) {
            (_, true) => note,
            (true, false) => extra,
            (false, false) => format!("{note} · {extra}"),
        };
        let cells: [(&str, Style); 7] = [
            (&a.id, name_style),
            (&state, t.agent_state(&a.state)),
            (&pid, t.dim()),
            (&a.pane, t.dim()),
            (&claims.join(" "), t.fg(Color::Cyan)),
            (&heard, t.dim()),
            (
                &note,
                if a.waiting.is_some() {
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

/// Event kinds as shown in the feed (at most 7 columns).
fn kind_label(kind: &str) -> &str {
    match kind {
        "session_start" => "joined",
        "session_end" => "left",
        "board_start" => "board",
        "release" => "release",
        other => other,
    }
}

/// Reasons that only repeat the kind.
fn trivial_reason(kind: &str, reason: &str) -> bool {
    matches!(
        (kind, reason),
        ("grant", "claimed")
            | ("done", "done")
            | ("edit", "edited")
            | ("cancel", "cancelled")
            | ("session_start", "registered")
            | ("resume", "resumed")
    )
}

fn event_text(e: &EventItem) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(task) = e.view.task {
        parts.push(format!("#{task}"));
    }
    if let Some(g) = e.view.generation {
        parts.push(format!("g{g}"));
    }
    let has_reason = !e.reason.is_empty() && !trivial_reason(&e.view.kind, &e.reason);
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

fn draw_events(buf: &mut Buffer, r: Rect, app: &App, t: Theme) {
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
        let kind = kind_label(&e.kind);
        let text = event_text(e);
        let style = t.event_kind(&e.view.kind);
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

/// Columns of the filter prompt before the text.
const FILTER_PROMPT: u16 = 9;

fn filter_width(footer: Rect) -> usize {
    usize::from(footer.width.saturating_sub(FILTER_PROMPT + 28)).max(1)
}

fn draw_footer(buf: &mut Buffer, r: Rect, app: &App, t: Theme) {
    if r.height == 0 {
        return;
    }
    if app.mode == Mode::Filter {
        let (text, _) = app.filter.window(filter_width(r));
        put(
            buf,
            r.x,
            r.y,
            FILTER_PROMPT,
            " filter: ",
            t.bold(Color::Cyan),
        );
        let fw = u16::try_from(filter_width(r)).unwrap_or(1);
        put(buf, r.x + FILTER_PROMPT, r.y, fw, &text, Style::new());
        put(
            buf,
            r.x + FILTER_PROMPT + fw + 1,
            r.y,
            r.width.saturating_sub(FILTER_PROMPT + fw + 1),
            "Enter keep · Esc clear",
            t.dim(),
        );
        return;
    }
    if let Some(f) = app.current_flash() {
        let style = if f.error {
            t.bold(Color::Red)
        } else {
            t.fg(Color::Green)
        };
        put(buf, r.x + 1, r.y, r.width.saturating_sub(1), &f.text, style);
        return;
    }
    let keys: &[(&str, &str)] = match &app.mode {
        Mode::Detail(_) => &[
            ("Esc", "close"),
            ("j/k", "scroll"),
            ("e", "edit"),
            ("r", "release"),
            ("x", "cancel"),
        ],
        Mode::Form(_) => &[("Enter", "save"), ("Tab", "next field"), ("Esc", "cancel")],
        Mode::Confirm(_) => &[("y", "yes"), ("n", "no")],
        _ if app.team_pending.is_some() => &[("y", "yes"), ("n", "no")],
        _ if app.focus == super::state::Focus::Agents => &[
            ("q", "quit"),
            ("⏎", "go to pane"),
            ("S", "start"),
            ("R", "restart"),
            ("X", "stop"),
            ("U", "start all"),
            ("Tab", "backlog"),
        ],
        _ => &[
            ("q", "quit"),
            ("?", "help"),
            ("⏎", "details"),
            ("a", "add"),
            ("e", "edit"),
            ("s", "goal"),
            ("r", "release"),
            ("x", "cancel"),
            ("/", "filter"),
            ("Tab", "agents"),
        ],
    };
    let key_style = t.bar(Color::Cyan);
    let mut x = r.x;
    for (k, label) in keys {
        let need = u16::try_from(width(k) + width(label) + 4).unwrap_or(u16::MAX);
        if x + need > r.right() {
            break;
        }
        x += put(buf, x, r.y, r.right() - x, &format!(" {k} "), key_style);
        x += put(
            buf,
            x,
            r.y,
            r.right() - x,
            &format!(" {label} "),
            Style::new(),
        );
    }
}

/// A centered dialog box of at most `w`×`h`; clears what is under it. Returns the inside.
fn dialog(buf: &mut Buffer, area: Rect, w: u16, h: u16, title: &str, t: Theme) -> Rect {
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
    ("j k ↓ ↑", "move in the backlog (or agents)"),
    ("g G Home End", "first / last"),
    ("PgUp PgDn ^u ^d", "a page up / down"),
    ("Tab", "switch between backlog and agents"),
    ("Enter", "details of the task: body, notes, history"),
    ("a", "add a task (title, priority, dependencies)"),
    ("e", "edit the task: title, body, priority, after"),
    ("s", "set the goal"),
    ("r", "force-release the task's claim (asks first)"),
    ("x", "cancel the task (asks first)"),
    ("/", "filter the backlog (words, #id, holder)"),
    ("Esc", "clear the filter / close a dialog"),
    ("c", "show or hide cancelled tasks"),
    ("m A", "message the selected agent / answer one waiting"),
    ("R F5", "refresh now"),
    ("⏎ S R X U", "agent: go to pane, start, restart, stop, all"),
    ("?", "this help"),
    ("q ^c", "quit"),
];

fn draw_help(buf: &mut Buffer, area: Rect, t: Theme) {
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
fn draw_form(buf: &mut Buffer, area: Rect, f: &Form, t: Theme) -> Option<Position> {
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

/// Draws a yes/no question dialog over `area` (used by the agent keys of [`super::agents`]).
pub fn draw_question(buf: &mut Buffer, area: Rect, question: &str, color: bool) {
    draw_confirm(buf, area, question, Theme { color });
}

fn draw_confirm(buf: &mut Buffer, area: Rect, question: &str, t: Theme) {
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

/// Splits inert text into lines of at most `w` columns, at spaces where possible.
fn wrap(text: &str, w: usize) -> Vec<String> {
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

fn detail_lines(app: &App, d: &Detail, w: usize) -> Vec<(String, Style)> {
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
    let state = match task.state.as_str() {
        "claimed" => format!(
            "claimed by {} · generation {} · lease {}",
            one_line(task.holder.as_deref().unwrap_or("?")),
            task.generation,
            countdown(app.remaining_ms(task).unwrap_or(0))
        ),
        "open" if task.ready => format!("open · ready · generation {}", task.generation),
        "open" => format!("open · blocked · generation {}", task.generation),
        "done" => format!(
            "done by {} at {} · generation {}",
            one_line(task.done_by.as_deref().unwrap_or("?")),
            one_line(task.done_at.as_deref().unwrap_or("?")),
            task.generation
        ),
        other => one_line(other),
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
            kind: one_line(&e.kind),
            agent: e.agent.as_deref().map(one_line).unwrap_or_default(),
            reason: e.reason.as_deref().map(one_line).unwrap_or_default(),
            view: e.clone(),
        };
        let text = format!(
            "{} {:<7} {}",
            item.time,
            kind_label(&item.kind),
            event_text(&item)
        );
        for l in wrap(&text, w.saturating_sub(2)) {
            out.push((format!("  {l}"), t.event_kind(&e.kind)));
        }
    }
    out
}

/// The details dialog's box on a screen of `area`.
fn detail_box(area: Rect) -> (u16, u16) {
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

fn draw_detail(buf: &mut Buffer, area: Rect, app: &App, d: &Detail, t: Theme) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixture;
    use crate::tui::state::{App, Input};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn render(app: &App, w: u16, h: u16) -> Terminal<TestBackend> {
        let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
        term.draw(|f| draw(f, app)).expect("draw");
        term
    }

    fn screen(app: &App, w: u16, h: u16) -> String {
        render(app, w, h).backend().to_string()
    }

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn main_screen_80x24() {
        insta::assert_snapshot!(screen(&fixture::sample_app(true), 80, 24));
    }

    #[test]
    fn main_screen_160x48() {
        insta::assert_snapshot!(screen(&fixture::sample_app(true), 160, 48));
    }

    #[test]
    fn reconnecting_80x24() {
        let mut app = fixture::sample_app(true);
        app.on_disconnected(3, "no board is running at /tmp/p/.board/board.sock");
        insta::assert_snapshot!(screen(&app, 80, 24));
    }

    #[test]
    fn details_120x40() {
        let mut app = fixture::sample_app(true);
        // Task 14: the one with escape sequences in its title.
        app.on_key(key(KeyCode::Char('/')));
        for c in "#14".chars() {
            app.on_key(key(KeyCode::Char(c)));
        }
        app.on_key(key(KeyCode::Enter));
        app.on_key(key(KeyCode::Enter));
        let snap = fixture::sample_snapshot();
        let task = snap.tasks.iter().find(|t| t.id == 14).unwrap().clone();
        let v = serde_json::json!({
            "task": task,
            "notes": [{"id": 1, "task": 14, "author": "claude-2", "generation": 1,
                       "text": "started; CI logs use \u{1b}[1mbold\u{1b}[0m too", "at": "2026-03-01T11:41:00.000Z"}],
            "events": [{"id": 30, "at": "2026-03-01T11:10:00.000Z", "kind": "add", "task": 14,
                        "agent": null, "generation": null, "reason": task.title}],
        });
        app.on_call_result(crate::tui::state::Purpose::Show(14), Ok(v));
        insta::assert_snapshot!(screen(&app, 120, 40));
    }

    #[test]
    fn add_form_and_help_80x24() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('a')));
        for c in "Write the changelog 漢字".chars() {
            app.on_key(key(KeyCode::Char(c)));
        }
        insta::assert_snapshot!("add_form_80x24", screen(&app, 80, 24));
        app.on_key(key(KeyCode::Esc));
        app.on_key(key(KeyCode::Char('?')));
        insta::assert_snapshot!("help_80x24", screen(&app, 80, 24));
    }

    #[test]
    fn no_colour_means_no_colour() {
        let app = fixture::sample_app(false);
        let term = render(&app, 160, 48);
        for cell in term.backend().buffer().content() {
            assert_eq!(cell.fg, Color::Reset, "{cell:?}");
            assert_eq!(cell.bg, Color::Reset, "{cell:?}");
        }
        let coloured = render(&fixture::sample_app(true), 160, 48);
        assert!(coloured
            .backend()
            .buffer()
            .content()
            .iter()
            .any(|c| c.fg != Color::Reset));
    }

    #[test]
    fn every_size_renders_without_panic_and_without_controls() {
        let mut app = fixture::sample_app(true);
        let mut snap = fixture::sample_snapshot();
        snap.tasks[8].title = format!("\u{1b}[2J\u{1b}]2;x\u{7}{}", "长".repeat(5000));
        app.on_snapshot(snap, fixture::FETCHED_MS);
        for (w, h) in [
            (1, 1),
            (10, 3),
            (40, 10),
            (80, 24),
            (119, 30),
            (120, 40),
            (300, 80),
        ] {
            let term = render(&app, w, h);
            for c in term.backend().buffer().content() {
                assert!(!c.symbol().chars().any(char::is_control), "{w}x{h}: {c:?}");
            }
        }
        app.on_key(key(KeyCode::Enter));
        for (w, h) in [(1, 1), (20, 5), (80, 24)] {
            render(&app, w, h);
        }
    }

    #[test]
    fn long_titles_stay_in_their_column() {
        let mut snap = fixture::sample_snapshot();
        snap.tasks[8].title = "x".repeat(10_000);
        let app = fixture::app_with(snap, true);
        let text = screen(&app, 80, 24);
        let line = text.lines().find(|l| l.contains("xxxx")).unwrap();
        assert!(line.contains("…"), "{line}");
        assert_eq!(line.chars().count(), 82, "{line}"); // 80 columns in quotes
    }

    #[test]
    fn wrap_respects_width() {
        assert_eq!(wrap("aa bb cc", 5), vec!["aa bb", "cc"]);
        assert_eq!(wrap("abcdefg", 3), vec!["abc", "def", "g"]);
        assert_eq!(wrap("漢字漢字", 5), vec!["漢字", "漢字"]);
        assert_eq!(wrap("a\nb", 5), vec!["a", "b"]);
    }

    #[test]
    fn filter_prompt_shows_in_the_footer() {
        let mut app = fixture::sample_app(true);
        app.on_key(key(KeyCode::Char('/')));
        app.filter = Input::new("refund");
        app.rebuild();
        let text = screen(&app, 80, 24);
        assert!(text.lines().last().unwrap().contains("filter: refund"));
    }
}
