//! Boards on several hosts sharing one PostgreSQL store: this host's heartbeat, the end of
//! hosts that stopped answering, and the board's clock on the server's time.
//!
//! Each `board serve` holds a host session in the store, renewed every `[store] heartbeat`
//! with expiry = server time + `[store] host_ttl`. The same beat ends every host whose session
//! expired, with its agent sessions and their claims (whichever host beats first does it; the
//! store's conditional statement makes the others' attempts no-ops). So a host that crashes,
//! freezes or is cut off stops blocking its agents' tasks after at most `host_ttl + heartbeat`,
//! and when it comes back it learns from its next beat that its sessions ended; its agents'
//! later writes are refused as `lapsed`, like any holder whose lease ran out.
//!
//! Expiries are computed and compared by the store with the server's clock, so skew between
//! hosts cannot move a lease. The board's own clock ([`ServerClock`]) is the server's time
//! estimated locally: it only schedules sweeps and shows "expires in".

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::lease::{BootClock, Clock, Tick};
use super::state::Board;
use crate::proto::error::BoardResult;
use crate::store::Store;

/// The server's clock seen from this host: `CLOCK_BOOTTIME` plus an offset measured at each
/// heartbeat (the server's time minus the local time at the middle of the round trip, as in
/// Cristian 1989, "Probabilistic clock synchronization"). Monotonic between beats.
#[derive(Debug, Default)]
pub struct ServerClock {
    offset_ms: AtomicI64,
}

impl ServerClock {
    /// Sets the offset from one reading: `server_ms` taken between `before_ms` and `after_ms`
    /// of the local lease clock.
    pub fn observe(&self, before_ms: i64, server_ms: i64, after_ms: i64) {
        let local = before_ms + (after_ms - before_ms) / 2;
        self.offset_ms.store(server_ms - local, Ordering::Relaxed);
    }

    /// The current offset (ms), server minus local.
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms.load(Ordering::Relaxed)
    }
}

impl Clock for ServerClock {
    fn now_ms(&self) -> i64 {
        BootClock.now_ms() + self.offset_ms()
    }

    fn tick(&self) -> Tick {
        // The same offset on both keeps their difference, which is what tells suspend apart.
        let t = BootClock.tick();
        let off = self.offset_ms();
        Tick {
            boot_ms: t.boot_ms + off,
            mono_ms: t.mono_ms + off,
        }
    }
}

/// The heartbeat settings (ms).
#[derive(Debug, Clone, Copy)]
pub struct Beat {
    /// Host session lifetime without a heartbeat.
    pub ttl_ms: i64,
    /// Heartbeat period.
    pub every_ms: i64,
}

impl Beat {
    /// The gap (ms) since this board's previous successful beat beyond which the next
    /// successful one counts as having regained the store: any gap after a failed beat (it
    /// lost the store), else one TTL (it went without the store for as long as it takes to
    /// declare a host dead, e.g. the server froze). A regained board ends no other host for
    /// one TTL (silence is evidence of a host's death only while the declarer itself was in
    /// contact). A merely late beat on a loaded machine is not a loss of contact.
    pub fn regained_gap_ms(&self, previous_failed: bool) -> i64 {
        match previous_failed {
            true => 0,
            false => self.ttl_ms,
        }
    }
}

/// This host's session in the shared store, as the board holds it: the heartbeat's own
/// connection (outside the board's pool, so a beat never queues behind agents' requests for a
/// connection nor behind the store's write lock: a host cut off while holding it would
/// otherwise make every other host miss its TTL), and whether a clean stop ended the session.
/// Cloned between the heartbeat task and the stop.
#[derive(Clone)]
pub struct HostSession {
    store: Arc<Mutex<Box<dyn Store>>>,
    ended: Arc<AtomicBool>,
}

