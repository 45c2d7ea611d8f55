//! Asking again for a lost answer: every write carries an `op_id` (the board keeps each write's
//! answer under it), so a request whose answer was lost to a board that stopped, crashed or
//! restarted is sent again with the same `op_id`, and the caller learns whether it was applied
//! instead of applying it twice.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::connection::Client;
use super::locate::Target;
use super::markers::{ANSWER_LOST, PROTOCOL, STOPPING, TIMED_OUT};
use super::op_id::with_op_id;
use crate::proto::error::{BoardError, BoardResult, ErrorKind};

/// Whether `e` says the answer to a request was lost (or refused by a stopping board), so the
/// same request with the same `op_id` should be sent again.
pub fn answer_was_lost(e: &BoardError) -> bool {
    e.kind == ErrorKind::Unavailable
        && (e.data.contains_key(ANSWER_LOST) || e.data.get(STOPPING) == Some(&json!(true)))
}

/// Whether a failure to reach the board may pass by itself (it is restarting): not a
/// sandbox, a protocol mismatch, a timeout or any error of another kind.
fn may_pass(e: &BoardError) -> bool {
    e.kind == ErrorKind::Unavailable
        && ![TIMED_OUT, PROTOCOL, "sandbox"]
            .iter()
            .any(|k| e.data.contains_key(*k))
}

/// Runs `attempt` (one request on a connection of its own) until it gives an answer. A lost
/// answer ([`answer_was_lost`]) is asked for again, with a short backoff (10 ms doubling to
/// 200 ms), until `timeout` has passed since the first loss; meanwhile a board that cannot be
/// reached yet (restarting) is waited for too. `attempt` must send the same `op_id` each time.
///
/// # Errors
/// The answer's own error; or the last `unavailable` error when the deadline passed, with
/// `data.retried_ms` (how long it retried).
pub fn retrying<T>(
    timeout: Duration,
    mut attempt: impl FnMut() -> BoardResult<T>,
) -> BoardResult<T> {
    let mut since: Option<Instant> = None;
    let mut delay = Duration::from_millis(10);
    loop {
        let e = match attempt() {
            Err(e) if answer_was_lost(&e) || (since.is_some() && may_pass(&e)) => e,
            other => return other,
        };
        let first = *since.get_or_insert_with(Instant::now);
        if first.elapsed() + delay > timeout {
            let ms = u64::try_from(first.elapsed().as_millis()).unwrap_or(u64::MAX);
            let message = format!(
                "{} (asked again for {} with the same op_id: no answer)",
                e.message,
                humantime::format_duration(Duration::from_millis(ms))
            );
            let mut out = BoardError::new(e.kind, message).with("retried_ms", ms);
            out.data.extend(e.data);
            return Err(out);
        }
        tracing::debug!(error = %e.message, "answer lost; asking again");
        std::thread::sleep(delay);
        delay = (delay * 2).min(Duration::from_millis(200));
    }
}

/// One request as a command sends it: on a connection of its own (starting the board when
/// `autostart` and none answers), with an `op_id` added to a write, and a lost answer asked
/// for again with that `op_id` (see [`retrying`]) so the caller learns whether its request was
/// applied. `stop` is sent once.
///
/// # Errors
/// The board's error for the request; `unavailable` when no board answers in time: the
/// message names the board's pid (when known) and socket, and `data.op_id` the request's
/// `op_id`, so it can be asked again.
pub fn call_once(
    target: &Target,
    autostart: bool,
    method: &str,
    params: Value,
) -> BoardResult<Value> {
    let params = with_op_id(method, params);
    let once = || Client::connect(target, autostart)?.call(method, params.clone());
    if method == "stop" {
        return once();
    }
    retrying(target.timeout, once).map_err(|e| match params.get("op_id") {
        Some(op) if e.kind == ErrorKind::Unavailable => e.with("op_id", op.clone()),
        _ => e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost() -> BoardError {
        BoardError::unavailable("closed").with(ANSWER_LOST, true)
    }

    #[test]
    fn writes_get_an_op_id_of_their_own_and_keep_a_given_one() {
        let a = with_op_id("claim", json!({}));
        let b = with_op_id("claim", json!({}));
        let (a, b) = (a["op_id"].as_str().unwrap(), b["op_id"].as_str().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_eq!(with_op_id("done", json!({"op_id": "x"}))["op_id"], "x");
        assert!(with_op_id("list", json!({})).get("op_id").is_none());
    }

    #[test]
    fn a_lost_answer_is_asked_again_until_one_comes() {
        let mut tries = 0;
        let out = retrying(Duration::from_secs(5), || {
            tries += 1;
            match tries {
                1 => Err(lost()),
                // The board is restarting: not reachable for a moment.
                2 => Err(BoardError::unavailable("no board is running")),
                _ => Ok(tries),
            }
        });
        assert_eq!(out.unwrap(), 3);
    }

    #[test]
    fn only_lost_answers_are_asked_again() {
        for e in [
            BoardError::unavailable("no board is running"),
            BoardError::unavailable("silent").with(TIMED_OUT, 5000),
            BoardError::new(ErrorKind::Conflict, "held"),
        ] {
            let mut tries = 0;
            let out: BoardResult<()> = retrying(Duration::from_secs(5), || {
                tries += 1;
                Err(e.clone())
            });
            assert_eq!(out.unwrap_err().message, e.message);
            assert_eq!(tries, 1, "{}", e.message);
        }
        // A timeout while asking again ends the retries too.
        let mut tries = 0;
        let out: BoardResult<()> = retrying(Duration::from_secs(5), || {
            tries += 1;
            Err(if tries == 1 {
                lost()
            } else {
                BoardError::unavailable("silent").with(TIMED_OUT, 5000)
            })
        });
        assert!(out.unwrap_err().data.contains_key(TIMED_OUT));
        assert_eq!(tries, 2);
    }

    #[test]
    fn asking_again_ends_at_the_deadline() {
        let t0 = Instant::now();
        let out: BoardResult<()> = retrying(Duration::from_millis(300), || Err(lost()));
        let e = out.unwrap_err();
        assert!(e.data.contains_key("retried_ms"), "{e:?}");
        assert!(e.data.contains_key(ANSWER_LOST), "{e:?}");
        assert!(t0.elapsed() < Duration::from_secs(3));
    }
}
