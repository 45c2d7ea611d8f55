//! Task views on PostgreSQL: a task's dependencies joined in as arrays by the statement that
//! reads it (one round trip); the rest of the tasks is `store::procs::tasks`.

use super::{col, Conn};
use crate::proto::error::BoardResult;
use crate::proto::TaskView;
use crate::store::db::Pick;
use crate::store::procs::task_view_row;

/// The view columns (the time left computed on the server's clock), then the task's
/// dependencies and the unfinished ones among them; `$tail` picks the rows.
macro_rules! view_sql {
    ($($tail:tt)+) => {
        task_view_sql!(
            "c.expires_ms - board_now_ms()",
            [",
                    ARRAY(SELECT d.after_id FROM task_deps d WHERE d.task_id = t.id
                          ORDER BY d.after_id),
                    ARRAY(SELECT d.after_id FROM task_deps d JOIN tasks a ON a.id = d.after_id
                          WHERE d.task_id = t.id AND a.state NOT IN ", finished!(), "
                          ORDER BY d.after_id)"],
            $($tail)+
        )
    };
}

fn view_row(r: &postgres::Row) -> BoardResult<TaskView> {
    let mut v = task_view_row(r, 0)?;
    v.after = col(r, 17)?;
    v.blocked_by = col(r, 18)?;
    v.ready = v.ready && v.blocked_by.is_empty();
    Ok(v)
}

/// Task views with their dependencies and live claims, in one statement.
pub(super) fn task_views(c: &mut Conn, pick: Pick<'_>) -> BoardResult<Vec<TaskView>> {
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
