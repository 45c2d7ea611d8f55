//! The backlog: `goal`, `add`, `edit`, `cancel`, `reopen`, `list`, `ready`, `show`: their rows of
//! the method table, their parameters and their results.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use serde_json::Value;

use crate::proto::glossary::{ListState, TaskId};
use crate::proto::views::{EventView, GoalView, NoteView, TaskView};

/// This group's rows of the method table (see [`super`]): passed on to the next group's rows.
macro_rules! tasks_rows {
    ([$next:ident $($rest:ident)*] $d:tt $($rows:tt)*) => { $next! { [$($rest)*] $d $($rows)*
        /// Without text: read the current goal. With text: set a new goal (older ones are kept).
        Goal = "goal", Write, GoalParams => GoalResult;
        /// Add a task to the backlog.
        Add = "add", Write, AddParams => TaskResult;
        /// Change a task; absent members stay; `after` replaces the dependency list.
        Edit = "edit", Write, EditParams => TaskResult;
        /// Cancel a task; its claim, if any, ends.
        Cancel = "cancel", Write + Cli, CancelParams => TaskResult;
        /// Reopen a done or cancelled task: it is open again (ready once what it waits for is
        /// done), keeping its generation, so the next claim fences every earlier holder.
        Reopen = "reopen", Write + Cli, ReopenParams => TaskResult;
        /// List tasks, optionally only those in the given state(s).
        List = "list", Read, ListParams => TasksResult;
        /// Ready tasks in claim order (priority, then age).
        Ready = "ready", Read, ReadyParams => TasksResult;
        /// One task with its notes and events.
        Show = "show", Read + Cli, ShowParams => ShowResult;
    } };
}

/// `goal` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalParams {
    /// A new goal for the whole team (older goals are kept); leave it out to read the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `add` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddParams {
    /// One-line title of the new task.
    pub title: String,
    /// Longer description: what to do and how to tell it is done (default empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Higher runs first (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// Ids of tasks that must be done before this one is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Vec<TaskId>>,
    /// Labels (each 1 to 64 characters, no comma, whitespace or control character).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// The agent name or role the task is for (default: any agent).
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub meant_for: Option<String>,
    /// Whether its `done` goes through review: true or false whatever `[review] required`
    /// says (default: as `[review] required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<bool>,
}

/// `edit` parameters: absent or null members stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditParams {
    /// Task id.
    pub task: TaskId,
    /// New title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// New body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// New priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// New dependency list (replaces the old one; `[]` clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Vec<TaskId>>,
    /// New label set (replaces the old one; `[]` clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// New agent name or role the task is for; `""` makes it for any agent.
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub meant_for: Option<String>,
    /// Whether its `done` goes through review from now on, whatever `[review] required` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<bool>,
}

/// Parameters naming one task (`cancel`, `show`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct TaskParams {
    /// Task id.
    pub task: TaskId,
}

/// `cancel` parameters.
pub type CancelParams = TaskParams;

/// `reopen` parameters.
pub type ReopenParams = TaskParams;
/// `show` parameters.
pub type ShowParams = TaskParams;

/// One state or several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum StateFilter {
    /// Only this state.
    One(ListState),
    /// Any of these states.
    Many(Vec<ListState>),
}

impl<'de> Deserialize<'de> for StateFilter {
    /// A state name or a list of them; an unknown name is refused with the list of known ones.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let known = ListState::known;
        let one = |v: &Value| -> Result<ListState, D::Error> {
            let name = v
                .as_str()
                .ok_or_else(|| D::Error::custom(format!("a state is a string ({})", known())))?;
            name.parse().map_err(D::Error::custom)
        };
        match Value::deserialize(d)? {
            v @ Value::String(_) => one(&v).map(StateFilter::One),
            Value::Array(items) => items
                .iter()
                .map(one)
                .collect::<Result<_, _>>()
                .map(StateFilter::Many),
            _ => Err(D::Error::custom(format!(
                "must be a state or a list of states ({})",
                known()
            ))),
        }
    }
}

/// `list` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Only tasks in this state or these states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateFilter>,
    /// At most this many tasks (1..10000); the result's `next` is the cursor of the next page,
    /// null on the last. With ready or blocked, a page may hold fewer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Cursor: only tasks with an id above this (the `next` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<TaskId>,
    /// Only tasks carrying this label (a page may then hold fewer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `ready` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadyParams {
    /// At most this many tasks (1..10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Only tasks carrying this label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `goal`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalResult {
    /// The current goal (after setting it, the new one), or null.
    pub goal: Option<GoalView>,
}

/// `list`, `ready`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TasksResult {
    /// The tasks (list: by id; ready: in claim order).
    pub tasks: Vec<TaskView>,
    /// `list` with `limit`: the cursor of the next page (its `after`), null on the last page;
    /// absent without `limit`.
    #[serde(default, skip_serializing_if = "Paged::is_unpaged")]
    pub next: Paged,
}

/// The `next` cursor of a paged `list`: absent when the call asked for no page, else the next
/// page's `after` or null on the last page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Paged {
    /// The call asked for no page (the member is left out).
    #[default]
    Unpaged,
    /// The cursor, or null on the last page.
    Page(Option<TaskId>),
}

impl Paged {
    /// Whether the member is left out.
    pub fn is_unpaged(&self) -> bool {
        matches!(self, Paged::Unpaged)
    }
}

/// `show`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowResult {
    /// The task.
    pub task: TaskView,
    /// Its notes, oldest first.
    pub notes: Vec<NoteView>,
    /// Its history, oldest first.
    pub events: Vec<EventView>,
}
