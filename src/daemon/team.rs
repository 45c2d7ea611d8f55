//! The methods that let a team share more than tasks: `send` and `inbox` (messages), `import`
//! and `export` (a backlog as a file), and the unread-messages notice on every answer.

use serde_json::{json, Value};

use super::handler::Caller;
use super::state::Board;
use crate::backlog::Backlog;
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::Params;

/// Methods answered here.
pub const METHODS: &[&str] = &["import", "export", "send", "inbox"];

/// Answers one of [`METHODS`].
pub fn dispatch(board: &Board, method: &str, p: &Params, caller: &Caller) -> BoardResult<Value> {
    match method {
        "import" => import(board, p, caller),
        "export" => export(board),
        "send" => send(board, p, caller),
        "inbox" => Ok(json!({ "messages": board.store().inbox(caller.name())? })),
        other => Err(
            BoardError::invalid(format!("method {other:?} cannot be called here"))
                .with_code(-32601),
        ),
    }
}

/// `import {goal?, tasks: [{key, title, body?, priority?, state?, after?}]}` →
/// `{tasks: [TaskView…], keys: {key: id}, goal_set}`.
fn import(board: &Board, p: &Params, caller: &Caller) -> BoardResult<Value> {
    let doc = json!({
        "goal": p.0.get("goal").cloned().unwrap_or(Value::Null),
        "tasks": p.0.get("tasks").cloned().unwrap_or_else(|| json!([])),
    });
    let backlog: Backlog = serde_json::from_value(doc).map_err(|e| {
        BoardError::invalid(format!("`import` params are not a backlog: {e}")).with_code(-32602)
    })?;
    let now = board.now_ms();
    let (done, ev) = board.store().import(&backlog, caller.name())?;
    board.publish(ev);
    let store = board.store();
    let tasks = done
        .ids
        .iter()
        .map(|id| store.task(*id, now))
        .collect::<BoardResult<Vec<_>>>()?;
    let keys: serde_json::Map<String, Value> = done
        .keys
        .iter()
        .zip(&done.ids)
        .map(|(k, id)| (k.clone(), json!(id)))
        .collect();
    Ok(json!({ "tasks": tasks, "keys": keys, "goal_set": done.goal_set }))
}

/// `export` → the board's backlog as a [`Backlog`] document (`goal`, `tasks` with keys `tN`).
fn export(board: &Board) -> BoardResult<Value> {
    let now = board.now_ms();
    // One lock for both reads: the goal and the tasks of one moment.
    let store = board.store();
    let goal = store.goal()?.map(|g| g.text);
    let tasks = store.list_tasks(None, now)?;
    drop(store);
    serde_json::to_value(Backlog::of_board(goal, &tasks)).map_err(|e| Board::internal("export", e))
}

/// `send {to, text, answer?}` → `{message, ended_wait, pane}`. With `answer` (the TUI answering a
/// waiting agent), the recipient's wait ends in the same transaction.
fn send(board: &Board, p: &Params, caller: &Caller) -> BoardResult<Value> {
    let to = p.str("to")?;
    let (sent, ev) = board
        .store()
        .send(caller.name(), to, p.str("text")?, p.flag("answer")?)?;
    if sent.ended_wait {
        board.set_waiting_flag(&sent.message.to, false);
    }
    board.publish(ev);
    Ok(json!({ "message": sent.message, "ended_wait": sent.ended_wait, "pane": sent.pane }))
}

/// Tells an agent on every answer (except `hello` and `inbox` itself) that it has unread
/// messages: `inbox: {unread, from, read_with}` is added to the result object, or to the error's
/// `data`. Nothing is added when there are none, so answers stay as they were.
pub fn add_inbox_notice(
    board: &Board,
    method: &str,
    caller: &Caller,
    out: &mut BoardResult<Value>,
) {
    let Caller::Agent(agent) = caller else {
        return;
    };
    if matches!(method, "hello" | "inbox") {
        return;
    }
    let unread = match board.store().unread(agent) {
        Ok(u) if u.count > 0 => u,
        Ok(_) => return,
        Err(e) => {
            tracing::warn!(error = %e, "could not count unread messages");
            return;
        }
    };
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
