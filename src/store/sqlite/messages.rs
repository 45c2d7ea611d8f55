//! Messages between agent sessions and operators (`board send`, `board inbox`).

use rusqlite::{params, OptionalExtension};

use super::message_rules::{self, Reply};
use super::{check_text, emit, now_wall, EventKind, Events, SqliteStore, MAX_TEXT, OPERATOR};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::MessageView;
use crate::store::{Sent, Unread};

impl SqliteStore {
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
        self.tx(|tx, ev| {
            let recipient = recipient_of(tx, to)?;
            message_rules::check_reply(reply, from, &recipient)?;
            let to_agent = (recipient != OPERATOR).then_some(recipient.as_str());
            let question = match (reply, to_agent) {
                (Reply::No, _) | (_, None) => None,
                (_, Some(agent)) => end_question(tx, agent)?,
            };
            if reply == Reply::Question && question.is_none() {
                return Err(no_question(tx, &recipient)?);
            }
            let ended_prompt = reply == Reply::Any
                && to_agent.is_some()
                && tx.execute(
                    "UPDATE sessions SET waiting = NULL
                     WHERE id = ?1 AND ended_at IS NULL AND waiting IS NOT NULL",
                    [&recipient],
                )? == 1;
            let sent_at = now_wall();
            let answer = reply != Reply::No;
            let id: i64 = tx.query_row(
                "INSERT INTO messages (sender, recipient, text, sent_at, answer)
                 VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
                params![from, recipient, text, sent_at, answer],
                |r| r.get(0),
            )?;
            let names: (String, String) = tx.query_row(
                "SELECT COALESCE((SELECT name FROM sessions WHERE id = ?1), ?1),
                        COALESCE((SELECT name FROM sessions WHERE id = ?2), ?2)",
                params![from, recipient],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let (about, said) =
                message_rules::message_event(from, &recipient, (&names.0, &names.1), text);
            emit(tx, ev, EventKind::Message, None, about, None, &said)?;
            if question.is_some() {
                emit(tx, ev, EventKind::Answer, None, to_agent, None, text)?;
            }
            if ended_prompt {
                let said = format!("answered by {}", names.0);
                emit(tx, ev, EventKind::Resume, None, to_agent, None, &said)?;
            }
            let pane: Option<String> = tx
                .query_row(
                    "SELECT pane_id FROM sessions WHERE id = ?1",
                    [&recipient],
                    |r| r.get(0),
                )
                .optional()?
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
        let (mut out, _) = self.tx(|tx, _| {
            let mut st = tx.prepare(
                "UPDATE messages SET read_at = ?2
                 WHERE recipient = ?1 AND read_at IS NULL AND (answer = 1 OR NOT ?3)
                 RETURNING id, sender, recipient, text, sent_at, answer",
            )?;
            let rows = st.query_map(params![recipient, now_wall(), answers_only], |r| {
                Ok(MessageView {
                    id: r.get(0)?,
                    from: r.get(1)?,
                    to: r.get(2)?,
                    text: r.get(3)?,
                    sent_at: r.get(4)?,
                    answer: r.get(5)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })?;
        out.sort_by_key(|m| m.id);
        Ok(out)
    }

    pub(in crate::store) fn unread(&self, recipient: &str) -> BoardResult<Unread> {
        let mut st = self.conn.prepare_cached(
            "SELECT sender FROM messages WHERE recipient = ?1 AND read_at IS NULL ORDER BY id",
        )?;
        let senders: Vec<String> = st
            .query_map([recipient], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(message_rules::unread_of(senders))
    }
}

/// The live session `to` names (its id, or the name one live session has), or `operator`.
/// Errors: see [`message_rules::pick_recipient`] and [`message_rules::no_recipient`].
fn recipient_of(tx: &rusqlite::Connection, to: &str) -> BoardResult<String> {
    if to == OPERATOR {
        return Ok(OPERATOR.to_string());
    }
    let mut st = tx.prepare(
        "SELECT id FROM sessions WHERE ended_at IS NULL AND (id = ?1 OR name = ?1)
         ORDER BY name = ?1 DESC, started_at",
    )?;
    let ids: Vec<String> = st
        .query_map([to], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    match message_rules::pick_recipient(&ids) {
        Some(id) => Ok(id),
        None => Err(no_recipient(tx, to)?),
    }
}

/// Ends the open question of live session `agent`; returns it, or None when it had none.
/// SQLite's RETURNING shows the row after the update only: the question is read first, and the
/// UPDATE, conditional on that very question still being open, decides (inside the writer's
/// `BEGIN IMMEDIATE`, nothing can change it between the two).
fn end_question(tx: &rusqlite::Connection, agent: &str) -> BoardResult<Option<String>> {
    let asked: Option<String> = tx
        .query_row(
            "SELECT question FROM sessions
             WHERE id = ?1 AND ended_at IS NULL AND question IS NOT NULL",
            [agent],
            |r| r.get(0),
        )
        .optional()?;
    let Some(asked) = asked else {
        return Ok(None);
    };
    let n = tx.execute(
        "UPDATE sessions SET question = NULL
         WHERE id = ?1 AND ended_at IS NULL AND question IS ?2",
        params![agent, asked],
    )?;
    Ok((n == 1).then_some(asked))
}

/// The refusal of an answer to `agent`, which has no open question (say what it waits for
/// instead, if anything).
fn no_question(tx: &rusqlite::Connection, agent: &str) -> BoardResult<BoardError> {
    let prompt: Option<String> = tx
        .query_row("SELECT waiting FROM sessions WHERE id = ?1", [agent], |r| {
            r.get(0)
        })
        .optional()?
        .flatten();
    Ok(message_rules::no_question(agent, prompt.as_deref()))
}

/// Why `to` names no live session: it ended (say when), or it never existed.
fn no_recipient(tx: &rusqlite::Connection, to: &str) -> BoardResult<BoardError> {
    let ended: Option<(String, Option<String>)> = tx
        .query_row(
            "SELECT ended_at, end_reason FROM sessions
             WHERE (id = ?1 OR name = ?1) AND ended_at IS NOT NULL
             ORDER BY started_at DESC LIMIT 1",
            [to],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    Ok(message_rules::no_recipient(to, ended))
}
