//! The add and edit forms, state to request: what a submitted form sends (only what changed
//! for an edit), labels, whom a task is for and its review override among the fields, and a
//! bad field refused in the form with nothing sent.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use crate::proto::error::BoardError;
use crate::proto::glossary::TaskId;
use crate::proto::methods::{AddParams, Call, EditParams};
use crate::proto::Method;

use super::state::app::{App, Effect, Mode, Purpose, Request};
use super::update::fixture;

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

/// Moves the form's cursor to the field labelled `label`.
fn focus(app: &mut App, label: &str) {
    for _ in 0..10 {
        let Mode::Form(f) = &app.mode else {
            panic!("no form")
        };
        if f.fields[f.focus].label == label {
            return;
        }
        app.on_key(key(KeyCode::Tab));
    }
    panic!("no field {label}");
}

/// Empties the focused field and types `s` into it.
fn retype(app: &mut App, s: &str) {
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    typed(app, s);
}

/// The sample board with `change` made to the task selected at first.
fn with_selected(change: impl Fn(&mut crate::proto::TaskView)) -> App {
    let id = fixture::sample_app(true).selected_task().unwrap().task.id;
    let mut snap = fixture::sample_snapshot();
    snap.tasks
        .iter_mut()
        .filter(|t| t.id == id)
        .for_each(change);
    let app = fixture::app_with(snap, true);
    assert_eq!(app.selected_task().unwrap().task.id, id);
    app
}

/// The one request the form sends on Enter.
fn submitted(app: &mut App) -> Request {
    let fx = app.on_key(key(KeyCode::Enter));
    let [Effect::Call(call)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    call.clone()
}

#[test]
fn adding_a_task_sends_add_and_closes_on_success() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('a')));
    typed(&mut app, "Write the changelog");
    app.on_key(key(KeyCode::Tab));
    typed(&mut app, "3");
    let fx = app.on_key(key(KeyCode::Enter));
    let [Effect::Call(call)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(
        call.call.wire(),
        (
            Method::Add,
            json!({"title": "Write the changelog", "priority": 3, "after": []})
        )
    );
    let mut added = app.tasks[0].task.clone();
    (added.id, added.title) = (TaskId(21), "Write the changelog".into());
    let fx = app.on_call_result(Purpose::Add, Ok(json!({ "task": added })));
    assert_eq!(fx, vec![Effect::Refresh]);
    assert_eq!(app.mode, Mode::Normal);
    assert!(app.current_flash().unwrap().text.contains("#21"));
}

#[test]
fn a_failed_add_keeps_the_form_with_the_error() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('a')));
    let fx = app.on_key(key(KeyCode::Enter));
    assert!(fx.is_empty());
    let Mode::Form(f) = &app.mode else { panic!() };
    assert!(f.error.as_deref().unwrap().contains("title"));
    typed(&mut app, "x");
    app.on_key(key(KeyCode::Enter));
    app.on_call_result(
        Purpose::Add,
        Err(BoardError::unavailable("no board\x1b[31m")),
    );
    let Mode::Form(f) = &app.mode else { panic!() };
    let err = f.error.as_deref().unwrap();
    assert!(err.contains("no board") && !err.contains('\x1b'), "{err}");
    assert!(!f.pending);
}

#[test]
fn edit_sends_only_what_changed() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('e')));
    let Mode::Form(f) = &app.mode else { panic!() };
    assert_eq!(f.fields.len(), 7);
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Tab));
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    typed(&mut app, "9");
    app.on_key(key(KeyCode::Tab));
    typed(&mut app, " #2, 3");
    let fx = app.on_key(key(KeyCode::Enter));
    let [Effect::Call(call)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    let id = app.selected_task().unwrap().task.id;
    let Call::Edit(EditParams {
        task,
        priority,
        title,
        body,
        after,
        ..
    }) = &call.call
    else {
        panic!("{call:?}")
    };
    assert_eq!(*task, id);
    assert_eq!(*priority, Some(9));
    assert!(title.is_none());
    assert!(body.is_none());
    assert!(after.as_ref().unwrap().contains(&TaskId(3)));
}

#[test]
fn the_add_form_sends_labels_whom_it_is_for_and_its_review() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('a')));
    let Mode::Form(f) = &app.mode else { panic!() };
    let labels: Vec<&str> = f.fields.iter().map(|f| f.label).collect();
    assert_eq!(
        labels,
        ["Title", "Priority", "After", "Labels", "For", "Review"]
    );
    typed(&mut app, "Check the parser");
    focus(&mut app, "Labels");
    typed(&mut app, "parser, ui parser");
    focus(&mut app, "For");
    typed(&mut app, " reviewer ");
    focus(&mut app, "Review");
    typed(&mut app, "yes");
    let call = submitted(&mut app);
    assert_eq!(
        call.call.wire(),
        (
            Method::Add,
            json!({"title": "Check the parser", "priority": 0, "after": [],
                   "labels": ["parser", "ui"], "for": "reviewer", "review": true})
        )
    );
}

#[test]
fn a_bad_review_answer_stays_in_the_form_and_sends_nothing() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('a')));
    typed(&mut app, "x");
    focus(&mut app, "Review");
    typed(&mut app, "maybe");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    let Mode::Form(f) = &app.mode else { panic!() };
    assert!(f.error.as_deref().unwrap().starts_with("review:"), "{f:?}");
    retype(&mut app, "no");
    let Call::Add(AddParams { review, .. }) = submitted(&mut app).call else {
        panic!("not an add")
    };
    assert_eq!(review, Some(false));
}

#[test]
fn the_edit_form_shows_labels_for_and_review_and_sends_only_their_changes() {
    let mut app = with_selected(|t| {
        t.labels = vec!["ui".into(), "bug".into()];
        t.meant_for = Some("coder".into());
        t.review = Some(true);
    });
    let id = app.selected_task().unwrap().task.id;
    app.on_key(key(KeyCode::Char('e')));
    let Mode::Form(f) = &app.mode else { panic!() };
    assert_eq!(
        (f.value("Labels"), f.value("For"), f.value("Review")),
        ("ui bug", "coder", "yes")
    );

    // Unchanged: nothing is sent.
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.mode, Mode::Normal);

    app.on_key(key(KeyCode::Char('e')));
    focus(&mut app, "Labels");
    retype(&mut app, "ui");
    focus(&mut app, "For");
    retype(&mut app, "");
    focus(&mut app, "Review");
    retype(&mut app, "no");
    let call = submitted(&mut app);
    assert_eq!(
        call.call.wire(),
        (
            Method::Edit,
            json!({"task": id, "labels": ["ui"], "for": "", "review": false})
        ),
        "an empty For makes it for any agent"
    );
}

#[test]
fn an_edit_cannot_clear_a_tasks_own_review() {
    let mut app = with_selected(|t| t.review = Some(false));
    app.on_key(key(KeyCode::Char('e')));
    focus(&mut app, "Review");
    retype(&mut app, "");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    let Mode::Form(f) = &app.mode else { panic!() };
    assert!(f.error.as_deref().unwrap().contains("yes or no"), "{f:?}");
}
