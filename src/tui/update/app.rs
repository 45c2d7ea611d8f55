//! What a connection change and the answer to a call do to the [`App`], and the selection's
//! movement: the update functions not driven by a key, a form or a refresh.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::proto::client::answer_of;
use crate::proto::error::BoardError;
use crate::proto::glossary::{TaskId, TaskState};
use crate::proto::methods::{AcceptResult, InboxResult, SendResult, TaskResult};
use crate::proto::sanitize::{one_line, truncate_width};
use crate::proto::TaskView;
use crate::tui::state::app::{App, Conn, Effect, Focus, Mode, Purpose, ShowData};
use crate::tui::state::snapshot::{inert_line, Row, Unread};

/// The diff to fetch for a task in review that shows no diff yet.
fn review_diff(task: &TaskView, have: bool) -> Option<Effect> {
    match (&task.state, &task.commit, have) {
        (TaskState::Review, Some(c), false) => Some(Effect::Diff {
            task: task.id,
            commit: c.clone(),
        }),
        _ => None,
    }
}

/// A call's answer read as `R`, the result type the method table gives the call's method
/// (the envelope's `inbox` and `lost`, if any, set apart).
fn typed<R: DeserializeOwned>(result: Result<Value, BoardError>) -> Result<R, BoardError> {
    result.and_then(|v| answer_of::<R>(v).map(|a| a.result))
}

/// What a failed call of `purpose` was doing, for its error message.
fn failed_what(purpose: Purpose) -> String {
    match purpose {
        Purpose::Add => "add".to_string(),
        Purpose::Edit(id) => format!("edit #{id}"),
        Purpose::Goal => "set goal".into(),
        Purpose::Release(id) => format!("release #{id}"),
        Purpose::Cancel(id) => format!("cancel #{id}"),
        Purpose::Show(id) => format!("show #{id}"),
        Purpose::Diff(id) => format!("diff of #{id}"),
        Purpose::Accept(id) => format!("accept #{id}"),
        Purpose::Reject(id) => format!("reject #{id}"),
        Purpose::StopAgent => "stop".into(),
        Purpose::Send => "send".into(),
        Purpose::TypeIntoPane => "typing into the agent's pane".into(),
        Purpose::Inbox => "reading your messages".into(),
    }
}

/// Whether a call of `purpose` was sent by a form (which closes on success and shows the
/// error on failure).
fn from_a_form(purpose: Purpose) -> bool {
    matches!(
        purpose,
        Purpose::Add
            | Purpose::Edit(_)
            | Purpose::Goal
            | Purpose::Send
            | Purpose::Accept(_)
            | Purpose::Reject(_)
    )
}

impl App {
    /// Moves the selection `delta` tasks down (negative: up), stopping at the ends.
    pub(super) fn move_by(&mut self, delta: isize) {
        if self.focus == Focus::Agents {
            let n = self.agents.len();
            if n > 0 {
                let to = self.agent_selected as isize + delta;
                self.agent_selected = to.clamp(0, n as isize - 1) as usize;
                self.remember_agent();
            }
            return;
        }
        let Some(mut at) = self.selected else {
            self.selected = self.nearest_task_row(0);
            self.remember_selection();
            return;
        };
        let step: isize = if delta < 0 { -1 } else { 1 };
        let mut left = delta.unsigned_abs();
        while left > 0 {
            let mut i = at as isize + step;
            let found = loop {
                if i < 0 || i as usize >= self.rows.len() {
                    break None;
                }
                if matches!(self.rows[i as usize], Row::Task(_)) {
                    break Some(i as usize);
                }
                i += step;
            };
            match found {
                Some(f) => at = f,
                None => break,
            }
            left -= 1;
        }
        self.selected = Some(at);
        self.remember_selection();
    }

    pub(super) fn move_to_end(&mut self, last: bool) {
        if self.focus == Focus::Agents {
            self.agent_selected = if last {
                self.agents.len().saturating_sub(1)
            } else {
                0
            };
            self.remember_agent();
            return;
        }
        self.selected = if last {
            self.nearest_task_row(self.rows.len().saturating_sub(1))
        } else {
            self.nearest_task_row(0)
        };
        self.remember_selection();
    }

    /// The event stream connected (or reconnected).
    pub fn on_connected(&mut self) -> Vec<Effect> {
        if matches!(self.conn, Conn::Reconnecting { .. }) {
            self.say("reconnected to the board", false);
        }
        self.conn = Conn::Live;
        vec![Effect::Refresh]
    }

    /// The event stream broke or could not connect; `attempt` counts failures in a row.
    pub fn on_disconnected(&mut self, attempt: u32, error: &str) {
        self.conn = Conn::Reconnecting {
            attempt,
            error: inert_line(error),
        };
    }

