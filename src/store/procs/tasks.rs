//! Goals and tasks: adding, editing, cancelling, listing; and the steps other procedures
//! share (a task's state, its dependencies, a note, ending a task's live claim).

use crate::proto::error::{BoardError, BoardResult};
use crate::proto::{GoalView, NoteView, TaskView};
use crate::store::db::{get, word, Backend, Db, Lock, Pick};
use crate::store::task_rules;
use crate::store::{
    agent_opt, check_text, task_not_found, ClaimEnd, EventKind, Events, ListState, Reassign, Store,
    TaskId, TaskState, MAX_TEXT,
};

pub(in crate::store) fn set_goal<B: Backend>(
    b: &mut B,
    text: &str,
    by: &str,
) -> BoardResult<(GoalView, Events)> {
    check_text("goal", text, MAX_TEXT, false)?;
    b.write(Lock::Exclusive, |db, ev| {
        db.exec(
            "INSERT INTO goals (text, set_at, set_by) VALUES ($1, board_wall(), $2)",
            &args![text, by],
        )?;
        db.emit(ev, EventKind::Goal, None, agent_opt(by), None, text)?;
        current_goal(db)?.ok_or_else(|| BoardError::internal("goal vanished"))
    })
}

pub(in crate::store) fn goal<B: Backend>(b: &B) -> BoardResult<Option<GoalView>> {
    b.read_with(|db| current_goal(db))
}

pub(in crate::store) fn add_task<B: Store>(
    b: &mut B,
    title: &str,
    body: &str,
    priority: i64,
    after: &[TaskId],
    by: &str,
    now_ms: i64,
) -> BoardResult<(TaskView, Events)> {
    b.add_task_for(title, body, priority, after, &[], None, None, by, now_ms)
}

#[allow(clippy::too_many_arguments)]
pub(in crate::store) fn add_task_for<B: Backend>(
    b: &mut B,
    title: &str,
    body: &str,
    priority: i64,
    after: &[TaskId],
    labels: &[String],
    meant_for: Option<&str>,
    review: Option<bool>,
    by: &str,
    now_ms: i64,
) -> BoardResult<(TaskView, Events)> {
    task_rules::check_task_text(Some(title), Some(body))?;
    let labels = task_rules::join_labels(labels)?;
    if let Some(whom) = meant_for {
        crate::proto::labels::check_label("for", whom)?;
    }
    b.at(now_ms);
    b.write(Lock::Exclusive, |db, ev| {
        let id = db.value::<i64>(
            "INSERT INTO tasks (title, body, priority, created_at, updated_at, labels, meant_for,
                                review)
             VALUES ($1, $2, $3, board_wall(), board_wall(), $4, $5, $6) RETURNING id",
            &args![title, body, priority, &labels, meant_for, review],
        )?;
        let id = id.ok_or_else(|| BoardError::internal("a new task has no id"))?;
        set_deps(db, id, after)?;
        db.emit(ev, EventKind::Add, Some(id), agent_opt(by), None, title)?;
        task_view(db, TaskId(id), now_ms)
    })
}

#[allow(clippy::too_many_arguments)]
pub(in crate::store) fn edit_task<B: Backend>(
    b: &mut B,
    id: TaskId,
    title: Option<&str>,
    body: Option<&str>,
    priority: Option<i64>,
    after: Option<&[TaskId]>,
    assign: &Reassign,
    by: &str,
    now_ms: i64,
) -> BoardResult<(TaskView, Events)> {
    task_rules::check_task_text(title, body)?;
    let (labels, meant_for) = assign.checked()?;
    b.at(now_ms);
    b.write(Lock::Exclusive, |db, ev| {
        let n = db.exec(
            "UPDATE tasks SET title = COALESCE($2, title), body = COALESCE($3, body),
                    priority = COALESCE($4, priority), updated_at = board_wall(),
                    labels = COALESCE($5, labels),
                    meant_for = CASE WHEN CAST($6 AS text) IS NULL THEN meant_for
                                     ELSE NULLIF(CAST($6 AS text), '') END,
                    review = COALESCE($7, review)
             WHERE id = $1",
            &args![
                id,
                title,
                body,
                priority,
                labels.as_deref(),
                meant_for,
                assign.review
            ],
        )?;
        if n == 0 {
            return Err(task_not_found(id.0));
        }
        if let Some(after) = after {
            db.exec("DELETE FROM task_deps WHERE task_id = $1", &args![id])?;
            set_deps(db, id.0, after)?;
        }
        db.emit(
            ev,
            EventKind::Edit,
            Some(id.0),
            agent_opt(by),
            None,
            "edited",
        )?;
        task_view(db, id, now_ms)
    })
}

