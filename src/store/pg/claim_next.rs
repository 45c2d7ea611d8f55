//! The claim of the best ready task with its `op_id` answer in one round trip (PostgreSQL): the
//! server function `board_claim_next` (`migrations/postgres/0002_claim_in_one_round_trip.sql`)
//! is the whole transaction, so the request costs one statement instead of the ten or so of the
//! general path (begin, op lookup, savepoint and lock, grant, task view, release, saved answer,
//! commit, lost claims, unread messages).

use super::op_results::saved_twice;
use super::transactions::WRITE_LOCK;
use super::{col, retryable, PgStore, RETRIES};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::results::ClaimResult;
use crate::proto::EventView;
use crate::store::message_rules::unread_of;
use crate::store::op_results::decode;
use crate::store::{ClaimAtOnce, EventKind, TaskState};

impl PgStore {
    pub(in crate::store) fn claim_next_at_once(
        &mut self,
        identity: &str,
        op_id: &str,
        agent: &str,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<Option<ClaimAtOnce>> {
        self.at(now_ms);
        let lease = expires_ms - now_ms;
        let mut attempt = 0;
        let row = loop {
            // As a read: on a connection the server dropped it runs once more on a new one,
            // which is safe for this write too: a first attempt that did commit is found by
            // its op_id and answered as saved.
            let r = self.read(|c| {
                c.opt(
                    "SELECT out_saved, out_event_id, out_event_at, out_task, out_generation,
                            out_lost, out_unread
                     FROM board_claim_next($1, $2, $3, $4, $5)",
                    &[&identity, &op_id, &agent, &lease, &WRITE_LOCK],
                )
            });
            match r {
                Err(e) if attempt < RETRIES && (retryable(&e) || saved_twice(&e)) => attempt += 1,
                other => break other?,
            }
        };
        let Some(r) = row else {
            return Ok(None);
        };
        let saved: String = col(&r, 0)?;
        let granted: Option<i64> = col(&r, 1)?;
        let answer = match granted {
            Some(_) => decode(&saved).and_then(checked),
            // An earlier attempt's answer, as saved.
            None => decode(&saved),
        };
        let mut events = Vec::new();
        if let Some(id) = granted {
            let at: String = col(&r, 2)?;
            self.hwm().wrote(id, &at);
            events.push(EventView {
                id,
                at,
                kind: EventKind::Grant,
                task: col(&r, 3)?,
                agent: Some(agent.to_string()),
                generation: col(&r, 4)?,
                reason: Some(TaskState::Claimed.as_str().to_string()),
            });
        }
        Ok(Some(ClaimAtOnce {
            answer,
            events,
            lost_waiting: col(&r, 5)?,
            unread: unread_of(col(&r, 6)?),
        }))
    }
}

/// A `claim` answer made by the server function is what the board's own types would make: a
/// field it lacks or adds is an internal error (it would otherwise reach the agent).
fn checked(v: serde_json::Value) -> BoardResult<serde_json::Value> {
    let typed: ClaimResult = serde_json::from_value(v).map_err(|e| {
        BoardError::internal(format!(
            "PostgreSQL store: a claim answer of the server: {e}"
        ))
    })?;
    serde_json::to_value(typed)
        .map_err(|e| BoardError::internal(format!("PostgreSQL store: a claim answer: {e}")))
}
