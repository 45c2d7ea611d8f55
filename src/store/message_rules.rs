//! The backend-independent rules of messages: which live session a `send` goes to, the words
//! of its refusal and of its events, and the unread summary. Pure: both stores call them with
//! what they read.

use crate::proto::error::{BoardError, ErrorKind};
use crate::store::{Unread, OPERATOR};

/// The recipient among the live sessions `ids` whose name or id is `to`, listed with the one
/// named `to` first: a name, which a restarted agent takes back, wins over an id (names are
/// unique among live sessions, so there is at most one). None when there is none (see
/// [`no_recipient`]).
pub(crate) fn pick_recipient(ids: &[String]) -> Option<String> {
    ids.first().cloned()
}

/// `not_found`: `to` names no live session; `ended` is `(ended_at, end_reason)` of the newest
/// ended session it names, when one did.
pub(crate) fn no_recipient(to: &str, ended: Option<(String, Option<String>)>) -> BoardError {
    let shown: String = to.chars().take(64).collect();
    match ended {
        Some((at, reason)) => BoardError::new(
            ErrorKind::NotFound,
            format!(
                "agent session {shown:?} ended at {at} ({}); nobody reads its messages",
                reason.unwrap_or_default()
            ),
        ),
        None => BoardError::not_found(format!(
            "no live agent session {shown:?} (`board agents` lists them)"
        )),
    }
    .with("to", shown)
}

/// The agent session a message event is about (the recipient, else the sender; `None`
/// between operators) and the event's text, which names both as people know them: `names` is
/// (sender's name, recipient's name), each its id when it has none.
pub(crate) fn message_event<'a>(
    from: &'a str,
    recipient: &'a str,
    names: (&str, &str),
    text: &str,
) -> (Option<&'a str>, String) {
    let sender_agent = (from != OPERATOR).then_some(from);
    let to_agent = (recipient != OPERATOR).then_some(recipient);
    (
        to_agent.or(sender_agent),
        format!("{} → {}: {text}", names.0, names.1),
    )
}

/// The unread summary of `senders` (one per unread message, oldest first).
pub(crate) fn unread_of(senders: Vec<String>) -> Unread {
    let count = senders.len() as i64;
    let mut from: Vec<String> = Vec::new();
    for s in senders {
        if !from.contains(&s) {
            from.push(s);
        }
    }
    Unread { count, from }
}
