//! The SQLite connection as the shared statements see it ([`Lite`]), and how it spells them.
//!
//! The SQLite side of the statements both backends share ([`crate::store::db`]): `$N` binds as
//! `?N`; `board_wall()` as one more parameter holding this process's wall clock, read once per
//! statement (as every SQLite statement of the board reads it); `board_now_ms()` as one more
//! holding the lease-clock time the caller passed (`now_ms`: SQLite's lease clock is the
//! board's).

use rusqlite::types::{Value, ValueRef};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Mutex;

use rusqlite::{Connection, ToSql};

use super::now_wall;
use crate::proto::error::{BoardError, BoardResult};
use crate::store::db::{Arg, Row, WALL};
use crate::store::identity::MarkFile;

/// A connection (or open transaction) of the SQLite store, as a [`Db`], with the caller's
/// lease-clock time when it passed one.
pub(in crate::store) struct Lite<'a> {
    pub(super) conn: &'a Connection,
    pub(super) now_ms: Option<i64>,
    /// The high-water mark a grant raises first (rule 8a), when the store keeps one.
    pub(super) mark: Option<&'a Mutex<MarkFile>>,
}

impl<'a> Lite<'a> {
    /// The caller's lease-clock time. Errors: `internal` when the procedure passed none.
    pub(super) fn lease_clock(&self) -> BoardResult<i64> {
        self.now_ms
            .ok_or_else(|| BoardError::internal("SQLite store: a statement needs the lease clock"))
    }

    /// `conn` with no lease-clock time (a statement naming `board_now_ms()` is refused).
    pub(in crate::store) fn new(conn: &'a Connection) -> Lite<'a> {
        Lite {
            conn,
            now_ms: None,
            mark: None,
        }
    }
}

/// The lease-clock time as shared SQL spells it (see the module docs).
const NOW: &str = "board_now_ms()";

/// One row of a shared statement, read out of SQLite.
pub(in crate::store) struct LiteRow(pub(super) Vec<Value>);

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

    fn flag(&self, i: usize) -> BoardResult<Option<bool>> {
        match self.0.get(i) {
            Some(Value::Integer(v)) => Ok(Some(*v != 0)),
            Some(Value::Null) => Ok(None),
            other => Err(mismatch(i, "a truth value", other)),
        }
    }
}

/// A row of SQLite's cursor read in place: each column converted once, straight into what the
/// caller keeps (no owned copy of the row first). For the long reads (`list` of every task),
/// where copying each row before mapping it cost a third of the answer's time.
pub(in crate::store) struct CursorRow<'r, 's>(&'r rusqlite::Row<'s>);

impl CursorRow<'_, '_> {
    fn cell(&self, i: usize) -> BoardResult<ValueRef<'_>> {
        Ok(self.0.get_ref(i)?)
    }
}

impl Row for CursorRow<'_, '_> {
    fn int(&self, i: usize) -> BoardResult<Option<i64>> {
        match self.cell(i)? {
            ValueRef::Integer(v) => Ok(Some(v)),
            ValueRef::Null => Ok(None),
            other => Err(cursor_mismatch(i, "an integer", other)),
        }
    }

    fn text(&self, i: usize) -> BoardResult<Option<String>> {
        match self.cell(i)? {
            ValueRef::Text(v) => match std::str::from_utf8(v) {
                Ok(t) => Ok(Some(t.to_owned())),
                Err(_) => Err(mismatch(i, "UTF-8 text", None)),
            },
            ValueRef::Null => Ok(None),
            other => Err(cursor_mismatch(i, "a text", other)),
        }
    }

    fn flag(&self, i: usize) -> BoardResult<Option<bool>> {
        Ok(self.int(i)?.map(|v| v != 0))
    }
}

