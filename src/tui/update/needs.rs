//! The needs-you list (`i`): everything on the board that waits for a person, in one place —
//! open questions, permission prompts, agents that never reached their prompt, unread messages
//! to the operator, claims whose agent ended while holding them. Each item says what to do and
//! carries its key. The header counts the items; a question also gets a loud banner.
//!
//! Pure, like the rest of the update code: the items are computed from the [`App`] each time
//! they are needed, keys turn into [`Effect`]s.

use crossterm::event::{KeyCode, KeyEvent};

use super::agents::op_for;
use crate::proto::glossary::{EventKind, TaskState};
use crate::proto::methods::InboxResult;
use crate::proto::methods::{Call, InboxParams};
use crate::proto::sanitize::inert;
use crate::tui::state::agents::TeamAction;
use crate::tui::state::app::{show_call, App, Detail, Effect, Mode, Purpose, Request};
use crate::tui::state::needs::{Inbox, Need, NeedKind};
use crate::tui::state::snapshot::inert_line;

/// Everything waiting for a person now, most urgent first.
pub fn needs(app: &App) -> Vec<Need> {
    let mut out = Vec::new();
    for a in app.waiting() {
        out.push(Need {
            kind: NeedKind::Question,
            text: format!("{} asks: {}", a.name, a.question.as_deref().unwrap_or("")),
            todo: "A answer",
            agent: Some(a.view.id.clone()),
            task: None,
            event: None,
        });
    }
    for a in app.at_permission_prompt() {
        out.push(Need {
            kind: NeedKind::Permission,
            text: format!(
                "{} waits at a permission prompt: {}",
                a.name,
                a.permission.as_deref().unwrap_or("")
            ),
            todo: "⏎ go to its pane",
            agent: Some(a.view.id.clone()),
            task: None,
            event: None,
        });
    }
    for a in app.needing_attention() {
        out.push(Need {
            kind: NeedKind::Attention,
            text: format!(
                "{} never reached its prompt: {}",
                a.name,
                a.attention.as_deref().unwrap_or("no hook, no board call")
            ),
            todo: "⏎ go to its pane",
            agent: Some(a.view.id.clone()),
            task: None,
            event: None,
        });
    }
    if app.unread.count > 0 {
        let from: Vec<String> = app.unread.from.iter().map(|f| inert_line(f)).collect();
        let plural = if app.unread.count == 1 { "" } else { "s" };
        out.push(Need {
            kind: NeedKind::Messages,
            text: format!(
                "{} unread message{plural} to you from {}",
                app.unread.count,
                from.join(", ")
            ),
            todo: "⏎ read",
            agent: None,
            task: None,
            event: None,
        });
    }
    out.extend(orphaned(app));
    out
}

/// Claims that ended with their agent (an `expel` in the feed) whose task is still open:
/// nobody took the work over. The newest such event per task; dismissed ones left out.
fn orphaned(app: &App) -> Vec<Need> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    // The feed is newest first.
    for e in &app.events {
        let Some(task) = e.view.task else { continue };
        if e.kind != EventKind::Expel || !seen.insert(task) || app.dismissed.contains(&e.view.id) {
            continue;
        }
        // Tasks are in id order (as `list` sends them): a lookup per event, not a scan, since
        // this runs on every frame.
        let open = app
            .tasks
            .binary_search_by_key(&task, |t| t.task.id)
            .ok()
            .is_some_and(|i| app.tasks[i].task.state == TaskState::Open);
        if !open {
            continue;
        }
        out.push(Need {
            kind: NeedKind::Orphaned,
            text: format!(
                "{} ended holding #{task} ({}); #{task} is open again",
                e.agent, e.reason
            ),
            todo: "⏎ task · d dismiss",
            agent: e.view.agent.clone(),
            task: Some(task),
            event: Some(e.view.id),
        });
    }
    for t in app
        .tasks
        .iter()
        .filter(|t| t.task.state == TaskState::Review)
    {
        let commit: String = t
            .task
            .commit
            .as_deref()
            .unwrap_or("?")
            .chars()
            .take(12)
            .collect();
        out.push(Need {
            kind: NeedKind::Review,
            text: format!(
                "#{} {} waits for review (commit {}, by {})",
                t.task.id,
                t.title,
                inert_line(&commit),
                t.done_by
            ),
            todo: "⏎ diff, then y accept · n reject",
            agent: None,
            task: Some(t.task.id),
            event: None,
        });
    }
    out
}

