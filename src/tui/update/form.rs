//! The form dialogs (add, edit, goal, message): their fields, their keys and the request a
//! submitted form sends.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::proto::methods::{
    AcceptParams, AddParams, Call, EditParams, GoalParams, RejectParams, TaskId,
};
use crate::proto::sanitize::one_line;
use crate::proto::TaskView;
use crate::tui::state::app::{App, Effect, Mode, Purpose, Request};
use crate::tui::state::form::{Field, Form, FormKind};

/// Parses a dependency list: ids separated by spaces or commas, `#` allowed.
fn parse_ids(s: &str) -> Result<Vec<TaskId>, String> {
    s.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.trim_start_matches('#')
                .parse::<TaskId>()
                .ok()
                .filter(|n| n.0 > 0)
                .ok_or_else(|| format!("{:?} is not a task id", one_line(w)))
        })
        .collect()
}

fn ids_text(ids: &[TaskId]) -> String {
    ids.iter()
        .map(|i| format!("#{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses a label list: labels separated by spaces or commas (the board checks each).
fn parse_labels(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in s.split(|c: char| c == ',' || c.is_whitespace()) {
        if !l.is_empty() && !out.iter().any(|o| o == l) {
            out.push(l.to_string());
        }
    }
    out
}

/// Parses the review field: `yes` (its done waits for a person), `no` (it skips review), or
/// empty (as `[review] required`; None).
fn parse_review(s: &str) -> Result<Option<bool>, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "yes" | "y" => Ok(Some(true)),
        "no" | "n" => Ok(Some(false)),
        _ => Err("review: yes, no, or empty for as [review] required".into()),
    }
}

/// The review field's text for a task's override.
fn review_text(review: Option<bool>) -> &'static str {
    match review {
        Some(true) => "yes",
        Some(false) => "no",
        None => "",
    }
}

/// The labels, `for` and review fields of an edit: what changed into `params`.
fn edit_assignment(form: &Form, t: &TaskView, params: &mut EditParams) -> Result<(), String> {
    let labels = parse_labels(form.value("Labels"));
    if labels != t.labels {
        params.labels = Some(labels);
    }
    let whom = form.value("For").trim();
    if whom != t.meant_for.as_deref().unwrap_or("") {
        // `""` makes it for any agent again.
        params.meant_for = Some(whom.to_string());
    }
    let review = parse_review(form.value("Review"))?;
    match (review, t.review) {
        (None, Some(_)) => {
            return Err("review: yes or no (an edit does not clear a task's own review)".into())
        }
        (r, was) if r != was => params.review = r,
        _ => {}
    }
    Ok(())
}

fn newline(form: &mut Form) {
    if let Some(f) = form.fields.get_mut(form.focus) {
        if f.multiline {
            f.input.insert('\n');
        }
    }
}

fn parse_priority(s: &str, default: Option<i64>) -> Result<i64, String> {
    let s = s.trim();
    match (s.is_empty(), default) {
        (true, Some(d)) => Ok(d),
        _ => s
            .parse()
            .map_err(|_| "priority must be a whole number (higher runs first)".to_string()),
    }
}

/// The request a submitted form sends; `Ok(None)` when an edit changes nothing.
fn build_call(form: &Form) -> Result<Option<Request>, String> {
    match &form.kind {
        FormKind::Add => build_add(form).map(Some),
        FormKind::Edit(t) => build_edit(form, t),
        FormKind::Message(r) => super::messages::build(form, r).map(|(call, _)| Some(call)),
        FormKind::Verdict { task, accept } => build_verdict(form, *task, *accept).map(Some),
        FormKind::Goal => {
            let text = form.value("Goal").trim();
            if text.is_empty() {
                return Err("the goal needs some text".into());
            }
            Ok(Some(Request {
                purpose: Purpose::Goal,
                call: Call::Goal(GoalParams {
                    text: Some(text.to_string()),
                }),
            }))
        }
    }
}

/// The `add` of the add form: title, priority and dependencies always; labels, whom it is for
/// and its review when given.
fn build_add(form: &Form) -> Result<Request, String> {
    let title = form.value("Title").trim();
    if title.is_empty() {
        return Err("a task needs a title".into());
    }
    let labels = parse_labels(form.value("Labels"));
    let whom = form.value("For").trim();
    let params = AddParams {
        title: title.to_string(),
        priority: Some(parse_priority(form.value("Priority"), Some(0))?),
        after: Some(parse_ids(form.value("After"))?),
        labels: (!labels.is_empty()).then_some(labels),
        meant_for: (!whom.is_empty()).then(|| whom.to_string()),
        review: parse_review(form.value("Review"))?,
        body: None,
    };
    Ok(Request {
        purpose: Purpose::Add,
        call: Call::Add(params),
    })
}

