//! The PostgreSQL backend: one store several hosts' boards share ([`PgStore`]).
//!
//! Same operations and rules as the embedded [`super::SqliteStore`]: the procedures both share
//! are `store::procs` (their SQL is this dialect's spelling, see `store::db`); what PostgreSQL
//! does its own way is here, one module per concern mirroring SQLite's. What a shared server
//! changes:
//!
//! - **Server-side time.** Expiries are computed and compared with the server's clock in SQL
//!   (`board_now_ms()`); of the `now_ms`/`expires_ms` the board passes, only their difference
//!   (the lease length) is used, so skew between hosts cannot matter. Returned expiries are on
//!   the server clock (a board on this store estimates it with [`super::Store::clock_ms`]).
//!   `extend_after_stall` changes nothing: a host that stalled looks cut off to the others, and
//!   the server's clock, which did not stall, is the truth.
//! - **Write order.** Write transactions run side by side, so their commits can share the
//!   disk's flush (group commit). Each takes one transaction-scoped advisory lock first
//!   (`WRITE_LOCK`): the fenced writes of holders (claim, renew, done, release, note, messages)
//!   in shared mode, since each decides by one conditional statement on the rows it changes
//!   (row locks order them); every other write (tasks and their dependencies, sessions, hosts,
//!   sweeps, epochs) in exclusive mode, so those never interleave with anything. Event ids then
//!   commit out of id order: readers see the log only up to a frontier below which no
//!   transaction still running can add an id (`events`). Every write transaction gets its
//!   transaction id before it takes an event id, which is what the frontier relies on.
//! - **Hosts.** Each board holds a host session row (`hosts`); agent sessions belong to the
//!   host that registered them, and the per-host reads (`live_sessions`, `sessions_with_pids`,
//!   the terminals of live claims) see only that host's.
//! - **Epoch.** The server's system identifier and timeline, and this host's last written
//!   event (`epoch`), detect a failover or restore on connect.
//! - **Connections.** A board holds a small pool of these stores ([`PgStore::sibling`]), one
//!   connection each, sharing the host session, the high-water mark and the event frontier;
//!   a lost connection is reopened by the next call, and the call that found it lost answers `unavailable` (exit 8) naming
//!   the store. TLS ([`tls`]) when the server offers or the URL demands it, the server's
//!   certificate always verified.

#[cfg(test)]
pub(crate) mod cluster;

mod at_once;
mod claims;
mod connect;
mod db;
mod epoch;
mod events;
mod hosts;
mod lapse;
mod messages;
mod migrate;
mod op_results;
mod sessions;
mod tasks;
mod terminal;
#[cfg(test)]
pub(crate) mod tests;
pub mod tls;
mod transactions;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use postgres::types::ToSql;
use postgres::{Client, Row, Statement};

use super::{Events, Notify};
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::EventView;
use connect::{connection_lost, driver_reason, location, Retry};
use transactions::Lock;
pub(super) use transactions::{retryable, RETRIES};

/// The settings each connection asks the server for. A statement runs at most 5 s, a
/// transaction idles at most 10 s: a board that froze or vanished mid-transaction (its host
/// crashed, its link cut) holds the write lock, and so stops the other hosts' writes, for at
/// most 10 s. The server's end of a connection over TCP probes a silent peer after 5 s idle,
/// every 2 s, twice, and gives up on unacknowledged data after 5 s, so even a session that
/// is not in a transaction (a LISTEN) is reaped within about 10 s of a cut link.
const SESSION_OPTIONS: &str =
    "-c statement_timeout=5000 -c idle_in_transaction_session_timeout=10000 \
     -c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=2 \
     -c tcp_user_timeout=5000";

/// Parameters of one statement.
pub(super) type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// The open connection and its prepared statements (prepared once per connection, by SQL text).
pub(super) struct Conn {
    client: Client,
    cache: HashMap<&'static str, Statement>,
    /// The pool's connection era when this connection was opened (see `Shared::era`).
    era: u64,
}

impl Conn {
    fn statement(&mut self, sql: &'static str) -> BoardResult<Statement> {
        if let Some(st) = self.cache.get(sql) {
            return Ok(st.clone());
        }
        let st = self.client.prepare(sql)?;
        self.cache.insert(sql, st.clone());
        Ok(st)
    }

    /// All rows of `sql`.
    pub(super) fn rows(&mut self, sql: &'static str, params: Params) -> BoardResult<Vec<Row>> {
        let st = self.statement(sql)?;
        Ok(self.client.query(&st, params)?)
    }

    /// At most one row of `sql` (the first).
    pub(super) fn opt(&mut self, sql: &'static str, params: Params) -> BoardResult<Option<Row>> {
        Ok(self.rows(sql, params)?.into_iter().next())
    }

