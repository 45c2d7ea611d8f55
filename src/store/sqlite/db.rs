//! The SQLite store as a [`Db`] and a [`Backend`]: the shared statements run on [`Lite`], and
//! the dialect steps forward to this backend's own files (`claims.rs`, `sessions.rs`,
//! `tasks.rs`), which use [`Lite`] without importing this file.

use super::lite::{Lite, LiteRow};
use super::SqliteStore;
use crate::proto::error::BoardResult;
use crate::proto::{SessionView, TaskView};
use crate::store::answers::Answer;
use crate::store::db::{Arg, Ask, Backend, Db, Lock, Pick, ScopeBody};
use crate::store::{ClaimInfo, Events};
use rusqlite::types::Value;

impl Db for Lite<'_> {
    type Row = LiteRow;

    const REGISTER_SESSION: &'static str =
        "INSERT INTO sessions (id, name, token_hash, boot_id, launcher_pid,
         launcher_start, started_at, branch, attention_ms,
         role)
         SELECT $1,
         (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL
         SELECT i + 1 FROM n WHERE i < 10000),
         c(i, name) AS (SELECT i, CASE i WHEN 1 THEN $3
         ELSE $3 || '-' || i END FROM n)
         SELECT c.name FROM c
         WHERE NOT EXISTS (SELECT 1 FROM sessions l
         WHERE l.ended_at IS NULL AND l.name = c.name)
         ORDER BY c.i LIMIT 1),
         $4, $5, $6, $7, board_wall(), $8, $9, $10
         WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE id = $1)
         AND NOT EXISTS (SELECT 1 FROM retired_session_ids WHERE id = $1)";

    /// A no-op UPDATE: inside the one writer's `BEGIN IMMEDIATE` nothing else can end it.
    const HELD_CLAIM: &'static str = concat!(
        "UPDATE claims SET expires_ms = expires_ms
         WHERE task_id = $1 AND session_id = $2 AND ",
        live_unexpired!("board_now_ms()"),
        " AND ($3 IS NULL OR generation = $3) RETURNING generation"
    );

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

    fn grant(&mut self, ev: &mut Events, ask: &Ask<'_>) -> BoardResult<ClaimInfo> {
        let expires_ms = self.lease_clock()? + ask.lease;
        super::claims::grant(self.conn, self.mark, ev, ask, expires_ms)
    }

    fn expel_claims(&mut self, ev: &mut Events, id: &str, reason: &str) -> BoardResult<()> {
        super::sessions::expel_claims(self.conn, ev, id, reason)
    }

    fn session_views(&mut self, recent_ended_ms: Option<i64>) -> BoardResult<Vec<SessionView>> {
        super::sessions::session_views(self, recent_ended_ms)
    }

    fn renew(&mut self, agent: &str, lease: i64) -> BoardResult<Vec<ClaimInfo>> {
        let now_ms = self.lease_clock()?;
        super::claims::renew(self.conn, agent, now_ms, now_ms + lease)
    }

    fn renew_many(&mut self, agents: &[&str], lease: i64) -> BoardResult<Vec<String>> {
        let now_ms = self.lease_clock()?;
        super::claims::renew_many(self.conn, agents, now_ms, now_ms + lease)
    }

    fn end_question(&mut self, agent: &str) -> BoardResult<Option<String>> {
        super::messages::end_question(self.conn, agent)
    }

    fn task_views(&mut self, pick: Pick<'_>, now_ms: i64) -> BoardResult<Vec<TaskView>> {
        super::tasks::task_views(self, pick, now_ms)
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
        let now_ms = self.lease_now.get();
        let mark = self.mark.clone();
        let mark = mark.as_deref();
        self.tx(|conn, ev| f(&mut Lite { conn, now_ms, mark }, ev))
    }

    fn refusable<T>(
        &mut self,
        f: impl FnOnce(&mut Lite<'_>, &mut Events) -> BoardResult<BoardResult<T>>,
    ) -> BoardResult<(T, Events)> {
        let now_ms = self.lease_now.get();
        let mark = self.mark.clone();
        let mark = mark.as_deref();
        self.tx_refusable(|conn, ev| f(&mut Lite { conn, now_ms, mark }, ev))
    }

    fn at(&self, now_ms: i64) {
        self.lease_now.set(Some(now_ms));
    }

    fn op_scope(&mut self, _: &str, body: &mut ScopeBody<'_, Self>) -> BoardResult<Answer> {
        SqliteStore::op_scope(self, body)
    }

    fn read_with<T>(&self, mut f: impl FnMut(&mut Lite<'_>) -> BoardResult<T>) -> BoardResult<T> {
        f(&mut Lite {
            conn: &self.conn,
            now_ms: self.lease_now.get(),
            mark: None,
        })
    }
}
