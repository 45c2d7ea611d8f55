//! A refresh taken in: [`App::on_snapshot`] and the backlog rows rebuilt from the tasks, the
//! filter and the selection.

use crate::proto::sanitize::{one_line, truncate_width};
use crate::proto::SessionView;
use crate::tui::state::app::{show_call, App, Effect, Mode};
use crate::tui::state::snapshot::{
    inert_line, parse_ms, AgentItem, EventItem, Group, Row, Snapshot, TaskItem, GONE_FOR_MS,
    LABEL_TERM,
};

impl App {
    /// Takes in a new snapshot fetched at `fetched_ms` (monotonic clock).
    pub fn on_snapshot(&mut self, snap: Snapshot, fetched_ms: u64) -> Vec<Effect> {
        self.loaded = true;
        self.fetched_ms = fetched_ms;
        self.board_name = snap
            .board_name
            .as_deref()
            .map(inert_line)
            .unwrap_or_default();
        self.config_error = snap.config_error.as_deref().map(inert_line);
        self.store_error = None;
        self.lease_ms = snap.lease_ms;
        self.goal_text = snap
            .goal
            .as_ref()
            .map(|g| inert_line(&g.text))
            .unwrap_or_default();
        self.goal = snap.goal;
        // Most tasks are unchanged from one refresh to the next: keep their display strings
        // instead of making every title inert and lower-cased again (most of the cost of taking
        // in a 10 000-task snapshot). Tasks come in id order, as `list` sends them.
        let mut old = std::mem::take(&mut self.tasks).into_iter().peekable();
        let mut tasks = Vec::with_capacity(snap.tasks.len());
        // Holders and the feed name an agent as people know it, even a session no longer
        // listed on the agents panel.
        let names: std::collections::HashMap<String, String> = snap
            .agents
            .iter()
            .map(|v| (v.id.clone(), v.name.clone()))
            .collect();
        let shown = |id: &str| inert_line(names.get(id).map_or(id, String::as_str));
        for task in snap.tasks {
            while old.next_if(|o| o.task.id < task.id).is_some() {}
            let prev = old.next_if(|o| o.task.id == task.id);
            tasks.push(TaskItem::new(task, prev, &shown));
        }
        self.tasks = tasks;
        self.totals = [0; 6];
        for t in &self.tasks {
            self.totals[t.group.index()] += 1;
        }
        self.take_agents(snap.agents);
        self.unread = snap.unread;
        super::agents::check_stopping(self);
        self.events = snap
            .events
            .into_iter()
            .rev()
            .map(|e| EventItem {
                time: e
                    .at
                    .get(11..19)
                    .filter(|t| t.bytes().all(|b| b.is_ascii_digit() || b == b':'))
                    .map(String::from)
                    .unwrap_or_else(|| truncate_width(&one_line(&e.at), 8)),
                kind: e.kind,
                agent: e.agent.as_deref().map(shown).unwrap_or_default(),
                reason: e.reason.as_deref().map(inert_line).unwrap_or_default(),
                view: e,
            })
            .collect();
        self.rebuild();
        match &self.mode {
            Mode::Detail(d) => vec![show_call(d.task)],
            _ => Vec::new(),
        }
    }

    fn take_agents(&mut self, sessions: Vec<SessionView>) {
        let item = |v: SessionView| AgentItem {
            id: inert_line(&v.id),
            name: inert_line(if v.name.is_empty() { &v.id } else { &v.name }),
            state: v.state,
            pane: v.pane.as_deref().map(inert_line).unwrap_or_default(),
            question: v.question.as_deref().map(inert_line),
            permission: v.waiting.as_deref().map(inert_line),
            end_reason: v.end_reason.as_deref().map(inert_line),
            attention: v.attention.as_deref().map(inert_line),
            last_heard_ms: v
                .ended_at
                .as_deref()
                .or(v.last_seen_at.as_deref())
                .or(Some(v.started_at.as_str()))
                .and_then(parse_ms),
            view: v,
        };
        let (live, ended): (Vec<_>, Vec<_>) =
            sessions.into_iter().partition(|s| s.ended_at.is_none());
        // Of the ended ones, only the last session of a name no live session has, for a while.
        let mut last_of_name: Vec<SessionView> = Vec::new();
        for s in ended {
            if live.iter().any(|l| l.name == s.name) {
                continue;
            }
            match last_of_name.iter_mut().find(|l| l.name == s.name) {
                Some(l) if (&l.started_at, &l.id) < (&s.started_at, &s.id) => *l = s,
                Some(_) => {}
                None => last_of_name.push(s),
            }
        }
        let mut ended: Vec<AgentItem> = last_of_name
            .into_iter()
            .map(item)
            .filter(|a| {
                a.last_heard_ms
                    .is_some_and(|t| self.now_wall_ms - t <= GONE_FOR_MS)
            })
            .collect();
        ended.sort_by_key(|a| std::cmp::Reverse(a.last_heard_ms));
        self.agents = live.into_iter().map(item).chain(ended).collect();
        self.follow_agent();
    }

