//! Keys and pasted text: what each does in each mode, as updates of the [`App`].

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::proto::glossary::TaskState;
use crate::proto::methods::{Call, CancelParams, ReleaseParams};
use crate::proto::sanitize::{one_line, truncate_width};
use crate::proto::TaskView;
use crate::tui::state::app::{
    show_call, Action, App, Confirm, Detail, Effect, Focus, Mode, Purpose, Request,
};
use crate::tui::state::form::FormKind;
use crate::tui::state::input::Input;
use crate::tui::state::snapshot::inert_line;

/// A press or repeat, not a release.
fn press(key: &KeyEvent) -> bool {
    key.kind != KeyEventKind::Release
}

impl App {
    /// Text pasted into the terminal (bracketed paste): goes into the field being edited.
    pub fn on_paste(&mut self, text: &str) {
        match &mut self.mode {
            Mode::Form(f) if !f.pending => {
                if let Some(field) = f.fields.get_mut(f.focus) {
                    let text = if field.multiline {
                        text.replace("\r\n", "\n")
                    } else {
                        text.replace("\r\n", " ").replace(['\n', '\r'], " ")
                    };
                    field.input.insert_str(&text);
                }
            }
            Mode::Filter => {
                self.filter.insert_str(&text.replace(['\n', '\r'], " "));
                self.rebuild();
            }
            _ => {}
        }
    }

