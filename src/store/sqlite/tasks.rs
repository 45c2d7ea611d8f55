//! Task views on SQLite: one query for the tasks and one for all their dependencies (never one
//! per task); the rest of the tasks is `store::procs::tasks`.

use std::collections::HashMap;

use super::lite::Lite;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::TaskView;
use crate::store::db::{get, Db, Pick, Row};
use crate::store::procs::task_view_row;
use crate::store::{TaskId, TaskState};

/// The view columns (column 11 the claim's expiry on the lease clock); `$tail` picks the rows.
macro_rules! view_sql {
    ($($tail:tt)+) => {
        task_view_sql!("c.expires_ms", [""], $($tail)+)
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

/// Task views with dependencies and live claims joined in: one query for the tasks
/// ([`view_rows`]) and one for all their dependencies ([`join_deps`]). Statements are cached
/// on the connection, and each shape of query has its own SQL so SQLite can use the primary
/// key or the state index (a `?1 IS NULL OR t.id = ?1` condition would scan every task for a
/// single view).
pub(in crate::store) fn task_views(
    c: &mut Lite<'_>,
    pick: Pick,
    now_ms: i64,
) -> BoardResult<Vec<TaskView>> {
    let mut views = view_rows(c, pick, now_ms)?;
    if !views.is_empty() {
        join_deps(c, pick, &mut views)?;
    }
    Ok(views)
}

/// The views `pick` picks, without their dependencies, each row mapped as SQLite reads it.
fn view_rows(c: &mut Lite<'_>, pick: Pick, now_ms: i64) -> BoardResult<Vec<TaskView>> {
    let view = |r: &dyn Row| task_view_row(r, now_ms);
    match pick {
        Pick::One(id) => c.map_rows(view_sql!("WHERE t.id = $1"), &args![id], view),
        Pick::Page {
            states,
            after,
            limit,
        } => page_rows(c, states, after, limit.unwrap_or(-1), view),
        Pick::Ready { limit } => c.map_rows(
            view_sql!(
                "WHERE ",
                ready!("t"),
                " ORDER BY t.priority DESC, t.id LIMIT $1"
            ),
            &args![limit.unwrap_or(-1)],
            view,
        ),
    }
}

/// The views of one page: tasks above `after` (in `states`, when given), at most `limit` (-1:
/// all). The state filter goes in as a JSON list.
fn page_rows(
    c: &mut Lite<'_>,
    states: Option<&[TaskState]>,
    after: i64,
    limit: i64,
    view: impl FnMut(&dyn Row) -> BoardResult<TaskView>,
) -> BoardResult<Vec<TaskView>> {
    let Some(states) = states else {
        return c.map_rows(
            view_sql!("WHERE t.id > $1 ORDER BY t.id LIMIT $2"),
            &args![after, limit],
            view,
        );
    };
    let states = serde_json::to_string(states)
        .map_err(|e| BoardError::internal(format!("encoding the state filter: {e}")))?;
    c.map_rows(
        view_sql!(
            "WHERE t.id > $1 AND t.state IN (SELECT value FROM json_each($3))
             ORDER BY t.id LIMIT $2"
        ),
        &args![after, limit, &states],
        view,
    )
}

/// Joins their dependencies into `views` (not empty): `after`, `blocked_by`, `ready`.
fn join_deps(c: &mut Lite<'_>, pick: Pick, views: &mut [TaskView]) -> BoardResult<()> {
    let rows = match pick {
        Pick::One(id) => c.rows(deps_sql!("d.task_id = $1"), &args![id])?,
        Pick::Page { .. } => {
            // Views are in id order: one range scan of the primary key covers the page.
            let (lo, hi) = (views[0].id, views[views.len() - 1].id);
            c.rows(deps_sql!("d.task_id BETWEEN $1 AND $2"), &args![lo, hi])?
        }
        Pick::Ready { .. } => {
            let ids = serde_json::to_string(&views.iter().map(|v| v.id).collect::<Vec<_>>())
                .map_err(|e| BoardError::internal(format!("encoding task ids: {e}")))?;
            c.rows(
                deps_sql!("d.task_id IN (SELECT value FROM json_each($1))"),
                &args![&ids],
            )?
        }
    };
    let mut deps: HashMap<TaskId, Vec<(TaskId, bool)>> = HashMap::new();
    for r in &rows {
        let (t, a, done): (TaskId, TaskId, bool) = (get(r, 0)?, get(r, 1)?, get(r, 2)?);
        deps.entry(t).or_default().push((a, done));
    }
    for v in views {
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
    Ok(())
}
