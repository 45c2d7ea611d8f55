//! The store: every SQL statement of the board, and its transactions.
//!
//! One [`Store`] owns the one write connection of the board process (design rule 11), so no
//! `SQLITE_BUSY` reaches a client. Every state change runs in one `BEGIN IMMEDIATE` transaction
//! whose deciding step is one conditional statement (`UPDATE … WHERE <condition> RETURNING …`):
//! the store never reads, compares in Rust, then writes (design rule 6). Each transition appends
//! an event in the same transaction (design rule 9); the caller broadcasts the returned
//! [`EventView`]s after commit.

use std::path::Path;
use std::time::SystemTime;

use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use rusqlite_migration::{Migrations, M};

use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::{EventView, GoalView, NoteView, SessionView, TaskView};

/// Author name of requests without an agent identity.
pub const OPERATOR: &str = "operator";

/// Longest accepted title, in bytes.
pub const MAX_TITLE: usize = 16 * 1024;
/// Longest accepted body or note, in bytes.
pub const MAX_TEXT: usize = 512 * 1024;

fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(include_str!("../../migrations/0001_init.sql")),
        M::up(include_str!("../../migrations/0002_agent_turns.sql")),
    ])
}

/// RFC 3339 UTC wall-clock time with milliseconds, for people.
pub fn now_wall() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// What the board remembers of one agent session for authentication and watching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// Session id.
    pub id: String,
    /// SHA-256 of the token, hex.
    pub token_hash: String,
    /// Boot the session started in.
    pub boot_id: String,
    /// `board run` launcher pid and start time (clock ticks since boot).
    pub launcher: Option<(i32, u64)>,
    /// Agent process pid and start time.
    pub agent: Option<(i32, u64)>,
    /// tmux pane id, pane process pid and start time.
    pub pane: Option<(String, i32, u64)>,
    /// Question when waiting for a human.
    pub waiting: Option<String>,
    /// When its agent finished its turn (a hook said so), until its next call.
    pub idle_since: Option<String>,
    /// None while the session is live.
    pub ended_at: Option<String>,
}

/// A live claim as returned by grants and renewals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimInfo {
    /// Task id.
    pub task: i64,
    /// The claim's generation.
    pub generation: i64,
    /// Expiry on the lease clock (ms).
    pub expires_ms: i64,
}

/// Answer of a successful `done`.
#[derive(Debug, Clone, PartialEq)]
pub struct DoneOutcome {
    /// The task after the call.
    pub task: TaskView,
    /// Generation the task was finished at.
    pub generation: i64,
    /// True when this repeated an earlier `done` of the same agent and generation.
    pub already: bool,
}

/// Events appended by one transaction, to broadcast after commit.
pub type Events = Vec<EventView>;

/// The board's SQLite database.
pub struct Store {
    conn: Connection,
}

