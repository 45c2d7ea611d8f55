//! Claims on PostgreSQL: the grant statements and the renewals (the rest is
//! `store::procs::claims`). Leases are computed with the server's clock: of the caller's
//! `now_ms` and `expires_ms` only the lease length counts.

use super::{col, Conn};
use crate::proto::error::BoardResult;
use crate::proto::EventView;
use crate::store::db::Ask;
use crate::store::procs::{claim_info, explain_claim_refusal};
use crate::store::{ClaimInfo, EventKind, Events, TaskState};

/// The grant of a named task: its row is locked `FOR UPDATE` (a racing grant's lock is waited
/// for, then its result seen), its generation incremented (lifted above the floor of a new
/// epoch first), the claim row and the `grant` event inserted, in one statement. `$1` the task,
/// `$2` the agent, `$3` the lease (ms), `$4` the event kind, `$5` its reason. The grant of the
/// best ready task is the server function `board_grant_next` (`FOR UPDATE SKIP LOCKED`, in
/// `migrations/postgres/0004_claim_and_done_in_one_round_trip.sql`), which one-round-trip
/// claims share.
const GRANT_NAMED: &str = concat!(
    "WITH g AS (
         UPDATE tasks SET state = ", crate::sql_state!(claimed), ", updated_at = board_wall(),
             generation = GREATEST(generation,
                 COALESCE((SELECT MAX(value::bigint) FROM meta WHERE key = 'generation_floor'), 0)) + 1
         WHERE id = (
             SELECT t.id FROM tasks t WHERE t.id = $1 AND ", ready!("t"), " AND ", meant_for_ok!("t", "$2"), " FOR UPDATE)
           AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = $2 AND s.ended_at IS NULL)
         RETURNING id, generation),
     c AS (
         INSERT INTO claims (task_id, session_id, generation, granted_at, expires_ms)
         SELECT id, $2, generation, board_wall(), board_now_ms() + $3 FROM g
         RETURNING task_id, generation, expires_ms),
     e AS (
         INSERT INTO events (at, kind, task_id, session_id, generation, reason)
         SELECT board_wall(), $4, task_id, $2, generation, $5 FROM c
         RETURNING id, at)
     SELECT c.task_id, c.generation, c.expires_ms, e.id, e.at FROM c, e"
);

/// The grant of the best ready task carrying label `$6` (`claim --label`; the one-round-trip
/// `board_grant_next` takes any label), with the parameters of [`GRANT_NAMED`] (`$1` unused).
const GRANT_LABELLED: &str = concat!(
    "WITH g AS (
         UPDATE tasks SET state = ", crate::sql_state!(claimed), ", updated_at = board_wall(),
             generation = GREATEST(generation,
                 COALESCE((SELECT MAX(value::bigint) FROM meta WHERE key = 'generation_floor'), 0)) + 1
         WHERE id = (
             SELECT t.id FROM tasks t WHERE $1::bigint IS NULL AND ", ready!("t"), "
               AND ", meant_for_ok!("t", "$2"), "
               AND strpos(',' || t.labels || ',', ',' || $6::text || ',') > 0
             ORDER BY t.priority DESC, t.id ASC LIMIT 1 FOR UPDATE SKIP LOCKED)
           AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = $2 AND s.ended_at IS NULL)
         RETURNING id, generation),
     c AS (
         INSERT INTO claims (task_id, session_id, generation, granted_at, expires_ms)
         SELECT id, $2, generation, board_wall(), board_now_ms() + $3 FROM g
         RETURNING task_id, generation, expires_ms),
     e AS (
         INSERT INTO events (at, kind, task_id, session_id, generation, reason)
         SELECT board_wall(), $4, task_id, $2, generation, $5 FROM c
         RETURNING id, at)
     SELECT c.task_id, c.generation, c.expires_ms, e.id, e.at FROM c, e"
);

/// The grant of the best ready task carrying any label: the server function (see
/// [`GRANT_NAMED`]).
const GRANT_NEXT: &str =
    "SELECT granted_task, granted_generation, granted_expires_ms, event_id, event_at
     FROM board_grant_next($1, $2)";

/// The one statement that grants `agent` a claim (see [`crate::store::db::Db::grant`]), and its
/// `grant` event on `ev`.
pub(super) fn grant(c: &mut Conn, ev: &mut Events, ask: &Ask<'_>) -> BoardResult<ClaimInfo> {
    let Ask {
        agent,
        task,
        label,
        lease,
    } = *ask;
    let (kind, reason) = (EventKind::Grant.as_str(), TaskState::Claimed.as_str());
    let granted = match (task, label) {
        (Some(id), _) => c.opt(GRANT_NAMED, &[&id, &agent, &lease, &kind, &reason])?,
        (None, Some(_)) => c.opt(
            GRANT_LABELLED,
            &[&task, &agent, &lease, &kind, &reason, &label],
        )?,
        (None, None) => c.opt(GRANT_NEXT, &[&agent, &lease])?,
    };
    let Some(r) = granted else {
        return Err(explain_claim_refusal(c, agent, task)?);
    };
    let claim = claim_info(&r)?;
    ev.push(EventView {
        id: col(&r, 3)?,
        at: col(&r, 4)?,
        kind: EventKind::Grant,
        task: Some(claim.task),
        agent: Some(agent.to_string()),
        generation: Some(claim.generation),
        reason: Some(reason.to_string()),
    });
    Ok(claim)
}

/// The renewal of many agents' live, unexpired claims (and their `last_seen_at`), one
/// statement: those that had a claim to renew, in the order asked.
pub(super) fn renew_many(c: &mut Conn, agents: &[&str], lease: i64) -> BoardResult<Vec<String>> {
    let list: Vec<&str> = agents.to_vec();
    let rows = c.rows(
        concat!(
            "WITH seen AS (
                 UPDATE sessions SET last_seen_at = board_wall()
                 WHERE id = ANY($1) AND ended_at IS NULL),
             r AS (
                 UPDATE claims SET expires_ms = board_now_ms() + $2
                 WHERE session_id = ANY($1) AND ",
            live_unexpired!("board_now_ms()"),
            " RETURNING session_id)
             SELECT DISTINCT session_id FROM r"
        ),
        &[&list, &lease],
    )?;
    let got: Vec<String> = rows.iter().map(|r| col(r, 0)).collect::<BoardResult<_>>()?;
    Ok(agents
        .iter()
        .filter(|a| got.iter().any(|g| g == *a))
        .map(|a| a.to_string())
        .collect())
}

/// The renewal of one agent's live, unexpired claims (and its `last_seen_at`), one statement.
pub(super) fn renew(c: &mut Conn, agent: &str, lease: i64) -> BoardResult<Vec<ClaimInfo>> {
    let rows = c.rows(
        concat!(
            "WITH seen AS (
                 UPDATE sessions SET last_seen_at = board_wall() WHERE id = $1 AND ended_at IS NULL)
             UPDATE claims SET expires_ms = board_now_ms() + $2 WHERE session_id = $1 AND ",
            live_unexpired!("board_now_ms()"),
            " RETURNING task_id, generation, expires_ms"
        ),
        &[&agent, &lease],
    )?;
    rows.iter().map(|r| claim_info(r)).collect()
}
