//! The members of an error's `data` that tag it, so the client tells errors apart without
//! reading their message text.

/// Marks an `unavailable` error whose request may or may not have been applied because the
/// board closed the connection before answering (it stopped, crashed or restarted): asking
/// again with the same `op_id` tells which.
pub const ANSWER_LOST: &str = "answer_lost";

/// Marks an `unavailable` answer of a board that is stopping (nothing was applied).
pub(super) const STOPPING: &str = "stopping";

/// Marks the `unavailable` error of a board that did not answer in time (never retried: a
/// stopped or stuck board would only be waited for again).
pub(super) const TIMED_OUT: &str = "answer_timeout_ms";

/// Marks the `unavailable` error of a board of another protocol version.
pub(super) const PROTOCOL: &str = "protocol";
