//! Messages between agent sessions and operators (`board send`, `board answer`, `board inbox`).

use crate::proto::error::{BoardError, BoardResult};
use crate::proto::MessageView;
use crate::store::db::{get, Backend, Db, Lock};
use crate::store::message_rules::{self, Reply};
use crate::store::{check_text, EventKind, Events, Sent, Unread, MAX_TEXT, OPERATOR};

pub(in crate::store) fn send<B: Backend>(
    b: &mut B,
    from: &str,
    to: &str,
    text: &str,
    answer: bool,
) -> BoardResult<(Sent, Events)> {
    let reply = if answer { Reply::Any } else { Reply::No };
    deliver(b, from, to, text, reply)
}

pub(in crate::store) fn answer<B: Backend>(
    b: &mut B,
    from: &str,
    to: &str,
    text: &str,
) -> BoardResult<(Sent, Events)> {
    deliver(b, from, to, text, Reply::Question)
}

/// One message from `from` to `to` (see [`Reply`]), in one transaction: the question it
/// answers ends (or the refusal comes) before anything is written.
fn deliver<B: Backend>(
    b: &mut B,
    from: &str,
    to: &str,
    text: &str,
    reply: Reply,
) -> BoardResult<(Sent, Events)> {
    check_text("message", text, MAX_TEXT, false)?;
    b.write(Lock::Shared, |db, ev| {
        let recipient = recipient_of(db, to)?;
        message_rules::check_reply(reply, from, &recipient)?;
        let to_agent = (recipient != OPERATOR).then_some(recipient.as_str());
        let question = match (reply, to_agent) {
            (Reply::No, _) | (_, None) => None,
            (_, Some(agent)) => db.end_question(agent)?,
        };
        if reply == Reply::Question && question.is_none() {
            return Err(no_question(db, &recipient)?);
        }
        let ended_prompt = reply == Reply::Any
            && to_agent.is_some()
            && db.exec(
                "UPDATE sessions SET waiting = NULL
                 WHERE id = $1 AND ended_at IS NULL AND waiting IS NOT NULL",
                &args![&recipient],
            )? == 1;
        let answer = reply != Reply::No;
        let r = db.one(
            "INSERT INTO messages (sender, recipient, text, sent_at, answer)
             VALUES ($1, $2, $3, board_wall(), $4) RETURNING id, sent_at",
            &args![from, &recipient, text, answer],
        )?;
        let (id, sent_at): (i64, String) = (get(&r, 0)?, get(&r, 1)?);
        let n = db.one(
            "SELECT COALESCE((SELECT name FROM sessions WHERE id = CAST($1 AS text)),
                             CAST($1 AS text)),
                    COALESCE((SELECT name FROM sessions WHERE id = CAST($2 AS text)),
                             CAST($2 AS text))",
            &args![from, &recipient],
        )?;
        let names: (String, String) = (get(&n, 0)?, get(&n, 1)?);
        let (about, said) =
            message_rules::message_event(from, &recipient, (&names.0, &names.1), text);
        db.emit(ev, EventKind::Message, None, about, None, &said)?;
        if question.is_some() {
            db.emit(ev, EventKind::Answer, None, to_agent, None, text)?;
        }
        if ended_prompt {
            let said = format!("answered by {}", names.0);
            db.emit(ev, EventKind::Resume, None, to_agent, None, &said)?;
        }
        let pane = db.value::<Option<String>>(
            "SELECT pane_id FROM sessions WHERE id = $1",
            &args![&recipient],
        )?;
        Ok(Sent {
            pane: pane.flatten(),
            message: MessageView {
                id,
                from: from.to_string(),
                to: recipient.clone(),
                text: text.to_string(),
                sent_at,
                answer,
            },
            ended_wait: question.is_some() || ended_prompt,
            question,
        })
    })
}

pub(in crate::store) fn inbox<B: Backend>(
    b: &mut B,
    recipient: &str,
    answers_only: bool,
) -> BoardResult<Vec<MessageView>> {
    let (mut out, _) = b.write(Lock::Shared, |db, _| {
        db.rows(
            "UPDATE messages SET read_at = board_wall()
             WHERE recipient = $1 AND read_at IS NULL AND (answer OR NOT $2)
             RETURNING id, sender, recipient, text, sent_at, answer",
            &args![recipient, answers_only],
        )?
        .iter()
        .map(|r| {
            Ok(MessageView {
                id: get(r, 0)?,
                from: get(r, 1)?,
                to: get(r, 2)?,
                text: get(r, 3)?,
                sent_at: get(r, 4)?,
                answer: get(r, 5)?,
            })
        })
        .collect::<BoardResult<Vec<_>>>()
    })?;
    out.sort_by_key(|m| m.id);
    Ok(out)
}

pub(in crate::store) fn unread<B: Backend>(b: &B, recipient: &str) -> BoardResult<Unread> {
    let senders: Vec<String> = b.read_with(|db| {
        db.column(
            "SELECT sender FROM messages WHERE recipient = $1 AND read_at IS NULL ORDER BY id",
            &args![recipient],
        )
    })?;
    Ok(message_rules::unread_of(senders))
}

/// The live session `to` names (its id, or the name one live session has), or `operator`.
/// Errors: see [`message_rules::pick_recipient`] and [`message_rules::no_recipient`].
fn recipient_of(db: &mut impl Db, to: &str) -> BoardResult<String> {
    if to == OPERATOR {
        return Ok(OPERATOR.to_string());
    }
    let ids: Vec<String> = db.column(
        "SELECT id FROM sessions WHERE ended_at IS NULL AND (id = $1 OR name = $1)
         ORDER BY name = $1 DESC, started_at",
        &args![to],
    )?;
    match message_rules::pick_recipient(&ids) {
        Some(id) => Ok(id),
        None => Err(no_recipient(db, to)?),
    }
}

/// The refusal of an answer to `agent`, which has no open question (say what it waits for
/// instead, if anything).
fn no_question(db: &mut impl Db, agent: &str) -> BoardResult<BoardError> {
    let prompt =
        db.value::<Option<String>>("SELECT waiting FROM sessions WHERE id = $1", &args![agent])?;
    Ok(message_rules::no_question(
        agent,
        prompt.flatten().as_deref(),
    ))
}

/// Why `to` names no live session: it ended (say when), or it never existed.
fn no_recipient(db: &mut impl Db, to: &str) -> BoardResult<BoardError> {
    let ended = db.opt(
        "SELECT ended_at, end_reason FROM sessions
         WHERE (id = $1 OR name = $1) AND ended_at IS NOT NULL
         ORDER BY started_at DESC LIMIT 1",
        &args![to],
    )?;
    let ended = ended
        .map(|r| Ok::<_, BoardError>((get(&r, 0)?, get(&r, 1)?)))
        .transpose()?;
    Ok(message_rules::no_recipient(to, ended))
}
