//! Messages between agent sessions and operators (`board send`, `board inbox`).

use rusqlite::{params, OptionalExtension};

use super::message_rules;
use super::{check_text, emit, now_wall, EventKind, Events, SqliteStore, MAX_TEXT, OPERATOR};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::MessageView;

/// Answer of a successful `send`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    /// The stored message.
    pub message: MessageView,
    /// The message was an answer and the recipient was waiting: its wait ended.
    pub ended_wait: bool,
    /// The recipient's tmux pane, when it runs in one (where an answer can also be typed).
    pub pane: Option<String>,
}

/// What the recipient has not read yet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unread {
    /// How many unread messages.
    pub count: i64,
    /// Their senders, each once, oldest first.
    pub from: Vec<String>,
}

impl SqliteStore {
    pub(super) fn send(
        &mut self,
        from: &str,
        to: &str,
        text: &str,
        answer: bool,
    ) -> BoardResult<(Sent, Events)> {
        check_text("message", text, MAX_TEXT, false)?;
        self.tx(|tx, ev| {
            let recipient = if to == OPERATOR {
                OPERATOR.to_string()
            } else {
                let mut st = tx.prepare(
                    "SELECT id FROM sessions WHERE ended_at IS NULL AND (id = ?1 OR name = ?1)
                     ORDER BY name = ?1 DESC, started_at",
                )?;
                let ids: Vec<String> = st
                    .query_map([to], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                match message_rules::pick_recipient(&ids) {
                    Some(id) => id,
                    None => return Err(no_recipient(tx, to)?),
                }
            };
            let sent_at = now_wall();
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
            let to_agent = (recipient != OPERATOR).then_some(recipient.as_str());
            let ended_wait = answer
                && to_agent.is_some()
                && tx.execute(
                    "UPDATE sessions SET waiting = NULL
                     WHERE id = ?1 AND ended_at IS NULL AND waiting IS NOT NULL",
                    [&recipient],
                )? == 1;
            if ended_wait {
                emit(
                    tx,
                    ev,
                    EventKind::Resume,
                    None,
                    to_agent,
                    None,
                    &format!("answered by {}", names.0),
                )?;
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
                ended_wait,
            })
        })
    }

    pub(super) fn inbox(&mut self, recipient: &str) -> BoardResult<Vec<MessageView>> {
        let (mut out, _) = self.tx(|tx, _| {
            let mut st = tx.prepare(
                "UPDATE messages SET read_at = ?2 WHERE recipient = ?1 AND read_at IS NULL
                 RETURNING id, sender, recipient, text, sent_at, answer",
            )?;
            let rows = st.query_map(params![recipient, now_wall()], |r| {
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

    pub(super) fn unread(&self, recipient: &str) -> BoardResult<Unread> {
        let mut st = self.conn.prepare_cached(
            "SELECT sender FROM messages WHERE recipient = ?1 AND read_at IS NULL ORDER BY id",
        )?;
        let senders: Vec<String> = st
            .query_map([recipient], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(message_rules::unread_of(senders))
    }
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
