//! Agent sessions (see [`crate::store::Store`]'s sessions part): attachment, waiting,
//! questions, idleness, and the rows the board reads back.

use crate::proto::error::BoardResult;
use crate::proto::SessionView;
use crate::store::db::{get, Backend, Db, Lock, Row};
use crate::store::session_rules::{self, session_base_name};
use crate::store::{check_text, AgentState, EventKind, Events, SessionRow, Store, MAX_TEXT};

/// The columns of a [`SessionRow`], in [`session_row`]'s order, then `$tail`.
macro_rules! session_row_sql {
    ($($tail:tt)+) => {
        concat!(
            "SELECT id, token_hash, boot_id, launcher_pid, launcher_start, pid, pid_start,
                    pane_id, pane_pid, pane_start, waiting, ended_at, idle_since, question
               FROM sessions ",
            $($tail)+
        )
    };
}

/// A row of [`session_row_sql!`].
pub(in crate::store) fn session_row(r: &dyn Row) -> BoardResult<SessionRow> {
    Ok(SessionRow {
        id: get(r, 0)?,
        token_hash: get(r, 1)?,
        boot_id: get(r, 2)?,
        launcher: session_rules::pid_pair(get(r, 3)?, get(r, 4)?),
        agent: session_rules::pid_pair(get(r, 5)?, get(r, 6)?),
        pane: session_rules::pane_triple(get(r, 7)?, get(r, 8)?, get(r, 9)?),
        waiting: get(r, 10)?,
        ended_at: get(r, 11)?,
        idle_since: get(r, 12)?,
        question: get(r, 13)?,
    })
}

