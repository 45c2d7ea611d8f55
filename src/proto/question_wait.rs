//! A question that waits for its answer (`board wait --block`, MCP `board_wait` with `wait_s`):
//! ask it (`wait`), then follow the board's event stream from the moment it was asked until the
//! question ends — a person answered it (an `answer` event), the agent withdrew it (`resume`,
//! "withdrew the question") or its session ended — or the time is up (the question then stays
//! open). An answer is read from the inbox (`inbox {answers: true}`), so it is marked read as it
//! is shown. The board keeps nothing for a waiter but its event stream (no board thread).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::proto::client::{Client, Followed, Target};
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::glossary::QUESTION_WITHDRAWN;
use crate::proto::methods::{Call, InboxParams, WaitParams};
use crate::proto::MessageView;

/// Exit code of `board wait --block` when no answer came in time (the question stays open).
pub const EXIT_TIMED_OUT: i32 = 9;
/// Exit code of `board wait --block` when the question ended without an answer (withdrawn with
/// `board resume`, or the agent session ended).
pub const EXIT_UNANSWERED: i32 = 10;

/// How long a waiter waits for a board that went away (stopped, restarting) to come back.
const BOARD_BACK: Duration = Duration::from_secs(10);

/// How a waited-for question ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A person answered (the text of the `answer` event).
    Answered(String),
    /// The agent withdrew it (`board resume`).
    Withdrawn,
    /// The agent session ended (the reason of its `session_end` event).
    SessionEnded(String),
    /// The time was up; the question is still open.
    TimedOut,
}

impl Outcome {
    /// The outcome's name in the JSON document: `answered`, `withdrawn`, `session_ended`,
    /// `timed_out`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Answered(_) => "answered",
            Outcome::Withdrawn => "withdrawn",
            Outcome::SessionEnded(_) => "session_ended",
            Outcome::TimedOut => "timed_out",
        }
    }

    /// The exit code of `board wait --block`: 0 answered, [`EXIT_TIMED_OUT`],
    /// [`EXIT_UNANSWERED`].
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Answered(_) => 0,
            Outcome::TimedOut => EXIT_TIMED_OUT,
            Outcome::Withdrawn | Outcome::SessionEnded(_) => EXIT_UNANSWERED,
        }
    }
}

/// A waited-for question: how it ended and the JSON document that says so:
/// `{question, agent, outcome, answer?, from?, messages?, reason?, timeout_s?}`.
#[derive(Debug, Clone)]
pub struct Waited {
    /// How it ended.
    pub outcome: Outcome,
    /// The document `--json` prints and MCP returns.
    pub doc: Value,
    /// The answers read with the one that ended the question (`inbox` with `answers`), oldest
    /// first; empty unless answered.
    pub messages: Vec<MessageView>,
}

/// Sends one request of the asking agent (`wait`, `inbox`) and returns its result.
pub type Asker<'a> = dyn FnMut(Call) -> BoardResult<Value> + 'a;

/// Asks `question` with `call` and waits (at most `timeout`) until it ends, following the event
/// stream of the board at `target`.
///
/// # Errors
/// The board's refusal of `wait` (an operator has no session to ask from: `unauthorized`);
/// `unavailable` when the board went away and did not come back within 10 s.
pub fn ask_and_wait(
    target: &Target,
    question: &str,
    timeout: Duration,
    call: &mut Asker<'_>,
) -> BoardResult<Waited> {
    let deadline = Instant::now() + timeout;
    let asked = call(Call::Wait(WaitParams {
        question: question.to_string(),
    }))?;
    let agent = asked["agent"].as_str().unwrap_or_default().to_string();
    let after = asked["event"].as_i64().unwrap_or(0);
    let outcome = follow_question(target, &agent, after, deadline)?;
    let mut read_messages = Vec::new();
    let mut doc = json!({
        "question": question,
        "agent": agent,
        "outcome": outcome.as_str(),
    });
    match &outcome {
        Outcome::Answered(text) => {
            let read = call(Call::Inbox(InboxParams {
                answers: Some(true),
            }))?;
            let messages = read["messages"].as_array().cloned().unwrap_or_default();
            // The newest answer is the one that ended this question; it is also the event's.
            let from = messages
                .iter()
                .rev()
                .find(|m| m["text"].as_str() == Some(text.as_str()))
                .map(|m| m["from"].clone())
                .unwrap_or(Value::Null);
            doc["answer"] = json!(text);
            doc["from"] = from;
            doc["messages"] = Value::Array(messages);
            read_messages = serde_json::from_value(doc["messages"].clone()).unwrap_or_default();
        }
        Outcome::SessionEnded(reason) => doc["reason"] = json!(reason),
        Outcome::TimedOut => doc["timeout_s"] = json!(timeout.as_secs_f64()),
        Outcome::Withdrawn => {}
    }
    Ok(Waited {
        outcome,
        doc,
        messages: read_messages,
    })
}

