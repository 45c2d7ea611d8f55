//! The backlog: `goal`, `add`, `edit`, `cancel`, `reopen` (writes) and `list`, `ready`,
//! `show` (reads).

use super::cx::Cx;
use super::table::{HandleRead, HandleWrite};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::methods::verb;
use crate::proto::methods::{
    AddParams, CancelParams, EditParams, GoalParams, ListParams, ListState, ReadyParams,
    ReopenParams, ShowParams, StateFilter,
};
use crate::proto::methods::{GoalResult, Paged, ShowResult, TaskResult, TasksResult};
use crate::proto::views::MAX_PAGE;
use crate::proto::TaskView;
use crate::store::{Events, Store};

/// `goal`: reads the current goal, or sets a new one (older goals are kept).
impl HandleWrite for verb::Goal {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &GoalParams,
    ) -> BoardResult<GoalResult> {
        match &p.text {
            Some(text) => {
                let (g, e) = store.set_goal(text, cx.caller.name())?;
                ev.extend(e);
                Ok(GoalResult { goal: Some(g) })
            }
            None => Ok(GoalResult {
                goal: store.goal()?,
            }),
        }
    }
}

/// `add`: a new open task.
impl HandleWrite for verb::Add {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &AddParams,
    ) -> BoardResult<TaskResult> {
        let (task, e) = store.add_task_for(
            &p.title,
            p.body.as_deref().unwrap_or(""),
            p.priority.unwrap_or(0),
            p.after.as_deref().unwrap_or(&[]),
            p.labels.as_deref().unwrap_or(&[]),
            p.meant_for.as_deref(),
            p.review,
            cx.caller.name(),
            cx.now,
        )?;
        ev.extend(e);
        Ok(TaskResult { task })
    }
}

/// `edit`: changes the members given.
impl HandleWrite for verb::Edit {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &EditParams,
    ) -> BoardResult<TaskResult> {
        let (task, e) = store.edit_task(
            p.task,
            p.title.as_deref(),
            p.body.as_deref(),
            p.priority,
            p.after.as_deref(),
            &crate::store::Reassign {
                labels: p.labels.clone(),
                // `""` on the wire makes the task for anyone again.
                meant_for: p
                    .meant_for
                    .as_ref()
                    .map(|w| (!w.is_empty()).then(|| w.clone())),
                review: p.review,
            },
            cx.caller.name(),
            cx.now,
        )?;
        ev.extend(e);
        Ok(TaskResult { task })
    }
}

/// `cancel`: the task is cancelled and its claim, if any, ends.
impl HandleWrite for verb::Cancel {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &CancelParams,
    ) -> BoardResult<TaskResult> {
        let (task, e) = store.cancel_task(p.task, cx.caller.name(), cx.now)?;
        ev.extend(e);
        Ok(TaskResult { task })
    }
}

/// `reopen`: a done or cancelled task is open again (anyone may, as anyone may cancel).
impl HandleWrite for verb::Reopen {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &ReopenParams,
    ) -> BoardResult<TaskResult> {
        let (task, e) = store.reopen_task(p.task, cx.caller.name(), cx.now)?;
        ev.extend(e);
        Ok(TaskResult { task })
    }
}

/// The optional `limit` of `list` / `ready`. Errors: `invalid` outside 1..=[`MAX_PAGE`].
fn page_limit(limit: Option<i64>) -> BoardResult<Option<i64>> {
    match limit {
        Some(l) if !(1..=MAX_PAGE).contains(&l) => Err(BoardError::invalid(format!(
            "`limit` must be between 1 and {MAX_PAGE}, not {l}"
        ))
        .with_code(-32602)),
        other => Ok(other),
    }
}

/// `list`: tasks by id, or those in the given states; a page of them with `limit`.
impl HandleRead for verb::List {
    fn handle(cx: &Cx, p: &ListParams) -> BoardResult<TasksResult> {
        let states: Option<Vec<ListState>> = p.state.as_ref().map(|f| match f {
            StateFilter::One(s) => vec![*s],
            StateFilter::Many(v) => v.clone(),
        });
        let limit = page_limit(p.limit)?;
        let (tasks, next) = cx.store().list_page(
            states.as_deref(),
            p.after.unwrap_or_default(),
            limit,
            cx.now,
        )?;
        let next = match limit {
            Some(_) => Paged::Page(next),
            None => Paged::Unpaged,
        };
        let tasks = with_label(tasks, p.label.as_deref())?;
        Ok(TasksResult { tasks, next })
    }
}

/// `ready`: ready tasks in claim order (at most `limit`; with `label`, among those carrying it).
impl HandleRead for verb::Ready {
    fn handle(cx: &Cx, p: &ReadyParams) -> BoardResult<TasksResult> {
        let limit = page_limit(p.limit)?;
        let mut tasks = match p.label {
            None => cx.store().ready_tasks(cx.now, limit)?,
            Some(_) => with_label(cx.store().ready_tasks(cx.now, None)?, p.label.as_deref())?,
        };
        if let Some(n) = limit {
            tasks.truncate(usize::try_from(n).unwrap_or(usize::MAX));
        }
        Ok(TasksResult {
            tasks,
            next: Paged::Unpaged,
        })
    }
}

/// The tasks carrying `label` (all of them when None), in their order.
///
/// # Errors
/// `invalid` naming a bad label (see [`crate::store::MAX_LABEL`]).
fn with_label(tasks: Vec<TaskView>, label: Option<&str>) -> BoardResult<Vec<TaskView>> {
    let Some(label) = label else {
        return Ok(tasks);
    };
    crate::store::check_label("label", label)?;
    Ok(tasks
        .into_iter()
        .filter(|t| t.labels.iter().any(|l| l == label))
        .collect())
}

/// `show`: one task with its notes and history.
impl HandleRead for verb::Show {
    fn handle(cx: &Cx, p: &ShowParams) -> BoardResult<ShowResult> {
        let store = cx.store();
        Ok(ShowResult {
            task: store.task(p.task, cx.now)?,
            notes: store.notes(p.task)?,
            events: store.task_events(p.task)?,
        })
    }
}
