//! Goals and tasks: adding, editing, cancelling, listing, and the task views with their
//! dependencies and live claims joined in.

use rusqlite::{params, Connection, OptionalExtension};

use super::lapse::end_live_claims_of_task;
use super::task_rules;
use super::*;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::{GoalView, NoteView, TaskView};

impl SqliteStore {
    // ----- goal -------------------------------------------------------------------------------

    pub(in crate::store) fn set_goal(
        &mut self,
        text: &str,
        by: &str,
    ) -> BoardResult<(GoalView, Events)> {
        check_text("goal", text, MAX_TEXT, false)?;
        self.tx(|tx, ev| {
            tx.execute(
                "INSERT INTO goals (text, set_at, set_by) VALUES (?1, ?2, ?3)",
                params![text, now_wall(), by],
            )?;
            emit(tx, ev, EventKind::Goal, None, agent_opt(by), None, text)?;
            current_goal(tx)?.ok_or_else(|| BoardError::internal("goal vanished"))
        })
    }

    pub(in crate::store) fn goal(&self) -> BoardResult<Option<GoalView>> {
        current_goal(&self.conn)
    }

    // ----- tasks ------------------------------------------------------------------------------

    pub(in crate::store) fn add_task(
        &mut self,
        title: &str,
        body: &str,
        priority: i64,
        after: &[i64],
        by: &str,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        self.add_task_for(title, body, priority, after, &[], None, None, by, now_ms)
    }