/// Follows the event stream after event `after` until `agent`'s question ends or `deadline`
/// passes; across a board restart it picks up where it was (the question is stored), giving up
/// when no board took the stream back within [`BOARD_BACK`].
fn follow_question(
    target: &Target,
    agent: &str,
    mut after: i64,
    deadline: Instant,
) -> BoardResult<Outcome> {
    let mut away_since: Option<Instant> = None;
    loop {
        let mut ended = None;
        let followed = Client::connect(target, false).and_then(|c| {
            c.follow_until(after, deadline, |e| {
                after = after.max(e["id"].as_i64().unwrap_or(after));
                ended = question_end(e, agent);
                ended.is_none()
            })
        });
        match (followed, ended) {
            (_, Some(outcome)) => return Ok(outcome),
            (Ok(Followed::TimedOut | Followed::Stopped), None) => return Ok(Outcome::TimedOut),
            // It was followed, then the board went away (stopped, restarting).
            (Ok(Followed::Closed), None) => away_since = Some(Instant::now()),
            // No board took the stream (none runs yet, or one is stopping).
            (Err(e), None) if e.kind == ErrorKind::Unavailable => {
                let since = *away_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= BOARD_BACK {
                    return Err(board_gone(e));
                }
            }
            (Err(e), None) => return Err(e),
        }
        if Instant::now() >= deadline {
            return Ok(Outcome::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `unavailable`: the board went away while the question waited and did not come back.
fn board_gone(e: BoardError) -> BoardError {
    BoardError {
        message: format!(
            "the board went away while the question waited for its answer and did not come \
             back within {} s ({}); the question is kept: `board agents` shows it",
            BOARD_BACK.as_secs(),
            e.message
        ),
        ..e
    }
}

/// Whether event `e` ends `agent`'s question, and how.
pub fn question_end(e: &Value, agent: &str) -> Option<Outcome> {
    if e["agent"].as_str() != Some(agent) {
        return None;
    }
    let reason = e["reason"].as_str().unwrap_or_default();
    match e["kind"].as_str()? {
        "answer" => Some(Outcome::Answered(reason.to_string())),
        "resume" if reason == QUESTION_WITHDRAWN => Some(Outcome::Withdrawn),
        "session_end" => Some(Outcome::SessionEnded(reason.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, agent: &str, reason: &str) -> Value {
        json!({ "id": 1, "kind": kind, "agent": agent, "reason": reason })
    }

    #[test]
    fn only_an_answer_a_withdrawal_or_the_end_of_the_askers_session_ends_its_question() {
        let w = "w";
        assert_eq!(
            question_end(&event("answer", w, "SQLite"), w),
            Some(Outcome::Answered("SQLite".into()))
        );
        assert_eq!(
            question_end(&event("resume", w, QUESTION_WITHDRAWN), w),
            Some(Outcome::Withdrawn)
        );
        assert_eq!(
            question_end(&event("session_end", w, "pane closed"), w),
            Some(Outcome::SessionEnded("pane closed".into()))
        );
        // A permission prompt that ends, another agent's answer, activity: the question stays.
        assert_eq!(question_end(&event("resume", w, "resumed"), w), None);
        assert_eq!(question_end(&event("answer", "v", "SQLite"), w), None);
        assert_eq!(question_end(&event("idle", w, "turn finished"), w), None);
        assert_eq!(question_end(&event("question", w, "Which store?"), w), None);
    }

    #[test]
    fn exit_codes_tell_an_answer_a_timeout_and_a_question_that_ended_unanswered_apart() {
        assert_eq!(Outcome::Answered("x".into()).exit_code(), 0);
        assert_eq!(Outcome::TimedOut.exit_code(), EXIT_TIMED_OUT);
        assert_eq!(Outcome::Withdrawn.exit_code(), EXIT_UNANSWERED);
        assert_eq!(
            Outcome::SessionEnded("gone".into()).exit_code(),
            EXIT_UNANSWERED
        );
    }
}