impl HostSession {
    /// The host session kept on `store`, a connection of its own.
    pub fn new(store: Box<dyn Store>) -> Self {
        HostSession {
            store: Arc::new(Mutex::new(store)),
            ended: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Ends this host's session at a clean stop (`why`, e.g. "stopped by `board stop`"): its
    /// host row, its agent sessions and their claims, expelled at once (see
    /// [`Store::end_host`]), and publishes the events. No beat runs after it (one in progress
    /// finishes first), so the session is not taken again. Blocking: call it off the reactor.
    /// Errors: the store's (unreachable: the other hosts end this one after `host_ttl`).
    pub fn end(&self, board: &Board, why: &str) -> BoardResult<()> {
        self.ended.store(true, Ordering::SeqCst);
        let mut s = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let events = s.end_host(why)?;
        board.publish(events);
        Ok(())
    }
}

/// Beats until the board stops, on the host session's own connection. A board whose host name
/// another board took over (two boards under one `[store] host`) stops instead of taking it
/// back. A failed beat (store unreachable) is logged and tried again one period later; the
/// board's writes fail closed meanwhile (the store answers `unavailable`), and
/// [`Board::store_unreachable`] says so to `board status` and the TUI. Ending the hosts that
/// stopped beating is [`super::host_reaper`]'s, on the pool.
pub async fn run(board: Arc<Board>, clock: Arc<ServerClock>, beat: Beat, session: HostSession) {
    let every = Duration::from_millis(beat.every_ms.max(1) as u64);
    let mut failed = false;
    loop {
        let (c, hs) = (Arc::clone(&clock), session.clone());
        let beaten = board
            .blocking(move |b, _off| {
                let mut s = hs.store.lock().unwrap_or_else(|p| p.into_inner());
                if hs.ended.load(Ordering::SeqCst) {
                    // The board stopped and ended its host session: a beat would take a new one.
                    return Ok(());
                }
                beat_once(b, &mut **s, &c, beat, failed)
            })
            .await;
        failed = !matches!(beaten, Ok(Ok(())));
        match beaten {
            Ok(Ok(())) => board.set_store_unreachable(None),
            Ok(Err(e)) if e.data.contains_key("host_taken") => {
                // Beating on would take the session back from the other board, which would
                // take it back in turn: this board gives the name up and stops.
                tracing::error!(error = %e, "this board's host name is taken; stopping");
                board.shutdown().notify_one();
                return;
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "heartbeat failed");
                if board.store_unreachable().is_none() {
                    // Streams read the log only when woken: woken as the store is lost, they
                    // find it gone and tell their followers (`board log --follow` waits).
                    board.events().wake(0);
                }
                board.set_store_unreachable(Some(e.message.clone()));
            }
            Err(e) => tracing::error!(error = %e, "heartbeat task failed"),
        }
        tokio::time::sleep(every).await;
    }
}

/// One beat on the heartbeat's own `store`: measure the server's clock, renew (or retake) this
/// host's session, and publish what that changed. `previous_failed`: the beat before this one
/// failed (see [`Beat::regained_gap_ms`]).
pub fn beat_once(
    board: &Board,
    store: &mut dyn Store,
    clock: &ServerClock,
    beat: Beat,
    previous_failed: bool,
) -> BoardResult<()> {
    let before = BootClock.now_ms();
    let server = store.clock_ms()?;
    let after = BootClock.now_ms();
    if let Some(server) = server {
        clock.observe(before, server, after);
    }
    let renewed = store.host_beat(beat.ttl_ms, beat.regained_gap_ms(previous_failed))?;
    if let Some(reason) = &renewed.ended_by_others {
        tracing::warn!(%reason, "this host had been declared gone by another host; its agents' claims ended");
    }
    board.publish(renewed.events);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_beat_regains_the_store_after_a_failed_beat_or_a_ttl_without_one() {
        let beat = Beat {
            ttl_ms: 30_000,
            every_ms: 5_000,
        };
        assert_eq!(beat.regained_gap_ms(true), 0, "any gap after a failure");
        assert_eq!(
            beat.regained_gap_ms(false),
            30_000,
            "a late beat is not a loss"
        );
    }

    #[test]
    fn the_offset_is_taken_at_the_middle_of_the_round_trip() {
        let c = ServerClock::default();
        c.observe(1_000, 50_010, 1_020);
        assert_eq!(c.offset_ms(), 50_010 - 1_010);
        let now = c.now_ms();
        assert!((now - (BootClock.now_ms() + 49_000)).abs() < 1_000);
    }

    #[test]
    fn a_skewed_server_keeps_the_gap_between_boot_and_monotonic_time() {
        let c = ServerClock::default();
        c.observe(0, 3_600_000, 0);
        let t = c.tick();
        let local = BootClock.tick();
        assert_eq!(
            (t.boot_ms - t.mono_ms) / 100,
            (local.boot_ms - local.mono_ms) / 100
        );
    }
}
