//! The methods that let a team share more than tasks: `send` and `inbox` (messages), `import`
//! and `export` (a backlog as a file), and the unread-messages notice on every answer. One
//! handler function per method, called from [`super::dispatch`].

use super::table::{HandleRead, HandleWrite};
use crate::proto::methods::{verb, NoParams};
use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::cx::Cx;
use crate::daemon::identity::Caller;
use crate::daemon::state::{Board, OffReactor};
use crate::proto::backlog::Backlog;
use crate::proto::error::BoardResult;
use crate::proto::methods::{AnswerParams, ImportParams, InboxParams, SendParams};
use crate::proto::methods::{AnswerResult, ExportResult, ImportResult, InboxResult, SendResult};
use crate::proto::Method;
use crate::store::{Events, Store, TaskId};

/// `import {goal?, tasks: [{key, title, body?, priority?, state?, after?}]}`: the whole backlog
/// in one transaction, or nothing.
impl HandleWrite for verb::Import {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &ImportParams,
    ) -> BoardResult<ImportResult> {
        let (done, e) = store.import(p, cx.caller.name())?;
        ev.extend(e);
        let tasks = done
            .ids
            .iter()
            .map(|id| store.task(*id, cx.now))
            .collect::<BoardResult<Vec<_>>>()?;
        let keys: BTreeMap<String, TaskId> = done
            .keys
            .iter()
            .cloned()
            .zip(done.ids.iter().copied())
            .collect();
        Ok(ImportResult {
            tasks,
            keys,
            goal_set: done.goal_set,
            replaced_goal: done.replaced_goal,
        })
    }
}

/// `export`: the board's backlog as a [`Backlog`] document (`goal`, `tasks` with keys `tN`).
impl HandleRead for verb::Export {
    fn handle(cx: &Cx, _: &NoParams) -> BoardResult<ExportResult> {
        // One lock for both reads: the goal and the tasks of one moment.
        let store = cx.store();
        let goal = store.goal()?.map(|g| g.text);
        let tasks = store.list_tasks(None, cx.now)?;
        drop(store);
        Ok(Backlog::of_board(goal, &tasks))
    }
}

/// `send {to, text, answer?}`: stores a message; with `answer` (the TUI answering a waiting
/// agent), the recipient's question and permission prompt end in the same transaction (as
/// `answer` does, below, which refuses when no question is open).
impl HandleWrite for verb::Send {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &SendParams,
    ) -> BoardResult<SendResult> {
        let (sent, e) = store.send(cx.caller.name(), &p.to, &p.text, p.answer.unwrap_or(false))?;
        if sent.ended_wait {
            cx.board.set_waiting_flag(&sent.message.to, false);
            cx.board.set_question_flag(&sent.message.to, false);
        }
        ev.extend(e);
        Ok(SendResult {
            message: sent.message,
            ended_wait: sent.ended_wait,
            pane: sent.pane,
        })
    }
}

/// `inbox {answers?}`: the caller's unread messages (only answers to its questions with
/// `answers`), oldest first; each is returned once (marked read).
impl HandleWrite for verb::Inbox {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        _: &mut Events,
        p: &InboxParams,
    ) -> BoardResult<InboxResult> {
        Ok(InboxResult {
            messages: store.inbox(cx.caller.name(), p.answers.unwrap_or(false))?,
        })
    }
}

/// `answer {to, text}`: the operator or another agent session answers `to`'s open question;
/// the answer goes to its inbox and the question ends, in one transaction. Errors: see
/// [`Store::answer`].
impl HandleWrite for verb::Answer {
    fn handle(
        cx: &Cx,
        store: &mut dyn Store,
        ev: &mut Events,
        p: &AnswerParams,
    ) -> BoardResult<AnswerResult> {
        let (sent, e) = store.answer(cx.caller.name(), &p.to, &p.text)?;
        cx.board.set_question_flag(&sent.message.to, false);
        ev.extend(e);
        Ok(AnswerResult {
            question: sent.question.unwrap_or_default(),
            message: sent.message,
            pane: sent.pane,
        })
    }
}

/// Tells an agent on every answer (except `hello` and `inbox` itself) that it has unread
/// messages: `inbox: {unread, from, read_with}` is added to the result object, or to the error's
/// `data`. The operator is told on `status` only (the TUI's refresh, `board status`): the place
/// it looks at the board as a whole, not every command it types. Nothing is added when there
/// are none, so answers stay as they were.
pub fn add_inbox_notice(
    board: &Board,
    off: &OffReactor,
    method: Method,
    caller: &Caller,
    out: &mut BoardResult<Value>,
) {
    let agent = match caller {
        Caller::Agent(agent) => Some(agent.as_str()),
        Caller::Operator => None,
    };
    let recipient = match agent {
        Some(agent) => agent,
        None if method == Method::Status => caller.name(),
        None => return,
    };
    let told = |board: &Board| {
        if let Some(agent) = agent {
            board.mailbox().told(agent);
        }
    };
    if method == Method::Inbox {
        told(board);
    }
    if matches!(method, Method::Hello | Method::Inbox) {
        return;
    }
    let unread = match board.store(off).unread(recipient) {
        Ok(u) => u,
        Err(e) => {
            tracing::warn!(error = %e, "could not count unread messages");
            return;
        }
    };
    // Told now (or nothing to tell), so no line in its pane for these; except through a hook,
    // which shows the CLI nothing of the answer.
    if method != Method::Activity {
        told(board);
    }
    put_inbox_notice(&unread, out);
}

/// Adds the inbox notice of `unread` (see [`add_inbox_notice`]) to `out`; nothing when there
/// are no unread messages.
pub fn put_inbox_notice(unread: &crate::store::Unread, out: &mut BoardResult<Value>) {
    if unread.count == 0 {
        return;
    }
    let notice = json!({ "unread": unread.count, "from": unread.from, "read_with": "board inbox" });
    match out {
        Ok(Value::Object(m)) => {
            m.insert("inbox".into(), notice);
        }
        Ok(_) => {}
        Err(e) => {
            e.data.insert("inbox".into(), notice);
        }
    }
}
