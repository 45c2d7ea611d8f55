//! An agent's `claim` of the best ready task and its `done` (without a note), each with its
//! `op_id` answer, in one round trip (PostgreSQL): the server functions `board_claim_next` and
//! `board_done_at_once` (`migrations/postgres/0004_claim_and_done_in_one_round_trip.sql`) are
//! the whole transaction, so the request costs one statement instead of the ten or so of the
//! general path (begin, op lookup, savepoint and lock, the write, the task view, release, saved
//! answer, commit, lost claims, unread messages).

use postgres::Row;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::op_results::{outcome_unknown, saved_twice};
use super::transactions::WRITE_LOCK;
use super::{col, retryable, Params, PgStore, RETRIES};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::methods::{ClaimResult, DoneResult};
use crate::proto::EventView;
use crate::store::answers::decode;
use crate::store::message_rules::unread_of;
use crate::store::{AtOnce, ClaimEnd, EventKind, Generation, Lease, TaskId, TaskState};

/// Which write a row of a server function answered: the event it appended and the typed answer
/// the JSON it made must parse as.
#[derive(Clone, Copy)]
enum Write {
    Claim,
    Done,
}

impl PgStore {
    pub(in crate::store) fn claim_next_at_once(
        &mut self,
        identity: &str,
        op_id: &str,
        agent: &str,
        lease: Lease,
    ) -> BoardResult<Option<AtOnce>> {
        self.at(lease.now_ms);
        let lease = lease.length_ms();
        let row = self.at_once(
            op_id,
            "SELECT out_saved, out_event_id, out_event_at, out_task, out_generation,
                    out_lost, out_unread
             FROM board_claim_next($1, $2, $3, $4, $5)",
            &[&identity, &op_id, &agent, &lease, &WRITE_LOCK],
        )?;
        row.map(|r| answered(self, &r, agent, Write::Claim))
            .transpose()
    }

    pub(in crate::store) fn done_at_once(
        &mut self,
        identity: &str,
        op_id: &str,
        agent: &str,
        task: TaskId,
        generation: Option<Generation>,
        now_ms: i64,
    ) -> BoardResult<Option<AtOnce>> {
        self.at(now_ms);
        let row = self.at_once(
            op_id,
            "SELECT out_saved, out_event_id, out_event_at, $4::bigint, out_generation,
                    out_lost, out_unread
             FROM board_done_at_once($1, $2, $3, $4, $5, $6)",
            &[&identity, &op_id, &agent, &task, &generation, &WRITE_LOCK],
        )?;
        row.map(|r| answered(self, &r, agent, Write::Done))
            .transpose()
    }

    /// Runs one server function's statement, again after a deadlock, a serialization failure
    /// or a racing attempt that saved its answer first.
    fn at_once(
        &mut self,
        op_id: &str,
        sql: &'static str,
        params: Params,
    ) -> BoardResult<Option<Row>> {
        let mut attempt = 0;
        loop {
            // As a read: on a connection the server dropped it runs once more on a new one,
            // which is safe for these writes too: a first attempt that did commit is found by
            // its op_id and answered as saved.
            // Whether the statement went out on a connection: a write the server may have
            // committed whatever answer comes back (or none).
            let sent = std::cell::Cell::new(false);
            let out = self.read(|c| {
                sent.set(true);
                c.opt(sql, params)
            });
            match out {
                Err(e) if attempt < RETRIES && (retryable(&e) || saved_twice(&e)) => attempt += 1,
                Err(e) if sent.get() => return Err(outcome_unknown(e, op_id)),
                other => return other,
            }
        }
    }
}

/// A row `(saved, event id, event at, task, generation, lost, unread)` as what the board needs.
fn answered(store: &PgStore, r: &Row, agent: &str, write: Write) -> BoardResult<AtOnce> {
    let saved: String = col(r, 0)?;
    let written: Option<i64> = col(r, 1)?;
    let answer = match (written, write) {
        (Some(_), Write::Claim) => decode(&saved).and_then(checked::<ClaimResult>),
        (Some(_), Write::Done) => decode(&saved).and_then(checked::<DoneResult>),
        // An earlier attempt's answer, as saved.
        (None, _) => decode(&saved),
    };
    let mut events = Vec::new();
    if let Some(id) = written {
        let at: String = col(r, 2)?;
        store.hwm().wrote(id, &at);
        let (kind, reason) = match write {
            Write::Claim => (EventKind::Grant, TaskState::Claimed.as_str()),
            Write::Done => (EventKind::Done, ClaimEnd::Done.as_str()),
        };
        events.push(EventView {
            id,
            at,
            kind,
            task: col(r, 3)?,
            agent: Some(agent.to_string()),
            generation: col(r, 4)?,
            reason: Some(reason.to_string()),
        });
    }
    Ok(AtOnce {
        answer,
        events,
        lost_waiting: col(r, 5)?,
        unread: unread_of(col(r, 6)?),
    })
}

/// An answer made by a server function is what the board's own type `T` would make: a field
/// it lacks or adds is an internal error (it would otherwise reach the agent). Checked on every
/// answer, not only in tests: the functions are whatever the newest board that migrated the
/// shared store installed, and hosts may run different board versions.
fn checked<T: DeserializeOwned + Serialize>(
    v: serde_json::Value,
) -> BoardResult<serde_json::Value> {
    let typed: T = serde_json::from_value(v).map_err(|e| {
        BoardError::internal(format!("PostgreSQL store: an answer of the server: {e}"))
    })?;
    serde_json::to_value(typed)
        .map_err(|e| BoardError::internal(format!("PostgreSQL store: an answer: {e}")))
}
