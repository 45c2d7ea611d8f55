//! Every command that is one request: send it, print the answer (`board add`, `board done`, …).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::args::Cmd;
use super::print;
use crate::proto::client::{self, Client};
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::methods::*;
use crate::proto::Method;

/// The request a one-shot command sends, typed by the method table (`hello` for a command that
/// is not one request).
pub(super) fn request_of(cmd: &Cmd) -> Call {
    if let Cmd::Verb(v) = cmd {
        return v.call();
    }
    task_call(cmd)
        .or_else(|| holder_call(cmd))
        .or_else(|| read_call(cmd))
        .or_else(|| people_call(cmd))
        .unwrap_or(Call::Hello(NoParams {}))
}

/// The backlog's writes that need no claim: `goal`, `add`, `edit`, `cancel`, `accept`,
/// `reject`.
fn task_call(cmd: &Cmd) -> Option<Call> {
    Some(match cmd {
        Cmd::Goal { text } => Call::Goal(GoalParams { text: text.clone() }),
        Cmd::Add {
            title,
            body,
            priority,
            after,
            labels,
            meant_for,
            review,
            no_review,
        } => Call::Add(AddParams {
            title: title.clone(),
            body: Some(body.clone()),
            priority: Some(*priority),
            after: Some(after.clone()),
            labels: Some(labels.clone()),
            meant_for: meant_for.clone(),
            review: review_choice(*review, *no_review),
        }),
        Cmd::Edit { .. } => edit_call(cmd),
        _ => return None,
    })
}

/// An agent's calls about its claims: `claim`, `done`, `release`, `note`, `renew`, `check`.
fn holder_call(cmd: &Cmd) -> Option<Call> {
    Some(match cmd {
        Cmd::Claim { task, label, .. } => Call::Claim(ClaimParams {
            task: *task,
            label: label.clone(),
        }),
        Cmd::Done {
            task,
            note,
            generation,
            commit,
        } => Call::Done(DoneParams {
            task: *task,
            generation: *generation,
            note: note.clone(),
            commit: commit.as_deref().map(resolve_commit),
        }),
        Cmd::Release {
            task,
            note,
            force,
            generation,
        } => Call::Release(ReleaseParams {
            task: *task,
            generation: *generation,
            note: note.clone(),
            force: Some(*force),
        }),
        Cmd::Renew => Call::Renew(NoParams {}),
        Cmd::Check { task, generation } => Call::Check(CheckParams {
            task: *task,
            generation: *generation,
        }),
        _ => return None,
    })
}

/// The reads, and the board's own: `list`, `ready`, `show`, `agents` (and `agents.prune`),
/// `log`, `status`, `stop` (and `session.stop`).
fn read_call(cmd: &Cmd) -> Option<Call> {
    Some(match cmd {
        Cmd::List {
            state,
            limit,
            after,
            label,
        } => Call::List(ListParams {
            state: (!state.is_empty()).then(|| StateFilter::Many(state.clone())),
            limit: *limit,
            after: *after,
            label: label.clone(),
        }),
        Cmd::Ready { limit, label } => Call::Ready(ReadyParams {
            limit: *limit,
            label: label.clone(),
        }),
        Cmd::Agents {
            prune: true, older, ..
        } => Call::AgentsPrune(AgentsPruneParams {
            older_ms: Some(older.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))),
        }),
        Cmd::Agents { all, .. } => Call::Agents(AgentsParams { all: Some(*all) }),
        Cmd::Log { limit, .. } => Call::Log(LogParams {
            limit: Some(*limit),
            after: None,
        }),
        Cmd::Status => Call::Status(NoParams {}),
        Cmd::Stop { agent: None } => Call::Stop(NoParams {}),
        Cmd::Stop { agent: Some(a) } => Call::SessionStop(SessionStopParams { session: a.clone() }),
        _ => return None,
    })
}

/// Between agents and people: `wait`, `resume`, `answer`, `send`, `inbox`.
fn people_call(cmd: &Cmd) -> Option<Call> {
    Some(match cmd {
        Cmd::Wait { question, .. } => Call::Wait(WaitParams {
            question: question.clone(),
        }),
        Cmd::Send { to, text } => Call::Send(SendParams {
            to: to.clone(),
            text: text.clone(),
            answer: None,
        }),
        Cmd::Inbox => Call::Inbox(InboxParams { answers: None }),
        _ => return None,
    })
}