/// How many things wait for a person (the header's count).
pub fn count(app: &App) -> usize {
    needs(app).len()
}

/// Opens the needs-you list.
pub fn open(app: &mut App) {
    app.mode = Mode::NeedsYou(0);
}

/// Keys while the needs-you list is open.
pub fn on_key(app: &mut App, key: &KeyEvent, selected: usize) -> Vec<Effect> {
    let items = needs(app);
    let last = items.len().saturating_sub(1);
    let at = selected.min(last);
    match key.code {
        KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('i') => app.mode = Mode::Normal,
        KeyCode::Char('j') | KeyCode::Down => app.mode = Mode::NeedsYou((at + 1).min(last)),
        KeyCode::Char('k') | KeyCode::Up => app.mode = Mode::NeedsYou(at.saturating_sub(1)),
        KeyCode::Char('d') => match items.get(at) {
            Some(Need {
                kind: NeedKind::Orphaned,
                event: Some(id),
                ..
            }) => {
                app.dismissed.insert(*id);
                app.mode = Mode::NeedsYou(at.min(last.saturating_sub(1)));
            }
            _ => app.say("only an ended agent's claim can be dismissed", true),
        },
        KeyCode::Enter | KeyCode::Char('A') => {
            if let Some(item) = items.get(at) {
                return act(app, item, key.code == KeyCode::Char('A'));
            }
            app.mode = Mode::Normal;
        }
        _ => {}
    }
    Vec::new()
}

/// Does what an item asks for (`answer`: the `A` key, which only answers).
fn act(app: &mut App, item: &Need, answer: bool) -> Vec<Effect> {
    if answer && item.kind != NeedKind::Question {
        app.say("A answers a question; ⏎ does what this item says", true);
        return Vec::new();
    }
    match item.kind {
        NeedKind::Question => {
            let agent = app
                .agents
                .iter()
                .find(|a| Some(&a.view.id) == item.agent.as_ref())
                .map(|a| super::messages::form_kind(a, true));
            match agent {
                Some(kind) => app.open_form(kind),
                None => app.mode = Mode::Normal,
            }
            Vec::new()
        }
        NeedKind::Permission | NeedKind::Attention => {
            let slot = app
                .agents
                .iter()
                .find(|a| Some(&a.view.id) == item.agent.as_ref())
                .map(|a| a.view.name.clone())
                .unwrap_or_default();
            app.mode = Mode::Normal;
            vec![Effect::Team(op_for(app, TeamAction::Attach, &slot))]
        }
        NeedKind::Messages => vec![Effect::Call(Request {
            purpose: Purpose::Inbox,
            call: Call::Inbox(InboxParams::default()),
        })],
        NeedKind::Orphaned | NeedKind::Review => {
            let Some(task) = item.task else {
                return Vec::new();
            };
            app.mode = Mode::Detail(Box::new(Detail::of(task)));
            vec![show_call(task)]
        }
    }
}

/// The messages dialog for an `inbox` answer (or why it was not understood).
pub fn read_inbox(answer: Result<InboxResult, String>) -> Mode {
    let (messages, error) = match answer {
        Ok(r) => (
            r.messages
                .iter()
                .map(|m| {
                    let time = m.sent_at.get(11..19).unwrap_or("").to_string();
                    (inert_line(&m.from), inert_line(&time), inert(&m.text))
                })
                .collect(),
            None,
        ),
        Err(e) => (
            Vec::new(),
            Some(inert_line(&format!("unexpected answer: {e}"))),
        ),
    };
    Mode::Inbox(Box::new(Inbox {
        messages,
        scroll: 0,
        error,
    }))
}

/// Keys while the messages dialog is open: scroll, or close.
pub fn on_inbox_key(app: &mut App, key: &KeyEvent) {
    let Mode::Inbox(inbox) = &mut app.mode else {
        return;
    };
    match key.code {
        KeyCode::Char('j') | KeyCode::Down => inbox.scroll = inbox.scroll.saturating_add(1),
        KeyCode::Char('k') | KeyCode::Up => inbox.scroll = inbox.scroll.saturating_sub(1),
        KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter => app.mode = Mode::Normal,
        _ => {}
    }
}
