//! The one shape of a backlog file ([`Backlog`]: a goal and tasks naming each other by key),
//! what makes one valid ([`Backlog::check`]), a board's tasks as one, and the form that compares
//! two as plans.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::proto::glossary::BacklogState;

/// A goal and tasks, in file order (an import creates them in this order).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "backlog")]
pub struct Backlog {
    /// The shared goal, if the file sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The tasks.
    #[serde(default)]
    pub tasks: Vec<BacklogTask>,
}

/// One task of a [`Backlog`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "backlog_task")]
pub struct BacklogTask {
    /// Name other tasks use in `after` (unique in the file).
    pub key: String,
    /// One-line title.
    pub title: String,
    /// Longer description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// Higher runs first (default 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub priority: i64,
    /// `open` (default), `done` or `cancelled`.
    #[serde(default, skip_serializing_if = "is_open")]
    pub state: BacklogState,
    /// Keys of the tasks this one waits for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// The task's labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// The agent name or role the task is for (absent: any agent).
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub meant_for: Option<String>,
    /// Whether its `done` goes through review (absent: as `[review] required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<bool>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

fn is_open(s: &BacklogState) -> bool {
    *s == BacklogState::Open
}

/// Why a backlog file was refused. Each names the place (line, key) that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BacklogError {
    /// The TOML or JSON does not parse, or has unknown fields.
    #[error("{0}")]
    Syntax(String),
    /// A Markdown line that looks like a task but is not one.
    #[error("line {line}: {message}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The tasks do not make a backlog (duplicate or unknown keys, a cycle, a bad state).
    #[error("{0}")]
    Invalid(String),
}

impl Backlog {
    /// Checks what a parser cannot: keys unique and not empty, titles not empty, `after` names
    /// keys of this file, and no cycle (a task that would wait for itself).
    pub fn check(&self) -> Result<(), BacklogError> {
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, t) in self.tasks.iter().enumerate() {
            if t.key.trim().is_empty() {
                return Err(BacklogError::Invalid(format!(
                    "task {} ({:?}) has an empty key",
                    i + 1,
                    short(&t.title)
                )));
            }
            if index.insert(&t.key, i).is_some() {
                return Err(BacklogError::Invalid(format!(
                    "key {:?} is used by two tasks",
                    short(&t.key)
                )));
            }
            if t.title.trim().is_empty() {
                return Err(BacklogError::Invalid(format!(
                    "task {:?} has an empty title",
                    short(&t.key)
                )));
            }
        }
        for t in &self.tasks {
            if let Some(a) = t.after.iter().find(|a| !index.contains_key(a.as_str())) {
                return Err(BacklogError::Invalid(format!(
                    "task {:?} waits for {:?}, which no task of this file has as its key",
                    short(&t.key),
                    short(a)
                )));
            }
        }
        if let Some(k) = self.cycle(&index) {
            return Err(BacklogError::Invalid(format!(
                "task {:?} waits for itself (through its `after` or nesting)",
                short(k)
            )));
        }
        Ok(())
    }

    /// A key on a dependency cycle, if there is one (depth-first search, iterative).
    fn cycle(&self, index: &HashMap<&str, usize>) -> Option<&str> {
        // 0 unvisited, 1 on the current path, 2 finished.
        let mut mark = vec![0u8; self.tasks.len()];
        for start in 0..self.tasks.len() {
            if mark[start] != 0 {
                continue;
            }
            let mut stack = vec![(start, 0usize)];
            mark[start] = 1;
            while let Some((node, next)) = stack.pop() {
                let after = &self.tasks[node].after;
                if next == after.len() {
                    mark[node] = 2;
                    continue;
                }
                stack.push((node, next + 1));
                let dep = index[after[next].as_str()];
                match mark[dep] {
                    1 => return Some(&self.tasks[dep].key),
                    0 => {
                        mark[dep] = 1;
                        stack.push((dep, 0));
                    }
                    _ => {}
                }
            }
        }
        None
    }

    /// The backlog of a board: `tasks` as the board lists them (id order), keys `tN`.
    pub fn of_board(goal: Option<String>, tasks: &[crate::proto::views::TaskView]) -> Backlog {
        let key = |id: crate::proto::glossary::TaskId| format!("t{id}");
        Backlog {
            goal,
            tasks: tasks
                .iter()
                .map(|t| BacklogTask {
                    key: key(t.id),
                    title: t.title.clone(),
                    body: t.body.clone(),
                    priority: t.priority,
                    state: t.state.into(),
                    after: t.after.iter().map(|a| key(*a)).collect(),
                    labels: t.labels.clone(),
                    meant_for: t.meant_for.clone(),
                    review: t.review,
                })
                .collect(),
        }
    }

    /// The same backlog with every key replaced by its task's position (`1`, `2`, …): two
    /// backlogs are the same plan when their canonical forms are equal.
    pub fn canonical(&self) -> Backlog {
        let pos: BTreeMap<&str, String> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.key.as_str(), (i + 1).to_string()))
            .collect();
        let mut out = self.clone();
        for t in &mut out.tasks {
            t.key = pos[t.key.as_str()].clone();
            t.after = t.after.iter().map(|a| pos[a.as_str()].clone()).collect();
            t.after.sort_by_key(|a| a.parse::<usize>().unwrap_or(0));
        }
        out
    }
}

fn short(s: &str) -> String {
    s.chars().take(64).collect()
}
