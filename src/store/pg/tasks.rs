//! Goals and tasks: adding, editing, cancelling, listing, and the task views with their
//! dependencies and live claims joined in (PostgreSQL; see `store::sqlite::tasks`).

use super::lapse::end_live_claims_of_task;
use super::{col, emit, task_state, word, Conn, PgStore};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::{GoalView, NoteView, TaskView};
use crate::store::task_rules;
use crate::store::{
    agent_opt, check_text, task_not_found, ClaimEnd, EventKind, Events, ListState, TaskId,
    TaskState, MAX_TEXT,
};

impl PgStore {
    pub(in crate::store) fn set_goal(
        &mut self,
        text: &str,
        by: &str,
    ) -> BoardResult<(GoalView, Events)> {
        check_text("goal", text, MAX_TEXT, false)?;
        self.tx(|c, ev| {
            c.exec(
                "INSERT INTO goals (text, set_at, set_by) VALUES ($1, board_wall(), $2)",
                &[&text, &by],
            )?;
            emit(c, ev, EventKind::Goal, None, agent_opt(by), None, text)?;
            current_goal(c)?.ok_or_else(|| BoardError::internal("goal vanished"))
        })
    }

    pub(in crate::store) fn goal(&self) -> BoardResult<Option<GoalView>> {
        self.read(current_goal)
    }

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
        self.at(now_ms);
        self.tx(|c, ev| {
            let r = c.one(
                "INSERT INTO tasks (title, body, priority, created_at, updated_at, labels, meant_for,
                                    review)
                 VALUES ($1, $2, $3, board_wall(), board_wall(), $4, $5, $6) RETURNING id",
                &[&title, &body, &priority, &labels, &meant_for, &review],
            )?;
            let id: i64 = col(&r, 0)?;
            set_deps(c, id, after)?;
            emit(c, ev, EventKind::Add, Some(id), agent_opt(by), None, title)?;
            task_view(c, id)
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
        assign: &crate::store::Reassign,
        by: &str,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        task_rules::check_task_text(title, body)?;
        let (labels, meant_for) = assign.checked()?;
        self.at(now_ms);
        self.tx(|c, ev| {
            let n = c.exec(
                "UPDATE tasks SET title = COALESCE($2, title), body = COALESCE($3, body),
                        priority = COALESCE($4, priority), updated_at = board_wall(),
                        labels = COALESCE($5, labels),
                        meant_for = CASE WHEN $6::text IS NULL THEN meant_for
                                         ELSE NULLIF($6::text, '') END,
                        review = COALESCE($7, review)
                 WHERE id = $1",
                &[
                    &id,
                    &title,
                    &body,
                    &priority,
                    &labels,
                    &meant_for,
                    &assign.review,
                ],
            )?;
            if n == 0 {
                return Err(task_not_found(id));
            }
            if let Some(after) = after {
                c.exec("DELETE FROM task_deps WHERE task_id = $1", &[&id])?;
                set_deps(c, id, after)?;
            }
            emit(
                c,
                ev,
                EventKind::Edit,
                Some(id),
                agent_opt(by),
                None,
                "edited",
            )?;
            task_view(c, id)
        })
    }

