//! Agent control from the TUI, on the agents panel (Tab): go to an agent's pane (Enter), start
//! it (S), restart it (R, asks first), stop it (K, asks first), and start every agent of
//! `board.toml` that is missing or ended (U, like `board up`).
//!
//! Stopping goes through the board (`session.stop`): it ends the agent the way a closed pane
//! does, SIGTERM then SIGKILL after `[run] hangup_grace`, and keeps doing so if this TUI quits.
//! The TUI says "stopped" only once a refresh shows the session ended, or that it could not.
//!
//! Actions are by **slot**, the configured name a `board up` pane keeps (the session's `name`),
//! not by session id: a restarted `claude` is session `claude-2`, and any row of `claude`
//! (live or ended) acts on that one pane. This module is pure: it turns keys into a
//! [`TeamOp`] effect and results into a flash; the event loop carries the op out.

use crossterm::event::{KeyCode, KeyEvent};

use crate::proto::methods::SessionStopResult;
use crate::proto::methods::{Call, SessionStopParams};
use crate::proto::sanitize::{one_line, truncate_width};
use crate::proto::SessionView;
use crate::tui::state::agents::{Pending, Stopping, TeamAction, TeamOp};
use crate::tui::state::app::{App, Effect, Focus, Mode, Purpose, Request};
use crate::tui::state::snapshot::AgentItem;

/// What the TUI waits for beyond SIGKILL before it says a stop failed, ms.
const STOP_SLACK_MS: u64 = 3000;

fn inert_line(s: &str) -> String {
    truncate_width(&one_line(s), 200)
}

/// The slot's live session, else its latest one.
fn slot_session<'a>(app: &'a App, slot: &str) -> Option<&'a AgentItem> {
    let mine = || app.agents.iter().filter(move |a| a.view.name == slot);
    mine()
        .find(|a| a.view.ended_at.is_none())
        .or_else(|| mine().next())
}

pub(super) fn op_for(app: &App, action: TeamAction, slot: &str) -> TeamOp {
    let s = slot_session(app, slot);
    TeamOp {
        action,
        slot: slot.to_string(),
        pane: s.and_then(|a| a.view.pane.clone()),
        launcher_pid: s
            .filter(|a| a.view.ended_at.is_none())
            .and_then(|a| a.view.launcher_pid),
        session: s
            .filter(|a| a.view.ended_at.is_none())
            .map(|a| a.view.id.clone()),
    }
}

/// Keys of the agents panel (focus on agents, no dialog open). `None`: not an agent key.
pub fn on_key(app: &mut App, key: &KeyEvent) -> Option<Vec<Effect>> {
    if app.focus != Focus::Agents || app.mode != Mode::Normal || app.team_pending.is_some() {
        return None;
    }
    let action = match key.code {
        KeyCode::Enter => TeamAction::Attach,
        KeyCode::Char('S') => TeamAction::Start,
        KeyCode::Char('R') => TeamAction::Restart,
        KeyCode::Char('K') => TeamAction::Stop,
        KeyCode::Char('U') => TeamAction::Up,
        _ => return None,
    };
    if action == TeamAction::Up {
        let op = op_for(app, action, "");
        return Some(vec![Effect::Team(op)]);
    }
    let Some(selected) = app.agents.get(app.agent_selected) else {
        app.say("no agent selected", true);
        return Some(Vec::new());
    };
    let slot = selected.view.name.clone();
    let shown = inert_line(&slot);
    let op = op_for(app, action, &slot);
    let running = op.session.is_some();
    match action {
        TeamAction::Start if running => {
            app.say(format!("{shown} is running; R restarts it"), true);
            Vec::new()
        }
        TeamAction::Stop if !running => {
            app.say(format!("{shown} is not running; S starts it"), true);
            Vec::new()
        }
        TeamAction::Restart | TeamAction::Stop => {
            let question = if action == TeamAction::Stop {
                format!("Stop agent {shown}? It gets SIGTERM, then SIGKILL if it keeps running; its claims end with it; its pane stays.")
            } else {
                format!("Restart agent {shown}? It is ended and started again in its pane.")
            };
            app.team_pending = Some(Pending { op, question });
            Vec::new()
        }
        _ => vec![Effect::Team(op)],
    }
    .into()
}

