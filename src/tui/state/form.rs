//! The form dialogs' data (add, edit, goal, message, verdict): their kind and fields, and the
//! dialog's title. What keys do to a form and the request a submitted form sends are update
//! code.

use super::input::Input;
use super::snapshot::inert_line;
use crate::proto::TaskView;

/// A labelled field of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Label shown left of the field.
    pub label: &'static str,
    /// The text being edited.
    pub input: Input,
    /// Alt-Enter / Ctrl-J insert a line break.
    pub multiline: bool,
}

impl Field {
    /// A one-line field labelled `label`, holding `text`.
    pub fn new(label: &'static str, text: &str) -> Field {
        Field {
            label,
            input: Input::new(text),
            multiline: false,
        }
    }
}

/// What a form does on Enter.
#[derive(Debug, Clone, PartialEq)]
pub enum FormKind {
    /// Add a task (title, priority, dependencies, labels, whom it is for, review).
    Add,
    /// Edit a task; holds the task as it was when the form opened.
    Edit(Box<TaskView>),
    /// Set the goal.
    Goal,
    /// A message to an agent, or an answer to one that waits (`m` and `A`).
    Message(Box<Recipient>),
    /// Accept (`accept`: true) or reject a task in review, with a note.
    Verdict {
        /// Task id.
        task: crate::proto::glossary::TaskId,
        /// Accept (the board lands its commit) rather than reject.
        accept: bool,
    },
}

/// A form in a dialog.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// Its purpose.
    pub kind: FormKind,
    /// The fields, top to bottom.
    pub fields: Vec<Field>,
    /// Index of the field with the cursor.
    pub focus: usize,
    /// Why the last submit failed (inert).
    pub error: Option<String>,
    /// Submitted; waiting for the board's answer.
    pub pending: bool,
}

impl Form {
    /// The dialog's title.
    pub fn title(&self) -> String {
        match &self.kind {
            FormKind::Add => "Add a task".into(),
            FormKind::Edit(t) => format!("Edit #{}", t.id),
            FormKind::Goal => "Set the goal".into(),
            FormKind::Message(r) => title(r, &inert_line(&r.name)),
            FormKind::Verdict { task, accept: true } => {
                format!("Accept #{task}: land its commit (note optional)")
            }
            FormKind::Verdict {
                task,
                accept: false,
            } => format!("Reject #{task}: back to ready (say why)"),
        }
    }

    /// The text of the field labelled `label` ("" when there is none).
    pub fn value(&self, label: &str) -> &str {
        self.fields
            .iter()
            .find(|f| f.label == label)
            .map(|f| f.input.text())
            .unwrap_or("")
    }
}

/// Who a message form writes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipient {
    /// Session id (raw, as the board knows it).
    pub to: String,
    /// The name people see of that session (inert), for the dialog's title.
    pub name: String,
    /// The question it waits with, when this is an answer (inert).
    pub question: Option<String>,
}

/// The dialog title, naming the agent as people know it (`shown` is its name, inert).
fn title(r: &Recipient, shown: &str) -> String {
    match &r.question {
        Some(q) => format!("Answer {shown}: {q}"),
        None => format!("Message to {shown}"),
    }
}
