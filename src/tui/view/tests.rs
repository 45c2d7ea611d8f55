//! The main screen and each dialog drawn from the sample board at 80×24, 120×40 and 160×48.

use super::*;
use crate::proto::glossary::TaskId;
use crate::tui::state::app::App;
use crate::tui::state::input::Input;
use crate::tui::update::detail::wrap;
use crate::tui::update::fixture;
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
fn a_store_outage_shows_in_the_header_not_live() {
    let mut app = fixture::sample_app(true);
    app.store_error = Some("the PostgreSQL store at db:5432/board is unreachable".into());
    let s = screen(&app, 120, 40);
    let header = s.lines().next().unwrap_or_default();
    assert!(header.contains("✖ store down"), "{header}");
    assert!(!s.contains("● live"), "{s}");
    assert!(s.contains("STORE UNREACHABLE"), "{s}");
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
    let task = snap
        .tasks
        .iter()
        .find(|t| t.id == TaskId(14))
        .unwrap()
        .clone();
    let v = serde_json::json!({
        "task": task,
        "notes": [{"id": 1, "task": 14, "author": "claude-2", "generation": 1,
                   "text": "started; CI logs use \u{1b}[1mbold\u{1b}[0m too", "at": "2026-03-01T11:41:00.000Z"}],
        "events": [{"id": 30, "at": "2026-03-01T11:10:00.000Z", "kind": "add", "task": 14,
                    "agent": null, "generation": null, "reason": task.title}],
    });
    app.on_call_result(crate::tui::state::app::Purpose::Show(TaskId(14)), Ok(v));
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

#[test]
fn needs_you_list_and_question_banner_120x40() {
    let mut snap = fixture::sample_snapshot();
    snap.agents[1].waiting = Some("Codex asks permission to run `cargo publish`".into());
    snap.unread = crate::tui::state::snapshot::Unread {
        count: 2,
        from: vec!["claude-1".into(), "operator".into()],
    };
    let mut app = fixture::app_with(snap, true);
    insta::assert_snapshot!("question_banner_120x40", screen(&app, 120, 40));
    app.on_key(key(KeyCode::Char('i')));
    insta::assert_snapshot!("needs_you_120x40", screen(&app, 120, 40));
    app.on_call_result(
        crate::tui::state::app::Purpose::Inbox,
        Ok(serde_json::json!({"messages": [
            {"id": 1, "from": "claude-1", "to": "operator", "answer": false,
             "text": "Refunds API is done.\nThe \u{1b}[31mred\u{1b}[0m CI step is flaky, see #14.",
             "sent_at": "2026-03-01T11:58:40.000Z"},
            {"id": 2, "from": "operator", "to": "operator", "answer": false,
             "text": "note to self: 漢字 review before lunch", "sent_at": "2026-03-01T11:59:00.000Z"}
        ]})),
    );
    insta::assert_snapshot!("inbox_80x24", screen(&app, 80, 24));
}

#[test]
fn agents_panel_footer_lists_only_its_keys_80x24() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Tab));
    let text = screen(&app, 80, 24);
    let footer = text.lines().last().unwrap();
    for k in ["pane", "start", "restart", "stop", "message", "answer"] {
        assert!(footer.contains(k), "{footer}");
    }
    for k in ["edit", "cancel", "release", "add", "filter"] {
        assert!(!footer.contains(k), "{footer}");
    }
}

#[test]
fn agents_on_a_shared_store_show_their_host_80x24() {
    let mut snap = fixture::sample_snapshot();
    for (i, a) in snap.agents.iter_mut().enumerate() {
        a.host = Some(if i % 2 == 0 { "laptop" } else { "ci-box" }.to_string());
    }
    let names: Vec<String> = snap.agents.iter().map(|a| a.name.clone()).collect();
    let text = screen(&fixture::app_with(snap, false), 80, 24);
    for (i, name) in names.iter().enumerate() {
        let host = if i % 2 == 0 { "laptop" } else { "ci-box" };
        assert!(
            text.contains(&format!("{name}@{host}")),
            "{name}@{host}:\n{text}"
        );
    }
    let plain = screen(&fixture::sample_app(false), 80, 24);
    assert!(
        !plain.contains('@'),
        "no host on the embedded store:\n{plain}"
    );
}
