//! The backend-independent rules of messages: which live session a `send` goes to, the words
//! of its refusal and of its events, and the unread summary. Pure: both stores call them with
//! what they read.

use crate::proto::error::{BoardError, BoardResult, ErrorKind};
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

/// What a message answers: nothing (`send`), whatever the recipient waits for (`send` with
/// `answer`: its question and its permission prompt end), or its open question (`answer`:
/// refused when it has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reply {
    /// A plain message.
    No,
    /// `send --answer`: ends the recipient's question and permission prompt, if open.
    Any,
    /// `answer`: ends the recipient's open question; refused without one.
    Question,
}

/// Who may answer whom: an answer to a question goes to an agent session other than the
/// asker. Errors: `invalid` naming the problem.
pub(crate) fn check_reply(reply: Reply, from: &str, recipient: &str) -> BoardResult<()> {
    if reply != Reply::Question {
        return Ok(());
    }
    if recipient == OPERATOR {
        return Err(BoardError::invalid(
            "the operator asks no questions: `board answer` names the agent session that asked",
        ));
    }
    if from == recipient {
        return Err(BoardError::invalid(format!(
            "{recipient} cannot answer its own question: a person answers it (`board answer \
             {recipient} TEXT` from a shell outside the agent, or `A` in the TUI); \
             `board resume` withdraws it"
        )));
    }
    Ok(())
}

/// `not_found`: `agent` (live) has no open question; `prompt` is the permission prompt its
/// CLI shows, if any (answered in its pane, not with `board answer`).
pub(crate) fn no_question(agent: &str, prompt: Option<&str>) -> BoardError {
    let shown: String = agent.chars().take(64).collect();
    let message = match prompt {
        Some(p) => format!(
            "{shown} has no open question; its CLI waits for a permission ({}): answer it in \
             the agent's pane",
            p.chars().take(200).collect::<String>()
        ),
        None => format!("{shown} has no open question (`board agents` shows who asks one)"),
    };
    BoardError::not_found(message).with("to", shown)
}
