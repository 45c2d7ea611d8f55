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
use ratatui::Frame;

use crate::proto::sanitize::truncate_width;
use crate::tui::state::app::{App, Conn, Focus, Mode};
use crate::tui::state::snapshot::AgentItem;
use agents::draw_agents;
use backlog::draw_backlog;
use detail::draw_detail;
use dialogs::{draw_confirm, draw_form, draw_help, draw_question};
use feed::draw_events;
use layout::layout;
use needs::{draw_inbox, draw_needs};
use theme::{put, put_right, width, Theme};

mod agents;
mod backlog;
mod detail;
mod dialogs;
mod feed;
pub mod layout;
mod needs;
#[cfg(test)]
mod tests;
mod theme;

/// One loud line under the goal.
struct Banner {
    text: String,
    style: Style,
}

/// The loud lines under the goal, most urgent first: the board's and the store's health, a
/// `board.toml` error, agents that never reached their prompt, then agents waiting for a person
/// (questions, then permission prompts).
fn banners(app: &App, t: Theme) -> Vec<Banner> {
    let mut out = Vec::new();
    board_banners(&mut out, app, t);
    attention_banner(&mut out, app, t);
    question_banners(&mut out, app, t);
    permission_banners(&mut out, app, t);
    out
}

/// The connection to the board, the store behind it and its configuration, when not healthy.
fn board_banners(out: &mut Vec<Banner>, app: &App, t: Theme) {
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
    if let Some(e) = &app.store_error {
        out.push(Banner {
            text: format!(
                "✖ STORE UNREACHABLE: {e} — claims, done and check fail closed; showing the last known board"
            ),
            style: t.bar(Color::Red),
        });
    }
    if let Some(e) = &app.config_error {
        out.push(Banner {
            text: format!("board.toml error, previous settings in force: {e}"),
            style: t.bar(Color::Red),
        });
    }
}

/// One line naming every agent session that needs attention (never reached its prompt).
fn attention_banner(out: &mut Vec<Banner>, app: &App, t: Theme) {
    let stuck: Vec<&AgentItem> = app.needing_attention().collect();
    if !stuck.is_empty() {
        let names: Vec<&str> = stuck.iter().map(|a| a.name.as_str()).collect();
        out.push(Banner {
            text: format!(
                "⚠ NEEDS ATTENTION: {} never reached the prompt (no hook, no board call): answer the dialog in its pane",
                names.join(", ")
            ),
            style: t.bar(Color::Magenta),
        });
    }
}

/// A line per open question, up to three; from four on, two and a line naming the rest.
fn question_banners(out: &mut Vec<Banner>, app: &App, t: Theme) {
    let waiting: Vec<&AgentItem> = app.waiting().collect();
    let shown = if waiting.len() > 3 { 2 } else { waiting.len() };
    for a in &waiting[..shown] {
        out.push(Banner {
            text: format!(
                "❓ {} asks: {} — A to answer",
                a.name,
                a.question.as_deref().unwrap_or("")
            ),
            style: t.bar(Color::Yellow),
        });
    }
    if waiting.len() > shown {
        let names: Vec<&str> = waiting[shown..].iter().map(|a| a.name.as_str()).collect();
        out.push(Banner {
            text: format!(
                "❓ {} more agents ask you: {} — i lists them",
                waiting.len() - shown,
                names.join(", ")
            ),
            style: t.bar(Color::Yellow),
        });
    }
}

/// A line per agent at a permission prompt, up to two; from three on, one and a line naming the
/// rest.
fn permission_banners(out: &mut Vec<Banner>, app: &App, t: Theme) {
    let prompts: Vec<&AgentItem> = app.at_permission_prompt().collect();
    let shown = if prompts.len() > 2 { 1 } else { prompts.len() };
    for a in &prompts[..shown] {
        out.push(Banner {
            text: format!(
                "⚠ {} asks permission: {} — i, then ⏎ goes to its pane",
                a.name,
                a.permission.as_deref().unwrap_or("")
            ),
            style: t.bar(Color::Yellow),
        });
    }
    if prompts.len() > shown {
        let names: Vec<&str> = prompts[shown..].iter().map(|a| a.name.as_str()).collect();
        out.push(Banner {
            text: format!(
                "⚠ {} more at a permission prompt: {} — i lists them",
                prompts.len() - shown,
                names.join(", ")
            ),
            style: t.bar(Color::Yellow),
        });
    }
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
        Mode::NeedsYou(at) => {
            draw_needs(buf, area, app, *at, t);
            None
        }
        Mode::Inbox(inbox) => {
            draw_inbox(buf, area, inbox, t);
            None
        }
    };
    if let Some(p) = &app.team_pending {
        draw_question(buf, area, &p.question, app.color);
    }
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
        // The board answers, but its store does not: "live" beside the red banner would say
        // the opposite of it.
        Conn::Live if app.store_error.is_some() => ("✖ store down", t.bold(Color::Red)),
        Conn::Live => ("● live", t.fg(Color::Green)),
        Conn::Connecting => ("… connecting", t.bold(Color::Yellow)),
        Conn::Reconnecting { .. } => ("⟳ reconnecting", t.bold(Color::Red)),
    };
    let live_w = u16::try_from(width(live)).unwrap_or(0) + 1;
    let mut x = r.x;
    x += put(buf, x, r.y, r.width, &name, t.bar(Color::Cyan));
    let needs = crate::tui::update::needs::count(app);
    if needs > 0 {
        let verb = if needs == 1 { "needs" } else { "need" };
        let text = format!(" ⚑ {needs} {verb} you · i ");
        x += put(
            buf,
            x,
            r.y,
            r.right().saturating_sub(x),
            &text,
            t.bar(Color::Magenta),
        );
    }
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

/// The footer with the agents panel focused: exactly the keys that act there.
pub(crate) const AGENT_KEYS: &[(&str, &str)] = &[
    ("⏎", "pane"),
    ("S", "start"),
    ("R", "restart"),
    ("K", "stop"),
    ("U", "start all"),
    ("m", "message"),
    ("A", "answer"),
    ("i", "needs you"),
    ("Tab", "backlog"),
];

/// The footer with the backlog focused.
pub(crate) const BACKLOG_KEYS: &[(&str, &str)] = &[
    ("q", "quit"),
    ("?", "help"),
    ("⏎", "details"),
    ("a", "add"),
    ("e", "edit"),
    ("s", "goal"),
    ("r", "release"),
    ("x", "cancel"),
    ("/", "filter"),
    ("i", "needs you"),
    ("Tab", "agents"),
];

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
        Mode::NeedsYou(_) => &[
            ("j/k", "move"),
            ("⏎", "do it"),
            ("A", "answer"),
            ("d", "dismiss"),
            ("Esc", "close"),
        ],
        Mode::Inbox(_) => &[("j/k", "scroll"), ("Esc", "close")],
        _ if app.team_pending.is_some() => &[("y", "yes"), ("n", "no")],
        _ if app.focus == Focus::Agents => AGENT_KEYS,
        _ => BACKLOG_KEYS,
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