    #[allow(clippy::too_many_arguments)]
    pub(in crate::store) fn add_task_for(
        &mut self,
        title: &str,
        body: &str,
        priority: i64,
        after: &[i64],
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
        self.tx(|tx, ev| {
            let now = now_wall();
            tx.execute(
                "INSERT INTO tasks (title, body, priority, created_at, updated_at, labels, meant_for,
                                    review)
                 VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7)",
                params![title, body, priority, now, labels, meant_for, review],
            )?;
            let id = tx.last_insert_rowid();
            set_deps(tx, id, after)?;
            emit(tx, ev, EventKind::Add, Some(id), agent_opt(by), None, title)?;
            task_view(tx, id, now_ms)
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(in crate::store) fn edit_task(
        &mut self,
        id: i64,
        title: Option<&str>,
        body: Option<&str>,
        priority: Option<i64>,
        after: Option<&[i64]>,
        assign: &Reassign,
        by: &str,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        task_rules::check_task_text(title, body)?;
        let (labels, meant_for) = assign.checked()?;
        self.tx(|tx, ev| {
            let n = tx.execute(
                "UPDATE tasks SET title = COALESCE(?2, title), body = COALESCE(?3, body),
                        priority = COALESCE(?4, priority), updated_at = ?5,
                        labels = COALESCE(?6, labels),
                        meant_for = CASE WHEN ?7 IS NULL THEN meant_for ELSE NULLIF(?7, '') END,
                        review = COALESCE(?8, review)
                 WHERE id = ?1",
                params![
                    id,
                    title,
                    body,
                    priority,
                    now_wall(),
                    labels,
                    meant_for,
                    assign.review
                ],
            )?;
            if n == 0 {
                return Err(task_not_found(id));
            }
            if let Some(after) = after {
                tx.execute("DELETE FROM task_deps WHERE task_id = ?1", [id])?;
                set_deps(tx, id, after)?;
            }
            emit(
                tx,
                ev,
                EventKind::Edit,
                Some(id),
                agent_opt(by),
                None,
                "edited",
            )?;
            task_view(tx, id, now_ms)
        })
    }

    pub(in crate::store) fn cancel_task(
        &mut self,
        id: i64,
        by: &str,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        self.tx(|tx, ev| {
            let n = tx.execute(
                concat!(
                    "UPDATE tasks SET state = ",
                    crate::sql_state!(cancelled),
                    ", updated_at = ?2 WHERE id = ?1 AND state IN ",
                    unfinished!()
                ),
                params![id, now_wall()],
            )?;
            if n == 0 {
                return Err(task_rules::not_cancellable(id, task_state(tx, id)?));
            }
            end_live_claims_of_task(tx, ev, id, ClaimEnd::Cancel, "task cancelled")?;
            emit(
                tx,
                ev,
                EventKind::Cancel,
                Some(id),
                agent_opt(by),
                None,
                TaskState::Cancelled.as_str(),
            )?;
            task_view(tx, id, now_ms)
        })
    }

    pub(in crate::store) fn list_tasks(
        &self,
        states: Option<&[ListState]>,
        now_ms: i64,
    ) -> BoardResult<Vec<TaskView>> {
        Ok(self.list_page(states, TaskId(0), None, now_ms)?.0)
    }

    pub(in crate::store) fn list_page(
        &self,
        states: Option<&[ListState]>,
        after: TaskId,
        limit: Option<i64>,
        now_ms: i64,
    ) -> BoardResult<(Vec<TaskView>, Option<i64>)> {
        let ask = task_rules::page_ask(states, limit);
        let pick = Pick::Page {
            states: ask.stored.as_deref(),
            after: after.0,
            limit: ask.rows.unwrap_or(-1),
        };
        let views = task_views(&self.conn, pick, now_ms)?;
        Ok(task_rules::finish_page(views, states, limit))
    }

    pub(in crate::store) fn ready_tasks(
        &self,
        now_ms: i64,
        limit: Option<i64>,
    ) -> BoardResult<Vec<TaskView>> {
        task_views(
            &self.conn,
            Pick::Ready {
                limit: limit.unwrap_or(-1),
            },
            now_ms,
        )
    }

    pub(in crate::store) fn task(&self, id: i64, now_ms: i64) -> BoardResult<TaskView> {
        task_view(&self.conn, id, now_ms)
    }

    pub(in crate::store) fn notes(&self, id: i64) -> BoardResult<Vec<NoteView>> {
        let mut st = self.conn.prepare(
            "SELECT id, task_id, author, generation, text, at FROM notes WHERE task_id = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([id], |r| {
            Ok(NoteView {
                id: r.get(0)?,
                task: r.get(1)?,
                author: r.get(2)?,
                generation: r.get(3)?,
                text: r.get(4)?,
                at: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub(in crate::store) fn unfinished_count(&self) -> BoardResult<i64> {
        Ok(self.conn.query_row(
            concat!("SELECT COUNT(*) FROM tasks WHERE state IN ", unfinished!()),
            [],
            |r| r.get(0),
        )?)
    }
}

pub(in crate::store) fn current_goal(c: &Connection) -> BoardResult<Option<GoalView>> {
    Ok(c.query_row(
        "SELECT id, text, set_at, set_by FROM goals ORDER BY id DESC LIMIT 1",
        [],
        |r| {
            Ok(GoalView {
                id: r.get(0)?,
                text: r.get(1)?,
                set_at: r.get(2)?,
                set_by: r.get(3)?,
            })
        },
    )
    .optional()?)
}

pub(in crate::store) fn set_deps(tx: &Connection, id: i64, after: &[i64]) -> BoardResult<()> {
    for &a in after {
        task_rules::check_not_self(id, a)?;
        task_state(tx, a)?;
        // Adding id → a closes a cycle when a already (transitively) waits for id.
        let cycle: bool = tx.query_row(
            "WITH RECURSIVE up(x) AS (SELECT ?1 UNION SELECT d.after_id FROM task_deps d JOIN up ON d.task_id = up.x)
             SELECT EXISTS (SELECT 1 FROM up WHERE x = ?2)",
            params![a, id],
            |r| r.get(0),
        )?;
        task_rules::check_no_cycle(id, a, cycle)?;
        tx.execute(
            "INSERT OR IGNORE INTO task_deps (task_id, after_id) VALUES (?1, ?2)",
            params![id, a],
        )?;
    }
    Ok(())
}

pub(in crate::store) fn insert_note(
    tx: &Connection,
    task: i64,
    author: &str,
    generation: Option<i64>,
    text: &str,
) -> BoardResult<i64> {
    tx.execute(
        "INSERT INTO notes (task_id, author, generation, text, at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![task, author, generation, text, now_wall()],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Which tasks a view query returns, in which order.
#[derive(Debug, Clone, Copy)]
pub(in crate::store) enum Pick<'a> {
    /// One task by id.
    One(i64),
    /// Tasks with an id above `after` (in `states`, when given), by id, at most `limit` (-1: all).
    Page {
        states: Option<&'a [TaskState]>,
        after: i64,
        limit: i64,
    },
    /// Ready tasks in claim order (priority descending, then id), at most `limit` (-1: all).
    Ready { limit: i64 },
}

/// The columns of a task view, with its live claim joined in; `$tail` picks the rows.
macro_rules! view_sql {
    ($($tail:tt)+) => {
        concat!(
            "SELECT t.id, t.title, t.body, t.priority, t.state, t.generation, t.created_at,
                    t.updated_at, t.done_by, t.done_at, c.session_id, c.expires_ms,
                    t.commit_sha, t.landed_sha, t.labels, t.meant_for, t.review
             FROM tasks t LEFT JOIN claims c ON c.task_id = t.id AND c.ended_at IS NULL ",
            $($tail)+
        )
    };
}

/// The dependencies of the tasks a query picks, as `(task, after, finished)`; `$where` picks.
macro_rules! deps_sql {
    ($where:literal) => {
        concat!(
            "SELECT d.task_id, d.after_id, a.state IN ",
            finished!(),
            " FROM task_deps d JOIN tasks a ON a.id = d.after_id WHERE ",
            $where,
            " ORDER BY d.task_id, d.after_id"
        )
    };
}

/// Task views with dependencies and live claims joined in: one query for the tasks and one for
/// all their dependencies (never one per task). Statements are cached on the connection, and each
/// shape of query has its own SQL so SQLite can use the primary key or the state index (a
/// `?1 IS NULL OR t.id = ?1` condition would scan every task for a single view).
pub(in crate::store) fn task_views(
    c: &Connection,
    pick: Pick,
    now_ms: i64,
) -> BoardResult<Vec<TaskView>> {
    use std::collections::HashMap;
    let row = |r: &rusqlite::Row| -> rusqlite::Result<TaskView> {
        let state: TaskState = r.get(4)?;
        let expires: Option<i64> = r.get(11)?;
        Ok(TaskView {
            id: r.get(0)?,
            title: r.get(1)?,
            body: r.get(2)?,
            priority: r.get(3)?,
            ready: state == TaskState::Open,
            state,
            generation: r.get(5)?,
            after: Vec::new(),
            blocked_by: Vec::new(),
            created_at: r.get(6)?,
            updated_at: r.get(7)?,
            done_by: r.get(8)?,
            done_at: r.get(9)?,
            holder: r.get(10)?,
            expires_in_ms: expires.map(|e| e - now_ms),
            commit: r.get(12)?,
            landed: r.get(13)?,
            labels: task_rules::split_labels(&r.get::<_, String>(14)?),
            meant_for: r.get(15)?,
            review: r.get(16)?,
        })
    };
    let mut views: Vec<TaskView> = match pick {
        Pick::One(id) => {
            let mut st = c.prepare_cached(view_sql!("WHERE t.id = ?1"))?;
            let rows = st.query_map([id], row)?;
            rows.collect::<Result<_, _>>()?
        }
        Pick::Page {
            states: None,
            after,
            limit,
        } => {
            let mut st = c.prepare_cached(view_sql!("WHERE t.id > ?1 ORDER BY t.id LIMIT ?2"))?;
            let rows = st.query_map(params![after, limit], row)?;
            rows.collect::<Result<_, _>>()?
        }
        Pick::Page {
            states: Some(states),
            after,
            limit,
        } => {
            let states = serde_json::to_string(states)
                .map_err(|e| BoardError::internal(format!("encoding the state filter: {e}")))?;
            let mut st = c.prepare_cached(view_sql!(
                "WHERE t.id > ?1 AND t.state IN (SELECT value FROM json_each(?3))
                 ORDER BY t.id LIMIT ?2"
            ))?;
            let rows = st.query_map(params![after, limit, states], row)?;
            rows.collect::<Result<_, _>>()?
        }
        Pick::Ready { limit } => {
            let mut st = c.prepare_cached(view_sql!(
                "WHERE ",
                ready!("t"),
                " ORDER BY t.priority DESC, t.id LIMIT ?1"
            ))?;
            let rows = st.query_map([limit], row)?;
            rows.collect::<Result<_, _>>()?
        }
    };
    if views.is_empty() {
        return Ok(views);
    }
    let mut deps: HashMap<i64, Vec<(i64, bool)>> = HashMap::new();
    {
        let dep = |r: &rusqlite::Row| -> rusqlite::Result<(i64, i64, bool)> {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        };
        let rows: Vec<(i64, i64, bool)> = match pick {
            Pick::One(id) => {
                let mut st = c.prepare_cached(deps_sql!("d.task_id = ?1"))?;
                let rows = st.query_map([id], dep)?;
                rows.collect::<Result<_, _>>()?
            }
            Pick::Page { .. } => {
                // Views are in id order: one range scan of the primary key covers the page.
                let (lo, hi) = (views[0].id, views[views.len() - 1].id);
                let mut st = c.prepare_cached(deps_sql!("d.task_id BETWEEN ?1 AND ?2"))?;
                let rows = st.query_map([lo, hi], dep)?;
                rows.collect::<Result<_, _>>()?
            }
            Pick::Ready { .. } => {
                let ids = serde_json::to_string(&views.iter().map(|v| v.id).collect::<Vec<_>>())
                    .map_err(|e| BoardError::internal(format!("encoding task ids: {e}")))?;
                let mut st =
                    c.prepare_cached(deps_sql!("d.task_id IN (SELECT value FROM json_each(?1))"))?;
                let rows = st.query_map([ids], dep)?;
                rows.collect::<Result<_, _>>()?
            }
        };
        for (t, a, done) in rows {
            deps.entry(t).or_default().push((a, done));
        }
    }
    for v in &mut views {
        if let Some(d) = deps.get(&v.id) {
            v.after = d.iter().map(|(a, _)| *a).collect();
            v.blocked_by = d
                .iter()
                .filter(|(_, done)| !done)
                .map(|(a, _)| *a)
                .collect();
            v.ready = v.ready && v.blocked_by.is_empty();
        }
    }
    Ok(views)
}

pub(in crate::store) fn task_view(c: &Connection, id: i64, now_ms: i64) -> BoardResult<TaskView> {
    task_views(c, Pick::One(id), now_ms)?
        .into_iter()
        .next()
        .ok_or_else(|| task_not_found(id))
}
