//! The backend-independent words of the fenced holder writes (`done`, `release`, `note`):
//! the note check and a release's event reason. Pure: both stores call them.

use crate::proto::error::BoardResult;
use crate::store::{check_text, MAX_TEXT};

/// Checks the note a `done` or `release` carries, when it carries one.
///
/// # Errors
/// `invalid` when the note is empty, longer than [`MAX_TEXT`] or not printable.
pub(crate) fn check_note(note: Option<&str>) -> BoardResult<()> {
    match note {
        Some(n) => check_text("note", n, MAX_TEXT, false),
        None => Ok(()),
    }
}

/// A release's event reason: by its holder (`forced` false) or forced by the operator from
/// `holder`.
pub(crate) fn release_reason(forced: bool, holder: &str) -> String {
    if forced {
        format!("force-released by operator (held by {holder})")
    } else {
        "released by holder".to_string()
    }
}
