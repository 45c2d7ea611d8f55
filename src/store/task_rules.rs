//! The backend-independent rules of goals and tasks: checking a task's text, the refusals of
//! a cancel or a dependency, and cutting a listed page. Pure: both stores call them with what
//! they read, so SQLite and PostgreSQL check and answer alike by construction.

use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::labels::check_label;
use crate::proto::TaskView;
use crate::store::{check_text, ListState, TaskId, TaskState, MAX_TEXT, MAX_TITLE};

/// Checks a new or edited task's title and body (each when given) against their limits.
///
/// # Errors
/// `invalid` naming the field, when a text is empty (title only), too long or not printable.
pub(crate) fn check_task_text(title: Option<&str>, body: Option<&str>) -> BoardResult<()> {
    if let Some(t) = title {
        check_text("title", t, MAX_TITLE, false)?;
    }
    if let Some(b) = body {
        check_text("body", b, MAX_TEXT, true)?;
    }
    Ok(())
}

/// `conflict`: task `id` is in `state`, which a cancel cannot end.
pub(crate) fn not_cancellable(id: i64, state: TaskState) -> BoardError {
    BoardError::new(
        ErrorKind::Conflict,
        format!(
            "task {id} is {}; only open or claimed tasks can be cancelled",
            state.phrase()
        ),
    )
    .with("state", state.as_str())
}

/// `invalid` when task `id` is asked to wait for itself.
pub(crate) fn check_not_self(id: i64, after: i64) -> BoardResult<()> {
    if after == id {
        return Err(BoardError::invalid(format!(
            "task {id} cannot wait for itself"
        )));
    }
    Ok(())
}

/// `invalid` when `id` waiting for `after` closes a cycle (`cycle`: `after` already waits,
/// transitively, for `id`).
pub(crate) fn check_no_cycle(id: i64, after: i64, cycle: bool) -> BoardResult<()> {
    if cycle {
        return Err(BoardError::invalid(format!(
            "task {id} cannot wait for task {after}: task {after} already waits for task {id}"
        )));
    }
    Ok(())
}

/// What a page of `list` asks the store for: the stored states to filter by in SQL, and how
/// many rows to read (`None`: all).
pub(crate) struct PageAsk {
    /// The stored states the listed ones map to (`ready`/`blocked` are stored as `open`).
    pub stored: Option<Vec<TaskState>>,
    /// One row more than asked, which tells whether another page follows.
    pub rows: Option<i64>,
}

/// The SQL side of a `list` page of at most `limit` tasks in `states`.
pub(crate) fn page_ask(states: Option<&[ListState]>, limit: Option<i64>) -> PageAsk {
    PageAsk {
        stored: states.map(|s| s.iter().map(|x| x.stored()).collect()),
        rows: limit.map(|l| l.saturating_add(1)),
    }
}

/// Cuts the views read for a page to `limit`, returns them with the cursor of the next page
/// (the last id kept, `None` when none follows), and then keeps only the tasks in `states`.
/// `ready` and `blocked` are open tasks told apart by their dependencies, known only once the
/// views are built; the cursor stays the last task looked at, so a page thinned by this filter
/// (even to nothing) still moves the cursor on.
pub(crate) fn finish_page(
    mut views: Vec<TaskView>,
    states: Option<&[ListState]>,
    limit: Option<i64>,
) -> (Vec<TaskView>, Option<TaskId>) {
    let next = match limit {
        Some(l) if views.len() as i64 > l => {
            views.truncate(usize::try_from(l).unwrap_or(usize::MAX));
            views.last().map(|v| v.id)
        }
        _ => None,
    };
    let by_readiness = states.is_some_and(|s| {
        s.iter()
            .any(|x| matches!(x, ListState::Ready | ListState::Blocked))
    });
    if let (true, Some(s)) = (by_readiness, states) {
        let wanted = |t: &TaskView, s: ListState| match s {
            ListState::Ready => t.ready,
            ListState::Blocked => t.state == TaskState::Open && !t.ready,
            other => t.state == other.stored(),
        };
        views.retain(|t| s.iter().any(|x| wanted(t, *x)));
    }
    (views, next)
}

/// Checks every label and joins them as the store keeps them: `a,b` (a repeated label once,
/// first place kept; `""` for none).
///
/// # Errors
/// `invalid` naming the first bad label (see [`check_label`]).
pub(crate) fn join_labels(labels: &[String]) -> BoardResult<String> {
    let mut kept: Vec<&str> = Vec::with_capacity(labels.len());
    for l in labels {
        check_label("label", l)?;
        if !kept.contains(&l.as_str()) {
            kept.push(l);
        }
    }
    Ok(kept.join(","))
}

/// The labels as the store keeps them (`a,b`), split again; `""` is none.
pub(crate) fn split_labels(joined: &str) -> Vec<String> {
    joined
        .split(',')
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// What an `edit` changes of a task's labels, whom it is for and whether it goes through
/// review; `None` leaves each alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reassign {
    /// The new label set (replaces the old one; empty clears it).
    pub labels: Option<Vec<String>>,
    /// The new agent name or role the task is for; `Some(None)` makes it for anyone.
    pub meant_for: Option<Option<String>>,
    /// Whether the task's `done` goes through review from now on (`edit --review` /
    /// `--no-review`); None leaves it alone.
    pub review: Option<bool>,
}

impl Reassign {
    /// The checked change as the store's `edit` statement binds it: the joined labels (None:
    /// unchanged) and the `for` name (None: unchanged, `""`: for anyone).
    ///
    /// # Errors
    /// `invalid` naming the first bad label or a bad `for` name.
    pub(crate) fn checked(&self) -> BoardResult<(Option<String>, Option<&str>)> {
        let labels = self.labels.as_deref().map(join_labels).transpose()?;
        let meant_for = match &self.meant_for {
            None => None,
            Some(None) => Some(""),
            Some(Some(whom)) => {
                check_label("for", whom)?;
                Some(whom.as_str())
            }
        };
        Ok((labels, meant_for))
    }
}
