//! Messages between agent sessions and operators (PostgreSQL; see `store::messages`).

use super::{col, emit, Conn, PgStore};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::MessageView;
use crate::store::message_rules::{self, Reply};
use crate::store::{check_text, EventKind, Events, Sent, Unread, MAX_TEXT, OPERATOR};

impl PgStore {
    pub(in crate::store) fn send(
        &mut self,
        from: &str,
        to: &str,
        text: &str,
        answer: bool,
    ) -> BoardResult<(Sent, Events)> {
        let reply = if answer { Reply::Any } else { Reply::No };
        self.deliver(from, to, text, reply)
    }

    pub(in crate::store) fn answer(
        &mut self,
        from: &str,
        to: &str,
        text: &str,
    ) -> BoardResult<(Sent, Events)> {
        self.deliver(from, to, text, Reply::Question)
    }

    /// One message from `from` to `to` (see [`Reply`]), in one transaction: the question it
    /// answers ends (or the refusal comes) before anything is written.
    fn deliver(
        &mut self,
        from: &str,
        to: &str,
        text: &str,
        reply: Reply,
    ) -> BoardResult<(Sent, Events)> {
        check_text("message", text, MAX_TEXT, false)?;
        self.tx_shared(|c, ev| {
            let recipient = recipient_of(c, to)?;
            message_rules::check_reply(reply, from, &recipient)?;
            let to_agent = (recipient != OPERATOR).then_some(recipient.as_str());
            let question = match (reply, to_agent) {
                (Reply::No, _) | (_, None) => None,
                (_, Some(agent)) => end_question(c, agent)?,
            };
            if reply == Reply::Question && question.is_none() {
                return Err(no_question(c, &recipient)?);
            }
            let ended_prompt = reply == Reply::Any
                && to_agent.is_some()
                && c.exec(
                    "UPDATE sessions SET waiting = NULL
                     WHERE id = $1 AND ended_at IS NULL AND waiting IS NOT NULL",
                    &[&recipient],
                )? == 1;
            let answer = reply != Reply::No;
            let r = c.one(
                "INSERT INTO messages (sender, recipient, text, sent_at, answer)
                 VALUES ($1, $2, $3, board_wall(), $4) RETURNING id, sent_at",
                &[&from, &recipient, &text, &answer],
            )?;
            let (id, sent_at): (i64, String) = (col(&r, 0)?, col(&r, 1)?);
            let n = c.one(
                "SELECT COALESCE((SELECT name FROM sessions WHERE id = $1::text), $1::text),
                        COALESCE((SELECT name FROM sessions WHERE id = $2::text), $2::text)",
                &[&from, &recipient],
            )?;
            let names: (String, String) = (col(&n, 0)?, col(&n, 1)?);
            let (about, said) =
                message_rules::message_event(from, &recipient, (&names.0, &names.1), text);
            emit(c, ev, EventKind::Message, None, about, None, &said)?;
            if question.is_some() {
                emit(c, ev, EventKind::Answer, None, to_agent, None, text)?;
            }
            if ended_prompt {
                let said = format!("answered by {}", names.0);
                emit(c, ev, EventKind::Resume, None, to_agent, None, &said)?;
            }
            let pane: Option<String> = c
                .opt("SELECT pane_id FROM sessions WHERE id = $1", &[&recipient])?
                .map(|r| col::<Option<String>>(&r, 0))
                .transpose()?
                .flatten();
            Ok(Sent {
                pane,
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

    pub(in crate::store) fn inbox(
        &mut self,
        recipient: &str,
        answers_only: bool,
    ) -> BoardResult<Vec<MessageView>> {
        let (mut out, _) = self.tx_shared(|c, _| {
            c.rows(
                "UPDATE messages SET read_at = board_wall()
                 WHERE recipient = $1 AND read_at IS NULL AND (answer OR NOT $2)
                 RETURNING id, sender, recipient, text, sent_at, answer",
                &[&recipient, &answers_only],
            )?
            .iter()
            .map(|r| {
                Ok(MessageView {
                    id: col(r, 0)?,
                    from: col(r, 1)?,
                    to: col(r, 2)?,
                    text: col(r, 3)?,
                    sent_at: col(r, 4)?,
                    answer: col(r, 5)?,
                })
            })
            .collect::<BoardResult<Vec<_>>>()
        })?;
        out.sort_by_key(|m| m.id);
        Ok(out)
    }

    pub(in crate::store) fn unread(&self, recipient: &str) -> BoardResult<Unread> {
        let senders: Vec<String> = self.read(|c| {
            c.rows(
                "SELECT sender FROM messages WHERE recipient = $1 AND read_at IS NULL ORDER BY id",
                &[&recipient],
            )?
            .iter()
            .map(|r| col(r, 0))
            .collect()
        })?;
        Ok(message_rules::unread_of(senders))
    }
}

/// The live session `to` names (its id, or the name one live session has), or `operator`.
/// Errors: see [`message_rules::pick_recipient`] and [`message_rules::no_recipient`].
fn recipient_of(c: &mut Conn, to: &str) -> BoardResult<String> {
    if to == OPERATOR {
        return Ok(OPERATOR.to_string());
    }
    let ids: Vec<String> = c
        .rows(
            "SELECT id FROM sessions WHERE ended_at IS NULL AND (id = $1 OR name = $1)
             ORDER BY name = $1 DESC, started_at",
            &[&to],
        )?
        .iter()
        .map(|r| col(r, 0))
        .collect::<BoardResult<_>>()?;
    match message_rules::pick_recipient(&ids) {
        Some(id) => Ok(id),
        None => Err(no_recipient(c, to)?),
    }
}

/// Ends the open question of live session `agent` by one conditional UPDATE; returns it, or
/// None when it had none. (The joined row is the one before the update: it is the question.)
fn end_question(c: &mut Conn, agent: &str) -> BoardResult<Option<String>> {
    c.opt(
        "UPDATE sessions s SET question = NULL
         FROM (SELECT question AS asked FROM sessions WHERE id = $1) AS old
         WHERE s.id = $1 AND s.ended_at IS NULL AND s.question IS NOT NULL
         RETURNING old.asked",
        &[&agent],
    )?
    .map(|r| col(&r, 0))
    .transpose()
}

/// The refusal of an answer to `agent`, which has no open question.
fn no_question(c: &mut Conn, agent: &str) -> BoardResult<BoardError> {
    let prompt: Option<String> = c
        .opt("SELECT waiting FROM sessions WHERE id = $1", &[&agent])?
        .map(|r| col::<Option<String>>(&r, 0))
        .transpose()?
        .flatten();
    Ok(message_rules::no_question(agent, prompt.as_deref()))
}

/// Why `to` names no live session: it ended (say when), or it never existed.
fn no_recipient(c: &mut Conn, to: &str) -> BoardResult<BoardError> {
    let ended = c.opt(
        "SELECT ended_at, end_reason FROM sessions
         WHERE (id = $1 OR name = $1) AND ended_at IS NOT NULL
         ORDER BY started_at DESC LIMIT 1",
        &[&to],
    )?;
    let ended = ended
        .map(|r| Ok::<_, BoardError>((col(&r, 0)?, col(&r, 1)?)))
        .transpose()?;
    Ok(message_rules::no_recipient(to, ended))
}