/// The `edit` of task `t`: only the fields that changed; `Ok(None)` when none did.
fn build_edit(form: &Form, t: &TaskView) -> Result<Option<Request>, String> {
    let unchanged = EditParams {
        task: t.id,
        ..EditParams::default()
    };
    let mut params = unchanged.clone();
    let title = form.value("Title");
    if title != t.title {
        if title.trim().is_empty() {
            return Err("a task needs a title".into());
        }
        params.title = Some(title.trim().to_string());
    }
    let body = form.value("Body");
    if body != t.body {
        params.body = Some(body.to_string());
    }
    let priority = parse_priority(form.value("Priority"), None)?;
    if priority != t.priority {
        params.priority = Some(priority);
    }
    let after = parse_ids(form.value("After"))?;
    let (mut a, mut b) = (after.clone(), t.after.clone());
    a.sort_unstable();
    a.dedup();
    b.sort_unstable();
    b.dedup();
    if a != b {
        params.after = Some(after);
    }
    edit_assignment(form, t, &mut params)?;
    if params == unchanged {
        return Ok(None);
    }
    Ok(Some(Request {
        purpose: Purpose::Edit(t.id),
        call: Call::Edit(params),
    }))
}

/// The `accept` (note optional) or `reject` (note required) of task `task` in review.
fn build_verdict(form: &Form, task: TaskId, accept: bool) -> Result<Request, String> {
    let note = form.value("Note").trim();
    if accept {
        return Ok(Request {
            purpose: Purpose::Accept(task),
            call: Call::Accept(AcceptParams {
                task,
                note: (!note.is_empty()).then(|| note.to_string()),
            }),
        });
    }
    if note.is_empty() {
        return Err("a reject needs a note: what is wrong, what to do instead".into());
    }
    Ok(Request {
        purpose: Purpose::Reject(task),
        call: Call::Reject(RejectParams {
            task,
            note: note.to_string(),
        }),
    })
}

impl App {
    pub(super) fn open_form(&mut self, kind: FormKind) {
        let fields = match &kind {
            FormKind::Add => vec![
                Field::new("Title", ""),
                Field::new("Priority", ""),
                Field::new("After", ""),
                Field::new("Labels", ""),
                Field::new("For", ""),
                Field::new("Review", ""),
            ],
            FormKind::Edit(t) => vec![
                Field::new("Title", &t.title),
                Field {
                    multiline: true,
                    ..Field::new("Body", &t.body)
                },
                Field::new("Priority", &t.priority.to_string()),
                Field::new("After", &ids_text(&t.after)),
                Field::new("Labels", &t.labels.join(" ")),
                Field::new("For", t.meant_for.as_deref().unwrap_or("")),
                Field::new("Review", review_text(t.review)),
            ],
            FormKind::Goal => vec![Field::new(
                "Goal",
                self.goal.as_ref().map(|g| g.text.as_str()).unwrap_or(""),
            )],
            FormKind::Message(r) => super::messages::fields(r),
            FormKind::Verdict { .. } => vec![Field {
                multiline: true,
                ..Field::new("Note", "")
            }],
        };
        self.mode = Mode::Form(Form {
            kind,
            fields,
            focus: 0,
            error: None,
            pending: false,
        });
    }

    pub(super) fn key_form(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Form(form) = &mut self.mode else {
            return Vec::new();
        };
        if key.code == KeyCode::Esc {
            self.mode = Mode::Normal;
            return Vec::new();
        }
        if form.pending {
            return Vec::new();
        }
        let n = form.fields.len();
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Enter if alt => newline(form),
            KeyCode::Char('j') if ctrl => newline(form),
            KeyCode::Enter => return self.submit(),
            KeyCode::Tab | KeyCode::Down => form.focus = (form.focus + 1) % n,
            KeyCode::BackTab | KeyCode::Up => form.focus = (form.focus + n - 1) % n,
            _ => {
                if let Some(f) = form.fields.get_mut(form.focus) {
                    if f.input.edit(&key) {
                        form.error = None;
                    }
                }
            }
        }
        Vec::new()
    }

    fn submit(&mut self) -> Vec<Effect> {
        let Mode::Form(form) = &mut self.mode else {
            return Vec::new();
        };
        self.type_after_send = None;
        let built = match &form.kind {
            FormKind::Message(r) => super::messages::build(form, r).map(|(call, typing)| {
                self.type_after_send = typing;
                Some(call)
            }),
            _ => build_call(form),
        };
        let call = match built {
            Ok(Some(c)) => c,
            Ok(None) => {
                self.mode = Mode::Normal;
                self.say("nothing changed", false);
                return Vec::new();
            }
            Err(e) => {
                form.error = Some(e);
                return Vec::new();
            }
        };
        form.pending = true;
        form.error = None;
        vec![Effect::Call(call)]
    }
}