/// The rows of `sql` (a [`session_row_sql!`]) as sessions.
pub(in crate::store) fn session_rows(
    db: &mut impl Db,
    sql: &'static str,
    args: &[crate::store::db::Arg<'_>],
) -> BoardResult<Vec<SessionRow>> {
    db.rows(sql, args)?.iter().map(|r| session_row(r)).collect()
}

pub(in crate::store) fn register_session<B: Store>(
    b: &mut B,
    name: &str,
    token_hash: &str,
    boot_id: &str,
    launcher: Option<(i32, u64)>,
    branch: Option<&str>,
    attention_ms: Option<i64>,
) -> BoardResult<(String, Events)> {
    b.register_session_as(
        name,
        None,
        token_hash,
        boot_id,
        launcher,
        branch,
        attention_ms,
    )
}

#[allow(clippy::too_many_arguments)]
pub(in crate::store) fn register_session_as<B: Backend>(
    b: &mut B,
    name: &str,
    role: Option<&str>,
    token_hash: &str,
    boot_id: &str,
    launcher: Option<(i32, u64)>,
    branch: Option<&str>,
    attention_ms: Option<i64>,
) -> BoardResult<(String, Events)> {
    let base = session_base_name(name)?;
    if let Some(role) = role {
        crate::proto::labels::check_label("role", role)?;
    }
    let host = b.host().map(str::to_string);
    b.write(Lock::Exclusive, |db, ev| {
        for id in session_rules::candidate_ids(&base) {
            // The name people see: `base` unless a live session has it, else the first free
            // `base-N`, chosen by the same statement that inserts (under the exclusive write
            // lock, so two hosts cannot pick the same one).
            let inserted = db.exec(
                <B::Db<'_> as Db>::REGISTER_SESSION,
                &args![
                    &id,
                    host.as_deref(),
                    &base,
                    token_hash,
                    boot_id,
                    launcher.map(|l| l.0),
                    launcher.map(|l| l.1 as i64),
                    branch,
                    attention_ms,
                    role
                ],
            )?;
            if inserted == 1 {
                let start = EventKind::SessionStart;
                db.emit(ev, start, None, Some(&id), None, "registered")?;
                return Ok(id);
            }
        }
        Err(session_rules::no_free_id(&base))
    })
}

pub(in crate::store) fn expel_session<B: Backend>(
    b: &mut B,
    id: &str,
    reason: &str,
) -> BoardResult<(bool, Events)> {
    b.write(Lock::Exclusive, |db, ev| {
        let n = db.exec(
            "UPDATE sessions SET ended_at = board_wall(), end_reason = $2, waiting = NULL,
                    question = NULL
             WHERE id = $1 AND ended_at IS NULL",
            &args![id, reason],
        )?;
        if n == 0 {
            return Ok(false);
        }
        db.expel_claims(ev, id, reason)?;
        db.emit(ev, EventKind::SessionEnd, None, Some(id), None, reason)?;
        Ok(true)
    })
}

pub(in crate::store) fn attach_session<B: Backend>(
    b: &mut B,
    id: &str,
    agent: (i32, u64),
    pane: Option<(&str, i32, u64)>,
) -> BoardResult<()> {
    let (n, _) = b.write(Lock::Shared, |db, _| {
        db.exec(
            "UPDATE sessions SET pid = $2, pid_start = $3,
                    pane_id = COALESCE($4, pane_id), pane_pid = COALESCE($5, pane_pid),
                    pane_start = COALESCE($6, pane_start)
             WHERE id = $1 AND ended_at IS NULL",
            &args![
                id,
                agent.0,
                agent.1 as i64,
                pane.map(|p| p.0),
                pane.map(|p| p.1),
                pane.map(|p| p.2 as i64)
            ],
        )
    })?;
    if n == 0 {
        return Err(session_rules::attach_ended(id));
    }
    Ok(())
}

pub(in crate::store) fn set_waiting<B: Backend>(
    b: &mut B,
    id: &str,
    question: Option<&str>,
) -> BoardResult<(bool, Events)> {
    let sql = "UPDATE sessions SET waiting = $2 WHERE id = $1 AND ended_at IS NULL
                 AND waiting IS DISTINCT FROM $2";
    set_wait(b, id, question, sql, |q| match q {
        Some(q) => (EventKind::Wait, q.to_string()),
        None => (EventKind::Resume, "resumed".to_string()),
    })
}

pub(in crate::store) fn set_question<B: Backend>(
    b: &mut B,
    id: &str,
    question: Option<&str>,
) -> BoardResult<(bool, Events)> {
    let sql = "UPDATE sessions SET question = $2 WHERE id = $1 AND ended_at IS NULL
                 AND question IS DISTINCT FROM $2";
    set_wait(b, id, question, sql, session_rules::question_event)
}

/// Sets or clears (None) what session `id` waits for by `sql` (`$1` the session, `$2` the
/// text; it changes the row only when the text differs) and, when it changed, appends the event
/// `event` names. Errors: `invalid` (empty or oversized text).
fn set_wait<B: Backend>(
    b: &mut B,
    id: &str,
    text: Option<&str>,
    sql: &'static str,
    event: fn(Option<&str>) -> (EventKind, String),
) -> BoardResult<(bool, Events)> {
    if let Some(q) = text {
        check_text("question", q, MAX_TEXT, false)?;
    }
    b.write(Lock::Shared, |db, ev| {
        let n = db.exec(sql, &args![id, text])?;
        if n == 1 {
            let (kind, reason) = event(text);
            db.emit(ev, kind, None, Some(id), None, &reason)?;
        }
        Ok(n == 1)
    })
}

pub(in crate::store) fn mark_contacted<B: Backend>(b: &mut B, id: &str) -> BoardResult<bool> {
    let (n, _) = b.write(Lock::Shared, |db, _| {
        db.exec(
            "UPDATE sessions SET contacted_at = board_wall()
             WHERE id = $1 AND ended_at IS NULL AND contacted_at IS NULL",
            &args![id],
        )
    })?;
    Ok(n == 1)
}

pub(in crate::store) fn set_idle<B: Backend>(
    b: &mut B,
    id: &str,
    reason: Option<&str>,
) -> BoardResult<(bool, Events)> {
    if let Some(r) = reason {
        check_text("reason", r, MAX_TEXT, false)?;
    }
    b.write(Lock::Shared, |db, ev| {
        let n = match reason {
            Some(r) => {
                let n = db.exec(
                    "UPDATE sessions SET idle_since = board_wall()
                     WHERE id = $1 AND ended_at IS NULL AND idle_since IS NULL",
                    &args![id],
                )?;
                if n == 1 {
                    db.emit(ev, EventKind::Idle, None, Some(id), None, r)?;
                }
                n
            }
            None => db.exec(
                "UPDATE sessions SET idle_since = NULL WHERE id = $1 AND idle_since IS NOT NULL",
                &args![id],
            )?,
        };
        Ok(n == 1)
    })
}

pub(in crate::store) fn session<B: Backend>(b: &B, id: &str) -> BoardResult<Option<SessionRow>> {
    b.read_with(|db| one_session(db, id))
}

/// The row of session `id`, on `db`.
pub(in crate::store) fn one_session(db: &mut impl Db, id: &str) -> BoardResult<Option<SessionRow>> {
    let r = db.opt(session_row_sql!("WHERE id = $1"), &args![id])?;
    r.map(|r| session_row(&r)).transpose()
}

pub(in crate::store) fn session_end_reason<B: Backend>(
    b: &B,
    id: &str,
) -> BoardResult<Option<String>> {
    b.read_with(|db| {
        let r = db
            .value::<Option<String>>("SELECT end_reason FROM sessions WHERE id = $1", &args![id])?;
        Ok(r.flatten())
    })
}

pub(in crate::store) fn ended_session_count<B: Backend>(b: &B) -> BoardResult<i64> {
    b.read_with(|db| {
        let n = db.value(
            "SELECT COUNT(*) FROM sessions WHERE ended_at IS NOT NULL",
            &[],
        )?;
        Ok(n.unwrap_or(0))
    })
}

pub(in crate::store) fn session_name<B: Backend>(b: &B, id: &str) -> BoardResult<Option<String>> {
    b.read_with(|db| db.value("SELECT name FROM sessions WHERE id = $1", &args![id]))
}

/// The columns of a [`SessionView`] both backends select, as column 0 to 9 and 11 to 17 of a
/// row ([`session_view`]); column 10 (the live claims) and the host are the backend's.
pub(in crate::store) fn session_view(
    r: &dyn Row,
    now: std::time::SystemTime,
) -> BoardResult<SessionView> {
    let started_at: String = get(r, 6)?;
    let contacted: Option<String> = get(r, 14)?;
    let attention_ms: Option<i64> = get(r, 15)?;
    let attention =
        session_rules::attention_of(&started_at, contacted.as_deref(), attention_ms, now);
    Ok(SessionView {
        id: get(r, 0)?,
        name: get(r, 1)?,
        pid: get(r, 2)?,
        launcher_pid: get(r, 3)?,
        pane: get(r, 4)?,
        waiting: get(r, 5)?,
        question: get(r, 16)?,
        started_at,
        last_seen_at: get(r, 7)?,
        ended_at: get(r, 8)?,
        end_reason: get(r, 9)?,
        claims: Vec::new(),
        restarts: get(r, 11)?,
        branch: get(r, 12)?,
        idle_since: get(r, 13)?,
        attention,
        contacted_at: contacted,
        state: AgentState::Starting,
        host: None,
    })
}

pub(in crate::store) fn sessions<B: Backend>(
    b: &B,
    recent_ended_ms: Option<i64>,
    state_of: &dyn Fn(&SessionRow) -> Option<AgentState>,
) -> BoardResult<Vec<SessionView>> {
    let mut views = b.read_with(|db| db.session_views(recent_ended_ms))?;
    for s in &mut views {
        // Another host's board watches its own sessions; here they count as running.
        let watched = s.host.is_none() || s.host.as_deref() == b.host();
        settle_view(b, s, watched, state_of)?;
    }
    Ok(views)
}

/// Settles the state of `s`: what its row says, else (`watched`: this board watches its
/// process) what `state_of` says of it, else running.
pub(in crate::store) fn settle_view<B: Backend>(
    b: &B,
    s: &mut SessionView,
    watched: bool,
    state_of: &dyn Fn(&SessionRow) -> Option<AgentState>,
) -> BoardResult<()> {
    // None from `state_of`: its process runs, and what it does decides.
    let known = match session_rules::known_state(s) {
        Some(state) => Some(state),
        None if watched => match session(b, &s.id)? {
            Some(row) => state_of(&row),
            None => Some(AgentState::Gone),
        },
        None => None,
    };
    session_rules::settle_state(s, known);
    Ok(())
}
