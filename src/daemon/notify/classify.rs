//! Which events of the log a person should hear about, as notices; and how a burst of notices
//! becomes one. Pure functions: no I/O, no clock.

use crate::proto::glossary::{EventKind, NoticeKind};
use crate::proto::{EventView, NoticeView};

/// Who a message to a person is addressed to (the recipient in a `message` event's reason).
const OPERATOR: &str = "operator";

/// Longest text of a summary of several notices, in characters: a desktop popup or a phone
/// shows a few lines at most.
const SUMMARY_CHARS: usize = 600;

/// Whether an event says a task was finished or cancelled.
pub fn ends_work(kind: EventKind) -> bool {
    matches!(kind, EventKind::Done | EventKind::Cancel)
}

/// The notice an event makes, if any: `question` (an agent asked a person), `wait` (a CLI's
/// permission prompt), a `message` to the operator, `expel` (a claim ended with its session),
/// `review` (a holder's `done` put its task in review: the notifier keeps it only while the task
/// waits there for a person, see `super::awaiting_review`).
/// `attention` and `finished` come from the board's state, not from one event (see `state`).
pub fn classify(e: &EventView) -> Option<NoticeView> {
    let reason = e.reason.clone().unwrap_or_default();
    let (kind, text) = match e.kind {
        EventKind::Question => (NoticeKind::Question, reason),
        EventKind::Wait => (NoticeKind::Permission, reason),
        EventKind::Message => (NoticeKind::Message, to_operator(e)?.to_string()),
        EventKind::Expel => (NoticeKind::Expel, reason),
        EventKind::Review => (NoticeKind::Review, reason),
        _ => return None,
    };
    Some(NoticeView {
        kind,
        agent: e.agent.clone(),
        task: e.task,
        text,
        at: e.at.clone(),
    })
}

/// The text of a message an agent sent the operator: the event's reason is
/// `SENDER → RECIPIENT: TEXT` with the sender as the event's agent. None for any other message.
fn to_operator(e: &EventView) -> Option<&str> {
    // The reason names the sender as people know it (`sh`), which is not its session id
    // (`sh-4`) once an agent restarted: only the recipient part is read.
    e.agent.as_deref()?;
    e.reason
        .as_deref()?
        .split_once(" → ")?
        .1
        .strip_prefix(OPERATOR)?
        .strip_prefix(": ")
}

/// One notice for a burst: the notice itself when there is one; else a summary whose kind is
/// the first notice's, whose agent and task are kept only when all notices share them, and
/// whose text lists each notice (`3 notices: question from w: Which store?; …`), cut at
/// `SUMMARY_CHARS`. None for an empty burst.
pub fn summarize(notices: &[NoticeView]) -> Option<NoticeView> {
    let (first, last) = (notices.first()?, notices.last()?);
    if notices.len() == 1 {
        return Some(first.clone());
    }
    let shared = |f: &dyn Fn(&NoticeView) -> bool| notices.iter().all(f);
    let agent = first
        .agent
        .clone()
        .filter(|a| shared(&|n| n.agent.as_deref() == Some(a)));
    let task = first.task.filter(|t| shared(&|n| n.task == Some(*t)));
    let items: Vec<String> = notices.iter().map(line).collect();
    let mut text = format!("{} notices: {}", notices.len(), items.join("; "));
    if text.chars().count() > SUMMARY_CHARS {
        text = text.chars().take(SUMMARY_CHARS - 1).collect::<String>() + "…";
    }
    Some(NoticeView {
        kind: first.kind,
        agent,
        task,
        text,
        at: last.at.clone(),
    })
}

