//! The lease rules, as pure functions over an injected clock.
//!
//! A claim is a lease (Gray & Cheriton 1989, "Leases: An Efficient Fault-Tolerant Mechanism for
//! Distributed File Cache Consistency"): it is valid until its expiry unless renewed, so a holder
//! that vanishes without a word stops blocking the task after at most one lease. Because a paused
//! holder cannot know its lease ran out, every write also carries the claim's *generation*, a
//! fencing token checked at the resource (Kleppmann 2016, "How to do distributed locking").
//!
//! Times here are milliseconds on the board's lease clock: `CLOCK_BOOTTIME`, which is monotonic,
//! counts time in suspend, and is not moved by wall-clock steps. Expiries are stored on that clock
//! together with the boot id; after a reboot every session is gone anyway.

#[cfg(test)]
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use crate::proto::config::{LeaseSection, LivenessMode};
use crate::store::Lease;

/// A source of lease-clock time in milliseconds.
pub trait Clock: Send + Sync {
    /// Milliseconds since an arbitrary origin fixed for this boot.
    fn now_ms(&self) -> i64;

    /// Both clocks at once, to tell a machine suspend (boot time runs, monotonic time does not)
    /// from the board itself being stopped (both run). Defaults to `now_ms` for both.
    fn tick(&self) -> Tick {
        let now = self.now_ms();
        Tick {
            boot_ms: now,
            mono_ms: now,
        }
    }
}

/// One reading of the board's clocks (ms): `CLOCK_BOOTTIME` and `CLOCK_MONOTONIC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tick {
    /// `CLOCK_BOOTTIME`: the lease clock; counts time in suspend.
    pub boot_ms: i64,
    /// `CLOCK_MONOTONIC`: stands still while the machine is suspended.
    pub mono_ms: i64,
}

/// A stretch of time during which the board was not running: the machine was suspended, or
/// the board process was stopped (SIGSTOP) or starved. Found from the gap between two looks
/// at the clocks that should have been one tick apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    /// How long the board did not run (ms, lease clock).
    pub ms: i64,
    /// Of which the machine was suspended (ms): boot time ran while monotonic time did not.
    pub suspended_ms: i64,
}

/// `CLOCK_BOOTTIME`: the board's real lease clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct BootClock;

fn clock_ms(id: nix::time::ClockId) -> Option<i64> {
    nix::time::clock_gettime(id)
        .ok()
        .map(|ts| ts.tv_sec() * 1000 + ts.tv_nsec() / 1_000_000)
}

impl Clock for BootClock {
    fn tick(&self) -> Tick {
        let boot_ms = self.now_ms();
        Tick {
            boot_ms,
            mono_ms: clock_ms(nix::time::ClockId::CLOCK_MONOTONIC).unwrap_or(boot_ms),
        }
    }

    fn now_ms(&self) -> i64 {
        match nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME) {
            Ok(ts) => ts.tv_sec() * 1000 + ts.tv_nsec() / 1_000_000,
            // CLOCK_BOOTTIME exists on every Linux since 2.6.39; fall back to the monotonic clock.
            Err(_) => nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
                .map(|ts| ts.tv_sec() * 1000 + ts.tv_nsec() / 1_000_000)
                .unwrap_or(0),
        }
    }
}

/// A clock that moves only when told to: for tests of the lease rules.
#[cfg(test)]
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

#[cfg(test)]
impl ManualClock {
    /// A clock reading `start_ms`.
    pub fn new(start_ms: i64) -> Self {
        ManualClock(AtomicI64::new(start_ms))
    }

    /// Moves the clock forward by `ms`.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

#[cfg(test)]
impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// What the sweep saw of an agent session's process: [`Liveness`], read from `/proc`.
pub use crate::os::procfs::Liveness;

/// Everything the sweep knows about one session at one sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    /// State of the agent's process.
    pub process: Liveness,
    /// CPU time of its process tree advanced since the previous sweep.
    pub cpu_advanced: bool,
    /// It made a request with its identity since the previous sweep.
    pub talked: bool,
    /// It waits for a person: an open question (`board wait`) or its CLI's permission prompt.
    pub waiting: bool,
    /// Its CLI said its turn finished (a hook's `idle`) and it has not acted since.
    pub idle: bool,
    /// Its terminal got input since the previous sweep (see [`crate::daemon::terminal`]).
    pub typed: bool,
}

/// The sweep's decision for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// End the session and its claims now, with this reason.
    Expel(String),
    /// Move its claims' expiry to now + lease.
    Renew,
    /// Leave the expiry alone: the claims lapse if nothing else renews them.
    NoRenew,
}

