//! The demo's timeline: one readable line per event the board reports, with commit ids
//! shortened as `git log --oneline` shows them; the events seen so far, which the demo's steps
//! wait on ([`Timeline`]); and the ✓ / ✗ mark of a check.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use super::interrupt::INTERRUPTED;
use crate::proto::glossary::{EventKind, TaskId};
use crate::proto::sanitize::one_line;
use crate::proto::EventView;

/// Hex digits of a short commit id in the demo's output.
pub const SHORT: usize = 7;

/// One readable timeline line for an event, or None for events the demo does not narrate.
/// `at` is the time since the demo started.
pub fn timeline_line(
    e: &EventView,
    titles: &BTreeMap<TaskId, String>,
    at: Duration,
) -> Option<String> {
    let agent = one_line(e.agent.as_deref().unwrap_or(""));
    let task = e.task;
    let title = task
        .and_then(|t| titles.get(&t))
        .map(|t| one_line(t))
        .unwrap_or_default();
    let generation = e
        .generation
        .map(|g| format!(" (generation {g})"))
        .unwrap_or_default();
    let reason = one_line(e.reason.as_deref().unwrap_or(""));
    let shas = commit_ids(&reason);
    let sha = |i: usize| shas.get(i).map(String::as_str).unwrap_or("?");
    let t = task.map(|t| format!("#{t}")).unwrap_or_default();
    let what = match e.kind {
        EventKind::Grant => format!("{agent:<8} claimed  {t:<4} {title}{generation}"),
        EventKind::Done => format!("{agent:<8} finished {t:<4} {title}"),
        EventKind::Expel => format!("{agent:<8} EXPELLED from {t} ({reason}); {t} is ready again"),
        EventKind::Lapse => format!("{agent:<8} lapsed   {t:<4} {reason}"),
        EventKind::Reject => format!("{agent:<8} rejected {t:<4} {reason}"),
        EventKind::Release => format!("{agent:<8} released {t:<4} {title}"),
        EventKind::SessionStart => format!("{agent:<8} joined"),
        EventKind::SessionEnd => format!("{agent:<8} left ({reason})"),
        EventKind::Review => format!(
            "{agent:<8} finished {t:<4} with commit {}{generation}: waits for review",
            sha(0)
        ),
        EventKind::Accept => {
            let who = if agent.is_empty() { "person" } else { &agent };
            format!("{who:<8} accepted {t:<4} commit {}", sha(0))
        }
        EventKind::Land => format!(
            "{:<8} landed   {t:<4} commit {} on main by compare-and-swap: main now at {}",
            "board",
            sha(0),
            sha(1)
        ),
        EventKind::Rejected => format!("{:<8} sent back {t:<4} {}", "board", shorten(&reason)),
        _ => return None,
    };
    Some(format!("{:>6.2}s  {what}", at.as_secs_f64()))
}

/// The commit ids (40 or 64 hex digits) in `text`, shortened, in order.
pub fn commit_ids(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_hexdigit())
        .filter(|w| w.len() == 40 || w.len() == 64)
        .map(|w| w[..SHORT].to_string())
        .collect()
}

/// `text` with every full commit id shortened.
pub fn shorten(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.len() == 40 || word.len() == 64 {
            out.push_str(&word[..SHORT]);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_hexdigit() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The events the demo has seen (in the board's order) and the titles it names tasks by;
/// shared by the thread printing the timeline and the steps waiting on it.
pub(super) struct Timeline {
    events: Mutex<Vec<EventView>>,
    titles: Mutex<BTreeMap<TaskId, String>>,
}

impl Timeline {
    pub(super) fn new(titles: BTreeMap<TaskId, String>) -> Timeline {
        Timeline {
            events: Mutex::new(Vec::new()),
            titles: Mutex::new(titles),
        }
    }

    /// Prints the event's timeline line (`at`: time since the demo started) and keeps it.
    pub(super) fn push(&self, e: &Value, at: Duration) {
        // An event this demo cannot read (a newer board's kind) is neither told nor kept.
        let Ok(e) = EventView::deserialize(e) else {
            return;
        };
        let e = &e;
        let line = match self.titles.lock() {
            Ok(titles) => timeline_line(e, &titles, at),
            Err(_) => None,
        };
        if let Some(line) = line {
            println!("{line}");
        }
        if let Ok(mut t) = self.events.lock() {
            t.push(e.clone());
        }
    }

    /// Names task `id` by `title` in later lines.
    pub(super) fn title(&self, id: TaskId, title: &str) {
        if let Ok(mut t) = self.titles.lock() {
            t.insert(id, title.to_string());
        }
    }

    /// Whether some event seen so far matches `pred`.
    pub(super) fn any(&self, pred: impl Fn(&[EventView], &EventView) -> bool) -> bool {
        match self.events.lock() {
            Ok(t) => t.iter().any(|e| pred(&t, e)),
            Err(_) => false,
        }
    }

    /// The first event matching `pred`, waiting for it at most `within` (None after that).
    pub(super) fn wait(
        &self,
        within: Duration,
        pred: impl Fn(&EventView) -> bool,
    ) -> Option<EventView> {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(t) = self.events.lock() {
                if let Some(e) = t.iter().find(|e| pred(e)) {
                    return Some(e.clone());
                }
            }
            if Instant::now() > deadline || INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The mark of a check in the demo's output: ✓ when it holds, ✗ when not.
pub(super) fn mark(ok: bool) -> &'static str {
    if ok {
        "✓"
    } else {
        "✗"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "3f2a9c1e04b7aa11bb22cc33dd44ee55ff667788";
    const B: &str = "8d0e11223344556677889900aabbccddeeff0011";

    #[test]
    fn full_commit_ids_are_shortened_and_other_words_kept() {
        let text = format!("commit {A} landed: base now at {B}; task 15, generation 2");
        assert_eq!(
            shorten(&text),
            "commit 3f2a9c1 landed: base now at 8d0e112; task 15, generation 2"
        );
        assert_eq!(commit_ids(&text), vec!["3f2a9c1", "8d0e112"]);
        assert_eq!(shorten("deadbeef"), "deadbeef");
    }

    #[test]
    fn a_land_event_reads_as_a_land_on_main_with_both_short_ids() {
        let e = EventView {
            id: 1,
            at: "2026-03-01T12:00:00.000Z".into(),
            kind: EventKind::Land,
            task: Some(TaskId(14)),
            agent: None,
            generation: Some(crate::proto::glossary::Generation(1)),
            reason: Some(format!("commit {A} landed: base now at {B}")),
        };
        let line = timeline_line(&e, &BTreeMap::new(), Duration::from_millis(1500)).unwrap();
        assert!(line.contains("landed   #14  commit 3f2a9c1"), "{line}");
        assert!(line.ends_with("main now at 8d0e112"), "{line}");
    }
}
