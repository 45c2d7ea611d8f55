//! `board import`: a whole backlog in one transaction.

use std::collections::HashMap;

use rusqlite::params;

use super::tasks::{current_goal, set_deps};
use super::{
    agent_opt, check_text, emit, now_wall, EventKind, Events, SqliteStore, TaskState, MAX_TEXT,
    MAX_TITLE,
};
use crate::proto::backlog::Backlog;
use crate::proto::error::{BoardError, BoardResult};

/// What an import created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// New task ids, in the file's order.
    pub ids: Vec<i64>,
    /// The file's key of each new task, in the same order.
    pub keys: Vec<String>,
    /// Whether the import set a new goal (a goal equal to the current one is left alone).
    pub goal_set: bool,
}

impl SqliteStore {
    pub(super) fn import(
        &mut self,
        backlog: &Backlog,
        by: &str,
    ) -> BoardResult<(Imported, Events)> {
        backlog
            .check()
            .map_err(|e| BoardError::invalid(e.to_string()))?;
        for t in &backlog.tasks {
            let name = |what: &str| format!("{what} of task {:?}", short(&t.key));
            check_text(&name("title"), &t.title, MAX_TITLE, false)?;
            check_text(&name("body"), &t.body, MAX_TEXT, true)?;
        }
        if let Some(g) = &backlog.goal {
            check_text("goal", g, MAX_TEXT, false)?;
        }
        self.tx(|tx, ev| {
            let now = now_wall();
            let mut ids: HashMap<&str, i64> = HashMap::new();
            let mut order = Vec::with_capacity(backlog.tasks.len());
            for t in &backlog.tasks {
                let state = TaskState::from(t.state);
                let finished = state != TaskState::Open;
                tx.execute(
                    "INSERT INTO tasks (title, body, priority, state, created_at, updated_at,
                                        done_by, done_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)",
                    params![
                        t.title,
                        t.body,
                        t.priority,
                        state,
                        now,
                        (state == TaskState::Done).then_some(by),
                        finished.then_some(&now)
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
            for t in &backlog.tasks {
                let after: Vec<i64> = t.after.iter().map(|k| ids[k.as_str()]).collect();
                set_deps(tx, ids[t.key.as_str()], &after)?;
            }
            let mut goal_set = false;
            if let Some(g) = &backlog.goal {
                let current = current_goal(tx)?.map(|c| c.text);
                if current.as_deref() != Some(g.as_str()) {
                    tx.execute(
                        "INSERT INTO goals (text, set_at, set_by) VALUES (?1, ?2, ?3)",
                        params![g, now, by],
                    )?;
                    emit(tx, ev, EventKind::Goal, None, agent_opt(by), None, g)?;
                    goal_set = true;
                }
            }
            Ok(Imported {
                ids: order,
                keys: backlog.tasks.iter().map(|t| t.key.clone()).collect(),
                goal_set,
            })
        })
    }
}

fn short(s: &str) -> String {
    s.chars().take(64).collect()
}