/// y / n while a restart or stop question is open. `None`: no question is open.
pub fn on_confirm_key(app: &mut App, key: &KeyEvent) -> Option<Vec<Effect>> {
    let pending = app.team_pending.as_ref()?;
    Some(match key.code {
        KeyCode::Char('y') | KeyCode::Char('Y') => {
            let op = pending.op.clone();
            app.team_pending = None;
            match (op.action, op.session.clone()) {
                (TeamAction::Stop, Some(session)) => stop_call(app, session),
                _ => vec![Effect::Team(op)],
            }
        }
        KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Char('q') | KeyCode::Esc => {
            app.team_pending = None;
            Vec::new()
        }
        _ => Vec::new(),
    })
}

/// Asks the board to stop `session`; the TUI follows it until it ends.
fn stop_call(app: &mut App, session: String) -> Vec<Effect> {
    let shown = app
        .agents
        .iter()
        .find(|a| a.view.id == session)
        .map_or_else(|| inert_line(&session), |a| a.name.clone());
    app.stopping = Some(Stopping {
        session: session.clone(),
        shown,
        deadline_ms: None,
    });
    vec![Effect::Call(Request {
        purpose: Purpose::StopAgent,
        call: Call::SessionStop(SessionStopParams { session }),
    })]
}

/// The board's answer to `session.stop`: the flash, and when to give up waiting for the end.
pub fn on_stop_answer(app: &mut App, result: Result<SessionStopResult, String>) {
    let Some(s) = app.stopping.as_mut() else {
        return;
    };
    let shown = s.shown.clone();
    match result {
        Ok(v) => {
            let kill_after = v.kill_after_ms;
            s.deadline_ms = Some(app.now_ms + kill_after + STOP_SLACK_MS);
            app.say(
                format!(
                    "stopping {shown}: SIGTERM sent, SIGKILL in {:.1}s if it keeps running",
                    kill_after as f64 / 1000.0
                ),
                false,
            );
        }
        Err(e) => {
            app.stopping = None;
            app.say(format!("could not stop {shown}: {e}"), true);
        }
    }
}

/// After a refresh: says "stopped" once the session being stopped has ended, or that it
/// could not once the deadline passed.
pub fn check_stopping(app: &mut App) {
    let Some(s) = &app.stopping else {
        return;
    };
    let shown = s.shown.clone();
    let live = app
        .agents
        .iter()
        .any(|a| a.view.id == s.session && a.view.ended_at.is_none());
    if !live {
        app.stopping = None;
        app.say(format!("stopped {shown}: its session ended"), false);
    } else if s.deadline_ms.is_some_and(|d| app.now_ms > d) {
        app.stopping = None;
        app.say(
            format!("could not stop {shown}: still running after SIGKILL"),
            true,
        );
    }
}

/// Takes the outcome of an op: a flash, and a refresh so the panel shows the change.
pub fn on_result(app: &mut App, result: Result<String, String>) -> Vec<Effect> {
    match result {
        Ok(text) => app.say(text, false),
        Err(text) => app.say(text, true),
    }
    vec![Effect::Refresh]
}

