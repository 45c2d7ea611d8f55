//! The board process's shared state: the store, the lease clock, the settings in force, and what
//! it knows in memory about each agent session's activity.
//!
//! The store is reached one way: through [`Board::store`], which asks for an [`OffReactor`], the
//! proof that the caller runs where blocking is allowed. Async code gets one only by moving its
//! work to the blocking pool ([`Board::blocking`], [`Board::with_store`]), so no store call can
//! stall the reactor threads that serve every connection.
//!
//! This folder is what the board is made of, below every task of the process: it imports none
//! of them.

pub mod activity;
pub mod events;
pub mod mailbox;
pub mod notices;
pub mod store_health;
pub mod store_pool;
pub mod terminals;

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard};
use std::time::Instant;

use tokio::sync::Notify;

use crate::daemon::lease::{Clock, LeaseRules, Liveness, RenewSource, Tick};
use crate::proto::config::{Config, Paths};
use crate::proto::error::{BoardError, BoardResult};
use crate::store::{Generation, Store, TaskId};
pub use activity::Activity;
use events::EventBus;
use mailbox::Mailbox;
use store_health::StoreHealth;
use store_pool::{StoreGuard, StorePool};
use terminals::Terminals;

/// Proof that the code holding it runs where blocking is allowed: a thread of the blocking pool
/// entered through [`Board::blocking`], or a thread no async runtime drives
/// ([`OffReactor::here`]). Neither `Send` nor `Sync`, so no task spawned on the runtime can hold
/// it across an `.await` (those futures must be `Send`).
pub struct OffReactor(PhantomData<*const ()>);

impl OffReactor {
    /// On a thread that no tokio runtime drives (a thread of its own, `main` before or after
    /// the runtime): a token. None inside a runtime's context, where only [`Board::blocking`]
    /// gives one.
    pub fn here() -> Option<OffReactor> {
        tokio::runtime::Handle::try_current()
            .is_err()
            .then_some(OffReactor(PhantomData))
    }
}

/// The answer to a request that reached a stopping board: nothing was applied; the client
/// asks again (with the same `op_id`) the board that starts next.
pub fn stopping_error() -> BoardError {
    BoardError::unavailable(format!(
        "the board (pid {}) is stopping: the request was not applied; ask again (with the same \
         op_id) once a board runs",
        std::process::id()
    ))
    .with("stopping", true)
}

/// Everything the board's tasks share. Cheap to clone behind an `Arc`.
pub struct Board {
    stores: StorePool,
    /// The lease clock (CLOCK_BOOTTIME in production).
    clock: Arc<dyn Clock>,
    /// Configuration in force (replaced on a valid edit of `board.toml`).
    config: RwLock<Config>,
    /// The last invalid edit of `board.toml`, shown by `status` until a valid edit.
    config_error: RwLock<Option<String>>,
    /// Whether the shared store is reached (see [`store_health`]).
    health: StoreHealth,
    /// Where the board's files are.
    paths: Paths,
    /// Event fan-out.
    events: EventBus,
    /// Per-session activity, keyed by session id.
    activity: Mutex<HashMap<String, Activity>>,
    /// Boot id this board runs in.
    boot_id: String,
    /// When the board started.
    started: Instant,
    /// RFC 3339 start time.
    started_at: String,
    /// Whether pidfd watching works on this kernel.
    pidfd: bool,
    /// Woken to stop the board.
    shutdown: Notify,
    /// Woken when the sweep interval changed.
    sweep_changed: Notify,
    /// The last look at the clocks (see [`Board::check_stall`]); held while a stall is applied,
    /// so no request or sweep acts on expiries the stall has not moved yet.
    last_tick: Mutex<Tick>,
    /// Terminal input samples and lapse warnings given ([`terminals`]).
    terminals: Terminals,
    /// Who has messages or a nudge to be told at its prompt ([`mailbox`]).
    mailbox: Mailbox,
}

