//! The board process (`board serve`): owns the store, the lease clock, the sweep and the process
//! watchers, and listens on the Unix socket. Each task lives in its own module.

pub mod lease;

pub mod deliver;
pub mod follow;
pub mod handlers;
pub mod host_reaper;
pub mod hosts;
pub mod identity;
pub mod land;
pub mod notify;
pub mod recover;
pub mod reload;
pub mod server;
pub mod state;
pub mod status;
pub mod stop_agent;
pub mod sweep;
pub mod terminal;
pub mod watchers;

use std::fs::{self, OpenOptions};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::sync::Arc;

use crate::proto::last_run;

use anyhow::Context;
use nix::fcntl::{Flock, FlockArg};
use tokio::task::JoinHandle;

use crate::daemon::lease::{BootClock, Clock};
use crate::daemon::state::OffReactor;
use crate::os::procfs;
use crate::proto::config::{Config, Paths, StoreChoice};
use crate::proto::config_store::redact_url;
use crate::store::{PgStore, SqliteStore, Store};
use state::Board;

/// Why `serve` did not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Another board process holds the lock of this data directory.
    #[error("a board is already running for {0}")]
    AlreadyRunning(String),
}

/// Creates the data directory with mode 0700 (and tightens an existing one).
pub fn ensure_data_dir(paths: &Paths) -> anyhow::Result<()> {
    fs::create_dir_all(&paths.data_dir)
        .with_context(|| format!("creating {}", paths.data_dir.display()))?;
    fs::set_permissions(&paths.data_dir, fs::Permissions::from_mode(0o700))?;
    if let Some(dir) = paths.socket.parent() {
        if dir != paths.data_dir {
            fs::create_dir_all(dir)?;
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// How long a stopping board waits for the requests it already read to be answered (an answer
/// takes milliseconds; only a client that stopped reading holds it up). Well under the 5 s a
/// starting board waits for the previous one's lock.
const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs the board in the foreground until `board stop`, SIGTERM or SIGINT; requests in flight
/// are answered first (see [`server::InFlight`]).
pub fn serve(cfg: Config, paths: Paths, new_epoch: bool) -> anyhow::Result<()> {
    crate::os::memory::limit_arenas();
    ensure_data_dir(&paths)?;
    let lock_file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&paths.lock)
        .with_context(|| format!("opening {}", paths.lock.display()))?;
    let _lock = take_lock(lock_file, &paths)?;
    let _log_guard = init_logging(&paths)?;
    last_run::started(&paths);
    // Opened before the runtime starts: opening migrates, and nothing else runs yet.
    let (stores, clock, shared) = match open_store(&cfg, &paths, new_epoch) {
        Ok(opened) => opened,
        Err(e) => {
            // An autostarted board has no terminal: the log and the record say why, and the
            // client that started it prints the record's reason.
            tracing::error!(error = %format!("{e:#}"), "the board cannot start");
            last_run::stopped(&paths, &format!("could not start: {e:#}"));
            return Err(e);
        }
    };
    let boot_id = procfs::boot_id().unwrap_or_else(|_| "unknown".into());
    let pidfd = crate::os::pidfd::supported();
    let connections = stores.len();
    let board = Arc::new(Board::new(
        stores,
        clock,
        cfg,
        paths.clone(),
        boot_id,
        pidfd,
    ));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Every request waits for one of the store's connections (one for the embedded file),
        // so threads beyond those add no speed on two cores; each one would keep its own malloc
        // arena (and the memory of the largest answer it ever built) mapped.
        .max_blocking_threads(connections + 3)
        .enable_all()
        .build()?;
    let result = rt.block_on(run(Arc::clone(&board), paths.clone(), shared));
    let _ = fs::remove_file(&paths.socket);
    if let Err(e) = &result {
        tracing::error!(error = %e, "board stopped with an error");
        last_run::stopped(&paths, &format!("stopped with an error: {e:#}"));
    }
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    // No land runs after this one (the next board waits for our lock): the repository keeps
    // no worktree of a board that is not running.
    land::remove_land_worktree(&paths.root, &paths.data_dir);
    // Last, once no connection is served any more: the mark records exactly where this
    // database stands, so the next start can tell it from a restored older copy.
    if let (Ok(()), Some(off)) = (&result, OffReactor::here()) {
        if let Err(e) = board.store(&off).mark_clean_stop() {
            tracing::error!(error = %e, "could not record the clean stop in the high-water mark");
        }
    }
    result
}

/// What a board on a shared store runs besides the embedded store's tasks.
struct Shared {
    url: String,
    clock: Arc<hosts::ServerClock>,
    beat: hosts::Beat,
    /// The heartbeat's own connection, outside the pool (see [`hosts::run`]).
    heartbeat_store: Box<dyn Store>,
}

/// The opened stores (one connection each) with the clock the board keeps its leases on.
type Opened = (Vec<Box<dyn Store>>, Arc<dyn Clock>, Option<Shared>);

/// Opens the store `[store]` chooses, with the clock the board keeps its leases on: the lease
/// clock for the embedded SQLite file; for a shared PostgreSQL store, the server's clock (see
/// [`hosts`]).
fn open_store(cfg: &Config, paths: &Paths, new_epoch: bool) -> anyhow::Result<Opened> {
    let choice = cfg.store.choice().map_err(|e| {
        crate::proto::error::BoardError::usage(format!("{}: {e}", paths.config.display()))
    })?;
    match choice {
        StoreChoice::Sqlite => {
            let (store, opened) = SqliteStore::open_board(&paths.db, new_epoch)?;
            tracing::info!(?opened, db = %paths.db.display(), "store opened");
            Ok((vec![Box::new(store)], Arc::new(BootClock), None))
        }
        StoreChoice::Postgres {
            url,
            host,
            host_ttl_ms,
            heartbeat_ms,
            connections,
        } => {
            let store = PgStore::open(&url, &host, &paths.data_dir.join(PG_MARK))?;
            // A store that is down (or refuses the board) is no reason not to start: the
            // board serves what it can, says why, and connects when the store comes.
            let down = match store.try_connect() {
                Ok(()) => None,
                Err(e) if passes(&e) => Some(e),
                Err(e) => return Err(e.into()),
            };
            if let Some(e) = &down {
                tracing::warn!(url = %redact_url(&url), error = %e.message, "the store is unreachable at start; serving without it until it comes");
            }
            let heartbeat_store: Box<dyn Store> = Box::new(store.sibling());
            let mut stores: Vec<Box<dyn Store>> = (1..connections)
                .map(|_| Box::new(store.sibling()) as Box<dyn Store>)
                .collect();
            stores.push(Box::new(store));
            let clock = Arc::new(hosts::ServerClock::default());
            if down.is_none() {
                tracing::info!(url = %redact_url(&url), %host, "store opened");
                // The server's clock before the board's first tick: set by the first heartbeat
                // instead, the jump from boot time to the server's time looked like a 57-year
                // stall.
                let before = BootClock.now_ms();
                if let Some(server) = stores[0].clock_ms()? {
                    clock.observe(before, server, BootClock.now_ms());
                }
            }
            let shared = Shared {
                url,
                clock: Arc::clone(&clock),
                beat: hosts::Beat {
                    ttl_ms: host_ttl_ms,
                    every_ms: heartbeat_ms,
                },
                heartbeat_store,
            };
            Ok((stores, clock, Some(shared)))
        }
    }
}

/// Whether a board may start on a store that failed its first connect with `e` and wait for it:
/// an outage (`unavailable`) may pass; a certificate that does not verify, a refused login or
/// a refused migration stop the board with the reason.
fn passes(e: &crate::proto::error::BoardError) -> bool {
    e.kind == crate::proto::error::ErrorKind::Unavailable && !e.message.contains("certificate")
}

/// This host's mark of the shared store (the last event id it wrote), in the data directory:
/// a database found behind it was restored from an older copy.
const PG_MARK: &str = "postgres.mark";

/// Takes the board's lock. A board that is still stopping holds it for a moment after its
/// socket is gone, so wait for it (≤ 5 s) unless another board answers on the socket.
fn take_lock(mut file: fs::File, paths: &Paths) -> anyhow::Result<Flock<fs::File>> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(lock),
            Err((f, _)) => file = f,
        }
        let answering = std::os::unix::net::UnixStream::connect(&paths.socket).is_ok();
        if answering || std::time::Instant::now() > deadline {
            return Err(ServeError::AlreadyRunning(paths.root.display().to_string()).into());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn init_logging(paths: &Paths) -> anyhow::Result<tracing_appender::non_blocking::WorkerGuard> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&paths.log)
        .with_context(|| format!("opening {}", paths.log.display()))?;
    let (writer, guard) = tracing_appender::non_blocking(file);
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("BOARD_LOG").unwrap_or_else(|_| "info".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init();
    Ok(guard)
}

/// Serves on the socket until the board is told to stop, with every task of the process, then
/// stops them and answers the requests in flight.
async fn run(board: Arc<Board>, paths: Paths, shared: Option<Shared>) -> anyhow::Result<()> {
    let pidfd = board.pidfd();
    if !pidfd {
        tracing::warn!(
            "pidfd_open is not available on this kernel: process exits are found by the sweep only"
        );
    }

    let _ = fs::remove_file(&paths.socket);
    let listener = tokio::net::UnixListener::bind(&paths.socket)
        .with_context(|| format!("binding {}", paths.socket.display()))?;
    fs::set_permissions(&paths.socket, fs::Permissions::from_mode(0o600))?;

    start_on_store(&board, shared.as_ref()).await?;
    tracing::info!(pid = std::process::id(), socket = %paths.socket.display(), pidfd, "board serving");

    spawn_stall_watch(&board)?;
    let inflight = Arc::new(server::InFlight::default());
    let tasks = Tasks::spawn(&board, listener, &inflight, shared);

    let why = stop_asked(&board).await?;
    tracing::info!("{why}");
    // No new connections; the next client starts the next board, which waits for our lock.
    let session = tasks.abort();
    let _ = fs::remove_file(&paths.socket);
    // Requests already read (the `stop` itself among them) are finished and answered; later
    // ones on open connections are answered `unavailable` (stopping) for their clients to ask
    // the next board.
    let unanswered = inflight.drain(DRAIN_LIMIT).await;
    if unanswered > 0 {
        tracing::warn!(
            unanswered,
            "stopping with requests still unanswered after {DRAIN_LIMIT:?}"
        );
    }
    if let Some(session) = session {
        end_host_session(&board, session, why).await;
    }
    tracing::info!("board stopped");
    last_run::stopped(&paths, why);
    Ok(())
}

/// The board's start on its store ([`started`]): at once when the store is reached (on a
/// shared store, after the first heartbeat, which opens this host's session and sets the
/// clock to the server's); else in the background, once the heartbeat finds the store back.
/// Errors: the store's, and another board holding this host's session.
async fn start_on_store(board: &Arc<Board>, shared: Option<&Shared>) -> anyhow::Result<()> {
    let reached = match shared {
        // Before anything else: the host session exists and the clock is the server's.
        Some(sh) => {
            let (clock, beat) = (Arc::clone(&sh.clock), sh.beat);
            let beaten = board
                .blocking(move |b, off| {
                    hosts::beat_once(b, &mut **b.store(off), &clock, beat, false)
                })
                .await?;
            match beaten {
                Ok(()) => true,
                Err(e) if e.data.contains_key("host_taken") => return Err(e.into()),
                Err(e) => {
                    board.set_store_unreachable(Some(e.message.clone()));
                    false
                }
            }
        }
        None => true,
    };
    if reached {
        board.blocking(started).await??;
    } else {
        // The board start and the recovery of this host's sessions wait for the store; the
        // heartbeat says when it is back.
        let b = Arc::clone(board);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                if b.store_unreachable().is_some() {
                    continue;
                }
                match b.blocking(started).await {
                    Ok(Ok(())) => return tracing::info!("the store came: board started on it"),
                    Ok(Err(e)) => tracing::warn!(error = %e, "starting on the store failed"),
                    Err(e) => tracing::warn!(error = %e, "starting on the store failed"),
                }
            }
        });
    }
    Ok(())
}