    /// Exactly one row of `sql`; none is an internal error.
    pub(super) fn one(&mut self, sql: &'static str, params: Params) -> BoardResult<Row> {
        self.opt(sql, params)?
            .ok_or_else(|| BoardError::internal("PostgreSQL store: a statement returned no row"))
    }

    /// Runs `sql`; returns how many rows it changed.
    pub(super) fn exec(&mut self, sql: &'static str, params: Params) -> BoardResult<u64> {
        let st = self.statement(sql)?;
        Ok(self.client.execute(&st, params)?)
    }

    /// Runs SQL with the simple protocol (transaction control, several statements).
    fn batch(&mut self, sql: &str) -> BoardResult<()> {
        Ok(self.client.batch_execute(sql)?)
    }
}

/// Column `i` of `r` (a type mismatch is an internal error, never a panic).
pub(super) fn col<'a, T: postgres::types::FromSql<'a>>(r: &'a Row, i: usize) -> BoardResult<T> {
    r.try_get(i)
        .map_err(|e| BoardError::internal(format!("PostgreSQL store: column {i}: {e}")))
}

/// A glossary word (state, kind, end) stored as text in column `i`.
pub(super) fn word<T>(r: &Row, i: usize) -> BoardResult<T>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    let s: String = col(r, i)?;
    s.parse()
        .map_err(|e| BoardError::internal(format!("PostgreSQL store: column {i}: {e}")))
}

/// What the stores of one board's pool share (see [`PgStore::sibling`]).
struct Shared {
    /// This board's host session row, once taken.
    host_id: Mutex<Option<i64>>,
    /// The newest event id this host has written (persisted by heartbeats and clean stops).
    hwm: Mutex<epoch::Hwm>,
    /// How far the event log is settled (see `events`).
    frontier: Mutex<events::Frontier>,
    /// Raised when a store of the pool finds the server gone: the others' connections are from
    /// before the loss (a restart, a failover) and are reopened before their next call, so one
    /// outage answers `unavailable` once per board instead of once per connection.
    era: AtomicU64,
    /// Connections the pool opened so far: a store waiting out its backoff after a failed
    /// connect tries at once when another store of the pool (the heartbeat's) connected since.
    connects: AtomicU64,
}

/// The board's store on a PostgreSQL server, shared by the boards of several hosts.
pub struct PgStore {
    conn: RefCell<Option<Conn>>,
    config: postgres::Config,
    /// The URL without its password, for messages and `board status`.
    location: String,
    /// This board's host name (`hosts.name`, `sessions.host`).
    host: String,
    /// The local high-water mark file: the last event this host wrote (see `epoch`).
    hwm_path: PathBuf,
    shared: Arc<Shared>,
    /// Open transaction depth: 0 outside, 1 in a transaction, more in savepoints (`with_op`).
    depth: usize,
    notify: Option<Notify>,
    /// The newest event id written inside the open `with_op` scope: it counts for the
    /// high-water mark only once the scope commits.
    pending_hwm: Option<(i64, String)>,
    /// Tests only: `board_now_ms()` is the `now_ms` the caller passes.
    caller_clock: Cell<Option<i64>>,
    /// After a failed connect: no new attempt before this instant, and the current backoff
    /// (100 ms doubling to 1 s), so calls during an outage answer at once instead of each
    /// waiting for a connect timeout.
    retry: RefCell<Option<Retry>>,
}

impl PgStore {
    /// Connects to the PostgreSQL store at `url` (`postgres://user:password@host/db`, or
    /// `key=value` settings) as host `host`, applies pending schema migrations, and checks the
    /// epoch against `hwm_path` (this host's high-water mark, created when missing).
    ///
    /// Session settings (`SESSION_OPTIONS`): `application_name = board <host>`,
    /// `statement_timeout` 5 s, `idle_in_transaction_session_timeout` 10 s (a vanished or
    /// frozen board never holds the store's write lock for longer), the server's keepalives
    /// and `tcp_user_timeout` on its end of the connection; connect timeout 3 s, and the
    /// same keepalives on this end, unless the URL says otherwise.
    ///
    /// Errors: `usage` for a URL that does not parse, `unavailable` when the server cannot be
    /// reached, `internal` for a refused migration.
    pub fn connect(url: &str, host: &str, hwm_path: &Path) -> BoardResult<PgStore> {
        let store = PgStore::open(url, host, hwm_path)?;
        store.ensure_connected()?;
        Ok(store)
    }