pub(in crate::store) fn cancel_task<B: Backend>(
    b: &mut B,
    id: TaskId,
    by: &str,
    now_ms: i64,
) -> BoardResult<(TaskView, Events)> {
    b.at(now_ms);
    b.write(Lock::Exclusive, |db, ev| {
        let n = db.exec(
            concat!(
                "UPDATE tasks SET state = ",
                crate::sql_state!(cancelled),
                ", updated_at = board_wall() WHERE id = $1 AND state IN ",
                unfinished!()
            ),
            &args![id],
        )?;
        if n == 0 {
            return Err(task_rules::not_cancellable(id.0, task_state(db, id.0)?));
        }
        end_live_claims_of_task(db, ev, id.0, ClaimEnd::Cancel, "task cancelled")?;
        let cancelled = TaskState::Cancelled.as_str();
        db.emit(
            ev,
            EventKind::Cancel,
            Some(id.0),
            agent_opt(by),
            None,
            cancelled,
        )?;
        task_view(db, id, now_ms)
    })
}

/// See [`Store::reopen_task`]: one conditional update on a finished task, and its event.
pub(in crate::store) fn reopen_task<B: Backend>(
    b: &mut B,
    id: TaskId,
    by: &str,
    now_ms: i64,
) -> BoardResult<(TaskView, Events)> {
    b.at(now_ms);
    b.write(Lock::Exclusive, |db, ev| {
        let n = db.exec(
            concat!(
                "UPDATE tasks SET state = ",
                crate::sql_state!(open),
                ", done_by = NULL, done_generation = NULL, done_at = NULL, commit_sha = NULL,",
                " landed_sha = NULL, updated_at = board_wall()",
                " WHERE id = $1 AND state IN (",
                crate::sql_state!(done),
                ", ",
                crate::sql_state!(cancelled),
                ")"
            ),
            &args![id],
        )?;
        if n == 0 {
            return Err(not_reopenable(id, task_state(db, id.0)?));
        }
        db.emit(
            ev,
            EventKind::Edit,
            Some(id.0),
            agent_opt(by),
            None,
            "reopened",
        )?;
        task_view(db, id, now_ms)
    })
}

/// `conflict`: task `id` is in `state`, which is not done or cancelled.
fn not_reopenable(id: TaskId, state: TaskState) -> BoardError {
    BoardError::new(
        crate::proto::error::ErrorKind::Conflict,
        format!(
            "task {id} is {}; only done or cancelled tasks can be reopened",
            state.phrase()
        ),
    )
    .with("state", state.as_str())
}

pub(in crate::store) fn list_tasks<B: Store>(
    b: &B,
    states: Option<&[ListState]>,
    now_ms: i64,
) -> BoardResult<Vec<TaskView>> {
    Ok(b.list_page(states, TaskId(0), None, now_ms)?.0)
}

pub(in crate::store) fn list_page<B: Backend>(
    b: &B,
    states: Option<&[ListState]>,
    after: TaskId,
    limit: Option<i64>,
    now_ms: i64,
) -> BoardResult<(Vec<TaskView>, Option<TaskId>)> {
    b.at(now_ms);
    let ask = task_rules::page_ask(states, limit);
    let pick = Pick::Page {
        states: ask.stored.as_deref(),
        after: after.0,
        limit: ask.rows,
    };
    let views = b.read_with(|db| db.task_views(pick, now_ms))?;
    Ok(task_rules::finish_page(views, states, limit))
}