/// Starts the stall watch ([`Board::check_stall`] every [`lease::STALL_TICK_MS`]) on a thread
/// of its own. Errors: the thread could not be started.
fn spawn_stall_watch(board: &Arc<Board>) -> std::io::Result<()> {
    let ticker = Arc::clone(board);
    std::thread::Builder::new()
        .name("stall-watch".into())
        .spawn(move || {
            // A thread of its own, which no runtime drives: it may block on the store.
            let Some(off) = OffReactor::here() else {
                tracing::error!("the stall watch started inside the runtime; no stall check");
                return;
            };
            loop {
                std::thread::sleep(std::time::Duration::from_millis(lease::STALL_TICK_MS));
                if let Err(e) = ticker.check_stall(&off) {
                    tracing::error!(error = %e, "stall check failed");
                }
            }
        })?;
    Ok(())
}

/// The tasks of a serving board, on the runtime.
struct Tasks {
    server: JoinHandle<()>,
    sweeper: JoinHandle<()>,
    reloader: JoinHandle<()>,
    deliverer: JoinHandle<()>,
    notifier: JoinHandle<()>,
    shared: Option<SharedTasks>,
}

/// The tasks of a board on a shared store, with this host's session.
struct SharedTasks {
    heartbeat: JoinHandle<()>,
    reaper: JoinHandle<()>,
    follower: JoinHandle<()>,
    session: hosts::HostSession,
}

