//! `board import`: a whole backlog in one transaction (PostgreSQL; see `store::import`).

use std::collections::HashMap;

use super::tasks::{current_goal, set_deps};
use super::{col, emit, PgStore};
use crate::proto::backlog::Backlog;
use crate::proto::error::BoardResult;
use crate::store::{agent_opt, import_rules, EventKind, Events, Imported, TaskState};

impl PgStore {
    pub(in crate::store) fn import(
        &mut self,
        backlog: &Backlog,
        by: &str,
    ) -> BoardResult<(Imported, Events)> {
        import_rules::check_backlog(backlog)?;
        self.tx(|c, ev| {
            let mut ids: HashMap<&str, i64> = HashMap::new();
            let mut order = Vec::with_capacity(backlog.tasks.len());
            for t in &backlog.tasks {
                let state = TaskState::from(t.state);
                let finished = state != TaskState::Open;
                let r = c.one(
                    "INSERT INTO tasks (title, body, priority, state, created_at, updated_at,
                                        done_by, done_at, labels, meant_for, review)
                     VALUES ($1, $2, $3, $4, board_wall(), board_wall(), $5,
                             CASE WHEN $6 THEN board_wall() END, $7, $8, $9)
                     RETURNING id",
                    &[
                        &t.title,
                        &t.body,
                        &t.priority,
                        &state.as_str(),
                        &(state == TaskState::Done).then_some(by),
                        &finished,
                        &crate::store::task_rules::join_labels(&t.labels)?,
                        &t.meant_for,
                        &t.review,
                    ],
                )?;
                let id: i64 = col(&r, 0)?;
                ids.insert(&t.key, id);
                order.push(id);
                emit(
                    c,
                    ev,
                    EventKind::Add,
                    Some(id),
                    agent_opt(by),
                    None,
                    &t.title,
                )?;
            }
            for (id, after) in import_rules::resolved_deps(backlog, &ids)? {
                set_deps(c, id, &after)?;
            }
            let mut goal_set = false;
            let mut replaced_goal = None;
            if let Some(g) = &backlog.goal {
                let current = current_goal(c)?.map(|c| c.text);
                if current.as_deref() != Some(g.as_str()) {
                    c.exec(
                        "INSERT INTO goals (text, set_at, set_by) VALUES ($1, board_wall(), $2)",
                        &[g, &by],
                    )?;
                    emit(c, ev, EventKind::Goal, None, agent_opt(by), None, g)?;
                    goal_set = true;
                    replaced_goal = current;
                }
            }
            Ok(Imported {
                ids: order,
                keys: backlog.tasks.iter().map(|t| t.key.clone()).collect(),
                goal_set,
                replaced_goal,
            })
        })
    }
}
