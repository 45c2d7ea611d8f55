//! Notices that no single event announces: an agent that came to need attention (it never
//! reached its prompt: only time passing says so) and a finished board (the backlog has no open
//! or claimed task and every live agent is idle, after there was work). Each is told once per
//! change; what the board found at its first look is where it starts, not news.

use std::collections::BTreeSet;

use super::super::state::{Board, OffReactor};
use crate::proto::error::BoardResult;
use crate::proto::glossary::{AgentState, NoticeKind};
use crate::proto::NoticeView;

/// What one look at the board found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Seen {
    /// Live agent sessions that need attention (by the name people see), with why.
    pub attention: Vec<(String, String)>,
    /// The backlog has no open or claimed task and no live agent works, waits or starts.
    pub finished: bool,
    /// Open and claimed tasks.
    pub unfinished: i64,
}

/// What the previous look found (None before the first).
#[derive(Debug, Default)]
pub struct Memo {
    /// The agents that needed attention at the previous look.
    prev: Option<BTreeSet<String>>,
    /// Work was open since the last `finished` (or the first look): a board that starts, or a
    /// team that comes up, with nothing to do has not finished anything.
    had_work: bool,
}

impl Memo {
    /// Records that a task was finished or cancelled since the last look: work was done, even
    /// when no look saw it open.
    pub fn note_work(&mut self) {
        self.had_work = true;
    }

    /// The notices between the previous look and `now` (stamped `at`), remembering `now`.
    pub fn changes(&mut self, now: Seen, at: &str) -> Vec<NoticeView> {
        let ids: BTreeSet<String> = now.attention.iter().map(|(id, _)| id.clone()).collect();
        let first = self.prev.is_none();
        let before = self.prev.replace(ids).unwrap_or_default();
        let notice = |kind, agent: Option<&str>, text: &str| NoticeView {
            kind,
            agent: agent.map(str::to_string),
            task: None,
            text: text.to_string(),
            at: at.to_string(),
        };
        let finished = now.finished && self.had_work;
        self.had_work = (self.had_work || now.unfinished > 0) && !now.finished;
        if first {
            return Vec::new();
        }
        let mut out: Vec<NoticeView> = now
            .attention
            .iter()
            .filter(|(id, _)| !before.contains(id))
            .map(|(id, why)| notice(NoticeKind::Attention, Some(id), why))
            .collect();
        if finished {
            out.push(notice(
                NoticeKind::Finished,
                None,
                "the backlog has no open or claimed task and every agent is idle",
            ));
        }
        out
    }
}

/// Looks at the live sessions and the backlog (two reads).
pub fn look(board: &std::sync::Arc<Board>, off: &OffReactor) -> BoardResult<Seen> {
    let store = board.store(off);
    // `Some(0)`: the live sessions (and no ended one: none ended within the last 0 ms).
    let sessions: Vec<_> = store
        .sessions(Some(0), &|row| super::super::sweep::describe(board, row))?
        .into_iter()
        .filter(|s| s.ended_at.is_none())
        .collect();
    let unfinished = store.unfinished_count()?;
    let busy = sessions.iter().any(|s| {
        matches!(
            s.state,
            AgentState::Working
                | AgentState::Waiting
                | AgentState::Starting
                | AgentState::NeedsAttention
        )
    });
    let attention = sessions
        .into_iter()
        .filter(|s| s.state == AgentState::NeedsAttention)
        .map(|s| {
            let why = s
                .attention
                .unwrap_or_else(|| "it never reached its prompt".into());
            (s.name, why)
        })
        .collect();
    Ok(Seen {
        attention,
        finished: unfinished == 0 && !busy,
        unfinished,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(attention: &[&str], unfinished: i64, busy: bool) -> Seen {
        Seen {
            attention: attention
                .iter()
                .map(|a| (a.to_string(), "no hook came".to_string()))
                .collect(),
            finished: unfinished == 0 && !busy,
            unfinished,
        }
    }

    #[test]
    fn the_first_look_is_the_start_not_news() {
        let mut m = Memo::default();
        assert!(m.changes(seen(&["c"], 0, false), "t").is_empty());
    }

    #[test]
    fn an_agent_is_told_once_when_it_comes_to_need_attention() {
        let mut m = Memo::default();
        m.changes(seen(&[], 1, true), "t");
        let n = m.changes(seen(&["c"], 1, true), "t");
        assert_eq!(n.len(), 1);
        assert_eq!(
            (n[0].kind, n[0].agent.as_deref()),
            (NoticeKind::Attention, Some("c"))
        );
        assert!(m.changes(seen(&["c"], 1, true), "t").is_empty());
        m.changes(seen(&[], 1, true), "t");
        assert_eq!(m.changes(seen(&["c"], 1, true), "t").len(), 1);
    }

    #[test]
    fn finishing_the_work_is_told_once() {
        let mut m = Memo::default();
        m.changes(seen(&[], 2, true), "t");
        assert!(
            m.changes(seen(&[], 0, true), "t").is_empty(),
            "an agent still works"
        );
        let n = m.changes(seen(&[], 0, false), "t");
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].kind, NoticeKind::Finished);
        assert!(m.changes(seen(&[], 0, false), "t").is_empty());
        // New work, finished again: told again.
        m.changes(seen(&[], 1, false), "t");
        assert_eq!(m.changes(seen(&[], 0, false), "t").len(), 1);
    }

    #[test]
    fn a_team_that_comes_up_with_nothing_to_do_has_not_finished_anything() {
        let mut m = Memo::default();
        m.changes(seen(&[], 0, false), "t");
        m.changes(seen(&[], 0, true), "t");
        assert!(m.changes(seen(&[], 0, false), "t").is_empty());
    }
}
