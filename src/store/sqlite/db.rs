//! The SQLite side of the statements both backends share ([`crate::store::db`]): `$N` binds as
//! `?N`, and `board_wall()` as one more parameter holding this process's wall clock, read once
//! per statement (as every SQLite statement of the board reads it).

use rusqlite::types::Value;
use rusqlite::{Connection, ToSql};

use super::{emit, now_wall, SqliteStore};
use crate::proto::error::{BoardError, BoardResult};
use crate::store::db::{Arg, Backend, Db, Lock, Row, WALL};
use crate::store::{EventKind, Events};

/// A connection (or open transaction) of the SQLite store, as a [`Db`].
pub(in crate::store) struct Lite<'a>(pub &'a Connection);

/// One row of a shared statement, read out of SQLite.
pub(in crate::store) struct LiteRow(Vec<Value>);

impl Row for LiteRow {
    fn int(&self, i: usize) -> BoardResult<Option<i64>> {
        match self.0.get(i) {
            Some(Value::Integer(v)) => Ok(Some(*v)),
            Some(Value::Null) => Ok(None),
            other => Err(mismatch(i, "an integer", other)),
        }
    }

    fn text(&self, i: usize) -> BoardResult<Option<String>> {
        match self.0.get(i) {
            Some(Value::Text(v)) => Ok(Some(v.clone())),
            Some(Value::Null) => Ok(None),
            other => Err(mismatch(i, "a text", other)),
        }
    }

    fn flag(&self, i: usize) -> BoardResult<bool> {
        match self.0.get(i) {
            Some(Value::Integer(v)) => Ok(*v != 0),
            other => Err(mismatch(i, "a truth value", other)),
        }
    }
}

fn mismatch(i: usize, wanted: &str, got: Option<&Value>) -> BoardError {
    BoardError::internal(format!(
        "SQLite store: column {i} is not {wanted}: {got:?}"
    ))
}

/// `sql` in SQLite's spelling for `n` parameters: `$N` becomes `?N`; `board_wall()` becomes
/// `?{n+1}` (true when it occurs). Quoted text is left alone.
fn spelled(sql: &str, n: usize) -> (String, bool) {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut wall = false;
    let mut quoted = false;
    let mut rest = sql;
    while let Some(c) = rest.chars().next() {
        if !quoted && rest.starts_with(WALL) {
            out.push_str(&format!("?{}", n + 1));
            wall = true;
            rest = &rest[WALL.len()..];
            continue;
        }
        match c {
            '\'' => quoted = !quoted,
            '$' if !quoted && rest[1..].starts_with(|d: char| d.is_ascii_digit()) => {
                out.push('?');
                rest = &rest[1..];
                continue;
            }
            _ => {}
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    (out, wall)
}

fn bound<'a>(a: &'a Arg<'a>) -> &'a dyn ToSql {
    match a {
        Arg::Int(v) => v,
        Arg::Text(v) => v,
        Arg::Bool(v) => v,
    }
}

impl Lite<'_> {
    /// Prepares `sql` (cached by its SQLite text) and runs `f` with it and its parameters.
    fn with<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        f: impl FnOnce(&mut rusqlite::CachedStatement<'_>, &[&dyn ToSql]) -> rusqlite::Result<T>,
    ) -> BoardResult<T> {
        let (text, wall) = spelled(sql, args.len());
        let now = wall.then(now_wall);
        let now = now.as_deref().map(Arg::from);
        let mut params: Vec<&dyn ToSql> = args.iter().map(bound).collect();
        if let Some(now) = &now {
            params.push(bound(now));
        }
        let mut st = self.0.prepare_cached(&text)?;
        Ok(f(&mut st, &params)?)
    }
}

impl Db for Lite<'_> {
    type Row = LiteRow;

    fn exec(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<u64> {
        let n = self.with(sql, args, |st, p| st.execute(p))?;
        Ok(n as u64)
    }

    fn rows(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<Vec<LiteRow>> {
        self.with(sql, args, |st, p| {
            let width = st.column_count();
            let mut rows = st.query(p)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                let row = (0..width).map(|i| r.get::<_, Value>(i));
                out.push(LiteRow(row.collect::<rusqlite::Result<_>>()?));
            }
            Ok(out)
        })
    }

    fn emit(
        &mut self,
        ev: &mut Events,
        kind: EventKind,
        task: Option<i64>,
        agent: Option<&str>,
        generation: Option<i64>,
        reason: &str,
    ) -> BoardResult<()> {
        emit(self.0, ev, kind, task, agent, generation, reason)
    }
}

impl Backend for SqliteStore {
    type Db<'c> = Lite<'c>;

    /// One `BEGIN IMMEDIATE` transaction: the one writer needs no lock mode.
    fn write<T>(
        &mut self,
        _lock: Lock,
        mut f: impl FnMut(&mut Lite<'_>, &mut Events) -> BoardResult<T>,
    ) -> BoardResult<(T, Events)> {
        self.tx(|tx, ev| f(&mut Lite(tx), ev))
    }

    fn read_with<T>(&self, mut f: impl FnMut(&mut Lite<'_>) -> BoardResult<T>) -> BoardResult<T> {
        f(&mut Lite(&self.conn))
    }
}

#[cfg(test)]
mod tests {
    use super::spelled;

    #[test]
    fn dollar_parameters_and_the_wall_clock_take_sqlite_spelling() {
        let (s, wall) = spelled("UPDATE t SET at = board_wall(), x = '$1' WHERE id = $2", 2);
        assert_eq!(s, "UPDATE t SET at = ?3, x = '$1' WHERE id = ?2");
        assert!(wall);
        assert_eq!(spelled("SELECT $1", 1), ("SELECT ?1".to_string(), false));
    }
}
