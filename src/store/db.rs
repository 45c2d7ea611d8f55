//! What a statement needs of either backend, so that a procedure whose SQL both dialects accept
//! is written once (the `procs` modules) instead of once per backend.
//!
//! The SQL text of a shared statement is PostgreSQL's spelling where the two differ only in
//! words: parameters are `$1`, `$2`, … (SQLite binds `$N` as `?N`, the same number), and the
//! wall-clock time of the change is `board_wall()` (a function of the PostgreSQL schema, on the
//! server's clock; the SQLite backend binds its own clock there, once per statement), and the
//! lease clock is `board_now_ms()` (the server's; on SQLite the `now_ms` the caller passed,
//! see [`Backend::at`]). Values go
//! in as [`Arg`]s and come out of a [`Row`] by column index, so no shared code names a driver.
//! What must differ (transactions and their locks, the PL/pgSQL round trips, dialect-only
//! statements) stays in its backend.

use std::str::FromStr;

use crate::proto::error::{BoardError, BoardResult};
use crate::proto::glossary::{Generation, TaskId};
use crate::proto::{EventView, SessionView, TaskView};
use crate::store::answers::Answer;
use crate::store::{ClaimInfo, EventKind, Events, TaskState};

/// A claim asked for: by agent session `agent`, of task `task` or (None) of the best ready task
/// carrying `label` (when given), for `lease` ms.
#[derive(Debug, Clone, Copy)]
pub(in crate::store) struct Ask<'a> {
    /// The agent session that asks.
    pub agent: &'a str,
    /// The task asked for; None: the best ready one.
    pub task: Option<i64>,
    /// With no task: only a task carrying this label.
    pub label: Option<&'a str>,
    /// The lease length (ms).
    pub lease: i64,
}

/// Which tasks a view query returns, in which order.
#[derive(Debug, Clone, Copy)]
pub(in crate::store) enum Pick<'a> {
    /// One task by id.
    One(i64),
    /// Tasks with an id above `after` (in `states`, when given), by id, at most `limit`.
    Page {
        states: Option<&'a [TaskState]>,
        after: i64,
        limit: Option<i64>,
    },
    /// Ready tasks in claim order (priority descending, then id), at most `limit`.
    Ready { limit: Option<i64> },
}

/// The wall-clock time of a change, as shared SQL spells it (see the module docs).
pub(in crate::store) const WALL: &str = "board_wall()";

/// One value bound to a statement parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::store) enum Arg<'a> {
    /// An integer (`bigint`), or NULL.
    Int(Option<i64>),
    /// A text, or NULL.
    Text(Option<&'a str>),
    /// A truth value (PostgreSQL `boolean`; SQLite stores 0 or 1), or NULL.
    Bool(Option<bool>),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Arg::Int(Some(v))
    }
}

impl From<Option<i64>> for Arg<'_> {
    fn from(v: Option<i64>) -> Self {
        Arg::Int(v)
    }
}

impl From<i32> for Arg<'_> {
    fn from(v: i32) -> Self {
        Arg::Int(Some(i64::from(v)))
    }
}

impl From<Option<i32>> for Arg<'_> {
    fn from(v: Option<i32>) -> Self {
        Arg::Int(v.map(i64::from))
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(Some(v))
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(v: &'a String) -> Self {
        Arg::Text(Some(v))
    }
}

impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Arg::Text(v)
    }
}

impl From<bool> for Arg<'_> {
    fn from(v: bool) -> Self {
        Arg::Bool(Some(v))
    }
}

impl From<Option<bool>> for Arg<'_> {
    fn from(v: Option<bool>) -> Self {
        Arg::Bool(v)
    }
}

/// A typed integer of the glossary (`TaskId`, `Generation`) goes in and comes out as its
/// `bigint` column, and as NULL when None.
macro_rules! int_cell {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg<'_> {
            fn from(v: $t) -> Self {
                Arg::Int(Some(v.0))
            }
        }

        impl From<Option<$t>> for Arg<'_> {
            fn from(v: Option<$t>) -> Self {
                Arg::Int(v.map(|v| v.0))
            }
        }

        impl Cell for $t {
            fn read(r: &dyn Row, i: usize) -> BoardResult<Self> {
                i64::read(r, i).map(<$t>::from)
            }
        }

        impl Cell for Option<$t> {
            fn read(r: &dyn Row, i: usize) -> BoardResult<Self> {
                Ok(r.int(i)?.map(<$t>::from))
            }
        }
    )*};
}

int_cell!(TaskId, Generation);

/// The parameters of one statement, in order (`$1` first).
macro_rules! args {
    ($($v:expr),* $(,)?) => {
        [$($crate::store::db::Arg::from($v)),*]
    };
}