    pub(in crate::store) fn cancel_task(
        &mut self,
        id: i64,
        by: &str,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        self.at(now_ms);
        self.tx(|c, ev| {
            let n = c.exec(
                concat!(
                    "UPDATE tasks SET state = ",
                    crate::sql_state!(cancelled),
                    ", updated_at = board_wall() WHERE id = $1 AND state IN ",
                    unfinished!()
                ),
                &[&id],
            )?;
            if n == 0 {
                return Err(task_rules::not_cancellable(id, task_state(c, id)?));
            }
            end_live_claims_of_task(c, ev, id, ClaimEnd::Cancel, "task cancelled")?;
            emit(
                c,
                ev,
                EventKind::Cancel,
                Some(id),
                agent_opt(by),
                None,
                TaskState::Cancelled.as_str(),
            )?;
            task_view(c, id)
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
        self.at(now_ms);
        let ask = task_rules::page_ask(states, limit);
        let pick = Pick::Page {
            states: ask.stored.as_deref(),
            after: after.0,
            limit: ask.rows,
        };
        let views = self.read(|c| task_views(c, pick))?;
        Ok(task_rules::finish_page(views, states, limit))
    }

    pub(in crate::store) fn ready_tasks(
        &self,
        now_ms: i64,
        limit: Option<i64>,
    ) -> BoardResult<Vec<TaskView>> {
        self.at(now_ms);
        self.read(|c| task_views(c, Pick::Ready { limit }))
    }

    pub(in crate::store) fn task(&self, id: i64, now_ms: i64) -> BoardResult<TaskView> {
        self.at(now_ms);
        self.read(|c| task_view(c, id))
    }

    pub(in crate::store) fn notes(&self, id: i64) -> BoardResult<Vec<NoteView>> {
        self.read(|c| {
            let rows = c.rows(
                "SELECT id, task_id, author, generation, text, at FROM notes
                 WHERE task_id = $1 ORDER BY id",
                &[&id],
            )?;
            rows.iter()
                .map(|r| {
                    Ok(NoteView {
                        id: col(r, 0)?,
                        task: col(r, 1)?,
                        author: col(r, 2)?,
                        generation: col(r, 3)?,
                        text: col(r, 4)?,
                        at: col(r, 5)?,
                    })
                })
                .collect()
        })
    }

    pub(in crate::store) fn unfinished_count(&self) -> BoardResult<i64> {
        self.read(|c| {
            let r = c.one(
                concat!("SELECT COUNT(*) FROM tasks WHERE state IN ", unfinished!()),
                &[],
            )?;
            col(&r, 0)
        })
    }
}

pub(super) fn current_goal(c: &mut Conn) -> BoardResult<Option<GoalView>> {
    let r = c.opt(
        "SELECT id, text, set_at, set_by FROM goals ORDER BY id DESC LIMIT 1",
        &[],
    )?;
    r.map(|r| {
        Ok(GoalView {
            id: col(&r, 0)?,
            text: col(&r, 1)?,
            set_at: col(&r, 2)?,
            set_by: col(&r, 3)?,
        })
    })
    .transpose()
}

pub(super) fn set_deps(c: &mut Conn, id: i64, after: &[i64]) -> BoardResult<()> {
    for &a in after {
        task_rules::check_not_self(id, a)?;
        task_state(c, a)?;
        // Adding id → a closes a cycle when a already (transitively) waits for id.
        let r = c.one(
            "WITH RECURSIVE up(x) AS (SELECT $1::bigint UNION SELECT d.after_id FROM task_deps d JOIN up ON d.task_id = up.x)
             SELECT EXISTS (SELECT 1 FROM up WHERE x = $2)",
            &[&a, &id],
        )?;
        task_rules::check_no_cycle(id, a, col::<bool>(&r, 0)?)?;
        c.exec(
            "INSERT INTO task_deps (task_id, after_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&id, &a],
        )?;
    }
    Ok(())
}

pub(super) fn insert_note(
    c: &mut Conn,
    task: i64,
    author: &str,
    generation: Option<i64>,
    text: &str,
) -> BoardResult<(i64, String)> {
    let r = c.one(
        "INSERT INTO notes (task_id, author, generation, text, at)
         VALUES ($1, $2, $3, $4, board_wall()) RETURNING id, at",
        &[&task, &author, &generation, &text],
    )?;
    Ok((col(&r, 0)?, col(&r, 1)?))
}

/// Which tasks a view query returns, in which order.
#[derive(Debug, Clone, Copy)]
pub(super) enum Pick<'a> {
    /// One task by id.
    One(i64),
    /// Tasks with an id above `after` (in `states`, when given), by id, at most `limit`.
    Page {
        states: Option<&'a [TaskState]>,
        after: i64,
        limit: Option<i64>,
    },
    /// Ready tasks in claim order (priority descending, then id), at most `limit`.
    Ready { limit: Option<i64> },
}

/// The columns of a task view, with its live claim and its dependencies joined in (one
/// statement, one round trip); `$tail` picks the rows. The time left is computed on the
/// server's clock.
macro_rules! view_sql {
    ($($tail:tt)+) => {
        concat!(
            "SELECT t.id, t.title, t.body, t.priority, t.state, t.generation, t.created_at,
                    t.updated_at, t.done_by, t.done_at, c.session_id,
                    c.expires_ms - board_now_ms(),
                    ARRAY(SELECT d.after_id FROM task_deps d WHERE d.task_id = t.id
                          ORDER BY d.after_id),
                    ARRAY(SELECT d.after_id FROM task_deps d JOIN tasks a ON a.id = d.after_id
                          WHERE d.task_id = t.id AND a.state NOT IN ", finished!(), "
                          ORDER BY d.after_id),
                    t.commit_sha, t.landed_sha, t.labels, t.meant_for, t.review
             FROM tasks t LEFT JOIN claims c ON c.task_id = t.id AND c.ended_at IS NULL ",
            $($tail)+
        )
    };
}

fn view_row(r: &postgres::Row) -> BoardResult<TaskView> {
    let state: TaskState = word(r, 4)?;
    let blocked_by: Vec<i64> = col(r, 13)?;
    Ok(TaskView {
        id: col(r, 0)?,
        title: col(r, 1)?,
        body: col(r, 2)?,
        priority: col(r, 3)?,
        ready: state == TaskState::Open && blocked_by.is_empty(),
        state,
        generation: col(r, 5)?,
        after: col(r, 12)?,
        blocked_by,
        created_at: col(r, 6)?,
        updated_at: col(r, 7)?,
        done_by: col(r, 8)?,
        done_at: col(r, 9)?,
        holder: col(r, 10)?,
        expires_in_ms: col(r, 11)?,
        commit: col(r, 14)?,
        landed: col(r, 15)?,
        labels: task_rules::split_labels(&col::<String>(r, 16)?),
        meant_for: col(r, 17)?,
        review: col(r, 18)?,
    })
}

/// Task views with their dependencies and live claims, in one statement.
pub(super) fn task_views(c: &mut Conn, pick: Pick) -> BoardResult<Vec<TaskView>> {
    let rows = match pick {
        Pick::One(id) => c.rows(view_sql!("WHERE t.id = $1"), &[&id])?,
        Pick::Page {
            states: None,
            after,
            limit,
        } => c.rows(
            view_sql!("WHERE t.id > $1 ORDER BY t.id LIMIT $2"),
            &[&after, &limit],
        )?,
        Pick::Page {
            states: Some(states),
            after,
            limit,
        } => {
            let states: Vec<&str> = states.iter().map(|s| s.as_str()).collect();
            c.rows(
                view_sql!("WHERE t.id > $1 AND t.state = ANY($3) ORDER BY t.id LIMIT $2"),
                &[&after, &limit, &states],
            )?
        }
        Pick::Ready { limit } => c.rows(
            view_sql!(
                "WHERE ",
                ready!("t"),
                " ORDER BY t.priority DESC, t.id LIMIT $1"
            ),
            &[&limit],
        )?,
    };
    rows.iter().map(view_row).collect()
}

pub(super) fn task_view(c: &mut Conn, id: i64) -> BoardResult<TaskView> {
    task_views(c, Pick::One(id))?
        .into_iter()
        .next()
        .ok_or_else(|| task_not_found(id))
}