pub(in crate::store) fn ready_tasks<B: Backend>(
    b: &B,
    now_ms: i64,
    limit: Option<i64>,
) -> BoardResult<Vec<TaskView>> {
    b.at(now_ms);
    b.read_with(|db| db.task_views(Pick::Ready { limit }, now_ms))
}

pub(in crate::store) fn task<B: Backend>(b: &B, id: TaskId, now_ms: i64) -> BoardResult<TaskView> {
    b.at(now_ms);
    b.read_with(|db| task_view(db, id, now_ms))
}

pub(in crate::store) fn notes<B: Backend>(b: &B, id: TaskId) -> BoardResult<Vec<NoteView>> {
    b.read_with(|db| {
        let rows = db.rows(
            "SELECT id, task_id, author, generation, text, at FROM notes
             WHERE task_id = $1 ORDER BY id",
            &args![id],
        )?;
        rows.iter()
            .map(|r| {
                Ok(NoteView {
                    id: get(r, 0)?,
                    task: get(r, 1)?,
                    author: get(r, 2)?,
                    generation: get(r, 3)?,
                    text: get(r, 4)?,
                    at: get(r, 5)?,
                })
            })
            .collect()
    })
}

pub(in crate::store) fn unfinished_count<B: Backend>(b: &B) -> BoardResult<i64> {
    b.read_with(|db| {
        let n = db.value(
            concat!("SELECT COUNT(*) FROM tasks WHERE state IN ", unfinished!()),
            &[],
        )?;
        Ok(n.unwrap_or(0))
    })
}

/// The current goal, if one was set.
pub(in crate::store) fn current_goal(db: &mut impl Db) -> BoardResult<Option<GoalView>> {
    let r = db.opt(
        "SELECT id, text, set_at, set_by FROM goals ORDER BY id DESC LIMIT 1",
        &[],
    )?;
    r.map(|r| {
        Ok(GoalView {
            id: get(&r, 0)?,
            text: get(&r, 1)?,
            set_at: get(&r, 2)?,
            set_by: get(&r, 3)?,
        })
    })
    .transpose()
}

/// The state of task `id`. Errors: `not_found`.
pub(in crate::store) fn task_state(db: &mut impl Db, id: i64) -> BoardResult<TaskState> {
    match db.opt("SELECT state FROM tasks WHERE id = $1", &args![id])? {
        Some(r) => word(&r, 0),
        None => Err(task_not_found(id)),
    }
}

/// Task `id` waits for each of `after`. Errors: `not_found` for an unknown task, `invalid`
/// for a task waiting for itself or a cycle.
pub(in crate::store) fn set_deps(db: &mut impl Db, id: i64, after: &[TaskId]) -> BoardResult<()> {
    for a in after.iter().map(|a| a.0) {
        task_rules::check_not_self(id, a)?;
        task_state(db, a)?;
        // Adding id → a closes a cycle when a already (transitively) waits for id.
        let cycle = db.value::<bool>(
            "WITH RECURSIVE up(x) AS (SELECT CAST($1 AS bigint)
                                      UNION SELECT d.after_id FROM task_deps d
                                             JOIN up ON d.task_id = up.x)
             SELECT EXISTS (SELECT 1 FROM up WHERE x = $2)",
            &args![a, id],
        )?;
        task_rules::check_no_cycle(id, a, cycle.unwrap_or(false))?;
        db.exec(
            "INSERT INTO task_deps (task_id, after_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &args![id, a],
        )?;
    }
    Ok(())
}

/// Adds a note to `task`; returns its id and time.
pub(in crate::store) fn insert_note(
    db: &mut impl Db,
    task: i64,
    author: &str,
    generation: Option<i64>,
    text: &str,
) -> BoardResult<(i64, String)> {
    let r = db.one(
        "INSERT INTO notes (task_id, author, generation, text, at)
         VALUES ($1, $2, $3, $4, board_wall()) RETURNING id, at",
        &args![task, author, generation, text],
    )?;
    Ok((get(&r, 0)?, get(&r, 1)?))
}