    /// A snapshot could not be fetched.
    pub fn on_fetch_error(&mut self, e: &BoardError) {
        // The board answers, but not from its store: say so until a refresh succeeds.
        if e.data.contains_key(crate::proto::error::STORE_DOWN) {
            self.store_error = Some(inert_line(&e.message));
            return;
        }
        if self.conn == Conn::Live {
            self.say(format!("refresh failed: {}", e.message), true);
        }
    }

    /// The answer to a [`Request`](crate::tui::state::app::Request) of `purpose`: the
    /// method's result, or the text of a diff ([`Purpose::Diff`]).
    pub fn on_call_result(
        &mut self,
        purpose: Purpose,
        result: Result<Value, BoardError>,
    ) -> Vec<Effect> {
        match purpose {
            Purpose::StopAgent => {
                let answer = typed(result).map_err(|e| one_line(&e.message));
                super::agents::on_stop_answer(self, answer);
                vec![Effect::Refresh]
            }
            Purpose::Show(id) => self.on_show(id, typed(result)),
            Purpose::Diff(id) => {
                if let Mode::Detail(d) = &mut self.mode {
                    if d.task == id {
                        d.diff = Some(match result {
                            Ok(v) => Ok(v.as_str().unwrap_or_default().to_string()),
                            Err(e) => Err(one_line(&e.message)),
                        });
                    }
                }
                Vec::new()
            }
            _ => match self.on_done(purpose, result) {
                Ok(effects) => effects,
                Err(e) => {
                    self.on_failed(purpose, &e);
                    Vec::new()
                }
            },
        }
    }

    /// The `show` answer for the details dialog of task `id`, if it is still open.
    fn on_show(&mut self, id: TaskId, answer: Result<ShowData, BoardError>) -> Vec<Effect> {
        let Mode::Detail(d) = &mut self.mode else {
            return Vec::new();
        };
        if d.task != id {
            return Vec::new();
        }
        match answer {
            Ok(data) => {
                let diff = review_diff(&data.task, d.diff.is_some());
                d.data = Some(data);
                d.error = None;
                diff.into_iter().collect()
            }
            Err(e) => {
                d.error = Some(one_line(&e.message));
                Vec::new()
            }
        }
    }

    /// A steering call of `purpose` answered: the flash says what it did. Errors: the board's
    /// refusal, or an answer of another shape than the method's result.
    fn on_done(
        &mut self,
        purpose: Purpose,
        result: Result<Value, BoardError>,
    ) -> Result<Vec<Effect>, BoardError> {
        let mut effects = vec![Effect::Refresh];
        let msg = match purpose {
            Purpose::Add => {
                let added = typed::<TaskResult>(result)?.task;
                self.selected_id = Some(added.id);
                self.focus = Focus::Backlog;
                format!("added #{}: {}", added.id, added.title)
            }
            Purpose::Accept(id) => {
                let r = typed::<AcceptResult>(result)?;
                match r.landed {
                    Some(l) => format!(
                        "accepted #{id}: landed on {}, now at {}",
                        r.base,
                        l.chars().take(12).collect::<String>()
                    ),
                    None => format!("accepted #{id}: done"),
                }
            }
            Purpose::Send => {
                let sent = typed::<SendResult>(result)?;
                let typing = self.type_after_send.take();
                let (text, typed) = super::messages::after_send(&sent, typing);
                effects.extend(typed);
                text
            }
            Purpose::Inbox => {
                let answer = Ok(result?);
                let read = typed::<InboxResult>(answer).map_err(|e| e.message);
                self.mode = super::needs::read_inbox(read);
                self.unread = Unread::default();
                "messages read (marked read on the board)".into()
            }
            _ => {
                result?;
                match purpose {
                    Purpose::Edit(id) => format!("edited #{id}"),
                    Purpose::Goal => "goal set".into(),
                    Purpose::Release(id) => format!("released #{id}: its claim ended"),
                    Purpose::Cancel(id) => format!("cancelled #{id}"),
                    Purpose::TypeIntoPane => "typed the answer into the agent's pane".into(),
                    _ => String::new(),
                }
            }
        };
        if from_a_form(purpose) && matches!(self.mode, Mode::Form(_)) {
            self.mode = Mode::Normal;
        }
        self.say(truncate_width(&one_line(&msg), 200), false);
        Ok(effects)
    }

    /// A steering call of `purpose` failed: the form shows why, or the flash does.
    fn on_failed(&mut self, purpose: Purpose, e: &BoardError) {
        let text = format!("{} failed: {}", failed_what(purpose), one_line(&e.message));
        match &mut self.mode {
            Mode::Form(f) if from_a_form(purpose) => {
                f.pending = false;
                f.error = Some(text);
            }
            _ => self.say(text, true),
        }
    }
}