impl Store {
    /// Opens (creating if needed) the database at `path`: WAL, `busy_timeout` 5 s, foreign keys,
    /// then applies pending migrations in order, each in its own transaction.
    pub fn open(path: &Path) -> BoardResult<Store> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // NORMAL in WAL mode: a commit survives the board process being killed (it is in the OS
        // page cache); only a power cut can lose the last transactions.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrations()
            .to_latest(&mut conn)
            .map_err(|e| BoardError::internal(format!("migrating {}: {e}", path.display())))?;
        Ok(Store { conn })
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction; commits on `Ok`, rolls back on `Err`.
    fn tx<T>(
        &mut self,
        f: impl FnOnce(&Transaction, &mut Events) -> BoardResult<T>,
    ) -> BoardResult<(T, Events)> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut events = Vec::new();
        let out = f(&tx, &mut events)?;
        tx.commit()?;
        Ok((out, events))
    }

    /// `PRAGMA integrity_check` → "ok" when sound.
    pub fn integrity_check(&self) -> BoardResult<String> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    // ----- meta -------------------------------------------------------------------------------

    /// A value from the `meta` table.
    pub fn meta(&self, key: &str) -> BoardResult<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    /// Sets a `meta` value.
    pub fn set_meta(&mut self, key: &str, value: &str) -> BoardResult<()> {
        self.tx(|tx, _| {
            tx.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, value],
            )?;
            Ok(())
        })?;
        Ok(())
    }

    /// Appends a free-standing event (board start, rejected write) in its own transaction.
    pub fn record(
        &mut self,
        kind: &str,
        task: Option<i64>,
        agent: Option<&str>,
        generation: Option<i64>,
        reason: &str,
    ) -> BoardResult<Events> {
        let ((), ev) = self.tx(|tx, ev| {
            emit(tx, ev, kind, task, agent, generation, reason)?;
            Ok(())
        })?;
        Ok(ev)
    }

    // ----- op ids -----------------------------------------------------------------------------

    /// The stored answer of an earlier request with this `op_id` from `identity`.
    pub fn op_result(&self, identity: &str, op_id: &str) -> BoardResult<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT response FROM op_results WHERE identity = ?1 AND op_id = ?2",
                params![identity, op_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Remembers the answer to a request with an `op_id` (first answer wins).
    pub fn save_op_result(
        &mut self,
        identity: &str,
        op_id: &str,
        response: &str,
    ) -> BoardResult<()> {
        self.tx(|tx, _| {
            tx.execute(
                "INSERT OR IGNORE INTO op_results (identity, op_id, response, at)
                 VALUES (?1, ?2, ?3, ?4)",
                params![identity, op_id, response, now_wall()],
            )?;
            Ok(())
        })?;
        Ok(())
    }

    // ----- goal -------------------------------------------------------------------------------

    /// Sets a new current goal (older goals are kept).
    pub fn set_goal(&mut self, text: &str, by: &str) -> BoardResult<(GoalView, Events)> {
        check_text("goal", text, MAX_TEXT, false)?;
        self.tx(|tx, ev| {
            tx.execute(
                "INSERT INTO goals (text, set_at, set_by) VALUES (?1, ?2, ?3)",
                params![text, now_wall(), by],
            )?;
            emit(tx, ev, "goal", None, agent_opt(by), None, text)?;
            current_goal(tx)?.ok_or_else(|| BoardError::internal("goal vanished"))
        })
    }

    /// The current goal, if one was set.
    pub fn goal(&self) -> BoardResult<Option<GoalView>> {
        current_goal(&self.conn)
    }

    // ----- tasks ------------------------------------------------------------------------------

    /// Adds a task. `after` must name existing tasks. Errors: `invalid` for an empty or oversized
    /// title, `not_found` for an unknown dependency.
    pub fn add_task(
        &mut self,
        title: &str,
        body: &str,
        priority: i64,
        after: &[i64],
        by: &str,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        check_text("title", title, MAX_TITLE, false)?;
        check_text("body", body, MAX_TEXT, true)?;
        self.tx(|tx, ev| {
            let now = now_wall();
            tx.execute(
                "INSERT INTO tasks (title, body, priority, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?4)",
                params![title, body, priority, now],
            )?;
            let id = tx.last_insert_rowid();
            set_deps(tx, id, after)?;
            emit(tx, ev, "add", Some(id), agent_opt(by), None, title)?;
            task_view(tx, id, now_ms)
        })
    }

    /// Edits a task's title, body, priority or dependencies (None leaves a field alone).
    /// Errors: `not_found`, `invalid` (empty title, dependency cycle).
    #[allow(clippy::too_many_arguments)]
    pub fn edit_task(
        &mut self,
        id: i64,
        title: Option<&str>,
        body: Option<&str>,
        priority: Option<i64>,
        after: Option<&[i64]>,
        by: &str,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        if let Some(t) = title {
            check_text("title", t, MAX_TITLE, false)?;
        }
        if let Some(b) = body {
            check_text("body", b, MAX_TEXT, true)?;
        }
        self.tx(|tx, ev| {
            let n = tx.execute(
                "UPDATE tasks SET title = COALESCE(?2, title), body = COALESCE(?3, body),
                        priority = COALESCE(?4, priority), updated_at = ?5
                 WHERE id = ?1",
                params![id, title, body, priority, now_wall()],
            )?;
            if n == 0 {
                return Err(task_not_found(id));
            }
            if let Some(after) = after {
                tx.execute("DELETE FROM task_deps WHERE task_id = ?1", [id])?;
                set_deps(tx, id, after)?;
            }
            emit(tx, ev, "edit", Some(id), agent_opt(by), None, "edited")?;
            task_view(tx, id, now_ms)
        })
    }

    /// Cancels an open or claimed task; a live claim on it ends with reason `task cancelled`.
    pub fn cancel_task(
        &mut self,
        id: i64,
        by: &str,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        self.tx(|tx, ev| {
            let n = tx.execute(
                "UPDATE tasks SET state = 'cancelled', updated_at = ?2
                 WHERE id = ?1 AND state IN ('open', 'claimed')",
                params![id, now_wall()],
            )?;
            if n == 0 {
                let state = task_state(tx, id)?;
                return Err(BoardError::new(
                    ErrorKind::Conflict,
                    format!("task {id} is {state}; only open or claimed tasks can be cancelled"),
                )
                .with("state", state));
            }
            end_live_claims_of_task(tx, ev, id, "cancel", "task cancelled")?;
            emit(tx, ev, "cancel", Some(id), agent_opt(by), None, "cancelled")?;
            task_view(tx, id, now_ms)
        })
    }

    /// All tasks, optionally only those in `states`, ordered by id.
    pub fn list_tasks(&self, states: Option<&[String]>, now_ms: i64) -> BoardResult<Vec<TaskView>> {
        let all = task_views(&self.conn, None, now_ms)?;
        Ok(match states {
            None => all,
            Some(s) => all.into_iter().filter(|t| s.contains(&t.state)).collect(),
        })
    }

    /// Ready tasks in claim order: highest priority first, then oldest.
    pub fn ready_tasks(&self, now_ms: i64) -> BoardResult<Vec<TaskView>> {
        let mut ready: Vec<TaskView> = task_views(&self.conn, None, now_ms)?
            .into_iter()
            .filter(|t| t.ready)
            .collect();
        ready.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.id.cmp(&b.id)));
        Ok(ready)
    }

    /// One task. Errors: `not_found`.
    pub fn task(&self, id: i64, now_ms: i64) -> BoardResult<TaskView> {
        task_view(&self.conn, id, now_ms)
    }

    /// A task's notes, oldest first.
    pub fn notes(&self, id: i64) -> BoardResult<Vec<NoteView>> {
        let mut st = self.conn.prepare(
            "SELECT id, task_id, author, generation, text, at FROM notes WHERE task_id = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([id], |r| {
            Ok(NoteView {
                id: r.get(0)?,
                task: r.get(1)?,
                author: r.get(2)?,
                generation: r.get(3)?,
                text: r.get(4)?,
                at: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Open + claimed tasks: work that is not finished yet.
    pub fn unfinished_count(&self) -> BoardResult<i64> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM tasks WHERE state IN ('open', 'claimed')",
            [],
            |r| r.get(0),
        )?)
    }

    // ----- claims -----------------------------------------------------------------------------

    /// Grants `agent` a claim on `task`, or on the best ready task when `task` is None (highest
    /// priority, then oldest). Design rule 1: one conditional UPDATE decides; the generation is
    /// incremented in the same transaction. Errors: `not_found`, `conflict` (held: `data.holder`,
    /// `data.generation`; or done/cancelled), `no_ready_task` (`data.remaining` = unfinished
    /// tasks), `lapsed` if the session has ended.
    pub fn claim(
        &mut self,
        agent: &str,
        task: Option<i64>,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<((TaskView, ClaimInfo), Events)> {
        self.tx(|tx, ev| {
            let granted: Option<(i64, i64)> = tx
                .query_row(
                    "UPDATE tasks SET state = 'claimed', generation = generation + 1, updated_at = ?3
                     WHERE id = (
                         SELECT t.id FROM tasks t
                         WHERE t.state = 'open' AND (?1 IS NULL OR t.id = ?1)
                           AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks a ON a.id = d.after_id
                                           WHERE d.task_id = t.id AND a.state NOT IN ('done', 'cancelled'))
                         ORDER BY t.priority DESC, t.id ASC LIMIT 1)
                       AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = ?2 AND s.ended_at IS NULL)
                     RETURNING id, generation",
                    params![task, agent, now_wall()],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let Some((id, generation)) = granted else {
                return Err(explain_claim_refusal(tx, agent, task)?);
            };
            tx.execute(
                "INSERT INTO claims (task_id, session_id, generation, granted_at, expires_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, agent, generation, now_wall(), expires_ms],
            )?;
            emit(tx, ev, "grant", Some(id), Some(agent), Some(generation), "claimed")?;
            Ok((task_view(tx, id, now_ms)?, ClaimInfo { task: id, generation, expires_ms }))
        })
    }

    /// Moves the expiry of every live, unexpired claim of `agent` to `expires_ms` (design rule 2)
    /// and records `last_seen_at`. Returns the claims renewed.
    pub fn renew(
        &mut self,
        agent: &str,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<Vec<ClaimInfo>> {
        let (claims, _) = self.tx(|tx, _| {
            tx.execute(
                "UPDATE sessions SET last_seen_at = ?2 WHERE id = ?1 AND ended_at IS NULL",
                params![agent, now_wall()],
            )?;
            let mut st = tx.prepare(
                "UPDATE claims SET expires_ms = ?3
                 WHERE session_id = ?1 AND ended_at IS NULL AND expires_ms > ?2
                 RETURNING task_id, generation, expires_ms",
            )?;
            let rows = st.query_map(params![agent, now_ms, expires_ms], |r| {
                Ok(ClaimInfo {
                    task: r.get(0)?,
                    generation: r.get(1)?,
                    expires_ms: r.get(2)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })?;
        Ok(claims)
    }

    /// Live claims of `agent`.
    pub fn live_claims(&self, agent: &str) -> BoardResult<Vec<ClaimInfo>> {
        let mut st = self.conn.prepare(
            "SELECT task_id, generation, expires_ms FROM claims
             WHERE session_id = ?1 AND ended_at IS NULL ORDER BY task_id",
        )?;
        let rows = st.query_map([agent], |r| {
            Ok(ClaimInfo {
                task: r.get(0)?,
                generation: r.get(1)?,
                expires_ms: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Explicit `renew`: like [`Store::renew`] but an agent whose last claim ended gets `lapsed`.
    pub fn renew_checked(
        &mut self,
        agent: &str,
        now_ms: i64,
        expires_ms: i64,
    ) -> BoardResult<Vec<ClaimInfo>> {
        let claims = self.renew(agent, now_ms, expires_ms)?;
        if claims.is_empty() {
            let last: Option<(i64, i64)> = self
                .conn
                .query_row(
                    "SELECT task_id, generation FROM claims WHERE session_id = ?1
                     ORDER BY id DESC LIMIT 1",
                    [agent],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            if let Some((task, generation)) = last {
                let tx = self.conn.unchecked_transaction()?;
                let err = explain_write_refusal(&tx, agent, task, Some(generation))?;
                if err.kind == ErrorKind::Lapsed {
                    return Err(err);
                }
            }
        }
        Ok(claims)
    }

    /// Finishes `task` for its holder `agent` (design rules 5 and 7). With `generation`, it must
    /// equal the live claim's. Repeating a successful `done` answers `already: true`. Errors:
    /// `lapsed` (the caller's claim ended or the generation is stale), `conflict`, `not_found`.
    pub fn done(
        &mut self,
        agent: &str,
        task: i64,
        generation: Option<i64>,
        note: Option<&str>,
        now_ms: i64,
    ) -> BoardResult<(DoneOutcome, Events)> {
        if let Some(n) = note {
            check_text("note", n, MAX_TEXT, false)?;
        }
        self.tx(|tx, ev| {
            let ended = end_own_claim(tx, agent, task, generation, now_ms, "done", "done")?;
            let Some(gen) = ended else {
                let already: Option<i64> = tx
                    .query_row(
                        "SELECT done_generation FROM tasks WHERE id = ?1 AND state = 'done'
                         AND done_by = ?2 AND (?3 IS NULL OR done_generation = ?3)",
                        params![task, agent, generation],
                        |r| r.get(0),
                    )
                    .optional()?;
                if let Some(g) = already {
                    return Ok(DoneOutcome {
                        task: task_view(tx, task, now_ms)?,
                        generation: g,
                        already: true,
                    });
                }
                return Err(explain_write_refusal(tx, agent, task, generation)?);
            };
            let now = now_wall();
            tx.execute(
                "UPDATE tasks SET state = 'done', done_by = ?2, done_generation = ?3, done_at = ?4,
                        updated_at = ?4
                 WHERE id = ?1 AND state = 'claimed'",
                params![task, agent, gen, now],
            )?;
            if let Some(n) = note {
                insert_note(tx, task, agent, Some(gen), n)?;
            }
            emit(
                tx,
                ev,
                "done",
                Some(task),
                Some(agent),
                Some(gen),
                note.unwrap_or("done"),
            )?;
            Ok(DoneOutcome {
                task: task_view(tx, task, now_ms)?,
                generation: gen,
                already: false,
            })
        })
    }

    /// Gives a claimed task back: by its holder (fenced like `done`), or by an operator with
    /// `force` (ends whoever's live claim). The task becomes open again.
    pub fn release(
        &mut self,
        agent: Option<&str>,
        task: i64,
        generation: Option<i64>,
        note: Option<&str>,
        now_ms: i64,
    ) -> BoardResult<(TaskView, Events)> {
        if let Some(n) = note {
            check_text("note", n, MAX_TEXT, false)?;
        }
        self.tx(|tx, ev| {
            let (gen, holder) = match agent {
                Some(agent) => {
                    match end_own_claim(tx, agent, task, generation, now_ms, "release", "released")? {
                        Some(g) => (g, agent.to_string()),
                        None => return Err(explain_write_refusal(tx, agent, task, generation)?),
                    }
                }
                None => {
                    let ended: Option<(i64, String)> = tx
                        .query_row(
                            "UPDATE claims SET ended_at = ?2, end_kind = 'release',
                                    end_reason = 'force-released by operator'
                             WHERE task_id = ?1 AND ended_at IS NULL
                             RETURNING generation, session_id",
                            params![task, now_wall()],
                            |r| Ok((r.get(0)?, r.get(1)?)),
                        )
                        .optional()?;
                    match ended {
                        Some(x) => x,
                        None => {
                            let state = task_state(tx, task)?;
                            return Err(BoardError::new(
                                ErrorKind::Conflict,
                                format!("task {task} is {state}, not claimed: nothing to release"),
                            )
                            .with("state", state));
                        }
                    }
                }
            };
            tx.execute(
                "UPDATE tasks SET state = 'open', updated_at = ?2 WHERE id = ?1 AND state = 'claimed'",
                params![task, now_wall()],
            )?;
            let author = agent.unwrap_or(OPERATOR);
            if let Some(n) = note {
                insert_note(tx, task, author, Some(gen), n)?;
            }
            let reason = match agent {
                Some(_) => "released by holder".to_string(),
                None => format!("force-released by operator (held by {holder})"),
            };
            emit(tx, ev, "release", Some(task), Some(&holder), Some(gen), &reason)?;
            task_view(tx, task, now_ms)
        })
    }

    /// Adds a note. From an agent it is a write as holder (fenced: `lapsed`/`conflict`); from an
    /// operator it is accepted on any task.
    pub fn note(
        &mut self,
        agent: Option<&str>,
        task: i64,
        text: &str,
        now_ms: i64,
    ) -> BoardResult<(NoteView, Events)> {
        check_text("note", text, MAX_TEXT, false)?;
        self.tx(|tx, ev| {
            let (author, gen) = match agent {
                Some(a) => {
                    let gen: Option<i64> = tx
                        .query_row(
                            "UPDATE claims SET expires_ms = expires_ms
                             WHERE task_id = ?1 AND session_id = ?2 AND ended_at IS NULL
                               AND expires_ms > ?3
                             RETURNING generation",
                            params![task, a, now_ms],
                            |r| r.get(0),
                        )
                        .optional()?;
                    match gen {
                        Some(g) => (a.to_string(), Some(g)),
                        None => return Err(explain_write_refusal(tx, a, task, None)?),
                    }
                }
                None => {
                    task_state(tx, task)?;
                    (OPERATOR.to_string(), None)
                }
            };
            let id = insert_note(tx, task, &author, gen, text)?;
            emit(tx, ev, "note", Some(task), agent, gen, text)?;
            Ok(NoteView {
                id,
                task,
                author,
                generation: gen,
                text: text.to_string(),
                at: now_wall(),
            })
        })
    }

    /// `board check`: Ok when `agent` holds a live claim on `task` (any live claim when None) at
    /// `generation` (when given). Errors as for `done`.
    pub fn check(
        &mut self,
        agent: &str,
        task: Option<i64>,
        generation: Option<i64>,
        now_ms: i64,
    ) -> BoardResult<ClaimInfo> {
        let found: Option<ClaimInfo> = self
            .conn
            .query_row(
                "SELECT task_id, generation, expires_ms FROM claims
                 WHERE session_id = ?1 AND ended_at IS NULL AND expires_ms > ?2
                   AND (?3 IS NULL OR task_id = ?3) AND (?4 IS NULL OR generation = ?4)
                 ORDER BY task_id LIMIT 1",
                params![agent, now_ms, task, generation],
                |r| {
                    Ok(ClaimInfo {
                        task: r.get(0)?,
                        generation: r.get(1)?,
                        expires_ms: r.get(2)?,
                    })
                },
            )
            .optional()?;
        match (found, task) {
            (Some(c), _) => Ok(c),
            (None, Some(t)) => {
                let tx = self.conn.unchecked_transaction()?;
                Err(explain_write_refusal(&tx, agent, t, generation)?)
            }
            (None, None) => Err(BoardError::new(
                ErrorKind::Lapsed,
                format!("agent session {agent} holds no live claim"),
            )),
        }
    }

    /// Ends every live claim whose expiry is at or before `now_ms` (design rule 3, last step).
    pub fn lapse_due(&mut self, now_ms: i64, lease_ms: i64) -> BoardResult<Events> {
        let (_, ev) = self.tx(|tx, ev| {
            let reason = format!("lease expired (not renewed for {})", fmt_ms(lease_ms));
            let ended = {
                let mut st = tx.prepare(
                    "UPDATE claims SET ended_at = ?2, end_kind = 'lapse', end_reason = ?3
                     WHERE ended_at IS NULL AND expires_ms <= ?1
                     RETURNING task_id, session_id, generation",
                )?;
                let rows = st.query_map(params![now_ms, now_wall(), reason], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            for (task, agent, gen) in ended {
                reopen(tx, task)?;
                emit(
                    tx,
                    ev,
                    "lapse",
                    Some(task),
                    Some(&agent),
                    Some(gen),
                    &reason,
                )?;
            }
            Ok(())
        })?;
        Ok(ev)
    }

    /// The earliest expiry (lease clock, ms) among live claims.
    pub fn earliest_expiry(&self) -> BoardResult<Option<i64>> {
        Ok(self.conn.query_row(
            "SELECT MIN(expires_ms) FROM claims WHERE ended_at IS NULL",
            [],
            |r| r.get(0),
        )?)
    }

    /// Whether any live claim is due to lapse at `now_ms` (cheap read to skip empty sweeps).
    pub fn any_due(&self, now_ms: i64) -> BoardResult<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM claims WHERE ended_at IS NULL AND expires_ms <= ?1)",
            [now_ms],
            |r| r.get(0),
        )?)
    }

    // ----- sessions ---------------------------------------------------------------------------

    /// Registers an agent session under a unique id derived from `name` (`name`, `name-2`, …;
    /// an id once used is never reused). `launcher` is the `board run` process (pid, start).
    pub fn register_session(
        &mut self,
        name: &str,
        token_hash: &str,
        boot_id: &str,
        launcher: Option<(i32, u64)>,
        attention_ms: Option<i64>,
    ) -> BoardResult<(String, Events)> {
        let base = session_base_name(name)?;
        self.tx(|tx, ev| {
            let now = now_wall();
            for n in 1..10_000 {
                let id = if n == 1 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                };
                let inserted = tx.execute(
                    "INSERT INTO sessions (id, name, token_hash, boot_id, launcher_pid,
                                           launcher_start, started_at, attention_ms)
                     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
                     WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)",
                    params![
                        id,
                        name,
                        token_hash,
                        boot_id,
                        launcher.map(|l| l.0),
                        launcher.map(|l| l.1 as i64),
                        now,
                        attention_ms
                    ],
                )?;
                if inserted == 1 {
                    emit(tx, ev, "session_start", None, Some(&id), None, "registered")?;
                    return Ok(id);
                }
            }
            Err(BoardError::internal(format!(
                "no free session id for {base:?}"
            )))
        })
    }

    /// Records the agent's process (and pane) once the launcher has spawned it.
    pub fn attach_session(
        &mut self,
        id: &str,
        agent: (i32, u64),
        pane: Option<(&str, i32, u64)>,
    ) -> BoardResult<()> {
        let (n, _) = self.tx(|tx, _| {
            Ok(tx.execute(
                "UPDATE sessions SET pid = ?2, pid_start = ?3,
                        pane_id = COALESCE(?4, pane_id), pane_pid = COALESCE(?5, pane_pid),
                        pane_start = COALESCE(?6, pane_start)
                 WHERE id = ?1 AND ended_at IS NULL",
                params![
                    id,
                    agent.0,
                    agent.1 as i64,
                    pane.map(|p| p.0),
                    pane.map(|p| p.1),
                    pane.map(|p| p.2 as i64)
                ],
            )?)
        })?;
        if n == 0 {
            return Err(BoardError::new(
                ErrorKind::Lapsed,
                format!("agent session {id} has ended"),
            ));
        }
        Ok(())
    }

    /// Ends session `id` and expels its live claims with `reason` (design rule 4). Idempotent:
    /// a session that already ended is left alone (the first report wins). Returns whether this
    /// call ended it.
    pub fn expel_session(&mut self, id: &str, reason: &str) -> BoardResult<(bool, Events)> {
        self.tx(|tx, ev| {
            let n = tx.execute(
                "UPDATE sessions SET ended_at = ?2, end_reason = ?3, waiting = NULL
                 WHERE id = ?1 AND ended_at IS NULL",
                params![id, now_wall(), reason],
            )?;
            if n == 0 {
                return Ok(false);
            }
            let ended = {
                let mut st = tx.prepare(
                    "UPDATE claims SET ended_at = ?2, end_kind = 'expel', end_reason = ?3
                     WHERE session_id = ?1 AND ended_at IS NULL
                     RETURNING task_id, generation",
                )?;
                let rows = st.query_map(params![id, now_wall(), reason], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
                })?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            for (task, gen) in ended {
                reopen(tx, task)?;
                emit(tx, ev, "expel", Some(task), Some(id), Some(gen), reason)?;
            }
            emit(tx, ev, "session_end", None, Some(id), None, reason)?;
            Ok(true)
        })
    }

    /// Sets or clears (None) the session's "waiting for a human" question.
    pub fn set_waiting(&mut self, id: &str, question: Option<&str>) -> BoardResult<(bool, Events)> {
        if let Some(q) = question {
            check_text("question", q, MAX_TEXT, false)?;
        }
        self.tx(|tx, ev| {
            let n = tx.execute(
                "UPDATE sessions SET waiting = ?2 WHERE id = ?1 AND ended_at IS NULL
                   AND waiting IS NOT ?2",
                params![id, question],
            )?;
            if n == 1 {
                match question {
                    Some(q) => emit(tx, ev, "wait", None, Some(id), None, q)?,
                    None => emit(tx, ev, "resume", None, Some(id), None, "resumed")?,
                };
            }
            Ok(n == 1)
        })
    }

    /// Records the first call or hook with the session's identity (it reached its prompt).
    /// Returns whether this call recorded it.
    pub fn mark_contacted(&mut self, id: &str) -> BoardResult<bool> {
        let (n, _) = self.tx(|tx, _| {
            Ok(tx.execute(
                "UPDATE sessions SET contacted_at = ?2
                 WHERE id = ?1 AND ended_at IS NULL AND contacted_at IS NULL",
                params![id, now_wall()],
            )?)
        })?;
        Ok(n == 1)
    }

    /// Marks the session idle (its agent finished its turn; `reason` says who said so), or with
    /// None clears that. Setting appends an `idle` event; clearing appends none (every call of
    /// an agent clears it, and the log would drown in them). Returns whether anything changed.
    pub fn set_idle(&mut self, id: &str, reason: Option<&str>) -> BoardResult<(bool, Events)> {
        if let Some(r) = reason {
            check_text("reason", r, MAX_TEXT, false)?;
        }
        self.tx(|tx, ev| {
            let n = match reason {
                Some(r) => {
                    let n = tx.execute(
                        "UPDATE sessions SET idle_since = ?2
                         WHERE id = ?1 AND ended_at IS NULL AND idle_since IS NULL",
                        params![id, now_wall()],
                    )?;
                    if n == 1 {
                        emit(tx, ev, "idle", None, Some(id), None, r)?;
                    }
                    n
                }
                None => tx.execute(
                    "UPDATE sessions SET idle_since = NULL WHERE id = ?1 AND idle_since IS NOT NULL",
                    [id],
                )?,
            };
            Ok(n == 1)
        })
    }

    /// The row of one session (live or ended).
    pub fn session(&self, id: &str) -> BoardResult<Option<SessionRow>> {
        Ok(self
            .conn
            .query_row(&format!("{SESSION_ROW} WHERE id = ?1"), [id], session_row)
            .optional()?)
    }

    /// Why a session ended, if it did.
    pub fn session_end_reason(&self, id: &str) -> BoardResult<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT end_reason FROM sessions WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?
            .flatten())
    }

    /// Rows of all live sessions.
    pub fn live_sessions(&self) -> BoardResult<Vec<SessionRow>> {
        let mut st = self.conn.prepare(&format!(
            "{SESSION_ROW} WHERE ended_at IS NULL ORDER BY started_at"
        ))?;
        let rows = st.query_map([], session_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Sessions for display; ended ones only with `all`. `state` is filled in by the caller's
    /// liveness knowledge via `state_of`.
    pub fn sessions(
        &self,
        all: bool,
        state_of: &dyn Fn(&SessionRow) -> String,
    ) -> BoardResult<Vec<SessionView>> {
        let mut st = self.conn.prepare(
            "SELECT s.id, s.name, s.pid, s.launcher_pid, s.pane_id, s.waiting, s.started_at,
                    s.last_seen_at, s.ended_at, s.end_reason,
                    (SELECT group_concat(task_id) FROM claims c
                      WHERE c.session_id = s.id AND c.ended_at IS NULL),
                    s.idle_since, s.contacted_at, s.attention_ms
             FROM sessions s WHERE ?1 OR s.ended_at IS NULL ORDER BY s.started_at, s.id",
        )?;
        let now = SystemTime::now();
        let rows = st.query_map([all], |r| {
            let claims: Option<String> = r.get(10)?;
            let started_at: String = r.get(6)?;
            let contacted: Option<String> = r.get(12)?;
            let attention_ms: Option<i64> = r.get(13)?;
            let attention = match (contacted, attention_ms) {
                (None, Some(ms)) => needs_attention(&started_at, ms, now),
                _ => None,
            };
            Ok(SessionView {
                id: r.get(0)?,
                name: r.get(1)?,
                pid: r.get(2)?,
                launcher_pid: r.get(3)?,
                pane: r.get(4)?,
                waiting: r.get(5)?,
                started_at: r.get(6)?,
                last_seen_at: r.get(7)?,
                ended_at: r.get(8)?,
                end_reason: r.get(9)?,
                claims: claims
                    .map(|c| c.split(',').filter_map(|x| x.parse().ok()).collect())
                    .unwrap_or_default(),
                state: String::new(),
                idle_since: r.get(11)?,
                attention,
            })
        })?;
        let mut out: Vec<SessionView> = rows.collect::<Result<_, _>>()?;
        for s in &mut out {
            s.state = match (&s.ended_at, &s.waiting) {
                (Some(_), _) => "gone".into(),
                (None, Some(_)) => "waiting".into(),
                (None, None) => match self.session(&s.id)? {
                    Some(row) => state_of(&row),
                    None => "gone".into(),
                },
            };
            if s.state != "alive" {
                s.attention = None;
            }
            if s.state == "alive" {
                s.state = if s.attention.is_some() {
                    "needs_attention".into()
                } else if s.idle_since.is_some() || s.claims.is_empty() {
                    "idle".into()
                } else {
                    "working".into()
                };
            }
        }
        Ok(out)
    }

    // ----- events -----------------------------------------------------------------------------

    /// Events with id > `after`, oldest first, at most `limit`.
    pub fn events(&self, after: i64, limit: i64) -> BoardResult<Vec<EventView>> {
        let mut st = self.conn.prepare(
            "SELECT id, at, kind, task_id, session_id, generation, reason FROM events
             WHERE id > ?1 ORDER BY id LIMIT ?2",
        )?;
        let rows = st.query_map(params![after, limit], event_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The last `limit` events, oldest first.
    pub fn recent_events(&self, limit: i64) -> BoardResult<Vec<EventView>> {
        let mut st = self.conn.prepare(
            "SELECT * FROM (SELECT id, at, kind, task_id, session_id, generation, reason
             FROM events ORDER BY id DESC LIMIT ?1) ORDER BY id",
        )?;
        let rows = st.query_map([limit], event_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Events of one task, oldest first.
    pub fn task_events(&self, task: i64) -> BoardResult<Vec<EventView>> {
        let mut st = self.conn.prepare(
            "SELECT id, at, kind, task_id, session_id, generation, reason FROM events
             WHERE task_id = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([task], event_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

const SESSION_ROW: &str = "SELECT id, token_hash, boot_id, launcher_pid, launcher_start, pid,
    pid_start, pane_id, pane_pid, pane_start, waiting, ended_at, idle_since FROM sessions";

fn session_row(r: &rusqlite::Row) -> rusqlite::Result<SessionRow> {
    let pair = |p: Option<i64>, s: Option<i64>| match (p, s) {
        (Some(p), Some(s)) => Some((p as i32, s as u64)),
        _ => None,
    };
    let pane = match (
        r.get::<_, Option<String>>(7)?,
        r.get::<_, Option<i64>>(8)?,
        r.get::<_, Option<i64>>(9)?,
    ) {
        (Some(id), Some(p), Some(s)) => Some((id, p as i32, s as u64)),
        _ => None,
    };
    Ok(SessionRow {
        id: r.get(0)?,
        token_hash: r.get(1)?,
        boot_id: r.get(2)?,
        launcher: pair(r.get(3)?, r.get(4)?),
        agent: pair(r.get(5)?, r.get(6)?),
        pane,
        waiting: r.get(10)?,
        ended_at: r.get(11)?,
        idle_since: r.get(12)?,
    })
}

/// Why a session started at `started_at` (RFC 3339) and never heard from needs attention at
/// `now`, once `attention_ms` passed; None before that.
fn needs_attention(started_at: &str, attention_ms: i64, now: SystemTime) -> Option<String> {
    let started = humantime::parse_rfc3339(started_at).ok()?;
    let age = now.duration_since(started).ok()?;
    (age.as_millis() >= attention_ms as u128).then(|| {
        format!(
            "no hook and no board call {} after its start: its CLI is most likely showing a \
             first-run dialog (trust, sign-in, approval); answer it in the agent's pane",
            humantime::format_duration(std::time::Duration::from_secs(age.as_secs()))
        )
    })
}

fn event_row(r: &rusqlite::Row) -> rusqlite::Result<EventView> {
    Ok(EventView {
        id: r.get(0)?,
        at: r.get(1)?,
        kind: r.get(2)?,
        task: r.get(3)?,
        agent: r.get(4)?,
        generation: r.get(5)?,
        reason: r.get(6)?,
    })
}

/// Appends one event in `tx` and queues it for broadcast.
fn emit(
    tx: &Transaction,
    ev: &mut Events,
    kind: &str,
    task: Option<i64>,
    agent: Option<&str>,
    generation: Option<i64>,
    reason: &str,
) -> BoardResult<()> {
    let at = now_wall();
    // Keep the log readable: huge agent text lives in notes and tasks, not in every event.
    let reason: String = reason.chars().take(500).collect();
    tx.execute(
        "INSERT INTO events (at, kind, task_id, session_id, generation, reason)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![at, kind, task, agent, generation, reason],
    )?;
    ev.push(EventView {
        id: tx.last_insert_rowid(),
        at,
        kind: kind.to_string(),
        task,
        agent: agent.map(str::to_string),
        generation,
        reason: Some(reason),
    });
    Ok(())
}

fn agent_opt(by: &str) -> Option<&str> {
    (by != OPERATOR).then_some(by)
}

fn fmt_ms(ms: i64) -> String {
    humantime::format_duration(std::time::Duration::from_millis(ms.max(0) as u64)).to_string()
}

fn check_text(what: &str, text: &str, max: usize, may_be_empty: bool) -> BoardResult<()> {
    if !may_be_empty && text.trim().is_empty() {
        return Err(BoardError::invalid(format!("{what} must not be empty")));
    }
    if text.len() > max {
        return Err(BoardError::invalid(format!(
            "{what} is {} bytes; the limit is {max} bytes",
            text.len()
        )));
    }
    if text.contains('\0') {
        return Err(BoardError::invalid(format!(
            "{what} must not contain NUL characters"
        )));
    }
    Ok(())
}

fn session_base_name(name: &str) -> BoardResult<String> {
    let base: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let base = base.trim_matches('-').to_string();
    if base.is_empty() || base == OPERATOR {
        return Err(BoardError::invalid(format!(
            "agent name {:?} is not usable: use letters, digits, '-', '_' or '.' (not \"operator\")",
            name.chars().take(40).collect::<String>()
        )));
    }
    Ok(base)
}

fn task_not_found(id: i64) -> BoardError {
    BoardError::not_found(format!("no task {id}")).with("task", id)
}

fn task_state(tx: &Connection, id: i64) -> BoardResult<String> {
    tx.query_row("SELECT state FROM tasks WHERE id = ?1", [id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| task_not_found(id))
}

fn current_goal(c: &Connection) -> BoardResult<Option<GoalView>> {
    Ok(c.query_row(
        "SELECT id, text, set_at, set_by FROM goals ORDER BY id DESC LIMIT 1",
        [],
        |r| {
            Ok(GoalView {
                id: r.get(0)?,
                text: r.get(1)?,
                set_at: r.get(2)?,
                set_by: r.get(3)?,
            })
        },
    )
    .optional()?)
}

fn set_deps(tx: &Transaction, id: i64, after: &[i64]) -> BoardResult<()> {
    for &a in after {
        if a == id {
            return Err(BoardError::invalid(format!(
                "task {id} cannot wait for itself"
            )));
        }
        task_state(tx, a)?;
        // Adding id → a closes a cycle when a already (transitively) waits for id.
        let cycle: bool = tx.query_row(
            "WITH RECURSIVE up(x) AS (SELECT ?1 UNION SELECT d.after_id FROM task_deps d JOIN up ON d.task_id = up.x)
             SELECT EXISTS (SELECT 1 FROM up WHERE x = ?2)",
            params![a, id],
            |r| r.get(0),
        )?;
        if cycle {
            return Err(BoardError::invalid(format!(
                "task {id} cannot wait for task {a}: task {a} already waits for task {id}"
            )));
        }
        tx.execute(
            "INSERT OR IGNORE INTO task_deps (task_id, after_id) VALUES (?1, ?2)",
            params![id, a],
        )?;
    }
    Ok(())
}

fn insert_note(
    tx: &Transaction,
    task: i64,
    author: &str,
    generation: Option<i64>,
    text: &str,
) -> BoardResult<i64> {
    tx.execute(
        "INSERT INTO notes (task_id, author, generation, text, at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![task, author, generation, text, now_wall()],
    )?;
    Ok(tx.last_insert_rowid())
}

/// The fenced step of every holder write: ends the caller's own live, unexpired claim on `task`
/// (at `generation` when given) in one conditional UPDATE. None when no such claim exists.
fn end_own_claim(
    tx: &Transaction,
    agent: &str,
    task: i64,
    generation: Option<i64>,
    now_ms: i64,
    kind: &str,
    reason: &str,
) -> BoardResult<Option<i64>> {
    Ok(tx
        .query_row(
            "UPDATE claims SET ended_at = ?5, end_kind = ?6, end_reason = ?7
             WHERE task_id = ?1 AND session_id = ?2 AND ended_at IS NULL AND expires_ms > ?3
               AND (?4 IS NULL OR generation = ?4)
             RETURNING generation",
            params![task, agent, now_ms, generation, now_wall(), kind, reason],
            |r| r.get(0),
        )
        .optional()?)
}

fn end_live_claims_of_task(
    tx: &Transaction,
    ev: &mut Events,
    task: i64,
    kind: &str,
    reason: &str,
) -> BoardResult<()> {
    let ended: Option<(String, i64)> = tx
        .query_row(
            "UPDATE claims SET ended_at = ?2, end_kind = ?3, end_reason = ?4
             WHERE task_id = ?1 AND ended_at IS NULL RETURNING session_id, generation",
            params![task, now_wall(), kind, reason],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((agent, gen)) = ended {
        emit(
            tx,
            ev,
            "release",
            Some(task),
            Some(&agent),
            Some(gen),
            reason,
        )?;
    }
    Ok(())
}

fn reopen(tx: &Transaction, task: i64) -> BoardResult<()> {
    tx.execute(
        "UPDATE tasks SET state = 'open', updated_at = ?2 WHERE id = ?1 AND state = 'claimed'",
        params![task, now_wall()],
    )?;
    Ok(())
}

/// Why a claim was not granted, as the error the loser sees.
fn explain_claim_refusal(
    tx: &Transaction,
    agent: &str,
    task: Option<i64>,
) -> BoardResult<BoardError> {
    let ended: Option<Option<String>> = tx
        .query_row(
            "SELECT end_reason FROM sessions WHERE id = ?1 AND ended_at IS NOT NULL",
            [agent],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(reason) = ended {
        return Ok(BoardError::new(
            ErrorKind::Lapsed,
            format!(
                "agent session {agent} has ended ({})",
                reason.unwrap_or_default()
            ),
        ));
    }
    let Some(id) = task else {
        let remaining: i64 = tx.query_row(
            "SELECT COUNT(*) FROM tasks WHERE state IN ('open', 'claimed')",
            [],
            |r| r.get(0),
        )?;
        return Ok(BoardError::new(
            ErrorKind::NoReadyTask,
            if remaining == 0 {
                "no ready task: the backlog is finished".to_string()
            } else {
                format!("no ready task right now ({remaining} unfinished: claimed or waiting on dependencies)")
            },
        )
        .with("remaining", remaining));
    };
    let state = task_state(tx, id)?;
    Ok(match state.as_str() {
        "claimed" => {
            let (holder, gen): (String, i64) = tx.query_row(
                "SELECT session_id, generation FROM claims WHERE task_id = ?1 AND ended_at IS NULL",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            BoardError::new(
                ErrorKind::Conflict,
                format!("task {id} is held by {holder}"),
            )
            .with("holder", holder)
            .with("generation", gen)
            .with("task", id)
        }
        "open" => {
            let waits: Vec<i64> = {
                let mut st = tx.prepare(
                    "SELECT d.after_id FROM task_deps d JOIN tasks a ON a.id = d.after_id
                     WHERE d.task_id = ?1 AND a.state NOT IN ('done', 'cancelled') ORDER BY d.after_id",
                )?;
                let rows = st.query_map([id], |r| r.get(0))?;
                rows.collect::<Result<_, _>>()?
            };
            let list = waits
                .iter()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            BoardError::new(
                ErrorKind::NoReadyTask,
                format!("task {id} is not ready: it waits for task(s) {list}"),
            )
            .with("blocked_by", waits)
            .with("task", id)
        }
        other => BoardError::new(ErrorKind::Conflict, format!("task {id} is {other}"))
            .with("state", other.to_string())
            .with("task", id),
    })
}

/// Why a holder write (`done`, `release`, `note`, `check`, `renew`) by `agent` on `task` was
/// refused: says when and why the caller's claim ended and who holds the task now.
fn explain_write_refusal(
    tx: &Transaction,
    agent: &str,
    task: i64,
    generation: Option<i64>,
) -> BoardResult<BoardError> {
    let state = task_state(tx, task)?;
    let live: Option<(String, i64, i64)> = tx
        .query_row(
            "SELECT session_id, generation, expires_ms FROM claims WHERE task_id = ?1 AND ended_at IS NULL",
            [task],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let mine: Option<(i64, Option<String>, Option<String>)> = tx
        .query_row(
            "SELECT generation, ended_at, end_reason FROM claims WHERE task_id = ?1 AND session_id = ?2
             ORDER BY id DESC LIMIT 1",
            params![task, agent],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let now_held = match &live {
        Some((h, g, _)) if h != agent => format!("task {task} is now held by {h} (generation {g})"),
        Some((_, g, _)) => format!("task {task} is at generation {g}"),
        None => match state.as_str() {
            "done" => {
                let by: Option<String> =
                    tx.query_row("SELECT done_by FROM tasks WHERE id = ?1", [task], |r| {
                        r.get(0)
                    })?;
                format!(
                    "task {task} is done (by {})",
                    by.unwrap_or_else(|| "?".into())
                )
            }
            s => format!("task {task} is {s}"),
        },
    };
    let mut err = match (&live, &mine) {
        // The caller holds the live claim, so the generation it gave is stale, or the claim's
        // expiry passed and the sweep has not run yet.
        (Some((h, g, _)), _) if h == agent => {
            let msg = match generation {
                Some(given) if given != *g => {
                    format!("generation {given} is stale: {now_held}")
                }
                _ => format!("your claim on task {task} (generation {g}) has expired"),
            };
            BoardError::new(ErrorKind::Lapsed, msg)
        }
        (_, Some((g, Some(ended_at), reason))) => BoardError::new(
            ErrorKind::Lapsed,
            format!(
                "your claim on task {task} (generation {g}) ended at {ended_at}: {}; {now_held}",
                reason.clone().unwrap_or_else(|| "ended".into())
            ),
        )
        .with("ended_at", ended_at.clone())
        .with("end_reason", reason.clone()),
        (Some((h, g, _)), _) => {
            BoardError::new(ErrorKind::Conflict, format!("task {task} is held by {h}"))
                .with("holder", h.clone())
                .with("generation", *g)
        }
        (None, _) => BoardError::new(
            ErrorKind::Lapsed,
            format!("you hold no claim on task {task}; {now_held}"),
        ),
    };
    err = err.with("task", task).with("state", state);
    if let Some((h, g, _)) = live {
        err = err.with("holder", h).with("generation", g);
    }
    Ok(err)
}

/// Task views for one id or all tasks, with dependencies and live claims joined in.
fn task_views(c: &Connection, only: Option<i64>, now_ms: i64) -> BoardResult<Vec<TaskView>> {
    use std::collections::HashMap;
    let mut deps: HashMap<i64, Vec<(i64, bool)>> = HashMap::new();
    {
        let mut st = c.prepare(
            "SELECT d.task_id, d.after_id, a.state IN ('done', 'cancelled') FROM task_deps d
             JOIN tasks a ON a.id = d.after_id WHERE ?1 IS NULL OR d.task_id = ?1
             ORDER BY d.task_id, d.after_id",
        )?;
        let rows = st.query_map([only], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, bool>(2)?,
            ))
        })?;
        for row in rows {
            let (t, a, done) = row?;
            deps.entry(t).or_default().push((a, done));
        }
    }
    let mut st = c.prepare(
        "SELECT t.id, t.title, t.body, t.priority, t.state, t.generation, t.created_at, t.updated_at,
                t.done_by, t.done_at, c.session_id, c.expires_ms
         FROM tasks t LEFT JOIN claims c ON c.task_id = t.id AND c.ended_at IS NULL
         WHERE ?1 IS NULL OR t.id = ?1 ORDER BY t.id",
    )?;
    let rows = st.query_map([only], |r| {
        let id: i64 = r.get(0)?;
        let state: String = r.get(4)?;
        let expires: Option<i64> = r.get(11)?;
        let d = deps.get(&id).cloned().unwrap_or_default();
        let blocked_by: Vec<i64> = d
            .iter()
            .filter(|(_, done)| !done)
            .map(|(a, _)| *a)
            .collect();
        Ok(TaskView {
            id,
            title: r.get(1)?,
            body: r.get(2)?,
            priority: r.get(3)?,
            ready: state == "open" && blocked_by.is_empty(),
            state,
            generation: r.get(5)?,
            after: d.iter().map(|(a, _)| *a).collect(),
            blocked_by,
            created_at: r.get(6)?,
            updated_at: r.get(7)?,
            done_by: r.get(8)?,
            done_at: r.get(9)?,
            holder: r.get(10)?,
            expires_in_ms: expires.map(|e| e - now_ms),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn task_view(c: &Connection, id: i64, now_ms: i64) -> BoardResult<TaskView> {
    task_views(c, Some(id), now_ms)?
        .into_iter()
        .next()
        .ok_or_else(|| task_not_found(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("board.db")).unwrap();
        (dir, s)
    }

    fn agent(s: &mut Store, name: &str) -> String {
        s.register_session(name, "h", "boot", None, None).unwrap().0
    }

    #[test]
    fn a_grant_increments_the_generation_and_a_second_claim_conflicts() {
        let (_d, mut s) = store();
        let (t, _) = s.add_task("write docs", "", 0, &[], OPERATOR, 0).unwrap();
        let a = agent(&mut s, "claude");
        let b = agent(&mut s, "codex");
        let ((_, c), ev) = s.claim(&a, Some(t.id), 0, 1000).unwrap();
        assert_eq!(c.generation, 1);
        assert_eq!(ev[0].kind, "grant");
        let e = s.claim(&b, Some(t.id), 0, 1000).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict);
        assert_eq!(e.data["holder"], "claude");
    }

    #[test]
    fn a_lapsed_holder_cannot_finish_and_the_next_holder_gets_generation_plus_one() {
        let (_d, mut s) = store();
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let a = agent(&mut s, "a");
        let b = agent(&mut s, "b");
        s.claim(&a, Some(t.id), 0, 1000).unwrap();
        let ev = s.lapse_due(1000, 1000).unwrap();
        assert_eq!(ev[0].kind, "lapse");
        let ((_, c), _) = s.claim(&b, Some(t.id), 1000, 2000).unwrap();
        assert_eq!(c.generation, 2);
        let e = s.done(&a, t.id, None, None, 1001).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Lapsed);
        assert!(e.message.contains("now held by b"), "{}", e.message);
        let (out, _) = s.done(&b, t.id, Some(2), None, 1001).unwrap();
        assert!(!out.already);
        let (again, _) = s.done(&b, t.id, Some(2), None, 1002).unwrap();
        assert!(again.already);
        assert_eq!(
            s.done(&b, t.id, Some(1), None, 1003).unwrap_err().kind,
            ErrorKind::Lapsed
        );
    }

    #[test]
    fn a_write_after_expiry_is_fenced_even_before_the_sweep() {
        let (_d, mut s) = store();
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let a = agent(&mut s, "a");
        s.claim(&a, Some(t.id), 0, 1000).unwrap();
        assert_eq!(
            s.done(&a, t.id, None, None, 1000).unwrap_err().kind,
            ErrorKind::Lapsed
        );
        assert_eq!(s.task(t.id, 1000).unwrap().state, "claimed");
    }

    #[test]
    fn dependencies_gate_readiness_and_cycles_are_refused() {
        let (_d, mut s) = store();
        let (t1, _) = s.add_task("one", "", 0, &[], OPERATOR, 0).unwrap();
        let (t2, _) = s.add_task("two", "", 5, &[t1.id], OPERATOR, 0).unwrap();
        assert!(!t2.ready);
        let a = agent(&mut s, "a");
        let ((got, _), _) = s.claim(&a, None, 0, 100).unwrap();
        assert_eq!(
            got.id, t1.id,
            "the blocked task is skipped despite its priority"
        );
        let e = s
            .edit_task(t1.id, None, None, None, Some(&[t2.id]), OPERATOR, 0)
            .unwrap_err();
        assert!(e.message.contains("already waits"), "{}", e.message);
    }

    #[test]
    fn expelling_a_session_reopens_its_tasks_once() {
        let (_d, mut s) = store();
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let a = agent(&mut s, "a");
        s.claim(&a, Some(t.id), 0, 10_000).unwrap();
        let (ended, ev) = s.expel_session(&a, "exited (status 3)").unwrap();
        assert!(ended);
        assert!(ev
            .iter()
            .any(|e| e.kind == "expel" && e.reason.as_deref() == Some("exited (status 3)")));
        assert!(s.task(t.id, 0).unwrap().ready);
        assert!(!s.expel_session(&a, "again").unwrap().0);
    }

    #[test]
    fn session_ids_are_unique_and_never_reused() {
        let (_d, mut s) = store();
        let a = agent(&mut s, "claude");
        let b = agent(&mut s, "claude");
        assert_eq!((a.as_str(), b.as_str()), ("claude", "claude-2"));
        s.expel_session(&a, "exited").unwrap();
        assert_eq!(agent(&mut s, "claude"), "claude-3");
    }

    #[test]
    fn bad_text_is_refused_without_change() {
        let (_d, mut s) = store();
        assert_eq!(
            s.add_task("  ", "", 0, &[], OPERATOR, 0).unwrap_err().kind,
            ErrorKind::Invalid
        );
        let huge = "x".repeat(MAX_TITLE + 1);
        assert_eq!(
            s.add_task(&huge, "", 0, &[], OPERATOR, 0).unwrap_err().kind,
            ErrorKind::Invalid
        );
        assert!(s.list_tasks(None, 0).unwrap().is_empty());
    }

    #[test]
    fn the_event_log_is_append_only() {
        let (_d, mut s) = store();
        s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        assert!(s.conn.execute("DELETE FROM events", []).is_err());
        assert!(s.conn.execute("UPDATE events SET kind = 'x'", []).is_err());
    }
}
