//! Notices that no single event announces: an agent that came to need attention (it never
//! reached its prompt: only time passing says so) and a finished board (the backlog has no open
//! or claimed task and every live agent is idle). Each is told once per change; what the board
//! found at its first look is where it starts, not news.

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
}

/// What the previous look found (None before the first).
#[derive(Debug, Default)]
pub struct Memo {
    prev: Option<(BTreeSet<String>, bool)>,
}

impl Memo {
    /// The notices between the previous look and `now` (stamped `at`), remembering `now`.
    pub fn changes(&mut self, now: Seen, at: &str) -> Vec<NoticeView> {
        let ids: BTreeSet<String> = now.attention.iter().map(|(id, _)| id.clone()).collect();
        let Some((before, was_finished)) = self.prev.replace((ids, now.finished)) else {
            return Vec::new();
        };
        let notice = |kind, agent: Option<&str>, text: &str| NoticeView {
            kind,
            agent: agent.map(str::to_string),
            task: None,
            text: text.to_string(),
            at: at.to_string(),
        };
        let mut out: Vec<NoticeView> = now
            .attention
            .iter()
            .filter(|(id, _)| !before.contains(id))
            .map(|(id, why)| notice(NoticeKind::Attention, Some(id), why))
            .collect();
        if now.finished && !was_finished {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(attention: &[&str], finished: bool) -> Seen {
        Seen {
            attention: attention
                .iter()
                .map(|a| (a.to_string(), "no hook came".to_string()))
                .collect(),
            finished,
        }
    }

    #[test]
    fn the_first_look_is_the_start_not_news() {
        let mut m = Memo::default();
        assert!(m.changes(seen(&["c"], true), "t").is_empty());
    }

    #[test]
    fn an_agent_is_told_once_when_it_comes_to_need_attention() {
        let mut m = Memo::default();
        m.changes(seen(&[], false), "t");
        let n = m.changes(seen(&["c"], false), "t");
        assert_eq!(n.len(), 1);
        assert_eq!(
            (n[0].kind, n[0].agent.as_deref()),
            (NoticeKind::Attention, Some("c"))
        );
        assert!(m.changes(seen(&["c"], false), "t").is_empty());
        m.changes(seen(&[], false), "t");
        assert_eq!(m.changes(seen(&["c"], false), "t").len(), 1);
    }

    #[test]
    fn finishing_is_told_once_per_change() {
        let mut m = Memo::default();
        m.changes(seen(&[], false), "t");
        let n = m.changes(seen(&[], true), "t");
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].kind, NoticeKind::Finished);
        assert!(m.changes(seen(&[], true), "t").is_empty());
        m.changes(seen(&[], false), "t");
        assert_eq!(m.changes(seen(&[], true), "t").len(), 1);
    }
}
