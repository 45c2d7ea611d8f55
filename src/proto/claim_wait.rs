//! `claim` with waiting (`board claim --wait`, MCP `board_claim` with `wait_s`): retries while
//! work remains but nothing is ready, and gives up with `no_ready_task` when the backlog is
//! finished or the time is up.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::proto::error::{BoardError, BoardResult, ErrorKind};

/// Calls `claim` (one `claim` request each time, e.g. on a fresh connection) until it grants a
/// claim, waiting between attempts (50 ms, doubling up to 500 ms). `task_given`: a claim of one
/// named task also waits while another agent holds it.
///
/// # Errors
/// `no_ready_task` at once when nothing can become ready (no unfinished task, or the named task
/// is done or cancelled), or with `data.timed_out` after `timeout`; a `conflict` for a named
/// task still held after `timeout`; any other error of `claim` at once.
pub fn claim_waiting(
    mut claim: impl FnMut() -> BoardResult<Value>,
    task_given: bool,
    timeout: Duration,
) -> BoardResult<Value> {
    let deadline = Instant::now() + timeout;
    let mut delay = Duration::from_millis(50);
    loop {
        match claim() {
            Ok(v) => return Ok(v),
            Err(e) if e.kind == ErrorKind::NoReadyTask => {
                let remaining = e.data.get("remaining").and_then(Value::as_i64).unwrap_or(1);
                let blocked = e.data.contains_key("blocked_by");
                // A done or cancelled task never becomes ready again.
                let finished = e.data.contains_key("state");
                if finished || (remaining == 0 && !blocked) {
                    return Err(e);
                }
                if Instant::now() + delay > deadline {
                    return Err(BoardError::new(
                        ErrorKind::NoReadyTask,
                        format!(
                            "gave up waiting after {}: still no ready task ({remaining} unfinished)",
                            humantime::format_duration(timeout)
                        ),
                    )
                    .with("remaining", remaining)
                    .with("timed_out", true));
                }
            }
            Err(e) if e.kind == ErrorKind::Conflict && task_given => {
                if Instant::now() + delay > deadline {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
        std::thread::sleep(delay);
        delay = (delay * 2).min(Duration::from_millis(500));
    }
}
