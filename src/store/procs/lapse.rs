//! Expired claims: the checks the sweep asks, and the lapse of one task's expired claim that
//! a refused holder write runs first (the sweep's own lapse is each backend's).

use crate::proto::error::BoardResult;
use crate::store::db::{get, Backend, Db};
use crate::store::lapse_rules::FOUND_LATE;
use crate::store::{EventKind, Events};

use super::tasks::reopen;

pub(in crate::store) fn earliest_expiry<B: Backend>(b: &B) -> BoardResult<Option<i64>> {
    b.read_with(|db| {
        let r = db.value::<Option<i64>>(
            "SELECT MIN(expires_ms) FROM claims WHERE ended_at IS NULL",
            &[],
        )?;
        Ok(r.flatten())
    })
}

pub(in crate::store) fn any_due<B: Backend>(b: &B, now_ms: i64) -> BoardResult<bool> {
    b.at(now_ms);
    b.read_with(|db| {
        let due = db.value(
            concat!(
                "SELECT EXISTS (SELECT 1 FROM claims WHERE ",
                live_expired!("board_now_ms()"),
                ")"
            ),
            &[],
        )?;
        Ok(due.unwrap_or(false))
    })
}

/// Lapses the live claim on `task` (only `holder`'s, when given) if its expiry passed on the
/// lease clock: ends it, reopens the task, appends the `lapse` event. `told` marks the claim
/// as reported to its holder (the refusal that found it says so). Returns the ended claim.
pub(in crate::store) fn lapse_expired(
    db: &mut impl Db,
    ev: &mut Events,
    task: i64,
    holder: Option<&str>,
    told: bool,
) -> BoardResult<Option<(String, i64)>> {
    let reason = FOUND_LATE;
    let ended = db.opt(
        concat!(
            "UPDATE claims SET ended_at = board_wall(), end_kind = ",
            crate::sql_end!(lapse),
            ", end_reason = $3, told = $4 WHERE task_id = $1 AND ",
            live_expired!("board_now_ms()"),
            " AND (CAST($2 AS text) IS NULL OR session_id = $2) RETURNING session_id, generation"
        ),
        &args![task, holder, reason, told],
    )?;
    let Some(r) = ended else {
        return Ok(None);
    };
    let (agent, generation): (String, i64) = (get(&r, 0)?, get(&r, 1)?);
    reopen(db, task)?;
    let lapse = EventKind::Lapse;
    db.emit(
        ev,
        lapse,
        Some(task),
        Some(&agent),
        Some(generation),
        reason,
    )?;
    Ok(Some((agent, generation)))
}

/// Ends every live claim for a new epoch (the store may have gone back in time, rule 8a),
/// with `why`: reopens their tasks and appends their `release` events.
pub(in crate::store) fn end_claims_for_epoch(
    db: &mut impl Db,
    ev: &mut Events,
    why: &str,
) -> BoardResult<()> {
    let ended = db.rows(
        concat!(
            "UPDATE claims SET ended_at = board_wall(), end_kind = ",
            crate::sql_end!(epoch),
            ", end_reason = $1, told = false
             WHERE ended_at IS NULL RETURNING task_id, session_id, generation"
        ),
        &args![why],
    )?;
    for r in &ended {
        let (task, agent, generation): (i64, String, i64) = (get(r, 0)?, get(r, 1)?, get(r, 2)?);
        reopen(db, task)?;
        let release = EventKind::Release;
        db.emit(ev, release, Some(task), Some(&agent), Some(generation), why)?;
    }
    Ok(())
}
