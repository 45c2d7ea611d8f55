//! What the board remembers of agents' terminals between sweeps: input samples and the lapse
//! warnings given. Read and written by [`crate::daemon::terminal`], which looks at the
//! terminals themselves.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::store::{Generation, TaskId};

/// What the sweep remembers about terminals between sweeps (in memory: after a restart every
/// session starts with no credit, as for CPU time).
#[derive(Debug, Default)]
pub struct Terminals {
    /// Session id → what was seen of its terminal.
    samples: Mutex<HashMap<String, Seen>>,
    /// (task, generation) → the expiry it was warned about.
    warned: Mutex<HashMap<(TaskId, Generation), i64>>,
}

impl Terminals {
    /// Records `sample`, taken at lease-clock `now_ms` (ms), of session `id`'s terminal;
    /// returns what is known of that terminal now.
    pub fn record(&self, id: &str, sample: Sample, now_ms: i64) -> Seen {
        let mut samples = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        let seen = samples
            .entry(id.to_string())
            .and_modify(|s| {
                if s.sample != sample {
                    s.tty_unswept |= s.sample.atime_ns != sample.atime_ns;
                    s.sample = sample;
                    s.changed_ms = Some(now_ms);
                    s.unswept = true;
                }
            })
            .or_insert(Seen {
                sample,
                first_ms: now_ms,
                changed_ms: None,
                unswept: false,
                tty_unswept: false,
            });
        *seen
    }

    /// The input session `id`'s terminal got that the sweep has not counted yet, now counted
    /// (none for a terminal never looked at).
    pub fn take_input(&self, id: &str) -> Input {
        let mut samples = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        samples.get_mut(id).map_or(Input::default(), |s| Input {
            any: std::mem::take(&mut s.unswept),
            tty: std::mem::take(&mut s.tty_unswept),
        })
    }

    /// Forgets an ended session.
    pub fn forget(&self, agent: &str) {
        self.samples
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(agent);
    }

    /// (task, generation) → the expiry its holder was warned about.
    pub fn warned(&self) -> MutexGuard<'_, HashMap<(TaskId, Generation), i64>> {
        self.warned.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One look at a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Its access time, ns since the epoch.
    pub atime_ns: i128,
    /// Bytes read by the session's processes whose controlling terminal it is.
    pub reads: u64,
}

/// One session's terminal as looked at by the sweep and by message delivery.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// The latest sample.
    sample: Sample,
    /// Lease-clock time (ms) of the first sample.
    pub first_ms: i64,
    /// Lease-clock time (ms) of the last look that found the sample changed.
    pub changed_ms: Option<i64>,
    /// A change the sweep has not counted yet.
    unswept: bool,
    /// A change of the access time (input read from the terminal itself) the sweep has not
    /// counted yet.
    tty_unswept: bool,
}

/// What the sweep learns of a terminal since its previous look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Input {
    /// Its access time or the bytes its processes read changed: keystrokes to a shell. Also
    /// any other read of those processes (files, pipes): an agent CLI reads all the time.
    pub any: bool,
    /// Its access time changed: input was read from the terminal itself (seen within 8 s,
    /// Linux's granularity for a tty's times). What tells a person from a CLI's own reads.
    pub tty: bool,
}