impl Board {
    /// A board around its opened stores (any backend; one connection each, at least one).
    pub fn new(
        stores: Vec<Box<dyn Store>>,
        clock: Arc<dyn Clock>,
        config: Config,
        paths: Paths,
        boot_id: String,
        pidfd: bool,
    ) -> Self {
        let events = EventBus::default();
        let stores = StorePool::new(stores);
        stores.each(|s| {
            let bus = events.clone();
            s.set_notify(Box::new(move |ev| bus.publish(ev)));
        });
        Board {
            stores,
            clock: Arc::clone(&clock),
            config: RwLock::new(config),
            config_error: RwLock::new(None),
            health: StoreHealth::default(),
            paths,
            events,
            activity: Mutex::new(HashMap::new()),
            boot_id,
            started: Instant::now(),
            started_at: crate::store::now_wall(),
            pidfd,
            shutdown: Notify::new(),
            sweep_changed: Notify::new(),
            last_tick: Mutex::new(clock.tick()),
            terminals: Terminals::default(),
            mailbox: Mailbox::default(),
        }
    }

    /// A store of the pool, for code that runs off the reactor (`off` proves it), waiting while
    /// every one is in use. Held only for one store call or one handler's transaction.
    pub fn store(&self, off: &OffReactor) -> StoreGuard<'_> {
        let _ = off;
        self.stores.get()
    }

    /// Runs `f` on the blocking pool with a token for [`Board::store`]: how async code reaches
    /// the store. Errors: `internal` when `f` panicked; when the runtime is shutting down and
    /// `f` never ran, `unavailable` with `data.stopping` ([`stopping_error`]),
    /// which clients ask again.
    pub async fn blocking<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Arc<Board>, &OffReactor) -> T + Send + 'static,
    ) -> BoardResult<T> {
        let board = Arc::clone(self);
        tokio::task::spawn_blocking(move || f(&board, &OffReactor(PhantomData)))
            .await
            .map_err(|e| {
                if e.is_cancelled() {
                    stopping_error()
                } else {
                    Board::internal("a blocking store call failed", e)
                }
            })
    }

    /// Runs one store call `f` on the blocking pool ([`Board::blocking`]).
    pub async fn with_store<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut dyn Store) -> T + Send + 'static,
    ) -> BoardResult<T> {
        self.blocking(move |b, off| f(&mut **b.store(off))).await
    }

    /// Lease-clock now (ms).
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The lease clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Lease-clock now (ms) for a decision that may lapse a claim: read *before* looking for a
    /// stall, so a board stopped before this read has moved the expiries by then, and one
    /// stopped after it acts on a time from before the stop. Do not call while holding a store.
    pub fn now_checked(&self, off: &OffReactor) -> BoardResult<i64> {
        let now = self.clock.now_ms();
        self.check_stall(off)?;
        Ok(now)
    }

    /// The configuration in force.
    pub fn config(&self) -> RwLockReadGuard<'_, Config> {
        self.config.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Puts a valid edit of `board.toml` in force and clears the last edit's error; returns
    /// the configuration it replaced and that error, if there was one.
    pub fn replace_config(&self, cfg: Config) -> (Config, Option<String>) {
        let old = std::mem::replace(
            &mut *self.config.write().unwrap_or_else(|p| p.into_inner()),
            cfg,
        );
        let error = self
            .config_error
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        (old, error)
    }

    /// The last invalid edit of `board.toml`, until a valid one.
    pub fn config_error(&self) -> Option<String> {
        self.config_error
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Records an invalid edit of `board.toml` (the configuration in force stays); returns the
    /// error recorded before.
    pub fn set_config_error(&self, error: String) -> Option<String> {
        self.config_error
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .replace(error)
    }

    /// Why the last heartbeat could not reach the shared store, while it cannot (None when it
    /// could, and always for the embedded store).
    pub fn store_unreachable(&self) -> Option<String> {
        self.health.why()
    }

    /// Records whether the board's last call of the shared store reached it (None: it did).
    pub fn set_store_unreachable(&self, why: Option<String>) {
        self.health.set(why);
    }

    /// The shared store's health: since when it is unreachable, when it was last reached, what
    /// `status` last read of it.
    pub fn store_health(&self) -> &StoreHealth {
        &self.health
    }

    /// Where the board's files are.
    pub fn paths(&self) -> &Paths {
        &self.paths
    }

    /// Event fan-out.
    pub fn events(&self) -> &EventBus {
        &self.events
    }

    /// Boot id this board runs in.
    pub fn boot_id(&self) -> &str {
        &self.boot_id
    }

    /// When the board started (monotonic) and as RFC 3339 text.
    pub fn started(&self) -> (Instant, &str) {
        (self.started, &self.started_at)
    }

    /// Whether pidfd watching works on this kernel.
    pub fn pidfd(&self) -> bool {
        self.pidfd
    }

    /// Woken to stop the board.
    pub fn shutdown(&self) -> &Notify {
        &self.shutdown
    }

    /// Woken when the sweep interval changed.
    pub fn sweep_changed(&self) -> &Notify {
        &self.sweep_changed
    }

    /// Terminal input samples and lapse warnings given.
    pub fn terminals(&self) -> &Terminals {
        &self.terminals
    }

    /// Who has messages or a nudge to be told at its prompt.
    pub fn mailbox(&self) -> &Mailbox {
        &self.mailbox
    }

    /// The lease rules in force.
    pub fn rules(&self) -> LeaseRules {
        let cfg = self.config.read().unwrap_or_else(|p| p.into_inner());
        LeaseRules::from(&cfg.lease)
    }

    /// Whether callers must descend from their agent's process.
    pub fn check_process_tree(&self) -> bool {
        self.config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .identity
            .check_process_tree
    }

    fn activity(&self) -> MutexGuard<'_, HashMap<String, Activity>> {
        self.activity.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Suspend is not silence (ARCHITECTURE.md rule 8, last sentence): looks at the clocks, and when the
    /// board was not running since the last look (machine suspend, SIGSTOP of the board, a
    /// sweep far later than scheduled), moves every live claim's expiry by that time, leaving
    /// at least one sweep of grace. Called every [`crate::daemon::lease::STALL_TICK_MS`], at
    /// the start of every sweep and before every agent request is handled.
    pub fn check_stall(&self, off: &OffReactor) -> BoardResult<()> {
        let rules = self.rules();
        let mut last = self.last_tick.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.clock.tick();
        let stall = rules.stall(*last, now);
        *last = now;
        let Some(stall) = stall else {
            return Ok(());
        };
        let reason = if stall.suspended_ms > 0 {
            format!(
                "the board did not run for {} ms (the machine was suspended for {} ms): that time does not count against any lease",
                stall.ms, stall.suspended_ms
            )
        } else {
            format!(
                "the board did not run for {} ms (stopped or starved): that time does not count against any lease",
                stall.ms
            )
        };
        tracing::warn!(
            stall_ms = stall.ms,
            suspended_ms = stall.suspended_ms,
            "the board did not run for a while"
        );
        let ev = self.store(off).extend_after_stall(
            stall.ms,
            rules.stall_floor_ms(now.boot_ms),
            &reason,
        )?;
        self.events.publish(ev);
        // In-memory renewal bookkeeping moved with the clock: let the next call write one.
        self.activity()
            .values_mut()
            .for_each(|a| a.last_renew_write_ms = None);
        Ok(())
    }

    /// ARCHITECTURE.md rule 2: a request with `agent`'s identity renews all its live claims. The write is
    /// coalesced (see [`LeaseRules::renew_slack_ms`]); the sweep sees `talked`. A write that
    /// renewed a claim is logged as a `renew` event naming `source` (the hook or the call), when
    /// [`LeaseRules::renew_log_due`] says so.
    pub fn renew_on_request(
        &self,
        off: &OffReactor,
        agent: &str,
        source_kind: &RenewSource<'_>,
    ) -> BoardResult<()> {
        self.check_stall(off)?;
        let rules = self.rules();
        let now = self.now_ms();
        let source = source_kind.to_string();
        let handshake = *source_kind == RenewSource::Handshake;
        let (due, unlogged) = {
            let mut act = self.activity();
            let a = act.entry(agent.to_string()).or_default();
            a.talked = true;
            if !handshake || a.talk_source.is_none() {
                a.talk_source = Some(source.clone());
            }
            let unlogged = if handshake {
                None
            } else {
                a.handshake_renewal.take()
            };
            (rules.renewal_due(a.last_renew_write_ms, now), unlogged)
        };
        let renewed = if due {
            let claims = self.renew_now(off, agent, now, &rules)?;
            claims.first().map(|first| {
                let tasks = claims
                    .iter()
                    .map(|c| format!("#{}", c.task))
                    .collect::<Vec<_>>()
                    .join(", ");
                (tasks, (first.task, first.generation))
            })
        } else {
            unlogged
        };
        let Some((tasks, claim)) = renewed else {
            return Ok(());
        };
        if handshake {
            // The call that follows says what the client is (a hook, a command): it logs this.
            if let Some(a) = self.activity().get_mut(agent) {
                a.handshake_renewal = Some((tasks, claim));
            }
            return Ok(());
        }
        let text = format!("renewed {tasks} ({source})");
        self.log_renewal(off, agent, &source, Some(claim), &text)
    }

    /// Puts a renewal of `agent`'s claims by `source` in the log as a `renew` event with `text`
    /// (and the first claim's task and generation, when known), when
    /// [`LeaseRules::renew_log_due`] says so: the request path and the sweep share the rule, so
    /// one source is logged once per lease whichever of them wrote the renewal.
    pub fn log_renewal(
        &self,
        off: &OffReactor,
        agent: &str,
        source: &str,
        claim: Option<(TaskId, Generation)>,
        text: &str,
    ) -> BoardResult<()> {
        let now = self.now_ms();
        let due = {
            let mut act = self.activity();
            let a = act.entry(agent.to_string()).or_default();
            let due = self
                .rules()
                .renew_log_due(a.renew_logged.get(source).copied(), now);
            if due {
                a.renew_logged.insert(source.to_string(), now);
            }
            due
        };
        if due {
            let ev = self.store(off).record(
                crate::store::EventKind::Renew,
                claim.map(|c| c.0),
                Some(agent),
                claim.map(|c| c.1),
                text,
            )?;
            self.publish(ev);
        }
        Ok(())
    }

    /// Writes a renewal for `agent` at `now` and remembers it.
    pub fn renew_now(
        &self,
        off: &OffReactor,
        agent: &str,
        now: i64,
        rules: &LeaseRules,
    ) -> BoardResult<Vec<crate::store::ClaimInfo>> {
        let claims = self.store(off).renew(agent, rules.lease(now))?;
        self.activity()
            .entry(agent.to_string())
            .or_default()
            .last_renew_write_ms = Some(now);
        Ok(claims)
    }

    /// [`Board::renew_now`] for several agents in one write transaction; returns the agents
    /// that had a claim renewed.
    pub fn renew_many(
        &self,
        off: &OffReactor,
        agents: &[&str],
        now: i64,
        rules: &LeaseRules,
    ) -> BoardResult<Vec<String>> {
        let renewed = self.store(off).renew_many(agents, rules.lease(now))?;
        let mut act = self.activity();
        for a in agents {
            act.entry(a.to_string()).or_default().last_renew_write_ms = Some(now);
        }
        Ok(renewed)
    }

    /// Ends a session and expels its claims (idempotent), publishing the events.
    pub fn expel(&self, off: &OffReactor, agent: &str, reason: &str) -> BoardResult<bool> {
        let (ended, events) = self.store(off).expel_session(agent, reason)?;
        if ended {
            tracing::info!(agent, reason, "session ended");
        }
        self.activity().remove(agent);
        self.terminals.forget(agent);
        self.events.publish(events);
        Ok(ended)
    }

    /// Marks or clears a permission prompt in memory (the store is updated by the caller).
    pub fn set_waiting_flag(&self, agent: &str, waiting: bool) {
        self.activity()
            .entry(agent.to_string())
            .or_default()
            .waiting = waiting;
    }

    /// Marks or clears an open question in memory (the store is updated by the caller).
    pub fn set_question_flag(&self, agent: &str, open: bool) {
        self.activity()
            .entry(agent.to_string())
            .or_default()
            .question = open;
    }

    /// Marks or clears "finished its turn" in memory (the store is updated by the caller).
    pub fn set_idle_flag(&self, agent: &str, idle: bool) {
        self.activity().entry(agent.to_string()).or_default().idle = idle;
    }

    /// Whether `agent` finished its turn, as the board remembers.
    pub fn is_idle(&self, agent: &str) -> bool {
        self.activity().get(agent).map(|a| a.idle).unwrap_or(false)
    }

    /// Records the first call of `agent` once (the store write happens only the first time).
    pub fn note_contact(&self, off: &OffReactor, agent: &str) -> BoardResult<()> {
        let first = {
            let mut act = self.activity();
            let a = act.entry(agent.to_string()).or_default();
            !std::mem::replace(&mut a.contacted, true)
        };
        if first {
            self.store(off).mark_contacted(agent)?;
        }
        Ok(())
    }

    /// Marks that `agent` made a request since the previous sweep (what [`Board::renew_on_request`] leaves
    /// for the sweep, without the renewal).
    pub fn note_talked(&self, agent: &str) {
        self.activity().entry(agent.to_string()).or_default().talked = true;
    }

    /// Whether `agent`'s CLI shows a permission prompt, as the board remembers.
    pub fn is_waiting(&self, agent: &str) -> bool {
        self.activity()
            .get(agent)
            .map(|a| a.waiting)
            .unwrap_or(false)
    }

    /// Takes and clears the `talked` flag (for the sweep); returns what the agent's last
    /// request was when it talked (None: it did not), the previous CPU sample, and whether the
    /// agent waits for a person (an open question or a permission prompt).
    pub fn take_sweep_sample(
        &self,
        agent: &str,
        cpu: Option<u64>,
        seen: Liveness,
    ) -> (Option<String>, Option<u64>, bool) {
        let mut act = self.activity();
        let a = act.entry(agent.to_string()).or_default();
        let source = a.talk_source.take();
        let talked =
            std::mem::take(&mut a.talked).then(|| source.unwrap_or_else(|| "board call".into()));
        let prev = a.cpu_ticks;
        if cpu.is_some() {
            a.cpu_ticks = cpu;
        }
        a.seen = Some(seen);
        // A question and a permission prompt both keep the claims (ARCHITECTURE.md rule 12).
        (talked, prev, a.waiting || a.question)
    }

    /// What the last sweep saw of `agent`'s process, if it looked.
    pub fn seen(&self, agent: &str) -> Option<Liveness> {
        self.activity().get(agent).and_then(|a| a.seen)
    }

    /// Publishes events (of a request, the sweep, watchers); messages and finished turns
    /// among them wake the delivery to agents at their prompt.
    pub fn publish(&self, events: Vec<crate::proto::EventView>) {
        self.mailbox.on_events(&events);
        self.events.publish(events);
    }

    /// Maps a poisoned or failed internal step to an `internal` error with context.
    pub fn internal(what: &str, e: impl std::fmt::Display) -> BoardError {
        BoardError::internal(format!("{what}: {e}"))
    }
}