    /// Puts the agent selection back on the agent it was on (by session id), wherever its row
    /// moved; on the first live agent when that agent is no longer shown.
    pub(super) fn follow_agent(&mut self) {
        let by_id = self
            .agent_selected_id
            .as_ref()
            .and_then(|id| self.agents.iter().position(|a| &a.view.id == id));
        self.agent_selected = by_id.or_else(|| self.first_live_agent()).unwrap_or(0);
        self.remember_agent();
    }

    /// Row of the first live agent.
    pub(super) fn first_live_agent(&self) -> Option<usize> {
        self.agents.iter().position(|a| a.view.ended_at.is_none())
    }

    pub(super) fn remember_agent(&mut self) {
        self.agent_selected_id = self
            .agents
            .get(self.agent_selected)
            .map(|a| a.view.id.clone());
    }

    pub(super) fn matches(&self, t: &TaskItem, terms: &[String]) -> bool {
        terms.iter().all(|term| {
            if let Some(id) = term.strip_prefix('#') {
                return t.task.id.to_string() == id;
            }
            if let Some(label) = term.strip_prefix(LABEL_TERM) {
                return t.task.labels.iter().any(|l| l.eq_ignore_ascii_case(label));
            }
            t.title_lower.contains(term.as_str())
                || t.holder.to_lowercase().contains(term.as_str())
                || t.task.id.to_string() == *term
                || t.group.label().eq_ignore_ascii_case(term)
        })
    }

    /// The filter that shows only the tasks carrying the label after the one the filter
    /// shows now (labels of all tasks, sorted; the first when the filter shows no label), or
    /// None after the last: the `L` key's step through the board's labels.
    pub fn next_label_filter(&self) -> Option<String> {
        let labels: std::collections::BTreeSet<&str> = self
            .tasks
            .iter()
            .flat_map(|t| t.task.labels.iter().map(String::as_str))
            .collect();
        let now = self.filter.text().trim().strip_prefix(LABEL_TERM);
        let next = match now {
            Some(cur) => labels.into_iter().find(|l| *l > cur),
            None => labels.into_iter().next(),
        };
        next.map(|l| format!("{LABEL_TERM}{l}"))
    }

    /// Recomputes [`App::rows`] from the tasks, the filter and the cancelled toggle, keeping the
    /// selected task selected when it is still shown.
    pub fn rebuild(&mut self) {
        let terms: Vec<String> = self
            .filter
            .text()
            .to_lowercase()
            .split_whitespace()
            .map(String::from)
            .collect();
        let mut groups: [Vec<usize>; 6] = Default::default();
        for (i, t) in self.tasks.iter().enumerate() {
            if terms.is_empty() || self.matches(t, &terms) {
                groups[t.group.index()].push(i);
            }
        }
        let tasks = &self.tasks;
        for g in Group::ALL {
            let list = &mut groups[g.index()];
            match g {
                Group::Ready | Group::Blocked => list.sort_by_key(|&i| {
                    let t = &tasks[i].task;
                    (std::cmp::Reverse(t.priority), t.id)
                }),
                Group::Claimed | Group::Review => list.sort_by_key(|&i| tasks[i].task.id),
                Group::Done => list.sort_by(|&a, &b| {
                    let (a, b) = (&tasks[a].task, &tasks[b].task);
                    b.done_at.cmp(&a.done_at).then(b.id.cmp(&a.id))
                }),
                Group::Cancelled => list.sort_by_key(|&i| std::cmp::Reverse(tasks[i].task.id)),
            }
        }
        let mut rows = Vec::with_capacity(self.tasks.len() + Group::ALL.len());
        for g in Group::ALL {
            if g == Group::Cancelled && !self.show_cancelled {
                continue;
            }
            let list = &groups[g.index()];
            // Review is a section only on boards that review: shown while something waits.
            if g == Group::Review && list.is_empty() {
                continue;
            }
            rows.push(Row::Header(g, list.len()));
            rows.extend(list.iter().map(|&i| Row::Task(i)));
        }
        let old = self.selected;
        self.rows = rows;
        let by_id = self.selected_id.and_then(|id| {
            self.rows
                .iter()
                .position(|r| matches!(r, Row::Task(i) if self.tasks[*i].task.id == id))
        });
        self.selected = by_id.or_else(|| self.nearest_task_row(old.unwrap_or(0)));
        self.remember_selection();
    }

    pub(super) fn nearest_task_row(&self, from: usize) -> Option<usize> {
        let from = from.min(self.rows.len().saturating_sub(1));
        let is_task = |i: &usize| matches!(self.rows[*i], Row::Task(_));
        (from..self.rows.len())
            .find(is_task)
            .or_else(|| (0..from).rev().find(is_task))
    }

    pub(super) fn remember_selection(&mut self) {
        if let Some(t) = self.selected_task() {
            self.selected_id = Some(t.task.id);
        }
    }
}