/// One row a statement returned, read by column index (0 first). A value of another type than
/// asked is an internal error, never a panic.
pub(in crate::store) trait Row {
    /// An integer column (NULL is None).
    fn int(&self, i: usize) -> BoardResult<Option<i64>>;
    /// A text column (NULL is None).
    fn text(&self, i: usize) -> BoardResult<Option<String>>;
    /// A truth-value column (PostgreSQL `boolean`, SQLite 0 or 1; NULL is None).
    fn flag(&self, i: usize) -> BoardResult<Option<bool>>;
}

/// A type a column can be read as (see [`get`]).
pub(in crate::store) trait Cell: Sized {
    /// Column `i` of `r`.
    fn read(r: &dyn Row, i: usize) -> BoardResult<Self>;
}

fn null(i: usize) -> BoardError {
    BoardError::internal(format!("store: column {i} is NULL"))
}

impl Cell for Option<i64> {
    fn read(r: &dyn Row, i: usize) -> BoardResult<Self> {
        r.int(i)
    }
}

impl Cell for i64 {
    fn read(r: &dyn Row, i: usize) -> BoardResult<Self> {
        r.int(i)?.ok_or_else(|| null(i))
    }
}

impl Cell for Option<i32> {
    fn read(r: &dyn Row, i: usize) -> BoardResult<Self> {
        r.int(i)?
            .map(|v| {
                i32::try_from(v)
                    .map_err(|e| BoardError::internal(format!("store: column {i}: {e}")))
            })
            .transpose()
    }
}

impl Cell for Option<String> {
    fn read(r: &dyn Row, i: usize) -> BoardResult<Self> {
        r.text(i)
    }
}

impl Cell for String {
    fn read(r: &dyn Row, i: usize) -> BoardResult<Self> {
        r.text(i)?.ok_or_else(|| null(i))
    }
}

impl Cell for Option<bool> {
    fn read(r: &dyn Row, i: usize) -> BoardResult<Self> {
        r.flag(i)
    }
}

impl Cell for bool {
    fn read(r: &dyn Row, i: usize) -> BoardResult<Self> {
        r.flag(i)?.ok_or_else(|| null(i))
    }
}

/// Column `i` of `r` as `T`.
pub(in crate::store) fn get<T: Cell>(r: &dyn Row, i: usize) -> BoardResult<T> {
    T::read(r, i)
}

/// A glossary word (state, kind, end) stored as text in column `i`.
pub(in crate::store) fn word<T>(r: &dyn Row, i: usize) -> BoardResult<T>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    let s: String = get(r, i)?;
    s.parse()
        .map_err(|e| BoardError::internal(format!("store: column {i}: {e}")))
}

/// An open connection or transaction of either backend.
pub(in crate::store) trait Db {
    /// What [`Db::rows`] returns.
    type Row: Row;

    /// Registers an agent session unless its id `$1` is taken or retired: on host `$2` (where
    /// sessions have hosts), the name `$3` or, when a live session has it, the first free
    /// `$3-N`; `$4` token hash, `$5` boot id, `$6` and `$7` launcher pid and start, `$8`
    /// branch, `$9` attention (ms), `$10` role. Dialect-only: how the names are counted.
    const REGISTER_SESSION: &'static str;

    /// The generation of the live claim of session `$2` on task `$1`, unexpired on the lease
    /// clock (at generation `$3` when not NULL), its row locked against a concurrent end until
    /// the transaction ends. Dialect-only: how a row is locked.
    const HELD_CLAIM: &'static str;