/// What the agents panel adds about a session after its question or end reason: how often its
/// name was restarted (`restarted 2×`; the row shows the name) and its branch
/// (`⎇ board/claude`). Inert.
pub fn note(view: &SessionView) -> String {
    let mut parts = Vec::new();
    if view.restarts > 0 {
        parts.push(format!("restarted {}×", view.restarts));
    }
    if let Some(b) = &view.branch {
        parts.push(format!("⎇ {}", inert_line(b)));
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyEventKind, KeyEventState, KeyModifiers};

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent {
            code: c,
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Press,
            state: KeyEventState::NONE,
        }
    }

    fn app() -> App {
        let mut app = crate::tui::update::fixture::sample_app(false);
        app.focus = Focus::Agents;
        app
    }

    fn select(app: &mut App, id: &str) {
        app.agent_selected = app.agents.iter().position(|a| a.view.id == id).unwrap();
    }

    #[test]
    fn keys_outside_the_agents_panel_are_not_ours() {
        let mut a = app();
        a.focus = Focus::Backlog;
        assert_eq!(on_key(&mut a, &key(KeyCode::Enter)), None);
        a.focus = Focus::Agents;
        assert_eq!(on_key(&mut a, &key(KeyCode::Char('j'))), None);
    }

    #[test]
    fn enter_goes_to_the_pane_of_the_selected_agent() {
        let mut a = app();
        let first = a.agents[0].clone();
        select(&mut a, &first.view.id);
        let fx = on_key(&mut a, &key(KeyCode::Enter)).unwrap();
        let Effect::Team(op) = &fx[0] else {
            panic!("{fx:?}")
        };
        assert_eq!(op.action, TeamAction::Attach);
        assert_eq!(op.slot, first.view.name);
        assert_eq!(op.pane, first.view.pane);
    }

    #[test]
    fn stop_and_restart_ask_first_and_act_on_the_slot() {
        let mut a = app();
        let live = a
            .agents
            .iter()
            .find(|x| x.view.ended_at.is_none())
            .unwrap()
            .clone();
        select(&mut a, &live.view.id);
        assert_eq!(on_key(&mut a, &key(KeyCode::Char('K'))), Some(vec![]));
        let q = a.team_pending.clone().unwrap();
        assert!(q.question.starts_with("Stop agent"), "{q:?}");
        assert_eq!(q.op.launcher_pid, live.view.launcher_pid);
        assert_eq!(
            on_confirm_key(&mut a, &key(KeyCode::Char('n'))),
            Some(vec![])
        );
        assert!(a.team_pending.is_none());
        on_key(&mut a, &key(KeyCode::Char('R')));
        let fx = on_confirm_key(&mut a, &key(KeyCode::Char('y'))).unwrap();
        assert!(matches!(&fx[..], [Effect::Team(op)] if op.action == TeamAction::Restart));
        assert_eq!(on_confirm_key(&mut a, &key(KeyCode::Char('y'))), None);
    }

    #[test]
    fn a_running_agent_is_not_started_twice_nor_an_ended_one_stopped() {
        let mut a = app();
        let live = a
            .agents
            .iter()
            .position(|x| x.view.ended_at.is_none())
            .unwrap();
        a.agent_selected = live;
        assert_eq!(on_key(&mut a, &key(KeyCode::Char('S'))), Some(vec![]));
        assert!(a.current_flash().unwrap().text.contains("is running"));
        // An ended session whose slot has no live session.
        let gone = a
            .agents
            .iter()
            .position(|x| x.view.ended_at.is_some())
            .unwrap();
        a.agents[gone].view.name = "retired".into();
        let ended = a
            .agents
            .iter()
            .position(|x| {
                x.view.ended_at.is_some()
                    && !a
                        .agents
                        .iter()
                        .any(|y| y.view.name == x.view.name && y.view.ended_at.is_none())
            })
            .unwrap();
        a.agent_selected = ended;
        assert_eq!(on_key(&mut a, &key(KeyCode::Char('K'))), Some(vec![]));
        assert!(a.current_flash().unwrap().text.contains("not running"));
        let fx = on_key(&mut a, &key(KeyCode::Char('S'))).unwrap();
        assert!(matches!(&fx[..], [Effect::Team(op)] if op.action == TeamAction::Start));
    }

    #[test]
    fn the_note_counts_the_restarts_of_an_agent_and_names_its_branch() {
        let mut v = app().agents[0].view.clone();
        assert_eq!(note(&v), "");
        v.name = "claude".into();
        v.restarts = 2;
        v.branch = Some("board/claude".into());
        assert_eq!(note(&v), "restarted 2× · ⎇ board/claude");
    }
}