impl Tasks {
    /// Starts the socket server on `listener` and every task of the board.
    fn spawn(
        board: &Arc<Board>,
        listener: tokio::net::UnixListener,
        inflight: &Arc<server::InFlight>,
        shared: Option<Shared>,
    ) -> Tasks {
        let server = tokio::spawn(server::serve(
            Arc::clone(board),
            listener,
            Arc::clone(inflight),
        ));
        let sweeper = tokio::spawn(sweep::run(Arc::clone(board)));
        let reloader = tokio::spawn(reload::run(Arc::clone(board)));
        let deliverer = tokio::spawn(deliver::run(Arc::clone(board)));
        let notifier = tokio::spawn(notify::run(Arc::clone(board)));
        let shared = shared.map(|sh| {
            let session = hosts::HostSession::new(sh.heartbeat_store);
            SharedTasks {
                heartbeat: tokio::spawn(hosts::run(
                    Arc::clone(board),
                    sh.clock,
                    sh.beat,
                    session.clone(),
                )),
                reaper: tokio::spawn(host_reaper::run(Arc::clone(board), sh.beat)),
                follower: tokio::spawn(follow::run(Arc::clone(board), sh.url)),
                session,
            }
        });
        Tasks {
            server,
            sweeper,
            reloader,
            deliverer,
            notifier,
            shared,
        }
    }

