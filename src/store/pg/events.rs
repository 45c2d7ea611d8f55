//! Reading the append-only event log (PostgreSQL; see `store::events`).
//!
//! Write transactions run side by side (see the module docs of `pg`), so event ids commit out
//! of id order: a reader that saw id 7 may later see id 5 appear, committed by a slower
//! transaction (commanded/eventstore #3, Eventuous #222 hit exactly this). A reader asking
//! for `id > last` would miss it. So every read of the log stops at a **frontier**: the
//! highest id below which no transaction still running can add an event.
//!
//! Why the frontier is sound: every write transaction takes its transaction id (xid) before
//! it takes any event id (`Lock::sql`, `with_op`), and the sequence hands out ids in
//! increasing order. If id `h` is visible and a lower id `g` is not, `g` was taken before `h`
//! committed, so `g`'s transaction had its xid before this read's snapshot: it is one of the
//! snapshot's running transactions (all below the snapshot's `xmax`), or it rolled back.
//! Once the server's oldest running transaction (`pg_snapshot_xmin`) is past that `xmax`, each
//! of them has ended: `g` is visible by then or never will be. An id visible right after the
//! frontier extends it at once; a gap waits for that proof, about one more read.

use super::{col, event_rows, Conn, PgStore};
use crate::proto::error::BoardResult;
use crate::proto::EventView;
use crate::store::TaskId;

/// How far the log is settled, shared by a board's pool.
#[derive(Debug, Default)]
pub(super) struct Frontier {
    /// Every event id ≤ this is visible or will never exist.
    safe: i64,
    /// Ids up to `.0` become settled once the server's oldest running transaction is at or
    /// past `.1` (the `xmax` of the read that saw them): (id, xid).
    pending: Option<(i64, i64)>,
    /// The first settle of this process has run (it starts from the sequence).
    started: bool,
}

impl Frontier {
    /// Advances the frontier with one read: `ids` (ascending, all > `safe`), seen in a snapshot
    /// with `xmin` and `xmax`.
    fn advance(&mut self, ids: &[i64], xmin: i64, xmax: i64) {
        if let Some((upto, after)) = self.pending {
            if xmin >= after {
                self.safe = self.safe.max(upto);
                self.pending = None;
            }
        }
        let newest = ids.last().copied().unwrap_or(self.safe);
        if xmin == xmax {
            // Nothing is running: whatever is not visible never will be.
            self.safe = self.safe.max(newest);
            self.pending = None;
            return;
        }
        for &id in ids {
            if id == self.safe + 1 {
                self.safe = id;
            } else if id > self.safe {
                break;
            }
        }
        if matches!(self.pending, Some((upto, _)) if upto <= self.safe) {
            self.pending = None;
        }
        if newest > self.safe && self.pending.is_none() {
            self.pending = Some((newest, xmax));
        }
    }

    /// A gap waits to be settled: a reader should look again shortly even if nothing wakes it.
    fn waiting(&self) -> bool {
        self.pending.is_some()
    }
}

/// The newest event id, then the running transactions' bounds, in two statements in this
/// order: every id up to the first was taken by a transaction with an xid below the second's
/// `xmax` (see the module docs). (id, xmax).
fn start(c: &mut Conn) -> BoardResult<(i64, i64)> {
    let r = c.one(
        "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM events_id_seq",
        &[],
    )?;
    let last: i64 = col(&r, 0)?;
    let (_, xmax) = snapshot(c)?;
    Ok((last, xmax))
}

/// The current snapshot's oldest running transaction and first unassigned one: (xmin, xmax).
fn snapshot(c: &mut Conn) -> BoardResult<(i64, i64)> {
    let r = c.one(
        "SELECT pg_snapshot_xmin(s)::text::bigint, pg_snapshot_xmax(s)::text::bigint
         FROM pg_current_snapshot() s",
        &[],
    )?;
    Ok((col(&r, 0)?, col(&r, 1)?))
}

impl PgStore {
    /// Moves the shared frontier as far as the log allows now; returns it.
    fn settle(&self, c: &mut Conn) -> BoardResult<i64> {
        let mut f = self
            .shared
            .frontier
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if !f.started {
            let (last, xmax) = start(c)?;
            f.pending = Some((last, xmax));
            f.started = true;
        }
        // One statement: the ids and the snapshot they were read in.
        let rows = c.rows(
            "SELECT pg_snapshot_xmin(s)::text::bigint, pg_snapshot_xmax(s)::text::bigint,
                    ARRAY(SELECT id FROM events WHERE id > $1 ORDER BY id LIMIT 10000)
             FROM pg_current_snapshot() s",
            &[&f.safe],
        )?;
        let r = rows.first().ok_or_else(|| {
            crate::proto::error::BoardError::internal("PostgreSQL store: no snapshot row")
        })?;
        let (xmin, xmax): (i64, i64) = (col(r, 0)?, col(r, 1)?);
        let ids: Vec<i64> = col(r, 2)?;
        f.advance(&ids, xmin, xmax);
        Ok(f.safe)
    }