/// The lease settings in force, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseRules {
    /// Lease duration (default 120 000 ms).
    pub duration_ms: i64,
    /// Sweep interval (default 30 000 ms).
    pub sweep_ms: i64,
    /// What counts as progress.
    pub liveness: LivenessMode,
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl From<&LeaseSection> for LeaseRules {
    fn from(s: &LeaseSection) -> Self {
        LeaseRules {
            duration_ms: ms(s.duration.0),
            sweep_ms: ms(s.sweep.0),
            liveness: s.liveness,
        }
    }
}

impl LeaseRules {
    /// The expiry of a lease granted or renewed at `now_ms`.
    pub fn expiry(&self, now_ms: i64) -> i64 {
        now_ms.saturating_add(self.duration_ms)
    }

    /// The lease a grant or renewal at `now_ms` asks of the store: until [`Self::expiry`].
    pub fn lease(&self, now_ms: i64) -> Lease {
        Lease::until(now_ms, self.expiry(now_ms))
    }

    /// Renewal writes are coalesced: an agent's claims are rewritten at most once per this many
    /// ms (one eighth of the lease), so a burst of reads is not a burst of write transactions.
    /// The stored expiry is then at most this much earlier than the real one, which is safe: the
    /// board is the only authority and an early expiry only errs toward freeing the task, and the
    /// next sweep renews a session that talked.
    pub fn renew_slack_ms(&self) -> i64 {
        (self.duration_ms / 8).max(1)
    }

    /// Whether a request at `now_ms` must write a renewal, given the last one written at
    /// `last_write_ms` (None: never).
    pub fn renewal_due(&self, last_write_ms: Option<i64>, now_ms: i64) -> bool {
        match last_write_ms {
            None => true,
            Some(w) => now_ms - w >= self.renew_slack_ms() || now_ms < w,
        }
    }

    /// Whether a renewal from one source at `now_ms` goes in the log, given when that source
    /// was last logged for the same agent (`last_ms`, lease-clock; None: never): once per lease
    /// duration per source. Renewals are written far more often ([`LeaseRules::renew_slack_ms`],
    /// every sweep); logging each would drown the feed, logging none leaves nobody able to see
    /// what keeps a claim alive.
    pub fn renew_log_due(&self, last_ms: Option<i64>, now_ms: i64) -> bool {
        match last_ms {
            None => true,
            Some(at) => now_ms - at >= self.duration_ms || now_ms < at,
        }
    }

    /// A gap between two looks at the clocks longer than this (ms) means the board was not
    /// running meanwhile: half the lease, within 1 s … 10 s. The board looks every
    /// [`STALL_TICK_MS`], so a shorter gap is scheduling noise (a loaded machine starves a
    /// thread for hundreds of ms), and a gap shorter than half a lease cannot cost a claim
    /// that its holder renews.
    pub fn stall_threshold_ms(&self) -> i64 {
        (self.duration_ms / 2).clamp(1_000, 10_000)
    }

    /// ARCHITECTURE.md rule 8, last sentence: whether the board was not running between the looks `last`
    /// and `now` (a sweep or tick that came far later than scheduled), and for how long.
    pub fn stall(&self, last: Tick, now: Tick) -> Option<Stall> {
        let gap = now.boot_ms - last.boot_ms;
        if gap <= self.stall_threshold_ms() {
            return None;
        }
        let ran = (now.mono_ms - last.mono_ms).clamp(0, gap);
        Some(Stall {
            ms: gap,
            suspended_ms: gap - ran,
        })
    }

    /// The expiry of a live claim after `stall`, found at `now_ms`: the stall does not count
    /// against the lease (the expiry moves by it), and the holder gets at least one sweep to
    /// show it is alive, as after a restart (rule 8). Never earlier than `expiry_ms`. The store
    /// applies the same rule to every live claim in one statement
    /// ([`crate::store::Store::extend_after_stall`] with [`LeaseRules::stall_floor_ms`]).
    pub fn expiry_after_stall(&self, expiry_ms: i64, now_ms: i64, stall: Stall) -> i64 {
        expiry_ms
            .saturating_add(stall.ms.max(0))
            .max(self.stall_floor_ms(now_ms))
    }

    /// The earliest expiry any live claim has after a stall found at `now_ms`: one sweep of
    /// grace.
    pub fn stall_floor_ms(&self, now_ms: i64) -> i64 {
        now_ms.saturating_add(self.sweep_ms)
    }