impl Lite<'_> {
    /// Runs a shared statement and maps each row in place with `f` (see [`CursorRow`]).
    pub(super) fn map_rows<T>(
        &self,
        sql: &'static str,
        args: &[Arg<'_>],
        mut f: impl FnMut(&dyn Row) -> BoardResult<T>,
    ) -> BoardResult<Vec<T>> {
        let mut failed = None;
        let out = self.with(sql, args, |st, p| {
            let mut rows = st.query(p)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                match f(&CursorRow(r)) {
                    Ok(v) => out.push(v),
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            Ok(out)
        })?;
        match failed {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}

fn cursor_mismatch(i: usize, wanted: &str, got: ValueRef<'_>) -> BoardError {
    BoardError::internal(format!(
        "SQLite store: column {i} is not {wanted}: {:?}",
        got.data_type()
    ))
}

fn mismatch(i: usize, wanted: &str, got: Option<&Value>) -> BoardError {
    BoardError::internal(format!("SQLite store: column {i} is not {wanted}: {got:?}"))
}

/// Where [`spelled`] put the clocks: the parameter numbers of the wall clock and of the
/// lease clock, when the statement names them.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Clocks {
    wall: Option<usize>,
    now: Option<usize>,
}

/// `sql` in SQLite's spelling for `n` parameters: `$N` becomes `?N`; `board_wall()` and
/// `board_now_ms()` become parameters after the `n` (see [`Clocks`]). Quoted text is left
/// alone.
fn spelled(sql: &str, n: usize) -> (String, Clocks) {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut clocks = Clocks::default();
    let mut next = n;
    let mut quoted = false;
    let mut rest = sql;
    while let Some(c) = rest.chars().next() {
        if !quoted {
            let slot = if rest.starts_with(WALL) {
                Some((&mut clocks.wall, WALL.len()))
            } else if rest.starts_with(NOW) {
                Some((&mut clocks.now, NOW.len()))
            } else {
                None
            };
            if let Some((at, len)) = slot {
                let i = *at.get_or_insert_with(|| {
                    next += 1;
                    next
                });
                out.push_str(&format!("?{i}"));
                rest = &rest[len..];
                continue;
            }
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
    (out, clocks)
}

/// A statement text (its address and length) and its parameter count.
type Key = (usize, usize, usize);

/// [`spelled`], worked out once per statement text and parameter count (the store's hot
/// paths, a claim and a renewal, run the same few statements many times a second).
fn spelled_once(sql: &'static str, n: usize) -> (Rc<str>, Clocks) {
    thread_local! {
        static SPELLED: RefCell<HashMap<Key, (Rc<str>, Clocks)>> = RefCell::new(HashMap::new());
    }
    // A `&'static str` is the same text for the life of the process: its address and length
    // name it.
    let key = (sql.as_ptr() as usize, sql.len(), n);
    SPELLED.with(|m| {
        let mut m = m.borrow_mut();
        let (text, clocks) = m.entry(key).or_insert_with(|| {
            let (text, clocks) = spelled(sql, n);
            (Rc::from(text), clocks)
        });
        (Rc::clone(text), *clocks)
    })
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
    pub(super) fn with<T>(
        &self,
        sql: &'static str,
        args: &[Arg<'_>],
        f: impl FnOnce(&mut rusqlite::CachedStatement<'_>, &[&dyn ToSql]) -> rusqlite::Result<T>,
    ) -> BoardResult<T> {
        let (text, clocks) = spelled_once(sql, args.len());
        let mut extra: Vec<(usize, Arg<'_>)> = Vec::new();
        let wall = clocks.wall.map(|i| (i, now_wall()));
        if let Some((i, w)) = &wall {
            extra.push((*i, Arg::from(w)));
        }
        if let Some(i) = clocks.now {
            let now = self.lease_clock()?;
            extra.push((i, Arg::from(now)));
        }
        extra.sort_by_key(|(i, _)| *i);
        let mut params: Vec<&dyn ToSql> = args.iter().map(bound).collect();
        params.extend(extra.iter().map(|(_, a)| bound(a)));
        let mut st = self.conn.prepare_cached(&text)?;
        Ok(f(&mut st, &params)?)
    }
}

#[cfg(test)]
mod tests {
    use super::spelled;

    #[test]
    fn dollar_parameters_and_the_wall_clock_take_sqlite_spelling() {
        let (s, clocks) = spelled(
            "UPDATE t SET at = board_wall(), x = '$1' WHERE id = $2 AND e < board_now_ms() \
             AND f = board_wall()",
            2,
        );
        assert_eq!(
            s,
            "UPDATE t SET at = ?3, x = '$1' WHERE id = ?2 AND e < ?4 AND f = ?3"
        );
        assert_eq!((clocks.wall, clocks.now), (Some(3), Some(4)));
        assert_eq!(spelled("SELECT $1", 1).0, "SELECT ?1");
    }
}