/// Ends the live claim on `task`, if any, as `kind` with `reason`, with a `release` event.
pub(in crate::store) fn end_live_claims_of_task(
    db: &mut impl Db,
    ev: &mut Events,
    task: i64,
    kind: ClaimEnd,
    reason: &str,
) -> BoardResult<()> {
    let ended = db.opt(
        "UPDATE claims SET ended_at = board_wall(), end_kind = $2, end_reason = $3
         WHERE task_id = $1 AND ended_at IS NULL RETURNING session_id, generation",
        &args![task, kind.as_str(), reason],
    )?;
    if let Some(r) = ended {
        let (agent, generation): (String, i64) = (get(&r, 0)?, get(&r, 1)?);
        let release = EventKind::Release;
        db.emit(
            ev,
            release,
            Some(task),
            Some(&agent),
            Some(generation),
            reason,
        )?;
    }
    Ok(())
}

/// Claimed task `task` is open again (its claim ended).
pub(in crate::store) fn reopen(db: &mut impl Db, task: i64) -> BoardResult<()> {
    db.exec(
        concat!(
            "UPDATE tasks SET state = ",
            crate::sql_state!(open),
            ", updated_at = board_wall() WHERE id = $1 AND state = ",
            crate::sql_state!(claimed)
        ),
        &args![task],
    )?;
    Ok(())
}

/// The view of task `id` at lease-clock time `now_ms`. Errors: `not_found`.
pub(in crate::store) fn task_view(
    db: &mut impl Db,
    id: TaskId,
    now_ms: i64,
) -> BoardResult<TaskView> {
    db.task_views(Pick::One(id.0), now_ms)?
        .into_iter()
        .next()
        .ok_or_else(|| task_not_found(id.0))
}

/// The columns of a task view with its live claim joined in: column 11 is `$expires` (the
/// claim's expiry, or the time left), then the backend's own columns (`[$more]`, a list for `concat!`), then `$tail`
/// picks the rows. See [`task_view_row`].
macro_rules! task_view_sql {
    ($expires:literal, [$($more:tt)*], $($tail:tt)+) => {
        concat!(
            "SELECT t.id, t.title, t.body, t.priority, t.state, t.generation, t.created_at,
                    t.updated_at, t.done_by, t.done_at, c.session_id, ", $expires, ",
                    t.commit_sha, t.landed_sha, t.labels, t.meant_for, t.review", $($more)*, "
             FROM tasks t LEFT JOIN claims c ON c.task_id = t.id AND c.ended_at IS NULL ",
            $($tail)+
        )
    };
}

/// A row of [`task_view_sql!`] with no dependencies yet (`ready` as its state says); column
/// 11 is the claim's expiry less `now_ms` (0 when the statement computed the time left).
pub(in crate::store) fn task_view_row(
    r: &dyn crate::store::db::Row,
    now_ms: i64,
) -> BoardResult<TaskView> {
    let state: TaskState = word(r, 4)?;
    let expires: Option<i64> = get(r, 11)?;
    Ok(TaskView {
        id: get(r, 0)?,
        title: get(r, 1)?,
        body: get(r, 2)?,
        priority: get(r, 3)?,
        ready: state == TaskState::Open,
        state,
        generation: get(r, 5)?,
        after: Vec::new(),
        blocked_by: Vec::new(),
        created_at: get(r, 6)?,
        updated_at: get(r, 7)?,
        done_by: get(r, 8)?,
        done_at: get(r, 9)?,
        holder: get(r, 10)?,
        expires_in_ms: expires.map(|e| e - now_ms),
        commit: get(r, 12)?,
        landed: get(r, 13)?,
        labels: task_rules::split_labels(&get::<String>(r, 14)?),
        meant_for: get(r, 15)?,
        review: get(r, 16)?,
    })
}
