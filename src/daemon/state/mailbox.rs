//! Who has messages or a nudge to be told at its prompt: marked by the sweep, the handlers and
//! the event publication, read by the delivery task (see [`crate::daemon::deliver`]), which
//! alone does the slow part.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::futures::Notified;
use tokio::sync::Notify;

use crate::proto::EventView;
use crate::store::{EventKind, Generation, TaskId, OPERATOR};

/// Who has something to be told, shared by the board's tasks. Cheap to mark.
#[derive(Debug, Default)]
pub struct Mailbox {
    state: Mutex<Marks>,
    wake: Notify,
}

#[derive(Debug, Default)]
struct Marks {
    /// Agent → id of the newest `message`/`answer` event addressed to it.
    newest: HashMap<String, i64>,
    /// Agent → the newest such event id it was told of.
    told: HashMap<String, i64>,
    /// Agent → the nudge line still to show.
    nudges: HashMap<String, String>,
    /// Claims (task, generation) whose holder was nudged: once per claim.
    nudged: HashSet<(TaskId, Generation)>,
}

impl Marks {
    fn untold(&self, agent: &str) -> bool {
        let newest = self.newest.get(agent).copied().unwrap_or(0);
        newest > self.told.get(agent).copied().unwrap_or(0)
    }
}

impl Mailbox {
    fn marks(&self) -> MutexGuard<'_, Marks> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Completes once something was marked for the delivery task after this call.
    pub fn woken(&self) -> Notified<'_> {
        self.wake.notified()
    }

    /// Whether `agent` has a message it was not told of yet.
    pub fn untold(&self, agent: &str) -> bool {
        self.marks().untold(agent)
    }

    /// The nudge line still to show to `agent`, if any.
    pub fn nudge_line(&self, agent: &str) -> Option<String> {
        self.marks().nudges.get(agent).cloned()
    }

    /// Forgets `agent`'s nudge line (shown, moot, or with nowhere to show it).
    pub fn drop_nudge(&self, agent: &str) {
        self.marks().nudges.remove(agent);
    }

    /// Forgets the messages and the nudge `agent` was to be told of: its session is gone.
    pub fn forget(&self, agent: &str) {
        let mut m = self.marks();
        m.newest.remove(agent);
        m.nudges.remove(agent);
    }

    /// Notes committed events: a message or an answer to an agent, or an agent whose turn
    /// finished, wakes the task.
    pub fn on_events(&self, events: &[EventView]) {
        let mut wake = false;
        {
            let mut m = self.marks();
            for e in events {
                let Some(agent) = e.agent.as_deref() else {
                    continue;
                };
                match e.kind {
                    EventKind::Message | EventKind::Answer if !sent_by(agent, e) => {
                        m.newest.insert(agent.to_string(), e.id);
                        wake = true;
                    }
                    EventKind::Idle => wake = true,
                    EventKind::SessionEnd => {
                        m.newest.remove(agent);
                        m.told.remove(agent);
                        m.nudges.remove(agent);
                    }
                    _ => {}
                }
            }
        }
        if wake {
            self.wake.notify_one();
        }
    }

    /// `agent` was told of its unread messages another way (the inbox notice on an answer,
    /// or it read them).
    pub fn told(&self, agent: &str) {
        let mut m = self.marks();
        if let Some(n) = m.newest.get(agent).copied() {
            m.told.insert(agent.to_string(), n);
        }
    }

    /// Whether the holder of claim (`task`, `generation`) was nudged already.
    pub fn nudged(&self, task: TaskId, generation: Generation) -> bool {
        self.marks().nudged.contains(&(task, generation))
    }

    /// Nudges `agent` about `claims` (task, generation) with `line`, once per claim.
    pub fn nudge(&self, agent: &str, claims: &[(TaskId, Generation)], line: String) {
        {
            let mut m = self.marks();
            m.nudged.extend(claims.iter().copied());
            m.nudges.insert(agent.to_string(), line);
        }
        self.wake.notify_one();
    }

    /// Forgets nudges of claims that are no longer live (`live`: every live claim, with its
    /// holder), and the nudge lines not shown yet of agents that hold none any more.
    pub fn keep_nudged(&self, live: &HashSet<(TaskId, Generation)>, holders: &HashSet<&str>) {
        let mut m = self.marks();
        m.nudged.retain(|c| live.contains(c));
        m.nudges.retain(|a, _| holders.contains(a.as_str()));
    }

    /// The agents with something to be told: a nudge line to show, or messages they were not
    /// told of.
    pub fn pending(&self) -> Vec<String> {
        let m = self.marks();
        let mut out: Vec<String> = m.nudges.keys().cloned().collect();
        out.extend(
            m.newest
                .keys()
                .filter(|a| m.untold(a) && !m.nudges.contains_key(*a))
                .cloned(),
        );
        out
    }
}

/// A message event about `agent` that `agent` sent to the operator (the event names the
/// sender when the recipient is the operator): nothing for `agent` to read.
fn sent_by(agent: &str, e: &EventView) -> bool {
    e.kind == EventKind::Message
        && e.reason
            .as_deref()
            .is_some_and(|r| r.starts_with(&format!("{agent} → {OPERATOR}:")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_told_once_and_a_newer_message_is_a_new_batch() {
        let mb = Mailbox::default();
        let msg = |id: i64, reason: &str| EventView {
            id,
            at: String::new(),
            kind: EventKind::Message,
            task: None,
            agent: Some("claude".into()),
            generation: None,
            reason: Some(reason.into()),
        };
        mb.on_events(&[msg(7, "operator → claude: hi")]);
        assert_eq!(mb.pending(), vec!["claude".to_string()]);
        mb.told("claude");
        assert!(mb.pending().is_empty());
        // What claude sent the operator is nothing for claude to read.
        mb.on_events(&[msg(8, "claude → operator: done?")]);
        assert!(mb.pending().is_empty());
        mb.on_events(&[msg(9, "codex → claude: rebased")]);
        assert_eq!(mb.pending(), vec!["claude".to_string()]);
    }
}