    /// [`PgStore::connect`] without connecting: the first call connects (and migrates, and
    /// checks the epoch), so a board can start while its store is down and serve what it can.
    ///
    /// Errors: `usage` for a URL that does not parse; `internal` for an unreadable high-water
    /// mark file.
    pub fn open(url: &str, host: &str, hwm_path: &Path) -> BoardResult<PgStore> {
        let mut config = postgres::Config::from_str(url).map_err(|e| {
            BoardError::usage(format!(
                "the PostgreSQL store URL does not parse: {}",
                driver_reason(&e)
            ))
        })?;
        config.application_name(&format!("board {host}"));
        config.options(SESSION_OPTIONS);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(3));
        }
        // A half-open TCP connection (a cut link, a vanished server) fails a statement within
        // seconds instead of the kernel's minutes.
        if config.get_tcp_user_timeout().is_none() {
            config.tcp_user_timeout(Duration::from_secs(5));
        }
        if config.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
            config.keepalives_idle(Duration::from_secs(5));
        }
        if config.get_keepalives_interval().is_none() {
            config.keepalives_interval(Duration::from_secs(2));
        }
        if config.get_keepalives_retries().is_none() {
            config.keepalives_retries(2);
        }
        let location = location(&config);
        let hwm = epoch::Hwm::read(hwm_path)?;
        let store = PgStore {
            conn: RefCell::new(None),
            config,
            location,
            host: host.to_string(),
            hwm_path: hwm_path.to_path_buf(),
            shared: Arc::new(Shared {
                host_id: Mutex::new(None),
                hwm: Mutex::new(hwm),
                frontier: Mutex::new(events::Frontier::default()),
                era: AtomicU64::new(0),
                connects: AtomicU64::new(0),
            }),
            depth: 0,
            notify: None,
            pending_hwm: None,
            caller_clock: Cell::new(None),
            retry: RefCell::new(None),
        };
        Ok(store)
    }

    /// Connects now when not connected (see [`PgStore::open`]). Errors: as any call's when the
    /// server cannot be reached or refuses the board.
    pub fn try_connect(&self) -> BoardResult<()> {
        self.ensure_connected()
    }

    /// Another store of this board's pool: its own connection (opened by its first call), the
    /// same host session, high-water mark and event frontier. The [`Notify`] hook is not
    /// copied (the board sets it on each).
    pub fn sibling(&self) -> PgStore {
        PgStore {
            conn: RefCell::new(None),
            config: self.config.clone(),
            location: self.location.clone(),
            host: self.host.clone(),
            hwm_path: self.hwm_path.clone(),
            shared: Arc::clone(&self.shared),
            depth: 0,
            notify: None,
            pending_hwm: None,
            caller_clock: Cell::new(self.caller_clock.get()),
            retry: RefCell::new(None),
        }
    }

    /// This host's high-water mark (shared by the pool).
    fn hwm(&self) -> MutexGuard<'_, epoch::Hwm> {
        self.shared.hwm.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// This board's host session row, once taken (shared by the pool).
    fn host_id(&self) -> MutexGuard<'_, Option<i64>> {
        self.shared
            .host_id
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// For the store's tests: `board_now_ms()` becomes the `now_ms` of the last call that
    /// passed one, so the contract tests drive the lease clock as they do on SQLite.
    #[cfg(test)]
    pub(crate) fn follow_caller_clock(&mut self) {
        self.caller_clock.set(Some(0));
    }

    /// Sets the caller's clock for the next statements (tests only; see
    /// `follow_caller_clock`). Elsewhere the caller's `now_ms` is not used.
    fn at(&self, now_ms: i64) {
        if self.caller_clock.get().is_some() {
            self.caller_clock.set(Some(now_ms));
        }
    }

    /// Opens the connection when there is none (first call, or after a loss): connect,
    /// migrate, check the epoch (its events go to the [`Notify`] hook: no caller would publish
    /// them). A new connection in the middle of a transaction is refused: what the transaction
    /// did is gone.
    fn ensure_connected(&self) -> BoardResult<()> {
        let era = self.shared.era.load(Ordering::SeqCst);
        // Inside a transaction the connection is kept whatever the era: dropping it would lose
        // the transaction; if the server is really gone, the next statement says so.
        let current = |c: &Conn| c.era >= era || self.depth > 0;
        if matches!(&*self.conn.borrow(), Some(c) if !c.client.is_closed() && current(c)) {
            return Ok(());
        }
        if let Some(lost) = self.conn.borrow_mut().take() {
            if lost.client.is_closed() {
                // The server closed it: the pool's other connections are as old.
                self.raise_era(lost.era);
            }
        }
        if self.depth > 0 {
            return Err(self.unreachable("the connection was lost inside a transaction"));
        }
        let connects = self.shared.connects.load(Ordering::SeqCst);
        if let Some(r) = &*self.retry.borrow() {
            let now = Instant::now();
            // Another connection of the board reached the store since: try at once.
            if now < r.at && r.connects == connects {
                let mut again = r.failure.clone();
                again.message = format!(
                    "{} (the last attempt failed; the next in {} ms)",
                    again.message,
                    (r.at - now).as_millis()
                );
                return Err(again);
            }
        }
        let client = match self.config.connect(tls::connector()?) {
            Ok(c) => c,
            Err(e) => {
                let backoff = match &*self.retry.borrow() {
                    Some(r) => (r.backoff * 2).min(Duration::from_secs(1)),
                    None => Duration::from_millis(100),
                };
                let failure = self.shown(self.connect_error(&e));
                *self.retry.borrow_mut() = Some(Retry {
                    at: Instant::now() + backoff,
                    backoff,
                    failure: failure.clone(),
                    connects,
                });
                return Err(failure);
            }
        };
        *self.retry.borrow_mut() = None;
        self.shared.connects.fetch_add(1, Ordering::SeqCst);
        let mut c = Conn {
            client,
            cache: HashMap::new(),
            era,
        };
        let events = migrate::run(&mut c)
            .and_then(|()| epoch::check(self, &mut c))
            .map_err(|e| self.shown(e))?;
        *self.conn.borrow_mut() = Some(c);
        if let (Some(n), false) = (&self.notify, events.is_empty()) {
            n(events);
        }
        Ok(())
    }

    /// A connection opened in era `lost` was found gone: the pool's connections of that era are
    /// reopened before their next call. Only a connection of the current era says something
    /// new about the server.
    fn raise_era(&self, lost: u64) {
        let _ =
            self.shared
                .era
                .compare_exchange(lost, lost + 1, Ordering::SeqCst, Ordering::SeqCst);
    }

    fn unreachable(&self, why: &str) -> BoardError {
        BoardError::store_down(
            "postgres",
            format!(
                "the PostgreSQL store at {} is unreachable: {why}",
                self.location
            ),
        )
        .with("store", self.location.clone())
    }

    /// An error as the caller sees it: a lost server names the store, and drops the connection
    /// so the next call reconnects.
    fn shown(&self, e: BoardError) -> BoardError {
        if e.kind != ErrorKind::Unavailable {
            return e;
        }
        if let Ok(mut c) = self.conn.try_borrow_mut() {
            if let Some(lost) = c.take() {
                self.raise_era(lost.era);
            }
        }
        let detail = e
            .message
            .strip_prefix("PostgreSQL store: ")
            .unwrap_or(&e.message)
            .to_string();
        let mut err = self.unreachable(&detail);
        if let Some(code) = e.data.get("sqlstate") {
            err = err.with("sqlstate", code.clone());
        }
        err
    }

    /// Applies the caller's clock setting (tests only).
    fn apply_clock(&self, c: &mut Conn) -> BoardResult<()> {
        if let Some(now) = self.caller_clock.get() {
            c.exec(
                "SELECT set_config('board.caller_now_ms', $1, false)",
                &[&now.to_string()],
            )?;
        }
        Ok(())
    }

    /// Runs a read (outside any transaction of ours, or inside the open `with_op` scope).
    /// Outside a transaction, a read that finds its connection dropped by the server (a
    /// restart, a failover, an administrator) runs once more on a new one: nothing was done,
    /// so nothing can be done twice.
    fn read<T>(&self, mut f: impl FnMut(&mut Conn) -> BoardResult<T>) -> BoardResult<T> {
        let reused = self.depth == 0 && self.conn.borrow().is_some();
        match self.read_once(&mut f) {
            Err(e) if reused && connection_lost(&e) => self.read_once(&mut f),
            other => other,
        }
    }

    fn read_once<T>(&self, f: &mut impl FnMut(&mut Conn) -> BoardResult<T>) -> BoardResult<T> {
        self.ensure_connected()?;
        let out = {
            let mut guard = self.conn.borrow_mut();
            match guard.as_mut() {
                Some(c) => self.apply_clock(c).and_then(|()| f(c)),
                None => Err(BoardError::unavailable(
                    "PostgreSQL store: connection closed",
                )),
            }
        };
        out.map_err(|e| self.shown(e))
    }
}

impl PgStore {
    pub(in crate::store) fn set_notify(&mut self, notify: Notify) {
        self.notify = Some(notify);
    }
}

/// Rows of `… RETURNING id, at, kind, task_id, session_id, generation, reason` (or a SELECT of
/// those columns) as events.
pub(super) fn event_rows(rows: &[Row]) -> BoardResult<Events> {
    rows.iter()
        .map(|r| {
            Ok(EventView {
                id: col(r, 0)?,
                at: col(r, 1)?,
                kind: word(r, 2)?,
                task: col(r, 3)?,
                agent: col(r, 4)?,
                generation: col(r, 5)?,
                reason: col(r, 6)?,
            })
        })
        .collect()
}