/// A notice in a few words: `question from w: Which store?`.
pub fn line(n: &NoticeView) -> String {
    let mut s = n.kind.to_string();
    if let Some(a) = &n.agent {
        s.push_str(" from ");
        s.push_str(a);
    }
    if let Some(t) = n.task {
        s.push_str(&format!(" (#{t})"));
    }
    if !n.text.is_empty() {
        s.push_str(": ");
        s.push_str(&n.text);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::state::notices::may_notify;
    use crate::proto::glossary::TaskId;

    fn event(kind: EventKind, agent: Option<&str>, task: Option<i64>, reason: &str) -> EventView {
        EventView {
            id: 1,
            at: "2026-01-01T00:00:00.000Z".into(),
            kind,
            task: task.map(TaskId),
            agent: agent.map(str::to_string),
            generation: None,
            reason: Some(reason.into()),
        }
    }

    #[test]
    fn a_question_becomes_a_question_notice_with_the_agent_and_its_text() {
        let n = classify(&event(EventKind::Question, Some("w"), None, "Which store?")).unwrap();
        assert_eq!(n.kind, NoticeKind::Question);
        assert_eq!(n.agent.as_deref(), Some("w"));
        assert_eq!(n.text, "Which store?");
        assert_eq!(n.at, "2026-01-01T00:00:00.000Z");
        assert!(may_notify(EventKind::Question));
        let r = classify(&event(
            EventKind::Review,
            Some("w"),
            Some(3),
            "commit c waits",
        ))
        .unwrap();
        assert_eq!(
            (r.kind, r.task, r.agent.as_deref()),
            (NoticeKind::Review, Some(TaskId(3)), Some("w"))
        );
        assert!(may_notify(EventKind::Review));
    }

    #[test]
    fn a_permission_prompt_becomes_a_permission_notice() {
        let n = classify(&event(EventKind::Wait, Some("c"), None, "Allow Bash?")).unwrap();
        assert_eq!(
            (n.kind, n.text.as_str()),
            (NoticeKind::Permission, "Allow Bash?")
        );
    }

    #[test]
    fn a_message_from_a_restarted_agent_names_it_and_is_still_a_notice() {
        let to_op = event(
            EventKind::Message,
            Some("sh-4"),
            None,
            "sh → operator: need help",
        );
        let n = classify(&to_op).expect("a notice");
        assert_eq!(
            (n.kind, n.text.as_str()),
            (NoticeKind::Message, "need help")
        );
    }

    #[test]
    fn only_messages_to_the_operator_are_notices() {
        let to_op = event(
            EventKind::Message,
            Some("w"),
            None,
            "w → operator: done with #3",
        );
        let n = classify(&to_op).unwrap();
        assert_eq!(
            (n.kind, n.text.as_str()),
            (NoticeKind::Message, "done with #3")
        );
        let to_agent = event(EventKind::Message, Some("x"), None, "w → x: hi");
        assert_eq!(classify(&to_agent), None);
        // From the operator to an agent: the event's agent is the recipient.
        let from_op = event(EventKind::Message, Some("x"), None, "operator → x: hi");
        assert_eq!(classify(&from_op), None);
    }

    #[test]
    fn an_expelled_claim_names_its_task() {
        let n = classify(&event(EventKind::Expel, Some("w"), Some(4), "pane closed")).unwrap();
        assert_eq!((n.kind, n.task), (NoticeKind::Expel, Some(TaskId(4))));
    }

    #[test]
    fn routine_events_make_no_notice() {
        for k in [EventKind::Grant, EventKind::Renew, EventKind::Resume] {
            assert!(!may_notify(k));
            assert_eq!(classify(&event(k, Some("w"), Some(1), "x")), None);
        }
        // A finished task is taken in (work was done) but is no notice of its own.
        assert!(may_notify(EventKind::Done) && ends_work(EventKind::Done));
        assert_eq!(
            classify(&event(EventKind::Done, Some("w"), Some(1), "done")),
            None
        );
    }

    #[test]
    fn a_burst_becomes_one_summary_keeping_only_what_all_share() {
        let a = classify(&event(EventKind::Question, Some("w"), None, "Q1")).unwrap();
        let b = classify(&event(EventKind::Wait, Some("w"), None, "Allow?")).unwrap();
        let c = classify(&event(EventKind::Question, Some("x"), None, "Q2")).unwrap();
        assert_eq!(summarize(std::slice::from_ref(&a)).unwrap(), a);
        let two = summarize(&[a.clone(), b]).unwrap();
        assert_eq!(two.agent.as_deref(), Some("w"));
        assert!(
            two.text
                .starts_with("2 notices: question from w: Q1; permission"),
            "{}",
            two.text
        );
        let three = summarize(&[a.clone(), a.clone(), c]).unwrap();
        assert_eq!(three.agent, None);
        let many = vec![a; 100];
        assert!(summarize(&many).unwrap().text.chars().count() <= SUMMARY_CHARS);
        assert_eq!(summarize(&[]), None);
    }
}
