//! The backend-independent rules of `board import`: checking a backlog before any write and
//! resolving its keys to the new task ids. Pure: both stores call them.

use std::collections::HashMap;

use crate::proto::backlog::Backlog;
use crate::proto::error::{BoardError, BoardResult};
use crate::store::{check_text, MAX_TEXT, MAX_TITLE};

/// Checks a backlog (its shape, keys and dependencies, then every title, body and the goal
/// against their limits) before anything is written.
///
/// # Errors
/// `invalid` naming the task (by its key, cut to 64 characters) and the field at fault.
pub(crate) fn check_backlog(backlog: &Backlog) -> BoardResult<()> {
    backlog
        .check()
        .map_err(|e| BoardError::invalid(e.to_string()))?;
    for t in &backlog.tasks {
        let name = |what: &str| format!("{what} of task {:?}", short(&t.key));
        check_text(&name("title"), &t.title, MAX_TITLE, false)?;
        check_text(&name("body"), &t.body, MAX_TEXT, true)?;
        let named =
            |e: BoardError| BoardError::invalid(format!("task {:?}: {}", short(&t.key), e.message));
        crate::store::task_rules::join_labels(&t.labels).map_err(named)?;
        if let Some(whom) = &t.meant_for {
            crate::proto::labels::check_label("for", whom).map_err(named)?;
        }
    }
    if let Some(g) = &backlog.goal {
        check_text("goal", g, MAX_TEXT, false)?;
    }
    Ok(())
}

/// Each imported task's new id with the new ids it waits for, in the file's order, from
/// `ids` (file key → new id).
///
/// # Errors
/// `internal` when a key has no id (a checked backlog names only its own keys).
pub(crate) fn resolved_deps(
    backlog: &Backlog,
    ids: &HashMap<&str, i64>,
) -> BoardResult<Vec<(i64, Vec<i64>)>> {
    let id_of = |k: &str| {
        ids.get(k)
            .copied()
            .ok_or_else(|| BoardError::internal(format!("import: no id for key {:?}", short(k))))
    };
    backlog
        .tasks
        .iter()
        .map(|t| {
            let after = t
                .after
                .iter()
                .map(|k| id_of(k))
                .collect::<BoardResult<_>>()?;
            Ok((id_of(&t.key)?, after))
        })
        .collect()
}

fn short(s: &str) -> String {
    s.chars().take(64).collect()
}
