//! The store's one surface: [`Store`], every operation of the board on its data, as one
//! trait-shaped set a second backend can implement. The board reaches it only through
//! the board process's `Board` (in `daemon::state`), which keeps every call off the async reactor.
//!
//! An operation written `shared fn` below is written once for both backends, in the `procs`
//! module of its concern (`tasks`, `claims`, `holder_writes`, `lapse`, `sessions`, …), over
//! [`db::Backend`]; the others are each backend's, in the module of the same concern.
//! [`store_api!`] declares the trait from the list below and forwards each method, so the list
//! is the one place that says what a backend must do. Rules every backend keeps (ARCHITECTURE.md): each state change is
//! one conditional statement in one transaction that also appends its events; expiries are
//! lease-clock milliseconds compared in the statement; generations never go backwards.

use super::*;
use crate::proto::backlog::Backlog;
use crate::proto::error::BoardResult;
use crate::proto::{
    EventView, GoalView, HostView, MessageView, NoteView, SessionView, StoreInfo, TaskView,
};
use answers::Answer;

/// Declares [`Store`] from a list of method signatures (with their docs) and implements it for
/// [`SqliteStore`] and [`pg::PgStore`] by forwarding each call to the inherent method of the
/// same name (inherent methods come first in `Self::name` paths; a backend lacking one would
/// recurse, which the `unconditional_recursion` lint refuses). A method written `default fn`
/// with a body is what a single-host embedded store does (nothing, or nothing to say): the body
/// is the trait's default, SQLite keeps it and PostgreSQL forwards. A method written
/// `shared fn` is written once for both backends: both forward to `procs` (over
/// [`db::Backend`]).
macro_rules! store_api {
    (@acc [$($tr:tt)*] [$($sq:tt)*] [$($pg:tt)*]) => {
        /// Every operation of the board on its data (see the module docs). Object safe: the
        /// board holds a `Box<dyn Store>`.
        pub trait Store: Send {
            $($tr)*
        }

        impl Store for SqliteStore {
            $($sq)*
        }

        impl Store for pg::PgStore {
            $($pg)*
        }
    };
    (@acc [$($tr:tt)*] [$($sq:tt)*] [$($pg:tt)*]
        $(#[$doc:meta])* fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?;
        $($rest:tt)*
    ) => {
        store_api!(@acc
            [$($tr)* $(#[$doc])* fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)?;]
            [$($sq)* fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)? { Self::$name(self $(, $arg)*) }]
            [$($pg)* fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)? { Self::$name(self $(, $arg)*) }]
            $($rest)*
        );
    };
    (@acc [$($tr:tt)*] [$($sq:tt)*] [$($pg:tt)*]
        $(#[$doc:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?;
        $($rest:tt)*
    ) => {
        store_api!(@acc
            [$($tr)* $(#[$doc])* fn $name(&self $(, $arg: $ty)*) $(-> $ret)?;]
            [$($sq)* fn $name(&self $(, $arg: $ty)*) $(-> $ret)? { Self::$name(self $(, $arg)*) }]
            [$($pg)* fn $name(&self $(, $arg: $ty)*) $(-> $ret)? { Self::$name(self $(, $arg)*) }]
            $($rest)*
        );
    };
    (@acc [$($tr:tt)*] [$($sq:tt)*] [$($pg:tt)*]
        $(#[$doc:meta])* default fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)? $body:block
        $($rest:tt)*
    ) => {
        store_api!(@acc
            [$($tr)* $(#[$doc])* fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)? { $(let _ = $arg;)* $body }]
            [$($sq)*]
            [$($pg)* fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)? { Self::$name(self $(, $arg)*) }]
            $($rest)*
        );
    };
    (@acc [$($tr:tt)*] [$($sq:tt)*] [$($pg:tt)*]
        $(#[$doc:meta])* default fn $name:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)? $body:block
        $($rest:tt)*
    ) => {
        store_api!(@acc
            [$($tr)* $(#[$doc])* fn $name(&self $(, $arg: $ty)*) $(-> $ret)? { $(let _ = $arg;)* $body }]
            [$($sq)*]
            [$($pg)* fn $name(&self $(, $arg: $ty)*) $(-> $ret)? { Self::$name(self $(, $arg)*) }]
            $($rest)*
        );
    };
    (@acc [$($tr:tt)*] [$($sq:tt)*] [$($pg:tt)*]
        $(#[$doc:meta])* shared fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?;
        $($rest:tt)*
    ) => {
        store_api!(@acc
            [$($tr)* $(#[$doc])* fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)?;]
            [$($sq)* fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)? { procs::$name(self $(, $arg)*) }]
            [$($pg)* fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)? { procs::$name(self $(, $arg)*) }]
            $($rest)*
        );
    };
    (@acc [$($tr:tt)*] [$($sq:tt)*] [$($pg:tt)*]
        $(#[$doc:meta])* shared fn $name:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?;
        $($rest:tt)*
    ) => {
        store_api!(@acc
            [$($tr)* $(#[$doc])* fn $name(&self $(, $arg: $ty)*) $(-> $ret)?;]
            [$($sq)* fn $name(&self $(, $arg: $ty)*) $(-> $ret)? { procs::$name(self $(, $arg)*) }]
            [$($pg)* fn $name(&self $(, $arg: $ty)*) $(-> $ret)? { procs::$name(self $(, $arg)*) }]
            $($rest)*
        );
    };
    ($($all:tt)*) => {
        store_api!(@acc [] [] [] $($all)*);
    };
}

store_api! {
    // ----- the board itself (mod.rs) --------------------------------------------

    /// Sets the hook that publishes events committed by a refused call (see [`Notify`]).
    fn set_notify(&mut self, notify: Notify);

    /// `PRAGMA integrity_check` → "ok" when sound.
    fn integrity_check(&self) -> BoardResult<String>;

    /// A value from the `meta` table.
    shared fn meta(&self, key: &str) -> BoardResult<Option<String>>;

    /// Sets a `meta` value.
    shared fn set_meta(&mut self, key: &str, value: &str) -> BoardResult<()>;

    /// Appends a free-standing event (board start, rejected write) in its own transaction.
    shared fn record(&mut self, kind: EventKind, task: Option<TaskId>, agent: Option<&str>, generation: Option<Generation>, reason: &str) -> BoardResult<Events>;

    // ----- goal and tasks (tasks.rs) --------------------------------------------

    /// Sets a new current goal (older goals are kept).
    shared fn set_goal(&mut self, text: &str, by: &str) -> BoardResult<(GoalView, Events)>;

    /// The current goal, if one was set.
    shared fn goal(&self) -> BoardResult<Option<GoalView>>;

    /// Adds a task. `after` must name existing tasks. Errors: `invalid` for an empty or oversized
    /// title, `not_found` for an unknown dependency.
    shared fn add_task(&mut self, title: &str, body: &str, priority: i64, after: &[TaskId], by: &str, now_ms: i64) -> BoardResult<(TaskView, Events)>;

    /// Adds a task with labels (each checked: 1 to 64 characters, no comma, whitespace or
    /// control character), the agent name or role it is for (None: any agent) and whether its
    /// `done` goes through review (None: as `[review] required`). Errors as `add_task`, and
    /// `invalid` naming a bad label or `for` name.
    #[allow(clippy::too_many_arguments, reason = "one argument per field of a new task")]
    shared fn add_task_for(&mut self, title: &str, body: &str, priority: i64, after: &[TaskId], labels: &[String], meant_for: Option<&str>, review: Option<bool>, by: &str, now_ms: i64) -> BoardResult<(TaskView, Events)>;

    /// Edits a task's title, body, priority, dependencies, labels, whom it is for or its review
    /// override (None leaves a field alone). Errors: `not_found`, `invalid` (empty title, dependency cycle, a
    /// bad label or `for` name).
    #[allow(clippy::too_many_arguments, reason = "one optional argument per editable field")]
    shared fn edit_task(&mut self, id: TaskId, title: Option<&str>, body: Option<&str>, priority: Option<i64>, after: Option<&[TaskId]>, assign: &Reassign, by: &str, now_ms: i64) -> BoardResult<(TaskView, Events)>;

    /// Cancels an open or claimed task; a live claim on it ends with reason `task cancelled`.
    shared fn cancel_task(&mut self, id: TaskId, by: &str, now_ms: i64) -> BoardResult<(TaskView, Events)>;
    /// A done or cancelled task is open again: its done record (who, at which generation, its
    /// commit and where it landed) is cleared, its generation kept; one `edit` event says
    /// "reopened". Errors: `not_found`; `conflict` naming its state when it is
    /// neither done nor cancelled.
    shared fn reopen_task(&mut self, id: TaskId, by: &str, now_ms: i64) -> BoardResult<(TaskView, Events)>;

    /// All tasks, optionally only those in `states`, ordered by id.
    ///
    /// Besides the stored states (`open`, `claimed`, `done`, `cancelled`), `ready` (open, nothing
    /// to wait for) and `blocked` (open, waiting for an unfinished dependency) select by
    /// readiness ([`ListState`]).
    shared fn list_tasks(&self, states: Option<&[ListState]>, now_ms: i64) -> BoardResult<Vec<TaskView>>;

    /// One page of [`Store::list_tasks`]: tasks with an id above `after`, at most `limit` (all
    /// when None). The second value is the cursor for the next page (the last id looked at) when
    /// more tasks follow, else None. Filtered by `ready` or `blocked`, a page may hold fewer
    /// than `limit` tasks, even none, before the last.
    shared fn list_page(&self, states: Option<&[ListState]>, after: TaskId, limit: Option<i64>, now_ms: i64) -> BoardResult<(Vec<TaskView>, Option<TaskId>)>;

    /// Ready tasks in claim order: highest priority first, then oldest; at most `limit` (all when
    /// None).
    shared fn ready_tasks(&self, now_ms: i64, limit: Option<i64>) -> BoardResult<Vec<TaskView>>;

    /// One task. Errors: `not_found`.
    shared fn task(&self, id: TaskId, now_ms: i64) -> BoardResult<TaskView>;

    /// A task's notes, oldest first.
    shared fn notes(&self, id: TaskId) -> BoardResult<Vec<NoteView>>;

    /// Open + claimed tasks: work that is not finished yet.
    shared fn unfinished_count(&self) -> BoardResult<i64>;

    // ----- claims: grants, renewals, checks (claims.rs) -------------------------

    /// Grants `agent` a claim on `task`, or on the best ready task when `task` is None (highest
    /// priority, then oldest). ARCHITECTURE.md rule 1: one conditional UPDATE decides; the generation is
    /// incremented in the same transaction (and lifted above the floor of a new epoch, see
    /// `store::identity`). Claiming a task the caller already holds (live) answers
    /// `already: true` with the same generation; a named task whose live claim has expired is
    /// lapsed first, in the same transaction. Errors: `not_found`, `conflict` (held:
    /// `data.holder`, `data.generation`), `no_ready_task` (`data.remaining` = unfinished tasks;
    /// for a named task: `data.blocked_by` when it waits, `data.state` when it is done or
    /// cancelled), `lapsed` if the session has ended.
    shared fn claim(&mut self, agent: &str, task: Option<TaskId>, lease: Lease) -> BoardResult<(ClaimOutcome, Events)>;

    /// As `claim` of the best ready task, among only the ready tasks carrying `label` (`board
    /// claim --label L`). Errors as `claim`, and `invalid` naming a bad label.
    shared fn claim_labelled(&mut self, agent: &str, label: &str, lease: Lease) -> BoardResult<(ClaimOutcome, Events)>;

    /// `claim` of the best ready task by `agent` under `(identity, op_id)` as one round trip to
    /// a store on the network (PostgreSQL: one statement, the op lookup, grant, answer and
    /// event together; the rules are [`Store::claim`]'s and [`Store::with_op`]'s). None when
    /// the backend has no such path (SQLite, whose calls cost no round trip) or nothing was
    /// granted and nothing saved: the caller then runs [`Store::claim`] in [`Store::with_op`],
    /// which explains a refusal.
    default fn claim_next_at_once(&mut self, identity: &str, op_id: &str, agent: &str, lease: Lease) -> BoardResult<Option<AtOnce>> { Ok(None) }

    /// `done` of `task` (at `generation`, when given; no note) by `agent` under
    /// `(identity, op_id)` as one round trip, like [`Store::claim_next_at_once`]. None when the
    /// backend has no such path or the caller holds no live, unexpired claim there and nothing
    /// was saved: the caller then runs [`Store::done`] in [`Store::with_op`], which answers a
    /// repeated `done` or explains the refusal.
    default fn done_at_once(&mut self, identity: &str, op_id: &str, agent: &str, task: TaskId, generation: Option<Generation>, now_ms: i64) -> BoardResult<Option<AtOnce>> { Ok(None) }

    /// Moves the expiry of every live, unexpired claim of `agent` to `lease.expires_ms` (ARCHITECTURE.md rule 2)
    /// and records `last_seen_at`. Returns the claims renewed.
    shared fn renew(&mut self, agent: &str, lease: Lease) -> BoardResult<Vec<ClaimInfo>>;

    /// [`Store::renew`] for several agents in one transaction (the sweep's renewals: one write
    /// transaction per sweep, not one per agent). Returns the agents that had a claim renewed.
    shared fn renew_many(&mut self, agents: &[&str], lease: Lease) -> BoardResult<Vec<String>>;

    /// Live claims of `agent`.
    shared fn live_claims(&self, agent: &str) -> BoardResult<Vec<ClaimInfo>>;

    /// Explicit `renew`: like [`Store::renew`], but the caller's claims whose expiry has passed
    /// are lapsed first (in the same transaction, ARCHITECTURE.md rule 5), and an agent left with no live
    /// claim that lost one gets `lapsed` naming every claim it lost (`data.lost`).
    shared fn renew_checked(&mut self, agent: &str, lease: Lease) -> BoardResult<Vec<ClaimInfo>>;

    /// Claims of `agent` that ended without its asking and were not reported to it yet, oldest
    /// first; marks them reported (one conditional UPDATE). A cheap read first skips the write
    /// transaction on the common path, where there is nothing to tell.
    shared fn take_lost(&mut self, agent: &str) -> BoardResult<Vec<LostClaim>>;

    /// `board check`: Ok when `agent` holds a live claim on `task` (any live claim when None) at
    /// `generation` (when given). Errors as for `done`.
    shared fn check(&mut self, agent: &str, task: Option<TaskId>, generation: Option<Generation>, now_ms: i64) -> BoardResult<ClaimInfo>;

    // ----- the fenced holder writes (holder_writes.rs) --------------------------

    /// Finishes `task` for its holder `agent` (ARCHITECTURE.md rules 5 and 7). With `generation`, it must
    /// equal the live claim's. Repeating a successful `done` answers `already: true`. Errors:
    /// `lapsed` (the caller's claim ended or the generation is stale), `conflict`, `not_found`.
    shared fn done(&mut self, agent: &str, task: TaskId, generation: Option<Generation>, note: Option<&str>, now_ms: i64) -> BoardResult<(DoneOutcome, Events)>;

    /// Finishes `task` for its holder `agent` into review (fenced like `done`): its claim ends
    /// and the task waits in state `review` with `commit` (a full commit id) for a verdict.
    /// Repeating it with the same commit answers `already: true`. Its event is `review` when the
    /// task waits for a verdict (its own override, else `review_required`, the board's
    /// `[review] required`), else `done`: it skips review and the board lands it at once.
    /// Errors as for `done`, and `invalid` for a commit that is no full commit id.
    #[allow(clippy::too_many_arguments, reason = "done's arguments, the commit, the review default")]
    shared fn submit_for_review(&mut self, agent: &str, task: TaskId, generation: Option<Generation>, commit: &str, note: Option<&str>, review_required: bool, now_ms: i64) -> BoardResult<(DoneOutcome, Events)>;

    /// What a reviewer and the land need to know of `task` (any state). Errors: `not_found`.
    shared fn review_facts(&self, task: TaskId) -> BoardResult<ReviewFacts>;

    /// Accepts `task`, in review at `commit`: it becomes `done`, with `landed` (the base's head
    /// right after the commit landed; None when the board lands nothing). `reviewer` is the
    /// reviewing agent session (None: an operator or the board itself), never the task's last
    /// holder; `note` (the reviewer's words) is kept on the task. Errors: `conflict` (not in
    /// review, or at another commit), `unauthorized` (the last holder), `not_found`, `invalid`
    /// (an empty or oversized note).
    #[allow(clippy::too_many_arguments, reason = "the verdict and what it carries")]
    shared fn accept_review(&mut self, task: TaskId, commit: &str, reviewer: Option<&str>, landed: Option<&str>, note: Option<&str>, now_ms: i64) -> BoardResult<(TaskView, Events)>;

    /// Sends `task`, in review at `commit`, back to ready with `note` (a reviewer's reject, or
    /// the board's own when the land conflicted). Errors as for [`Store::accept_review`], and
    /// `invalid` for an empty or oversized note.
    shared fn send_back(&mut self, task: TaskId, commit: &str, reviewer: Option<&str>, note: &str, now_ms: i64) -> BoardResult<(TaskView, Events)>;

    /// Says that `task`, which skipped review, did not land (`why`) and waits in review at
    /// `commit` for a person after all: its `review` event, written only while it is in review
    /// at that commit (else nothing). Errors: the store's.
    shared fn left_in_review(&mut self, task: TaskId, commit: &str, why: &str, now_ms: i64) -> BoardResult<Events>;

    /// Gives a claimed task back: by its holder (fenced like `done`), or by an operator with
    /// `force` (ends whoever's live claim; with `generation`, only a live claim at exactly that
    /// generation, else `lapsed`: the operator's view is stale). The task becomes open again.
    shared fn release(&mut self, agent: Option<&str>, task: TaskId, generation: Option<Generation>, note: Option<&str>, now_ms: i64) -> BoardResult<(TaskView, Events)>;

    /// Adds a note. From an agent it is a write as holder (fenced: `lapsed`/`conflict`; with
    /// `generation`, it must be the live claim's); from an operator it is accepted on any task.
    shared fn note(&mut self, agent: Option<&str>, task: TaskId, text: &str, generation: Option<Generation>, now_ms: i64) -> BoardResult<(NoteView, Events)>;

    // ----- lapse and stall (lapse.rs) -------------------------------------------

    /// Ends every live claim whose expiry is at or before `now_ms` (ARCHITECTURE.md rule 3, last step).
    fn lapse_due(&mut self, now_ms: i64, lease_ms: i64) -> BoardResult<Events>;

    /// The earliest expiry (lease clock, ms) among live claims.
    shared fn earliest_expiry(&self) -> BoardResult<Option<i64>>;

    /// After a stall of `stall_ms` (the board was not running: suspend, SIGSTOP): every live
    /// claim's expiry becomes `max(expiry + stall_ms, floor_ms)`, `floor_ms` being one sweep
    /// after the stall was found (the lease rules' `expiry_after_stall`), so
    /// the stall does not count against any lease, in one UPDATE; a `stall` event says so.
    /// Returns the events.
    fn extend_after_stall(&mut self, stall_ms: i64, floor_ms: i64, reason: &str) -> BoardResult<Events>;

    /// ARCHITECTURE.md rule 8 at start: a living session gets one sweep of grace to show activity —
    /// its live claims expire no earlier than `until_ms`; a restart never shortens nor, beyond
    /// that, extends a lease.
    fn grace_session(&mut self, agent: &str, until_ms: i64) -> BoardResult<()>;

    /// Whether any live claim is due to lapse at `now_ms` (cheap read to skip empty sweeps).
    shared fn any_due(&self, now_ms: i64) -> BoardResult<bool>;

    // ----- agent sessions (sessions.rs) -----------------------------------------

    /// Registers an agent session under a unique id derived from `name` (`name`, `name-2`, …;
    /// an id once used, even by a pruned session, is never reused). Its name, the one people
    /// see, is `name` unless a live session has it, else the first free `name-N` (so a
    /// restarted agent takes its name back); [`Store::session_name`] reads it. `launcher` is the `board run` process (pid, start);
    /// `branch` the git branch the agent starts on.
    shared fn register_session(&mut self, name: &str, token_hash: &str, boot_id: &str, launcher: Option<(i32, u64)>, branch: Option<&str>, attention_ms: Option<i64>) -> BoardResult<(String, Events)>;

    /// As `register_session`, with the role the session was started with (`board run --role`;
    /// claim-next gives it the tasks meant for that role). Errors as `register_session`, and
    /// `invalid` naming a bad role (the rules of a label).
    #[allow(clippy::too_many_arguments, reason = "one argument per column of a new session")]
    shared fn register_session_as(&mut self, name: &str, role: Option<&str>, token_hash: &str, boot_id: &str, launcher: Option<(i32, u64)>, branch: Option<&str>, attention_ms: Option<i64>) -> BoardResult<(String, Events)>;

    /// Records the agent's process (and pane) once the launcher has spawned it.
    shared fn attach_session(&mut self, id: &str, agent: (i32, u64), pane: Option<(&str, i32, u64)>) -> BoardResult<()>;

    /// Ends session `id` and expels its live claims with `reason` (ARCHITECTURE.md rule 4). Idempotent:
    /// a session that already ended is left alone (the first report wins). Returns whether this
    /// call ended it.
    shared fn expel_session(&mut self, id: &str, reason: &str) -> BoardResult<(bool, Events)>;

    /// Sets or clears (None) the session's permission prompt (its CLI waits for a person; the
    /// hooks' `waiting`): a `wait` or `resume` event when it changed. Returns whether it did.
    shared fn set_waiting(&mut self, id: &str, question: Option<&str>) -> BoardResult<(bool, Events)>;

    /// Asks (Some) or withdraws (None) the session's question to a person (`board wait`,
    /// `board resume`), by one conditional UPDATE: a `question` event with its text, or a
    /// `resume` event, when it changed (asking the open question again changes nothing).
    /// Only [`Store::answer`], a withdrawal or the session's end close a question. Errors:
    /// `invalid` (empty or oversized question). Returns whether anything changed.
    shared fn set_question(&mut self, id: &str, question: Option<&str>) -> BoardResult<(bool, Events)>;

    /// Records the first call or hook with the session's identity (it reached its prompt).
    /// Returns whether this call recorded it.
    shared fn mark_contacted(&mut self, id: &str) -> BoardResult<bool>;

    /// Marks the session idle (its agent finished its turn; `reason` says who said so), or with
    /// None clears that. Setting appends an `idle` event; clearing appends none (every call of
    /// an agent clears it, and the log would drown in them). Returns whether anything changed.
    shared fn set_idle(&mut self, id: &str, reason: Option<&str>) -> BoardResult<(bool, Events)>;

    /// The row of one session (live or ended).
    shared fn session(&self, id: &str) -> BoardResult<Option<SessionRow>>;

    /// Why a session ended, if it did.
    shared fn session_end_reason(&self, id: &str) -> BoardResult<Option<String>>;

    /// How many sessions have ended (for the `board agents --all` hint).
    shared fn ended_session_count(&self) -> BoardResult<i64>;

    /// Rows of all live sessions.
    fn live_sessions(&self) -> BoardResult<Vec<SessionRow>>;

    /// Rows of the sessions started in boot `boot_id` whose agent or launcher process has one of
    /// the `pids` (live and ended ones: the caller compares process start times to tell a
    /// session's process from a later one that reuses its pid).
    fn sessions_with_pids(&self, boot_id: &str, pids: &[i32]) -> BoardResult<Vec<SessionRow>>;

    /// Sessions for display. `recent_ended_ms`: None lists every session; `Some(ms)` the live
    /// ones and, for each name no live session has, its last session if that ended within the
    /// last `ms` milliseconds. `state` is filled in by the caller's liveness knowledge via
    /// `state_of`.
    shared fn sessions(&self, recent_ended_ms: Option<i64>, state_of: &dyn Fn(&SessionRow) -> Option<AgentState>) -> BoardResult<Vec<SessionView>>;

    /// The name people see of session `id` (unique among live sessions; see
    /// [`Store::register_session`]); None for an unknown id.
    shared fn session_name(&self, id: &str) -> BoardResult<Option<String>>;

    /// Forgets the sessions that ended at least `older_ms` milliseconds ago (0: every ended
    /// one), with their ended claims and the messages sent to them; their ids are retired so
    /// never given again, and the event log keeps them. Returns the forgotten ids.
    fn prune_sessions(&mut self, older_ms: i64) -> BoardResult<Vec<String>>;

    // ----- terminals of agent sessions (terminal.rs) ----------------------------

    /// Records the terminal session `id` runs on (`board run`'s stdin). A session that has
    /// ended is left alone.
    fn set_session_tty(&mut self, id: &str, tty: &str) -> BoardResult<()>;

    /// The terminal of session `id`, if it recorded one.
    fn session_tty(&self, id: &str) -> BoardResult<Option<String>>;

    /// Every live claim with its holder's terminal, earliest expiry first.
    fn live_claims_with_tty(&self) -> BoardResult<Vec<LiveClaim>>;

    // ----- messages (messages.rs) -----------------------------------------------

    /// Stores a message from `from` to `to` and logs a `message` event. `to` is `operator`, a
    /// live session id, or the name of exactly one live session (`claude` finds `claude-3` when
    /// that is the only live `claude`). With `answer`, a recipient that is waiting for a human
    /// stops waiting, in the same transaction: its open question ends as with [`Store::answer`]
    /// (an `answer` event), its permission prompt too (a `resume` event).
    ///
    /// Errors: `invalid` (empty or oversized text), `not_found` (no such live session),
    /// `usage` (a name several live sessions share: send to an id).
    shared fn send(&mut self, from: &str, to: &str, text: &str, answer: bool) -> BoardResult<(Sent, Events)>;

    /// `from` (the operator or another agent session) answers the open question of the live
    /// session `to` (named as for [`Store::send`]): in one transaction the question ends (one
    /// conditional UPDATE), the answer is stored as a message in `to`'s inbox (`answer: true`),
    /// and `message` and `answer` events (reason: the answer) are appended. `Sent::question`
    /// is the question answered.
    ///
    /// Errors, each changing nothing: `not_found` (`to` has no open question, or names no live
    /// session), `invalid` (empty or oversized text; `to` is `operator` or `from` itself),
    /// `usage` (a name several live sessions share).
    shared fn answer(&mut self, from: &str, to: &str, text: &str) -> BoardResult<(Sent, Events)>;

    /// The unread messages of `recipient` (with `answers_only`, only the answers to its
    /// questions), oldest first, marked read by the same one conditional statement: each
    /// message is delivered once, even to racing readers.
    shared fn inbox(&mut self, recipient: &str, answers_only: bool) -> BoardResult<Vec<MessageView>>;

    /// How many messages `recipient` has not read, and from whom (a read on the partial index
    /// of unread messages: cheap enough for every request).
    shared fn unread(&self, recipient: &str) -> BoardResult<Unread>;

    // ----- the event log (events.rs) --------------------------------------------

    /// The id of the newest event (0 for an empty log); on a store whose writers commit side
    /// by side, the newest below which no running transaction can still add one.
    fn last_event_id(&self) -> BoardResult<i64>;

    /// Events with id > `after`, oldest first, at most `limit`; never one above
    /// [`Store::last_event_id`]'s answer at the time of the call.
    fn events(&self, after: i64, limit: i64) -> BoardResult<Vec<EventView>>;

    /// Whether events committed may be held back, waiting for a slower transaction to fill a
    /// gap below them (a stream asks again shortly). Always false on the embedded store, whose
    /// one writer commits in id order.
    default fn events_waiting(&self) -> bool { false }

    /// The last `limit` events, oldest first.
    fn recent_events(&self, limit: i64) -> BoardResult<Vec<EventView>>;

    /// Events of one task, oldest first.
    fn task_events(&self, task: TaskId) -> BoardResult<Vec<EventView>>;

    // ----- backlog import (import.rs) -------------------------------------------

    /// Adds every task of `backlog` (checked with [`Backlog::check`]) and its goal in one
    /// `BEGIN IMMEDIATE` transaction: all of it or nothing. Tasks get new ids in file order;
    /// `after` keys become those ids. A `done` or `cancelled` task is created finished (done by
    /// `by`, generation 0: it was never claimed here). Each task is an `add` event.
    ///
    /// Errors: `invalid` naming the task (empty or oversized text, a bad key, a cycle); nothing
    /// is created then.
    shared fn import(&mut self, backlog: &Backlog, by: &str) -> BoardResult<(Imported, Events)>;

    // ----- retries applied once (op_results.rs) ---------------------------------

    /// Runs `op` once for `(identity, op_id)`: returns the saved answer of an earlier attempt, or
    /// runs it and saves its answer, all in one transaction. Refusals are saved too (a retry gets
    /// the same refusal), except `internal` and `unavailable` ones, which say nothing about the
    /// request and may pass. The outer `Err` is a store failure: nothing was applied or saved.
    shared fn with_op(&mut self, identity: &str, op_id: &str, op: &mut dyn FnMut(&mut dyn Store) -> Answer) -> BoardResult<Answer>;

    // ----- hosts of a shared store (hosts.rs) -----------------------------------

    /// Which store this is, for `board status`.
    fn describe(&self) -> StoreInfo;

    /// The store's own clock, ms since the Unix epoch (PostgreSQL: the server's
    /// `clock_timestamp()`); None for SQLite, where the board's lease clock is the truth. A
    /// board on a shared store estimates the server clock from it, so the [`Lease`]s
    /// it passes are on that clock (a shared store uses only their length).
    default fn clock_ms(&self) -> BoardResult<Option<i64>> { Ok(None) }

    /// Takes or renews this board's host session row: expiry = the store's now + `ttl_ms`. When
    /// the previous row had been ended by another host's sweep (this host was declared dead),
    /// `ended_by_others` says why, and a fresh row is taken. A new row, or a beat more than
    /// `regained_gap_ms` after the previous one, marks this board as having just regained the
    /// store (see [`Store::end_dead_hosts`]). SQLite (one host): nothing to do.
    default fn host_beat(&mut self, ttl_ms: i64, regained_gap_ms: i64) -> BoardResult<HostBeat> { Ok(HostBeat::default()) }

    /// Ends every host session whose expiry passed (the store's clock), the live agent sessions
    /// of those hosts and their live claims (expelled, the reason naming the host and how long
    /// since its last heartbeat), in one transaction. Only on evidence that the host, not this
    /// board or the store, went silent: this board has a live host row and regained the store
    /// at least that host's TTL ago, so a store-wide outage of any length ends no host. SQLite:
    /// no events.
    default fn end_dead_hosts(&mut self) -> BoardResult<Events> { Ok(Events::new()) }

    /// Ends this board's own host session at a clean stop (`board stop`, SIGTERM, SIGINT), in
    /// one statement: its host row, the live agent sessions of its host and their live claims
    /// (expelled), every reason `host NAME WHY` (`why`: e.g. "stopped by `board stop`"), so
    /// other hosts' agents can take those tasks at once instead of after `host_ttl`. Nothing
    /// when the row already ended (another host declared it dead, or a newer board under the
    /// same name replaced it). SQLite (one host): no events.
    default fn end_host(&mut self, why: &str) -> BoardResult<Events> { Ok(Events::new()) }

    /// Every host session (live ones first, then the most recently ended), for `board status`.
    /// SQLite: none.
    default fn hosts(&self) -> BoardResult<Vec<HostView>> { Ok(Vec::new()) }

    // ----- generations across restores (identity.rs) ----------------------------

    /// Records a clean stop in the mark: the database's last event id, exactly. A board that
    /// starts on this database later knows it is not behind.
    /// The WAL is checkpointed into `board.db` first, so a copy of that one file taken after
    /// a clean stop is a complete backup.
    fn mark_clean_stop(&mut self) -> BoardResult<()>;
}
