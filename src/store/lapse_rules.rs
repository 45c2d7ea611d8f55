//! The end reasons of lapsed claims, as both backends write them into events and lost claims.

use super::fmt_ms;

/// The end reason of a claim the sweep lapsed: its lease of `lease_ms` was not renewed.
pub(crate) fn due_reason(lease_ms: i64) -> String {
    format!("lease expired (not renewed for {})", fmt_ms(lease_ms))
}

/// The end reason of an expired claim lapsed by a later call on its task (before the sweep).
pub(crate) const FOUND_LATE: &str = "lease expired (not renewed in time; found by a later call)";
