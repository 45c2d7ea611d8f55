//! The backend-independent rules of agent sessions: candidate ids, the refusals of a
//! registration or an attachment, the parts of a [`SessionRow`], and how a listed session's
//! state is decided. Pure: both stores call them with what they read.

use std::time::SystemTime;

use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::glossary::QUESTION_WITHDRAWN;
use crate::proto::SessionView;
use crate::store::{AgentState, EventKind, OPERATOR};

/// The ids tried, in order, for a session named `base`: `base`, then `base-2` … `base-9999`.
pub(crate) fn candidate_ids(base: &str) -> impl Iterator<Item = String> + '_ {
    (1..10_000).map(move |n| {
        if n == 1 {
            base.to_string()
        } else {
            format!("{base}-{n}")
        }
    })
}

/// The wall-clock time `ms` milliseconds ago, RFC 3339 UTC with milliseconds (the stores'
/// `*_at` format, so that text order is time order).
pub(crate) fn wall_before(ms: i64) -> String {
    let ago = std::time::Duration::from_millis(ms.max(0) as u64);
    let at = SystemTime::now()
        .checked_sub(ago)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    humantime::format_rfc3339_millis(at).to_string()
}

/// `internal`: every candidate id of `base` is taken.
pub(crate) fn no_free_id(base: &str) -> BoardError {
    BoardError::internal(format!("no free session id for {base:?}"))
}

/// `lapsed`: the agent session `id` to attach processes to has ended.
pub(crate) fn attach_ended(id: &str) -> BoardError {
    BoardError::new(ErrorKind::Lapsed, format!("agent session {id} has ended"))
}

/// A process identity `(pid, start time in clock ticks)` from its two stored columns; `None`
/// unless both are set.
pub(crate) fn pid_pair(pid: Option<i64>, start: Option<i64>) -> Option<(i32, u64)> {
    match (pid, start) {
        (Some(p), Some(s)) => Some((p as i32, s as u64)),
        _ => None,
    }
}

/// A tmux pane `(pane id, pane pid, its start time)` from its three stored columns; `None`
/// unless all are set.
pub(crate) fn pane_triple(
    id: Option<String>,
    pid: Option<i64>,
    start: Option<i64>,
) -> Option<(String, i32, u64)> {
    match (id, pid, start) {
        (Some(id), Some(p), Some(s)) => Some((id, p as i32, s as u64)),
        _ => None,
    }
}

/// Why a session started at `started_at` (RFC 3339) needs attention at `now`: only while it
/// was never contacted and has an `attention_ms` deadline (see `needs_attention`).
pub(crate) fn attention_of(
    started_at: &str,
    contacted: Option<&str>,
    attention_ms: Option<i64>,
    now: SystemTime,
) -> Option<String> {
    match (contacted, attention_ms) {
        (None, Some(ms)) => needs_attention(started_at, ms, now),
        _ => None,
    }
}

/// What a listed session's state is known to be before asking its processes: `gone` once
/// ended, `waiting` while it asks a question; `None`: ask (`probe`).
pub(crate) fn known_state(s: &SessionView) -> Option<AgentState> {
    match (&s.ended_at, s.question.is_some() || s.waiting.is_some()) {
        (Some(_), _) => Some(AgentState::Gone),
        (None, true) => Some(AgentState::Waiting),
        (None, false) => None,
    }
}

/// Sets `s.state` from `known` (its ended/waiting state or what its processes say). `None`
/// means its process runs and what it does decides: needs attention, idle (idle or holding no
/// claim) or working. A known state clears the attention reason.
pub(crate) fn settle_state(s: &mut SessionView, known: Option<AgentState>) {
    s.state = match known {
        Some(state) => {
            s.attention = None;
            state
        }
        None if s.attention.is_some() => AgentState::NeedsAttention,
        None if s.idle_since.is_some() || s.claims.is_empty() => AgentState::Idle,
        None => AgentState::Working,
    };
}

/// The event of a session's question set to `question`: `question` with its text, or with
/// None (the agent withdrew it) `resume`, saying so.
pub(crate) fn question_event(question: Option<&str>) -> (EventKind, String) {
    match question {
        Some(q) => (EventKind::Question, q.to_string()),
        None => (EventKind::Resume, QUESTION_WITHDRAWN.to_string()),
    }
}

/// Why a session started at `started_at` (RFC 3339) and never heard from needs attention at
/// `now`, once `attention_ms` passed; None before that.
pub(super) fn needs_attention(
    started_at: &str,
    attention_ms: i64,
    now: std::time::SystemTime,
) -> Option<String> {
    let started = humantime::parse_rfc3339(started_at).ok()?;
    let age = now.duration_since(started).ok()?;
    (age.as_millis() >= attention_ms as u128).then(|| {
        format!(
            "no hook and no board call {} after its start: its CLI is most likely showing a \
             first-run dialog (trust, sign-in, approval); answer it in the agent's pane",
            humantime::format_duration(std::time::Duration::from_secs(age.as_secs()))
        )
    })
}

/// The name an agent session is registered under, made of `name`: letters, digits, `-`, `_`
/// and `.` kept, anything else turned into `-`, at most 40 characters.
///
/// # Errors
/// `invalid` when nothing usable is left or the name is the operator's.
pub(crate) fn session_base_name(name: &str) -> BoardResult<String> {
    let base: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let base = base.trim_matches('-').to_string();
    if base.is_empty() || base == OPERATOR {
        return Err(BoardError::invalid(format!(
            "agent name {:?} is not usable: use letters, digits, '-', '_' or '.' (not \"operator\")",
            name.chars().take(40).collect::<String>()
        )));
    }
    Ok(base)
}
