//! The glossary's words and ids in SQLite: each [`words`](crate::proto::glossary) enum is stored
//! as its word, each id as its integer or text; and the driver's errors as board errors.

#[cfg(test)]
use std::fmt;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use crate::proto::error::BoardError;
use crate::proto::glossary::{
    AgentState, BacklogState, ClaimEnd, EventKind, Generation, ListState, NoticeKind, SessionId,
    TaskId, TaskState,
};

/// A SQLite failure: `internal`, its text after `store: `.
impl From<rusqlite::Error> for BoardError {
    fn from(e: rusqlite::Error) -> Self {
        BoardError::internal(format!("store: {e}"))
    }
}

/// Stores each listed word enum as its word (`as_str`), reads it back with `FromStr`.
macro_rules! sql_words {
    ($($name:ident),+) => {$(
        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
                v.as_str()?.parse().map_err(|e| FromSqlError::Other(Box::new(e)))
            }
        }
    )+};
}

sql_words!(
    TaskState,
    BacklogState,
    ListState,
    EventKind,
    NoticeKind,
    ClaimEnd,
    AgentState
);

/// Stores each listed newtype as its one field of type `$inner`.
macro_rules! sql_newtypes {
    ($($name:ident($inner:ty)),+) => {$(
        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }

        impl FromSql for $name {
            fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
                <$inner>::column_result(v).map($name)
            }
        }
    )+};
}

sql_newtypes!(TaskId(i64), Generation(i64), SessionId(String));

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T>(db: &rusqlite::Connection, all: &[T])
    where
        T: Copy + PartialEq + fmt::Debug + ToSql + FromSql,
    {
        for w in all {
            let back: T = db.query_row("SELECT ?1", [w], |r| r.get(0)).unwrap();
            assert_eq!(back, *w);
        }
    }

    #[test]
    fn every_word_and_id_round_trips_through_sqlite() {
        let db = rusqlite::Connection::open_in_memory().unwrap();
        round_trip(&db, TaskState::ALL);
        round_trip(&db, BacklogState::ALL);
        round_trip(&db, ListState::ALL);
        round_trip(&db, EventKind::ALL);
        round_trip(&db, NoticeKind::ALL);
        round_trip(&db, ClaimEnd::ALL);
        round_trip(&db, AgentState::ALL);
        round_trip(&db, &[TaskId(7), TaskId(i64::MAX)]);
        round_trip(&db, &[Generation(3)]);
        let id = SessionId("claude-2".into());
        let back: SessionId = db.query_row("SELECT ?1", [&id], |r| r.get(0)).unwrap();
        assert_eq!(back, id);
        let bad: Result<TaskState, _> = db.query_row("SELECT 'ready'", [], |r| r.get(0));
        assert!(bad.is_err(), "ready is not a stored state");
    }
}