    /// Whether a claim with `expiry_ms` has lapsed at `now_ms` (expiry is exclusive). The store
    /// decides this in SQL (`expires_ms > now`); this is its statement for the tests of the rules.
    #[cfg(test)]
    pub fn lapsed(&self, expiry_ms: i64, now_ms: i64) -> bool {
        expiry_ms <= now_ms
    }

    /// ARCHITECTURE.md rule 3: gone or zombie → expel; waiting for a human → renew while the process
    /// lives, even stopped (rule 12: a waiting session is never lapsed while its process
    /// lives); stopped → hold; idle (its CLI said its turn finished, rule 12) → renew only on
    /// a board call or input in its terminal, in either mode: an idle CLI's screen uses CPU
    /// (Claude Code's ~70 ms per 10 s), which is not work; `process` mode → renew; `activity`
    /// mode → renew on CPU progress, input or a board call.
    pub fn sweep_verdict(&self, obs: &Observation) -> Verdict {
        let acted = obs.talked || obs.typed;
        match obs.process {
            Liveness::Gone => Verdict::Expel("process gone".into()),
            Liveness::Zombie => Verdict::Expel("process exited (zombie)".into()),
            Liveness::Stopped | Liveness::Alive if obs.waiting => Verdict::Renew,
            Liveness::Stopped => Verdict::NoRenew,
            Liveness::Alive if obs.idle => match acted {
                true => Verdict::Renew,
                false => Verdict::NoRenew,
            },
            Liveness::Alive => match self.liveness {
                LivenessMode::Process => Verdict::Renew,
                LivenessMode::Activity if obs.cpu_advanced || acted => Verdict::Renew,
                LivenessMode::Activity => Verdict::NoRenew,
            },
        }
    }

    /// Why the sweep renews a session it gave [`Verdict::Renew`], for the log: `waiting for a
    /// person`, `board call`, `input`, `CPU` or `process alive` (the first that holds, in that
    /// order).
    pub fn renew_cause(&self, obs: &Observation) -> &'static str {
        if obs.waiting {
            "waiting for a person"
        } else if obs.talked {
            "board call"
        } else if obs.typed {
            "input"
        } else if obs.cpu_advanced && self.liveness == LivenessMode::Activity {
            "CPU"
        } else {
            "process alive"
        }
    }

    /// Rule 12, last sentence: whether the sweep nudges a session now — alive, its CLI said its
    /// turn finished, not waiting for a human (an open question or a permission prompt is not a
    /// finished turn), holding a live claim it was not nudged about yet (`nudged`: once per
    /// claim, so an agent that takes a turn and stops again is not nudged in a loop).
    pub fn nudge_due(&self, obs: &Observation, holds: bool, nudged: bool) -> bool {
        obs.process == Liveness::Alive && obs.idle && !obs.waiting && holds && !nudged
    }
}

/// What made a request-driven renewal, for its `renew` event: the hook of an agent CLI that
/// reported (`hook claude PostToolUse`) or the board call itself (`call claim`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewSource<'a> {
    /// `board hook CLI EVENT`: `CLI EVENT`, untrusted (clipped and made printable for the log).
    Hook(&'a str),
    /// Any other call, by its method name.
    Call(&'a str),
    /// `hello`, the handshake a client sends before its call: renews, but is never named as
    /// the cause when the call after it says more.
    Handshake,
}

/// The longest hook name a `renew` event repeats, in characters.
const HOOK_NAME_MAX: usize = 64;

impl std::fmt::Display for RenewSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenewSource::Hook(h) => {
                let printable: String = h
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(HOOK_NAME_MAX)
                    .collect();
                write!(f, "hook {printable}")
            }
            RenewSource::Call(m) => write!(f, "call {m}"),
            RenewSource::Handshake => write!(f, "call hello"),
        }
    }
}

/// How often (ms) the board looks at its clocks to find stalls, besides every sweep and every
/// agent request.
pub const STALL_TICK_MS: u64 = 100;

/// Formats a `waitpid` status for an expulsion reason: `exited (status 3)`, `killed by SIGKILL`.
pub fn exit_reason(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (_, Some(sig)) => {
            let name = nix::sys::signal::Signal::try_from(sig)
                .map(|s| s.as_str().to_string())
                .unwrap_or_else(|_| format!("signal {sig}"));
            format!("killed by {name}")
        }
        (Some(c), None) => format!("exited (status {c})"),
        (None, None) => "exited".to_string(),
    }
}

#[cfg(test)]
#[path = "lease_tests.rs"]
mod tests;
