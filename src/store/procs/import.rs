//! `board import`: a whole backlog in one transaction.

use std::collections::HashMap;

use crate::proto::backlog::Backlog;
use crate::proto::error::BoardResult;
use crate::store::db::{Backend, Db, Lock};
use crate::store::{
    agent_opt, import_rules, task_rules, EventKind, Events, Imported, TaskId, TaskState,
};

use super::tasks::{current_goal, set_deps};

pub(in crate::store) fn import<B: Backend>(
    b: &mut B,
    backlog: &Backlog,
    by: &str,
) -> BoardResult<(Imported, Events)> {
    import_rules::check_backlog(backlog)?;
    b.write(Lock::Exclusive, |db, ev| {
        let mut ids: HashMap<&str, i64> = HashMap::new();
        let mut order = Vec::with_capacity(backlog.tasks.len());
        for t in &backlog.tasks {
            let state = TaskState::from(t.state);
            let finished = state != TaskState::Open;
            let labels = task_rules::join_labels(&t.labels)?;
            let id = db.one(
                "INSERT INTO tasks (title, body, priority, state, created_at, updated_at,
                                    done_by, done_at, labels, meant_for, review)
                 VALUES ($1, $2, $3, $4, board_wall(), board_wall(), $5,
                         CASE WHEN $6 THEN board_wall() END, $7, $8, $9)
                 RETURNING id",
                &args![
                    &t.title,
                    &t.body,
                    t.priority,
                    state.as_str(),
                    (state == TaskState::Done).then_some(by),
                    finished,
                    &labels,
                    t.meant_for.as_deref(),
                    t.review
                ],
            )?;
            let id: i64 = crate::store::db::get(&id, 0)?;
            ids.insert(&t.key, id);
            order.push(TaskId(id));
            db.emit(ev, EventKind::Add, Some(id), agent_opt(by), None, &t.title)?;
        }
        for (id, after) in import_rules::resolved_deps(backlog, &ids)? {
            let after: Vec<TaskId> = after.into_iter().map(TaskId).collect();
            set_deps(db, id, &after)?;
        }
        let (goal_set, replaced_goal) = match &backlog.goal {
            Some(g) => import_goal(db, ev, g, by)?,
            None => (false, None),
        };
        Ok(Imported {
            ids: order,
            keys: backlog.tasks.iter().map(|t| t.key.clone()).collect(),
            goal_set,
            replaced_goal,
        })
    })
}

/// Sets the backlog's goal `g` unless it is the current one: whether it did, and the goal it
/// replaced.
fn import_goal(
    db: &mut impl Db,
    ev: &mut Events,
    g: &str,
    by: &str,
) -> BoardResult<(bool, Option<String>)> {
    let current = current_goal(db)?.map(|c| c.text);
    if current.as_deref() == Some(g) {
        return Ok((false, None));
    }
    db.exec(
        "INSERT INTO goals (text, set_at, set_by) VALUES ($1, board_wall(), $2)",
        &args![g, by],
    )?;
    db.emit(ev, EventKind::Goal, None, agent_opt(by), None, g)?;
    Ok((true, current))
}
