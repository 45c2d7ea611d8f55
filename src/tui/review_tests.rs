//! Review in the TUI, state to view: a task in review is a REVIEW row and a needs-you item; its
//! details fetch the diff through the app loop (an effect, never in the view) and show it inert;
//! `y` and `n` send `accept` and `reject` with the note typed.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;

use super::state::app::{App, Effect, Mode, Purpose};
use super::state::needs::NeedKind;
use super::state::snapshot::{Group, Row};
use super::update::fixture;
use super::update::needs::needs;
use crate::proto::glossary::{TaskId, TaskState};
use crate::proto::Method;

const COMMIT: &str = "3f2a9c1e04b7aa11223344556677889900aabbcc";

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

/// The sample board with task 9 finished by codex-1 and waiting for review at [`COMMIT`].
fn app_with_review() -> App {
    let mut snap = fixture::sample_snapshot();
    for t in snap.tasks.iter_mut().filter(|t| t.id == TaskId(9)) {
        t.state = TaskState::Review;
        t.ready = false;
        t.commit = Some(COMMIT.into());
        t.done_by = Some("codex-1".into());
    }
    fixture::app_with(snap, false)
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
    term.draw(|f| super::view::draw(f, app)).expect("draw");
    term.backend().to_string()
}

/// Opens task 9's details and answers its `show` and diff as the app loop would.
fn details_with_diff(app: &mut App, diff: &str) {
    app.mode = Mode::Detail(Box::new(super::state::app::Detail::of(TaskId(9))));
    let task = app
        .tasks
        .iter()
        .find(|t| t.task.id == TaskId(9))
        .map(|t| t.task.clone())
        .unwrap();
    let show = json!({ "task": task, "notes": [], "events": [] });
    let effects = app.on_call_result(Purpose::Show(TaskId(9)), Ok(show));
    assert_eq!(
        effects,
        vec![Effect::Diff {
            task: TaskId(9),
            commit: COMMIT.into()
        }],
        "the diff is fetched by the loop, once the task is known to be in review"
    );
    app.on_call_result(Purpose::Diff(TaskId(9)), Ok(json!(diff)));
}

#[test]
fn a_task_in_review_is_listed_and_waits_for_a_person() {
    let app = app_with_review();
    let review: Vec<TaskId> = app
        .rows
        .iter()
        .filter_map(|r| match r {
            Row::Task(i) if app.tasks[*i].group == Group::Review => Some(app.tasks[*i].task.id),
            _ => None,
        })
        .collect();
    assert_eq!(review, vec![TaskId(9)]);
    assert!(app
        .rows
        .iter()
        .any(|r| matches!(r, Row::Header(Group::Review, 1))));
    let items = needs(&app);
    let item = items.iter().find(|n| n.kind == NeedKind::Review).unwrap();
    assert_eq!(item.task, Some(TaskId(9)));
    assert!(
        item.text.contains("3f2a9c1e04b7") && item.text.contains("codex-1"),
        "{item:?}"
    );
}

#[test]
fn the_details_of_a_task_in_review_show_its_diff_inert_and_scrollable() {
    let mut app = app_with_review();
    let diff = " src/refund.rs | 2 +-\n\n@@ -1 +1 @@\n-old line\n+new line \u{1b}[31mred\u{1b}]0;title\u{7}\n";
    details_with_diff(&mut app, diff);
    let shown = screen(&app, 120, 40);
    assert!(shown.contains("diff under review"), "{shown}");
    assert!(shown.contains("src/refund.rs | 2 +-"), "{shown}");
    assert!(
        shown.contains("+new line ␛[31mred"),
        "escape sequences shown, inert: {shown}"
    );
    assert!(!shown.contains('\u{1b}'));
    // Scrolling reaches the end of a long diff.
    let long: String = (0..200).map(|i| format!("+line {i}\n")).collect();
    let Mode::Detail(d) = &mut app.mode else {
        panic!("details closed")
    };
    d.diff = Some(Ok(long));
    app.on_key(key(KeyCode::End));
    assert!(screen(&app, 120, 40).contains("+line 199"));
}

#[test]
fn y_and_n_accept_and_reject_with_the_note_typed() {
    let mut app = app_with_review();
    details_with_diff(&mut app, "+x\n");
    app.on_key(key(KeyCode::Char('y')));
    assert!(matches!(app.mode, Mode::Form(_)), "{:?}", app.mode);
    for c in "looks right".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    let effects = app.on_key(key(KeyCode::Enter));
    let Some(Effect::Call(call)) = effects.first() else {
        panic!("no call: {effects:?}")
    };
    assert_eq!(call.purpose, Purpose::Accept(TaskId(9)));
    assert_eq!(
        call.call.wire(),
        (Method::Accept, json!({ "task": 9, "note": "looks right" }))
    );

    // A reject needs its note.
    details_with_diff(&mut app, "+x\n");
    app.on_key(key(KeyCode::Char('n')));
    assert!(
        app.on_key(key(KeyCode::Enter)).is_empty(),
        "no reject without a note"
    );
    let Mode::Form(form) = &app.mode else {
        panic!("form closed")
    };
    assert!(form.error.as_deref().unwrap_or("").contains("needs a note"));
    for c in "tests fail".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    let effects = app.on_key(key(KeyCode::Enter));
    let Some(Effect::Call(call)) = effects.first() else {
        panic!("no call: {effects:?}")
    };
    assert_eq!(
        call.call.wire(),
        (Method::Reject, json!({ "task": 9, "note": "tests fail" }))
    );
}
