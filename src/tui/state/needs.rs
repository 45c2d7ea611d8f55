//! The needs-you list's items and the operator's messages just read: data only.

/// What kind of thing waits for a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeedKind {
    /// An agent asked a question (`board wait`); it waits for an answer.
    Question,
    /// An agent's CLI stopped at a permission prompt.
    Permission,
    /// An agent never reached its prompt (a first-run dialog, a crash loop).
    Attention,
    /// Messages to the operator not read yet.
    Messages,
    /// An agent ended while holding a claim; its task is open again.
    Orphaned,
    /// A finished task waits for review (accept or reject).
    Review,
}

impl NeedKind {
    /// The short label shown before the item.
    pub fn label(self) -> &'static str {
        match self {
            NeedKind::Question => "QUESTION",
            NeedKind::Permission => "PERMISSION",
            NeedKind::Attention => "ATTENTION",
            NeedKind::Messages => "MESSAGES",
            NeedKind::Orphaned => "ENDED",
            NeedKind::Review => "REVIEW",
        }
    }
}

/// One item of the needs-you list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// Its kind.
    pub kind: NeedKind,
    /// What is waiting, inert, one line.
    pub text: String,
    /// What to do and its key (`A answer`).
    pub todo: &'static str,
    /// The agent session concerned (raw id), if any.
    pub agent: Option<String>,
    /// The task concerned, if any.
    pub task: Option<crate::proto::glossary::TaskId>,
    /// The event it comes from (an expelled claim), if any.
    pub event: Option<i64>,
}

/// The operator's messages as read by `inbox`, for the messages dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbox {
    /// `(sender, HH:MM:SS, text)`, oldest first; all inert (the text keeps its line breaks).
    pub messages: Vec<(String, String, String)>,
    /// First line shown.
    pub scroll: usize,
    /// Why the answer could not be read, inert.
    pub error: Option<String>,
}