/// `board edit`: only what the flags change (absent stays; `--no-after` and `--no-labels` clear,
/// `--for-anyone` makes the task for any agent).
fn edit_call(cmd: &Cmd) -> Call {
    let Cmd::Edit {
        task,
        title,
        body,
        priority,
        after,
        no_after,
        labels,
        no_labels,
        meant_for,
        for_anyone,
        review,
        no_review,
    } = cmd
    else {
        return Call::Hello(NoParams {});
    };
    Call::Edit(EditParams {
        task: *task,
        title: title.clone(),
        body: body.clone(),
        priority: *priority,
        after: if *no_after {
            Some(Vec::new())
        } else {
            after.clone()
        },
        labels: (*no_labels || !labels.is_empty()).then(|| labels.clone()),
        meant_for: if *for_anyone {
            Some(String::new())
        } else {
            meant_for.clone()
        },
        review: review_choice(*review, *no_review),
    })
}

/// `--review` / `--no-review` as the wire's `review`: true, false, or None for neither.
fn review_choice(review: bool, no_review: bool) -> Option<bool> {
    match (review, no_review) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    }
}

/// `REV` resolved to a full commit id in the working directory's repository; as given when git
/// cannot (the board then says what is wrong with it).
fn resolve_commit(rev: &str) -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{rev}^{{commit}}"))
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => rev.to_string(),
    }
}

pub(super) fn one_call(cmd: &Cmd) -> BoardResult<(Value, String)> {
    let call = request_of(cmd);
    let method = call.method();
    let target = client::target()?;
    if matches!(cmd, Cmd::Status) {
        return status(&target, call);
    }
    if !matches!(cmd, Cmd::Stop { agent: None }) {
        // A write gets its op_id here; a lost answer is asked again with it.
        let v = client::send_once(&target, true, call)?;
        let human = match cmd {
            Cmd::Log { .. } => print::log_lines(&v, &session_names(&target)),
            _ => print::human(method, &v),
        };
        return Ok((v, human));
    }
    // `stop` must not start a board just to stop it.
    let mut c = match Client::connect(&target, false) {
        Ok(c) => c,
        Err(e) if e.kind == ErrorKind::Unavailable => {
            return Ok((
                json!({ "stopping": false, "running": false }),
                "no board is running".into(),
            ));
        }
        Err(e) => return Err(e),
    };
    let v = c.send(call)?;
    wait_gone(&target.socket);
    let human = print::human(method, &v);
    Ok((v, human))
}

/// Every session's name by id (empty when the board cannot say: lines then show ids).
pub(super) fn session_names(target: &client::Target) -> print::Names {
    Client::connect(target, false)
        .and_then(|mut c| c.send(Call::Agents(AgentsParams { all: Some(true) })))
        .map(|a| print::names_of(&a))
        .unwrap_or_default()
}

/// `status` never starts a board: it asks the running one, or answers `unavailable` (exit 8)
/// saying that none runs and, from the last board's record, when and why it stopped.
fn status(target: &client::Target, call: Call) -> BoardResult<(Value, String)> {
    let mut c = match Client::connect(target, false) {
        Ok(c) => c,
        // A sandbox that blocks the socket says so itself; anything else unavailable: none runs.
        Err(e) if e.kind == ErrorKind::Unavailable && e.data.get("sandbox").is_none() => {
            return Err(not_running(target))
        }
        Err(e) => return Err(e),
    };
    let method = call.method();
    let v = c.send(call)?;
    let mut human = print::human(method, &v);
    if method == Method::Status {
        for name in super::up::setup_failures() {
            human.push_str(&format!(
                "\nagent {name} did not start: its worktree setup failed (its pane says why; \
                 `board up` runs the setup again)"
            ));
        }
    }
    Ok((v, human))
}

/// The `unavailable` answer of `status` when no board runs, with the last board's record
/// (`last_run`: pid, started_at, stopped_at, reason) when there is one.
fn not_running(target: &client::Target) -> BoardError {
    let last = target
        .paths
        .as_ref()
        .and_then(|p| crate::proto::last_run::read(&crate::proto::last_run::path(p)));
    let mut message = format!("no board is running (socket {})", target.socket.display());
    if let Some(run) = &last {
        message.push_str(&format!("; {}", crate::proto::last_run::describe(run)));
    }
    let mut e = BoardError::unavailable(message).with("running", false);
    if let Some(run) = last {
        e = e.with("last_run", serde_json::to_value(run).unwrap_or_default());
    }
    e
}

/// After `stop`, wait (≤ 3 s) until the socket is gone so the next command starts a new board.
pub(super) fn wait_gone(socket: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if std::os::unix::net::UnixStream::connect(socket).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
