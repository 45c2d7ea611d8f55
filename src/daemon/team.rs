//! The methods that let a team share more than tasks: `import` and `export` of a backlog.
//! One handler function per method, called from [`crate::daemon::handlers`].

use std::collections::BTreeMap;

use super::handlers::Cx;
use crate::backlog::Backlog;
use crate::proto::error::BoardResult;
use crate::proto::methods::ImportParams;
use crate::proto::results::{ExportResult, ImportResult};
use crate::store::{Events, Store};

/// `import {goal?, tasks: [{key, title, body?, priority?, state?, after?}]}`: the whole backlog
/// in one transaction, or nothing.
pub fn import(
    cx: &Cx,
    store: &mut Store,
    ev: &mut Events,
    p: &ImportParams,
) -> BoardResult<ImportResult> {
    let (done, e) = store.import(p, cx.caller.name())?;
    ev.extend(e);
    let tasks = done
        .ids
        .iter()
        .map(|id| store.task(*id, cx.now))
        .collect::<BoardResult<Vec<_>>>()?;
    let keys: BTreeMap<String, i64> = done
        .keys
        .iter()
        .cloned()
        .zip(done.ids.iter().copied())
        .collect();
    Ok(ImportResult {
        tasks,
        keys,
        goal_set: done.goal_set,
    })
}

/// `export`: the board's backlog as a [`Backlog`] document (`goal`, `tasks` with keys `tN`).
pub fn export(cx: &Cx) -> BoardResult<ExportResult> {
    // One lock for both reads: the goal and the tasks of one moment.
    let store = cx.board.store();
    let goal = store.goal()?.map(|g| g.text);
    let tasks = store.list_tasks(None, cx.now)?;
    drop(store);
    Ok(Backlog::of_board(goal, &tasks))
}