    /// Whether a gap in the log waits to be settled (see [`Frontier`]).
    pub(in crate::store) fn events_waiting(&self) -> bool {
        self.shared
            .frontier
            .lock()
            .map(|f| f.waiting())
            .unwrap_or(false)
    }

    pub(in crate::store) fn last_event_id(&self) -> BoardResult<i64> {
        self.read(|c| self.settle(c))
    }

    pub(in crate::store) fn events(&self, after: i64, limit: i64) -> BoardResult<Vec<EventView>> {
        self.read(|c| {
            let safe = self.settle(c)?;
            event_rows(&c.rows(
                "SELECT id, at, kind, task_id, session_id, generation, reason FROM events
                 WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3",
                &[&after, &safe, &limit],
            )?)
        })
    }

    pub(in crate::store) fn recent_events(&self, limit: i64) -> BoardResult<Vec<EventView>> {
        self.read(|c| {
            let safe = self.settle(c)?;
            event_rows(&c.rows(
                "SELECT * FROM (SELECT id, at, kind, task_id, session_id, generation, reason
                 FROM events WHERE id <= $2 ORDER BY id DESC LIMIT $1) e ORDER BY id",
                &[&limit, &safe],
            )?)
        })
    }

    pub(in crate::store) fn task_events(&self, task: TaskId) -> BoardResult<Vec<EventView>> {
        self.read(|c| {
            event_rows(&c.rows(
                "SELECT id, at, kind, task_id, session_id, generation, reason FROM events
                 WHERE task_id = $1 ORDER BY id",
                &[&task],
            )?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Frontier;

    fn frontier(safe: i64) -> Frontier {
        Frontier {
            safe,
            pending: None,
            started: true,
        }
    }

    #[test]
    fn consecutive_ids_settle_at_once() {
        let mut f = frontier(4);
        f.advance(&[5, 6, 7], 100, 103);
        assert_eq!(f.safe, 7);
        assert!(!f.waiting());
    }

    #[test]
    fn an_id_after_a_gap_waits_until_the_transactions_running_then_ended() {
        let mut f = frontier(4);
        // 5 is missing: its transaction may still be running (xids 100..103).
        f.advance(&[6, 7], 100, 103);
        assert_eq!(f.safe, 4);
        assert!(f.waiting());
        // Still running: nothing moves.
        f.advance(&[6, 7, 8], 101, 104);
        assert_eq!(f.safe, 4);
        // 5 committed: the ids extend the frontier without waiting.
        f.advance(&[5, 6, 7, 8], 101, 105);
        assert_eq!(f.safe, 8);
        assert!(!f.waiting());
    }

    #[test]
    fn a_gap_left_by_a_rolled_back_transaction_is_passed_once_its_contemporaries_ended() {
        let mut f = frontier(4);
        f.advance(&[6, 7], 100, 103);
        assert_eq!(f.safe, 4);
        // Every transaction that ran at the first read has ended; 5 never appeared.
        f.advance(&[6, 7, 9], 103, 110);
        assert_eq!(f.safe, 7, "5 is gone for good; 8 may still come");
        assert!(f.waiting());
        f.advance(&[9], 110, 112);
        assert_eq!(f.safe, 9);
        assert!(!f.waiting());
    }

    #[test]
    fn with_nothing_running_every_visible_id_is_settled() {
        let mut f = frontier(4);
        f.advance(&[6, 9], 120, 120);
        assert_eq!(f.safe, 9);
        assert!(!f.waiting());
    }

    #[test]
    fn a_new_process_starts_below_the_sequence_and_settles_it_after_one_round() {
        let mut f = Frontier {
            safe: 0,
            pending: Some((40, 200)),
            started: true,
        };
        f.advance(&[1, 2, 5, 40, 41], 150, 210);
        assert_eq!(f.safe, 2);
        f.advance(&[5, 40, 41, 42], 200, 215);
        assert_eq!(f.safe, 42);
    }
}
