//! What the board remembers between sweeps about each live agent session (in memory only).

use std::collections::HashMap;

#[cfg(doc)]
use crate::daemon::lease::LeaseRules;
use crate::daemon::lease::Liveness;
use crate::store::{Generation, TaskId};

/// What the board remembers between sweeps about one live agent session (not stored: after a
/// restart every session starts with no credit, ARCHITECTURE.md rule 8).
#[derive(Debug, Clone, Default)]
pub struct Activity {
    /// It made a request with its identity since the previous sweep.
    pub talked: bool,
    /// Lease-clock time (ms) of the last renewal written to the store.
    pub last_renew_write_ms: Option<i64>,
    /// CPU ticks of its process tree at the previous sweep.
    pub cpu_ticks: Option<u64>,
    /// Its CLI shows a permission prompt (a hook said `waiting`).
    pub waiting: bool,
    /// It asked a person a question (`board wait`) that is still open.
    pub question: bool,
    /// Its agent finished its turn (a hook said so).
    pub idle: bool,
    /// Its first call or hook is on record (`contacted_at`).
    pub contacted: bool,
    /// What its last request since the previous sweep was (`hook claude PostToolUse`, `call
    /// claim`): the cause the sweep names when that request is why it renews.
    pub talk_source: Option<String>,
    /// Lease-clock ms each source of renewal was last put in the log (see
    /// [`LeaseRules::renew_log_due`]).
    pub renew_logged: HashMap<String, i64>,
    /// A renewal the `hello` handshake wrote and did not log: the claims it renewed (`#1, #2`)
    /// and the first one's (task, generation). The call after the handshake logs it under its
    /// own name (a hook's `hello` must not be "the cause").
    pub handshake_renewal: Option<(String, (TaskId, Generation))>,
    /// What the last sweep saw of its process.
    pub seen: Option<Liveness>,
}
