//! The PostgreSQL side of the statements both backends share ([`crate::store::db`]): the
//! shared spelling is this dialect's, so statements run as written.

use postgres::types::private::BytesMut;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};

use super::{col, Conn, PgStore};
use crate::proto::error::BoardResult;
use crate::proto::glossary::{Generation, TaskId};
use crate::proto::{SessionView, TaskView};
use crate::store::answers::Answer;
use crate::store::db::{Arg, Ask, Backend, Db, Lock, Pick, Row, ScopeBody};
use crate::store::{ClaimInfo, Events};

fn bound<'a>(a: &'a Arg<'a>) -> &'a (dyn ToSql + Sync) {
    match a {
        Arg::Int(v) => v,
        Arg::Text(v) => v,
        Arg::Bool(v) => v,
    }
}

/// A typed integer of the glossary (`TaskId`, `Generation`) is its `bigint` column, read and
/// bound as the `i64` inside, so a column reads straight into the type (`col::<TaskId>`).
macro_rules! pg_int {
    ($($t:ty),*) => {$(
        impl<'a> FromSql<'a> for $t {
            fn from_sql(
                ty: &Type,
                raw: &'a [u8],
            ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
                i64::from_sql(ty, raw).map(<$t>::from)
            }

            fn accepts(ty: &Type) -> bool {
                <i64 as FromSql>::accepts(ty)
            }
        }

        impl ToSql for $t {
            fn to_sql(
                &self,
                ty: &Type,
                out: &mut BytesMut,
            ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
                self.0.to_sql(ty, out)
            }

            fn accepts(ty: &Type) -> bool {
                <i64 as ToSql>::accepts(ty)
            }

            to_sql_checked!();
        }
    )*};
}

pg_int!(TaskId, Generation);

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

    const REGISTER_SESSION: &'static str =
        "INSERT INTO sessions (id, host, name, token_hash, boot_id, launcher_pid,
         launcher_start, started_at, branch, attention_ms,
         role)
         SELECT $1, $2,
         (SELECT c.name
         FROM (SELECT i, CASE WHEN i = 1 THEN $3::text
         ELSE $3::text || '-' || i::text END AS name
         FROM generate_series(1, 10000) AS i) AS c
         WHERE NOT EXISTS (SELECT 1 FROM sessions l
         WHERE l.ended_at IS NULL AND l.name = c.name)
         ORDER BY c.i LIMIT 1),
         $4, $5, $6, $7, board_wall(), $8, $9, $10
         WHERE NOT EXISTS (SELECT 1 FROM retired_session_ids WHERE id = $1)
         ON CONFLICT (id) DO NOTHING";

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

    fn grant(&mut self, ev: &mut Events, ask: &Ask<'_>) -> BoardResult<ClaimInfo> {
        super::claims::grant(self, ev, ask)
    }

    fn expel_claims(&mut self, ev: &mut Events, id: &str, reason: &str) -> BoardResult<()> {
        super::sessions::expel_claims(self, ev, id, reason)
    }

    fn session_views(&mut self, recent_ended_ms: Option<i64>) -> BoardResult<Vec<SessionView>> {
        super::sessions::session_views(self, recent_ended_ms)
    }

    fn renew(&mut self, agent: &str, lease: i64) -> BoardResult<Vec<ClaimInfo>> {
        super::claims::renew(self, agent, lease)
    }

    fn renew_many(&mut self, agents: &[&str], lease: i64) -> BoardResult<Vec<String>> {
        super::claims::renew_many(self, agents, lease)
    }

    fn end_question(&mut self, agent: &str) -> BoardResult<Option<String>> {
        super::messages::end_question(self, agent)
    }

    fn task_views(&mut self, pick: Pick<'_>, _now_ms: i64) -> BoardResult<Vec<TaskView>> {
        super::tasks::task_views(self, pick)
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

    fn host(&self) -> Option<&str> {
        Some(&self.host)
    }

    fn op_scope(&mut self, op_id: &str, body: &mut ScopeBody<'_, Self>) -> BoardResult<Answer> {
        PgStore::op_scope(self, op_id, body)
    }

    fn read_with<T>(&self, f: impl FnMut(&mut Conn) -> BoardResult<T>) -> BoardResult<T> {
        self.read(f)
    }
}
