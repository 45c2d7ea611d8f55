//! `board import`: a whole backlog in one transaction.

use std::collections::HashMap;

use rusqlite::params;

use super::tasks::{current_goal, set_deps};
use super::{agent_opt, emit, import_rules, now_wall, EventKind, Events, SqliteStore, TaskState};
use crate::proto::backlog::Backlog;
use crate::proto::error::BoardResult;
use crate::store::Imported;

impl SqliteStore {
    pub(in crate::store) fn import(
        &mut self,
        backlog: &Backlog,
        by: &str,
    ) -> BoardResult<(Imported, Events)> {
        import_rules::check_backlog(backlog)?;
        self.tx(|tx, ev| {
            let now = now_wall();
            let mut ids: HashMap<&str, i64> = HashMap::new();
            let mut order = Vec::with_capacity(backlog.tasks.len());
            for t in &backlog.tasks {
                let state = TaskState::from(t.state);
                let finished = state != TaskState::Open;
                let labels = super::task_rules::join_labels(&t.labels)?;
                tx.execute(
                    "INSERT INTO tasks (title, body, priority, state, created_at, updated_at,
                                        done_by, done_at, labels, meant_for, review)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8, ?9, ?10)",
                    params![
                        t.title,
                        t.body,
                        t.priority,
                        state,
                        now,
                        (state == TaskState::Done).then_some(by),
                        finished.then_some(&now),
                        labels,
                        t.meant_for,
                        t.review
                    ],
                )?;
                let id = tx.last_insert_rowid();
                ids.insert(&t.key, id);
                order.push(id);
                emit(
                    tx,
                    ev,
                    EventKind::Add,
                    Some(id),
                    agent_opt(by),
                    None,
                    &t.title,
                )?;
            }
            for (id, after) in import_rules::resolved_deps(backlog, &ids)? {
                set_deps(tx, id, &after)?;
            }
            let mut goal_set = false;
            let mut replaced_goal = None;
            if let Some(g) = &backlog.goal {
                let current = current_goal(tx)?.map(|c| c.text);
                if current.as_deref() != Some(g.as_str()) {
                    tx.execute(
                        "INSERT INTO goals (text, set_at, set_by) VALUES (?1, ?2, ?3)",
                        params![g, now, by],
                    )?;
                    emit(tx, ev, EventKind::Goal, None, agent_opt(by), None, g)?;
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
