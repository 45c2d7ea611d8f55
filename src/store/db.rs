//! What a statement needs of either backend, so that a procedure whose SQL both dialects accept
//! is written once (the `procs` modules) instead of once per backend.
//!
//! The SQL text of a shared statement is PostgreSQL's spelling where the two differ only in
//! words: parameters are `$1`, `$2`, … (SQLite binds `$N` as `?N`, the same number), and the
//! wall-clock time of the change is `board_wall()` (a function of the PostgreSQL schema, on the
//! server's clock; the SQLite backend binds its own clock there, once per statement). Values go
//! in as [`Arg`]s and come out of a [`Row`] by column index, so no shared code names a driver.
//! What must differ (transactions and their locks, the PL/pgSQL round trips, dialect-only
//! statements) stays in its backend.

use std::str::FromStr;

use crate::proto::error::{BoardError, BoardResult};
use crate::store::{EventKind, Events};

/// The wall-clock time of a change, as shared SQL spells it (see the module docs).
pub(in crate::store) const WALL: &str = "board_wall()";

/// One value bound to a statement parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::store) enum Arg<'a> {
    /// An integer (`bigint`), or NULL.
    Int(Option<i64>),
    /// A text, or NULL.
    Text(Option<&'a str>),
    /// A truth value (PostgreSQL `boolean`; SQLite stores 0 or 1).
    Bool(bool),
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
        Arg::Bool(v)
    }
}

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
    /// A truth-value column (PostgreSQL `boolean`, SQLite 0 or 1).
    fn flag(&self, i: usize) -> BoardResult<bool>;
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
                i32::try_from(v).map_err(|e| BoardError::internal(format!("store: column {i}: {e}")))
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

impl Cell for bool {
    fn read(r: &dyn Row, i: usize) -> BoardResult<Self> {
        r.flag(i)
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

    /// Runs `sql` with `args`; returns how many rows it changed.
    fn exec(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<u64>;

    /// All rows of `sql`.
    fn rows(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<Vec<Self::Row>>;

    /// Appends one event in the open transaction and queues it on `ev` for broadcast.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        ev: &mut Events,
        kind: EventKind,
        task: Option<i64>,
        agent: Option<&str>,
        generation: Option<i64>,
        reason: &str,
    ) -> BoardResult<()>;

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

    /// Runs the read `f` (outside a transaction of ours, or inside the open `op_id` scope).
    fn read_with<T>(&self, f: impl FnMut(&mut Self::Db<'_>) -> BoardResult<T>) -> BoardResult<T>;
}
