//! Messages between agent sessions and operators (PostgreSQL; see `store::messages`).

use super::{col, emit, Conn, PgStore};
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::MessageView;
use crate::store::{check_text, EventKind, Events, Sent, Unread, MAX_TEXT, OPERATOR};

impl PgStore {
    pub(in crate::store) fn send(
        &mut self,
        from: &str,
        to: &str,
        text: &str,
        answer: bool,
    ) -> BoardResult<(Sent, Events)> {
        check_text("message", text, MAX_TEXT, false)?;
        self.tx(|c, ev| {
            let recipient = if to == OPERATOR {
                OPERATOR.to_string()
            } else {
                let ids: Vec<String> = c
                    .rows(
                        "SELECT id FROM sessions WHERE ended_at IS NULL AND (id = $1 OR name = $1)
                         ORDER BY id = $1 DESC, started_at",
                        &[&to],
                    )?
                    .iter()
                    .map(|r| col(r, 0))
                    .collect::<BoardResult<_>>()?;
                match ids.as_slice() {
                    [] => return Err(no_recipient(c, to)?),
                    [one] => one.clone(),
                    [first, ..] if first == to => first.clone(),
                    several => {
                        return Err(BoardError::usage(format!(
                        "{} live agent sessions are named {to:?} ({}): send to one of these ids",
                        several.len(),
                        several.join(", ")
                    )))
                    }
                }
            };
            let r = c.one(
                "INSERT INTO messages (sender, recipient, text, sent_at, answer)
                 VALUES ($1, $2, $3, board_wall(), $4) RETURNING id, sent_at",
                &[&from, &recipient, &text, &answer],
            )?;
            let (id, sent_at): (i64, String) = (col(&r, 0)?, col(&r, 1)?);
            let sender_agent = (from != OPERATOR).then_some(from);
            let to_agent = (recipient != OPERATOR).then_some(recipient.as_str());
            emit(
                c,
                ev,
                EventKind::Message,
                None,
                to_agent.or(sender_agent),
                None,
                &format!("{from} → {recipient}: {text}"),
            )?;
            let ended_wait = answer
                && to_agent.is_some()
                && c.exec(
                    "UPDATE sessions SET waiting = NULL
                     WHERE id = $1 AND ended_at IS NULL AND waiting IS NOT NULL",
                    &[&recipient],
                )? == 1;
            if ended_wait {
                emit(
                    c,
                    ev,
                    EventKind::Resume,
                    None,
                    to_agent,
                    None,
                    &format!("answered by {from}"),
                )?;
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
                ended_wait,
            })
        })
    }

    pub(in crate::store) fn inbox(&mut self, recipient: &str) -> BoardResult<Vec<MessageView>> {
        let (mut out, _) = self.tx(|c, _| {
            c.rows(
                "UPDATE messages SET read_at = board_wall() WHERE recipient = $1 AND read_at IS NULL
                 RETURNING id, sender, recipient, text, sent_at, answer",
                &[&recipient],
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
        let mut from: Vec<String> = Vec::new();
        for s in &senders {
            if !from.contains(s) {
                from.push(s.clone());
            }
        }
        Ok(Unread {
            count: senders.len() as i64,
            from,
        })
    }
}

/// Why `to` names no live session: it ended (say when), or it never existed.
fn no_recipient(c: &mut Conn, to: &str) -> BoardResult<BoardError> {
    let shown: String = to.chars().take(64).collect();
    let ended = c.opt(
        "SELECT ended_at, end_reason FROM sessions
         WHERE (id = $1 OR name = $1) AND ended_at IS NOT NULL
         ORDER BY started_at DESC LIMIT 1",
        &[&to],
    )?;
    Ok(match ended {
        Some(r) => {
            let (at, reason): (String, Option<String>) = (col(&r, 0)?, col(&r, 1)?);
            BoardError::new(
                ErrorKind::NotFound,
                format!(
                    "agent session {shown:?} ended at {at} ({}); nobody reads its messages",
                    reason.unwrap_or_default()
                ),
            )
        }
        None => BoardError::not_found(format!(
            "no live agent session {shown:?} (`board agents` lists them)"
        )),
    }
    .with("to", shown))
}