    /// Stops every task; returns this host's session on a shared store, still to be ended.
    fn abort(self) -> Option<hosts::HostSession> {
        self.server.abort();
        self.sweeper.abort();
        self.reloader.abort();
        self.deliverer.abort();
        self.notifier.abort();
        self.shared.map(|sh| {
            sh.heartbeat.abort();
            sh.reaper.abort();
            sh.follower.abort();
            sh.session
        })
    }
}

/// Waits until the board is told to stop (`board stop`, SIGTERM, SIGINT); returns why, as the
/// log and the record of the last run say it. Errors: the signal handlers could not be set.
async fn stop_asked(board: &Board) -> std::io::Result<&'static str> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    Ok(tokio::select! {
        _ = board.shutdown().notified() => "stopped by `board stop`",
        _ = term.recv() => "stopped by SIGTERM",
        _ = int.recv() => "stopped by SIGINT",
    })
}

/// A clean stop on a shared store ends this host's session at once, once the requests in
/// flight are answered: its agents' claims are expelled with a reason naming the stop, so other
/// hosts' agents take those tasks now rather than after `host_ttl`. A store that cannot be
/// reached leaves that to the TTL.
async fn end_host_session(board: &Arc<Board>, session: hosts::HostSession, why: &str) {
    let why = why.to_string();
    match board.blocking(move |b, _off| session.end(b, &why)).await {
        Ok(Ok(())) => tracing::info!("this host's session ended with the board"),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "could not end this host's session; the other hosts end it after host_ttl")
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not end this host's session; the other hosts end it after host_ttl")
        }
    }
}

/// The board's start on its store: the `board_start` event, then [`recover`].
fn started(board: &Arc<Board>, off: &OffReactor) -> anyhow::Result<()> {
    let ev = board.store(off).record(
        crate::store::EventKind::BoardStart,
        None,
        None,
        None,
        &format!("board started (pid {})", std::process::id()),
    )?;
    board.publish(ev);
    recover::recover(board, off)
}
