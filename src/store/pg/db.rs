//! The PostgreSQL side of the statements both backends share ([`crate::store::db`]): the
//! shared spelling is this dialect's, so statements run as written.

use postgres::types::ToSql;

use super::{col, emit, Conn, PgStore};
use crate::proto::error::BoardResult;
use crate::proto::TaskView;
use crate::store::db::{Arg, Backend, Db, Lock, Pick, Row};
use crate::store::{ClaimInfo, EventKind, Events};

fn bound<'a>(a: &'a Arg<'a>) -> &'a (dyn ToSql + Sync) {
    match a {
        Arg::Int(v) => v,
        Arg::Text(v) => v,
        Arg::Bool(v) => v,
    }
}

impl Row for postgres::Row {
    fn int(&self, i: usize) -> BoardResult<Option<i64>> {
        match self.try_get::<_, Option<i64>>(i) {
            Ok(v) => Ok(v),
            // A narrower integer column (a pid is `integer` in some statements).
            Err(_) => Ok(col::<Option<i32>>(self, i)?.map(i64::from)),
        }
    }

    fn text(&self, i: usize) -> BoardResult<Option<String>> {
        col(self, i)
    }

    fn flag(&self, i: usize) -> BoardResult<Option<bool>> {
        col(self, i)
    }
}

impl Db for Conn {
    type Row = postgres::Row;

    const HELD_CLAIM: &'static str = concat!(
        "SELECT generation FROM claims
         WHERE task_id = $1 AND session_id = $2 AND ",
        live_unexpired!("board_now_ms()"),
        " AND ($3::bigint IS NULL OR generation = $3) FOR UPDATE"
    );

    fn exec(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<u64> {
        let params: Vec<_> = args.iter().map(bound).collect();
        Conn::exec(self, sql, &params)
    }

    fn rows(&mut self, sql: &'static str, args: &[Arg<'_>]) -> BoardResult<Vec<postgres::Row>> {
        let params: Vec<_> = args.iter().map(bound).collect();
        Conn::rows(self, sql, &params)
    }

    fn grant(
        &mut self,
        ev: &mut Events,
        agent: &str,
        task: Option<i64>,
        label: Option<&str>,
        lease: i64,
    ) -> BoardResult<ClaimInfo> {
        super::claims::grant(self, ev, agent, task, label, lease)
    }

    fn end_question(&mut self, agent: &str) -> BoardResult<Option<String>> {
        super::messages::end_question(self, agent)
    }

    fn task_views(&mut self, pick: Pick<'_>, _now_ms: i64) -> BoardResult<Vec<TaskView>> {
        super::tasks::task_views(self, pick)
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
        emit(self, ev, kind, task, agent, generation, reason)
    }
}

impl Backend for PgStore {
    type Db<'c> = Conn;

    fn write<T>(
        &mut self,
        lock: Lock,
        f: impl FnMut(&mut Conn, &mut Events) -> BoardResult<T>,
    ) -> BoardResult<(T, Events)> {
        match lock {
            Lock::Shared => self.tx_shared(f),
            Lock::Exclusive => self.tx(f),
        }
    }

    fn refusable<T>(
        &mut self,
        f: impl FnOnce(&mut Conn, &mut Events) -> BoardResult<BoardResult<T>>,
    ) -> BoardResult<(T, Events)> {
        PgStore::refusable(self, f)
    }

    fn at(&self, now_ms: i64) {
        PgStore::at(self, now_ms)
    }

    fn read_with<T>(&self, f: impl FnMut(&mut Conn) -> BoardResult<T>) -> BoardResult<T> {
        self.read(f)
    }
}