    /// Runs `sql` with `args`; returns how many rows it changed.
    fn exec(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<u64>;

    /// All rows of `sql`.
    fn rows(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<Vec<Self::Row>>;

    /// Appends one event in the open transaction and queues it on `ev` for broadcast. The
    /// reason is cut to 500 characters: huge agent text lives in notes and tasks, not in every
    /// event.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        ev: &mut Events,
        kind: EventKind,
        task: Option<i64>,
        agent: Option<&str>,
        generation: Option<i64>,
        reason: &str,
    ) -> BoardResult<()> {
        let reason: String = reason.chars().take(500).collect();
        let r = self.one(
            "INSERT INTO events (at, kind, task_id, session_id, generation, reason)
             VALUES (board_wall(), $1, $2, $3, $4, $5) RETURNING id, at",
            &args![kind.as_str(), task, agent, generation, &reason],
        )?;
        ev.push(EventView {
            id: get(&r, 0)?,
            at: get(&r, 1)?,
            kind,
            task: task.map(TaskId),
            agent: agent.map(str::to_string),
            generation: generation.map(Generation),
            reason: Some(reason),
        });
        Ok(())
    }

    /// Ends the open question of live session `agent` by one conditional UPDATE and returns
    /// it, or None when it had none. Dialect-only: what a statement may return of the row
    /// before its update differs.
    fn end_question(&mut self, agent: &str) -> BoardResult<Option<String>>;

    /// The views of the tasks `pick` picks, with their dependencies and live claims, at
    /// lease-clock time `now_ms`. Dialect-only: how the dependencies are joined in.
    fn task_views(&mut self, pick: Pick<'_>, now_ms: i64) -> BoardResult<Vec<TaskView>>;

    /// Grants the claim `ask` asks for by the backend's one conditional statement, and queues
    /// its `grant` event on `ev`. Errors: why nothing was granted (see
    /// `procs::explain_claim_refusal`). Dialect-only: how the task row is picked and locked.
    fn grant(&mut self, ev: &mut Events, ask: &Ask<'_>) -> BoardResult<ClaimInfo>;

    /// Expels every live claim of session `id` with `reason`: ends them, reopens their tasks,
    /// queues their `expel` events on `ev` in id order. Dialect-only: how many statements.
    fn expel_claims(&mut self, ev: &mut Events, id: &str, reason: &str) -> BoardResult<()>;

    /// The sessions for display (see `Store::sessions`: `recent_ended_ms`), each with its
    /// live claims and host, its state not settled yet. Dialect-only: how the cutoff, the
    /// claims and the order of sessions are read.
    fn session_views(&mut self, recent_ended_ms: Option<i64>) -> BoardResult<Vec<SessionView>>;

    /// Renews the live, unexpired claims of `agent` to `lease` ms from now on the lease clock,
    /// and notes it was seen. Dialect-only: the statements.
    fn renew(&mut self, agent: &str, lease: i64) -> BoardResult<Vec<ClaimInfo>>;

    /// [`Db::renew`] for each of `agents` (the sweep's batch); returns those that had a claim
    /// to renew.
    fn renew_many(&mut self, agents: &[&str], lease: i64) -> BoardResult<Vec<String>>;

    /// At most one row of `sql` (the first).
    fn opt(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<Option<Self::Row>> {
        Ok(self.rows(sql, args)?.into_iter().next())
    }

    /// Exactly one row of `sql`; none is an internal error.
    fn one(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<Self::Row> {
        self.opt(sql, args)?
            .ok_or_else(|| BoardError::internal("store: a statement returned no row"))
    }

    /// The first column of the first row of `sql`, if there is a row.
    fn value<T: Cell>(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<Option<T>> {
        self.opt(sql, args)?.map(|r| get(&r, 0)).transpose()
    }

    /// The first column of every row of `sql`.
    fn column<T: Cell>(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<Vec<T>> {
        self.rows(sql, args)?.iter().map(|r| get(r, 0)).collect()
    }
}

/// What runs inside an `op_id` scope (see [`Backend::op_scope`]).
pub(in crate::store) type ScopeBody<'a, S> = dyn FnMut(&mut S) -> BoardResult<Answer> + 'a;

/// How a write transaction stands beside others (PostgreSQL's write lock; SQLite has one
/// writer and ignores it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum Lock {
    /// Beside other shared writers: a holder's fenced write, decided on its own rows.
    Shared,
    /// Alone: every other write.
    Exclusive,
}

/// A store backend as the shared procedures see it: transactions and reads over a [`Db`].
pub(in crate::store) trait Backend {
    /// The connection a transaction or read runs on.
    type Db<'c>: Db;

    /// Runs `f` in one write transaction (see [`Lock`]); commits on `Ok`, rolls back on `Err`;
    /// returns `f`'s answer and the events it appended.
    fn write<T>(
        &mut self,
        lock: Lock,
        f: impl FnMut(&mut Self::Db<'_>, &mut Events) -> BoardResult<T>,
    ) -> BoardResult<(T, Events)>;

    /// Like [`Backend::write`] (a holder's fenced write: [`Lock::Shared`]) for a call that may
    /// be refused after changing something that must stand (a refused write lapses the
    /// caller's expired claim first): `f` returns `Ok(Err(refusal))` to commit and answer the
    /// refusal; its events go to the store's [`crate::store::Notify`] hook.
    fn refusable<T>(
        &mut self,
        f: impl FnOnce(&mut Self::Db<'_>, &mut Events) -> BoardResult<BoardResult<T>>,
    ) -> BoardResult<(T, Events)>;

    /// Runs `body` as the one transaction of an `op_id` scope (see `procs::with_op`); the
    /// store steps it makes run inside it. Errors: `internal` for a nested scope; the scope's
    /// own (a retry of the whole scope is the backend's choice).
    fn op_scope(&mut self, op_id: &str, body: &mut ScopeBody<'_, Self>) -> BoardResult<Answer>;

    /// This board's host, where sessions belong to hosts (PostgreSQL); None on SQLite.
    fn host(&self) -> Option<&str> {
        None
    }

    /// Tells the store the caller's lease-clock time (PostgreSQL's contract tests follow it;
    /// elsewhere it is not used).
    fn at(&self, _now_ms: i64) {}

    /// Runs the read `f` (outside a transaction of ours, or inside the open `op_id` scope).
    fn read_with<T>(&self, f: impl FnMut(&mut Self::Db<'_>) -> BoardResult<T>) -> BoardResult<T>;
}