    /// A key press.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if !press(&key) {
            return Vec::new();
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return vec![Effect::Quit];
        }
        if let Some(fx) =
            super::agents::on_confirm_key(self, &key).or_else(|| super::agents::on_key(self, &key))
        {
            return fx;
        }
        match self.mode {
            Mode::Normal => self.key_normal(key),
            Mode::Help => {
                self.mode = Mode::Normal;
                Vec::new()
            }
            Mode::Filter => {
                self.key_filter(key);
                Vec::new()
            }
            Mode::Form(_) => self.key_form(key),
            Mode::Confirm(_) => self.key_confirm(key),
            Mode::Detail(_) => self.key_detail(key),
            Mode::NeedsYou(at) => super::needs::on_key(self, &key, at),
            Mode::Inbox(_) => {
                super::needs::on_inbox_key(self, &key);
                Vec::new()
            }
        }
    }

    /// Keys on the board with no dialog open: the keys of every panel first, then those of the
    /// focused panel only. The agents panel's own keys ([`super::agents::on_key`]) were offered
    /// before; with the agents panel focused, no backlog key acts (a letter typed there must
    /// never edit, cancel or release a task the person cannot see selected).
    fn key_normal(&mut self, key: KeyEvent) -> Vec<Effect> {
        if let Some(fx) = self.key_anywhere(key) {
            return fx;
        }
        if self.focus == Focus::Agents {
            return Vec::new();
        }
        self.key_backlog(key)
    }

    /// Keys that mean the same in both panels. `None`: not one of them.
    fn key_anywhere(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('q') => return Some(vec![Effect::Quit]),
            KeyCode::Char('j') | KeyCode::Down => self.move_by(1),
            KeyCode::Char('k') | KeyCode::Up => self.move_by(-1),
            KeyCode::Char('d') if ctrl => self.move_by(self.page as isize),
            KeyCode::Char('u') if ctrl => self.move_by(-(self.page as isize)),
            KeyCode::PageDown => self.move_by(self.page as isize),
            KeyCode::PageUp => self.move_by(-(self.page as isize)),
            KeyCode::Char('g') | KeyCode::Home => self.move_to_end(false),
            KeyCode::Char('G') | KeyCode::End => self.move_to_end(true),
            KeyCode::Tab | KeyCode::BackTab => self.switch_panel(),
            KeyCode::Char('?') => self.mode = Mode::Help,
            KeyCode::Char('i') => super::needs::open(self),
            KeyCode::Char('m') | KeyCode::Char('A') => {
                match super::messages::recipient(self, key.code == KeyCode::Char('A')) {
                    Ok(kind) => self.open_form(kind),
                    Err(e) => self.say(e, true),
                }
            }
            KeyCode::F(5) => return Some(vec![Effect::Refresh]),
            KeyCode::Char('l') if ctrl => return Some(vec![Effect::Refresh]),
            _ => return None,
        }
        Some(Vec::new())
    }

    /// Tab: to the other panel. Into the agents panel, the selection lands on a live agent: the
    /// one selected before if it still runs, else the first one.
    fn switch_panel(&mut self) {
        self.focus = match self.focus {
            Focus::Backlog => Focus::Agents,
            Focus::Agents => Focus::Backlog,
        };
        if self.focus == Focus::Agents {
            let live = |i: usize| {
                self.agents
                    .get(i)
                    .is_some_and(|a| a.view.ended_at.is_none())
            };
            if !live(self.agent_selected) {
                self.agent_selected = self.first_live_agent().unwrap_or(0);
            }
            self.remember_agent();
        }
    }

    /// Keys of the backlog panel only.
    fn key_backlog(&mut self, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Char('/') => {
                self.focus = Focus::Backlog;
                self.mode = Mode::Filter;
            }
            KeyCode::Esc if !self.filter.text().is_empty() => {
                self.filter = Input::default();
                self.rebuild();
            }
            KeyCode::Char('L') => {
                let next = self.next_label_filter();
                self.filter = Input::new(next.as_deref().unwrap_or(""));
                self.rebuild();
                match next {
                    Some(f) => self.say(format!("filter {f} (L: the next label)"), false),
                    None => self.say("label filter cleared", false),
                }
            }
            KeyCode::Char('c') => {
                self.show_cancelled = !self.show_cancelled;
                self.rebuild();
                let shown = if self.show_cancelled {
                    "shown"
                } else {
                    "hidden"
                };
                self.say(format!("cancelled tasks {shown}"), false);
            }
            KeyCode::Char('a') => self.open_form(FormKind::Add),
            KeyCode::Char('s') => self.open_form(FormKind::Goal),
            KeyCode::Enter | KeyCode::Char('e') | KeyCode::Char('r') | KeyCode::Char('x') => {
                let Some(t) = self.selected_task().map(|t| t.task.clone()) else {
                    self.say("no task selected", true);
                    return Vec::new();
                };
                return self.act_on(key.code, &t);
            }
            _ => {}
        }
        Vec::new()
    }

    /// Enter / e / r / x on a task, from the list or from its details.
    fn act_on(&mut self, code: KeyCode, t: &TaskView) -> Vec<Effect> {
        match code {
            KeyCode::Enter => {
                self.mode = Mode::Detail(Box::new(Detail::of(t.id)));
                return vec![show_call(t.id)];
            }
            KeyCode::Char('e') => self.open_form(FormKind::Edit(Box::new(t.clone()))),
            KeyCode::Char('r') => {
                if t.state != TaskState::Claimed {
                    self.say(
                        format!("#{} is not claimed: nothing to release", t.id),
                        true,
                    );
                } else {
                    let holder = inert_line(t.holder.as_deref().unwrap_or("?"));
                    self.mode = Mode::Confirm(Confirm {
                        action: Action::ForceRelease(t.id),
                        question: format!(
                            "End {holder}'s claim on #{} (generation {})? The task becomes open again.",
                            t.id, t.generation
                        ),
                    });
                }
            }
            KeyCode::Char('x') => {
                if matches!(t.state, TaskState::Done | TaskState::Cancelled) {
                    self.say(format!("#{} is {} already", t.id, t.state), true);
                } else {
                    let title = truncate_width(&one_line(&t.title), 60);
                    self.mode = Mode::Confirm(Confirm {
                        action: Action::Cancel(t.id),
                        question: format!("Cancel #{} “{title}”?", t.id),
                    });
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn key_filter(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Enter => self.mode = Mode::Normal,
            KeyCode::Esc => {
                self.filter = Input::default();
                self.mode = Mode::Normal;
                self.rebuild();
            }
            KeyCode::Down => self.move_by(1),
            KeyCode::Up => self.move_by(-1),
            _ => {
                if self.filter.edit(&key) {
                    self.rebuild();
                }
            }
        }
    }

    fn key_confirm(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Confirm(c) = &self.mode else {
            return Vec::new();
        };
        let action = c.action;
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => {
                self.mode = Mode::Normal;
                let call = match action {
                    Action::ForceRelease(id) => Request {
                        purpose: Purpose::Release(id),
                        call: Call::Release(ReleaseParams {
                            task: id,
                            force: Some(true),
                            ..ReleaseParams::default()
                        }),
                    },
                    Action::Cancel(id) => Request {
                        purpose: Purpose::Cancel(id),
                        call: Call::Cancel(CancelParams { task: id }),
                    },
                };
                vec![Effect::Call(call)]
            }
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Char('q') | KeyCode::Esc => {
                self.mode = Mode::Normal;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn key_detail(&mut self, key: KeyEvent) -> Vec<Effect> {
        let max = match &self.mode {
            Mode::Detail(d) => super::detail::detail_max_scroll(self, d, self.size.0, self.size.1),
            _ => return Vec::new(),
        };
        let page = self.page;
        let Mode::Detail(d) = &mut self.mode else {
            return Vec::new();
        };
        let scroll = d.scroll.min(max);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter => self.mode = Mode::Normal,
            KeyCode::Char('j') | KeyCode::Down => d.scroll = (scroll + 1).min(max),
            KeyCode::Char('k') | KeyCode::Up => d.scroll = scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => d.scroll = (scroll + page).min(max),
            KeyCode::PageUp => d.scroll = scroll.saturating_sub(page),
            KeyCode::Char('g') | KeyCode::Home => d.scroll = 0,
            KeyCode::Char('G') | KeyCode::End => d.scroll = max,
            KeyCode::Char('y') | KeyCode::Char('n') => {
                let in_review = d
                    .data
                    .as_ref()
                    .filter(|x| x.task.state == TaskState::Review)
                    .map(|x| x.task.id);
                match in_review {
                    Some(task) => self.open_form(FormKind::Verdict {
                        task,
                        accept: key.code == KeyCode::Char('y'),
                    }),
                    None => self.say("y / n accept or reject a task in review", true),
                }
            }
            KeyCode::Char('e') | KeyCode::Char('r') | KeyCode::Char('x') => {
                let task = d.data.as_ref().map(|x| x.task.clone()).or_else(|| {
                    let id = d.task;
                    self.tasks
                        .iter()
                        .find(|t| t.task.id == id)
                        .map(|t| t.task.clone())
                });
                if let Some(t) = task {
                    self.mode = Mode::Normal;
                    return self.act_on(key.code, &t);
                }
            }
            _ => {}
        }
        Vec::new()
    }
}
