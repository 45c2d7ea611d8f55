//! `board wait --block "Q"`: ask, then print the answer when a person gives it (see
//! [`crate::proto::question_wait`]).

use std::time::Duration;

use super::exit::fail;
use crate::proto::client;
use crate::proto::error::BoardResult;
use crate::proto::question_wait::{ask_and_wait, Outcome, Waited};
use crate::proto::sanitize::{inert, one_line};
use crate::proto::MessageView;

/// Asks `question` and waits at most `timeout` for its answer; prints it (or one JSON document
/// with `json_out`) and returns the exit code: 0 answered, 9 timed out (the question stays
/// open), 10 withdrawn or the session ended, else the error's code.
pub(super) fn wait_block(json_out: bool, question: &str, timeout: Duration) -> i32 {
    match ask(question, timeout) {
        Ok(w) => {
            if json_out {
                println!("{}", w.doc);
            } else {
                tell(&w, timeout);
            }
            w.outcome.exit_code()
        }
        Err(e) => fail(json_out, &e),
    }
}

fn ask(question: &str, timeout: Duration) -> BoardResult<Waited> {
    let target = client::target()?;
    // Each request on a connection of its own, a write retried under its op_id.
    let mut call = |call| client::send_once(&target, true, call);
    ask_and_wait(&target, question, timeout, &mut call)
}

/// The human output: the answer alone on stdout (for `$(board wait --block …)`), everything
/// else on stderr.
fn tell(w: &Waited, timeout: Duration) {
    match &w.outcome {
        Outcome::Answered(text) => {
            println!("{}", inert(text));
            let earlier = w.messages.len().saturating_sub(1);
            if earlier > 0 {
                eprintln!(
                    "board: {earlier} earlier answer(s) were read with it: {}",
                    earlier_answers(&w.messages)
                );
            }
        }
        Outcome::TimedOut => eprintln!(
            "board: no answer after {}; the question stays open (its answer will be in \
             `board inbox`; `board resume` withdraws it)",
            humantime::format_duration(timeout)
        ),
        Outcome::Withdrawn => {
            eprintln!("board: the question was withdrawn (`board resume`) before an answer came")
        }
        Outcome::SessionEnded(reason) => eprintln!(
            "board: the agent session ended ({}) before an answer came",
            inert(reason)
        ),
    }
}

/// The answers read besides the one that ended the question, `from: text` each.
fn earlier_answers(all: &[MessageView]) -> String {
    let n = all.len().saturating_sub(1);
    all.iter()
        .take(n)
        .map(|m| format!("{}: {}", one_line(&m.from), one_line(&m.text)))
        .collect::<Vec<_>>()
        .join("; ")
}
