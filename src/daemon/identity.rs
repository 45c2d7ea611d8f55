//! Who is calling (design: "Identity and security"): the agent session whose process tree the
//! caller is in, found by walking the peer's ancestors (SO_PEERCRED pid, then `/proc` parent
//! links) to the nearest registered process of a session; `BOARD_AGENT` + `BOARD_TOKEN` are a
//! second proof where present.
//!
//! The rule, in order:
//! - The caller's chain of processes (itself, its parent, …, nearest first) is matched against
//!   the agent process and the launcher of every session of this boot, by pid *and* process
//!   start time (a reused pid is another process). The agent process matches anywhere in the
//!   chain, itself included; a launcher only as a strict ancestor (an orphan it adopted as child
//!   subreaper, or the agent before `session.attach`), so the launcher's own calls are not its
//!   agent's. The nearest match is the caller's session.
//! - Inside a session's tree, the caller *is* that session, with or without an identity in the
//!   params. An identity that names another session, or a token that is not this session's, is
//!   `unauthorized`; an identity with no token is accepted only when it names this session. The
//!   tree of a session that has ended (its pane closed while the agent lives on) gives `lapsed`:
//!   a process in any agent's tree is never an operator, whatever its environment.
//! - Outside every tree, a request without identity is the operator's; a token-bearing request is
//!   refused (a token copied out of its agent's tree does not pass).
//! - With `[identity] check_process_tree = false` the process tree is not consulted at all and
//!   the token alone identifies an agent (for setups where the board cannot see the callers'
//!   processes).

use sha2::{Digest, Sha256};

use super::state::Board;
use crate::daemon::state::OffReactor;
use crate::os::procfs;
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::Identity;
use crate::store::{SessionId, SessionRow, OPERATOR};

/// Who sent a request, from the socket's peer credentials (SO_PEERCRED) and `/proc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// Peer process id (None when the kernel did not say).
    pub pid: Option<i32>,
    /// Peer user id.
    pub uid: u32,
    /// Start time of the peer process (clock ticks since boot), read when the connection was
    /// accepted; None when it could not be read (the process was already gone).
    pub start: Option<u64>,
}

impl Peer {
    /// A peer from its credentials; reads its start time from `/proc` now.
    pub fn new(pid: Option<i32>, uid: u32) -> Peer {
        let start = pid.and_then(|p| procfs::start_time(p).ok());
        Peer { pid, uid, start }
    }
}

/// The authenticated caller of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// No agent identity: a human in a shell or the TUI.
    Operator,
    /// An agent session, by id.
    Agent(SessionId),
}

impl Caller {
    /// Session id, or `operator`.
    pub fn name(&self) -> &str {
        match self {
            Caller::Operator => OPERATOR,
            Caller::Agent(a) => a,
        }
    }

    /// The session id, or None for the operator.
    pub fn agent(&self) -> Option<&str> {
        match self {
            Caller::Operator => None,
            Caller::Agent(a) => Some(a.as_str()),
        }
    }
}

/// SHA-256 of a token, hex: what the store keeps instead of the token.
pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new random token: 128 bits from the OS, hex.
pub fn new_token() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The caller of one request, by the rule in the module docs.
///
/// # Errors
/// `unauthorized` for an identity that does not hold (unknown session, wrong token, a token of
/// another session, an identity outside its tree, a caller whose process is gone); `lapsed` for
/// an ended session (by its token, or by its process tree); store errors as `internal`.
pub fn authenticate(
    board: &Board,
    off: &OffReactor,
    p: &Identity,
    peer: Peer,
) -> BoardResult<Caller> {
    let agent = p.agent.as_deref().filter(|a| !a.is_empty());
    let token = p.token.as_deref().filter(|t| !t.is_empty());
    if !board.check_process_tree() {
        return by_token_only(board, off, agent, token);
    }
    let Some(pid) = peer.pid else {
        // No pid from the kernel: nothing to walk; the token is the only proof there is.
        return by_token_only(board, off, agent, token);
    };
    let chain = procfs::ancestry(pid);
    if chain.first().map(|&(_, start)| start) != peer.start || peer.start.is_none() {
        // The process that connected is gone (or its pid now names another process): its
        // ancestry cannot be known, so it cannot be placed outside every agent's tree either.
        return Err(BoardError::unauthorized(format!(
            "process {pid} exited before the board could tell which agent session it belongs to"
        )));
    }
    let tree = nearest_session(board, off, &chain)?;
    match (tree, agent, token) {
        (None, None, None) => Ok(Caller::Operator),
        (None, Some(a), Some(t)) => {
            let row = verified(board, off, a, t)?;
            if row.ended_at.is_some() {
                return Err(ended(board, off, &row)?);
            }
            Err(BoardError::unauthorized(format!(
                "process {pid} is not inside agent session {}'s process tree; \
                 a token works only in the agent it was issued to",
                shown(a)
            )))
        }
        (None, a, t) => Err(partial_identity(a, t)),
        (Some(s), None, None) => in_session(board, off, s),
        (Some(s), Some(a), t) if a != s.id => {
            if let Some(t) = t {
                verified(board, off, a, t)?;
            }
            Err(BoardError::unauthorized(format!(
                "process {pid} is inside agent session {}'s process tree, not {}'s; \
                 a token works only in the agent it was issued to",
                s.id,
                shown(a)
            )))
        }
        (Some(s), _, Some(t)) if s.token_hash != hash_token(t) => {
            Err(BoardError::unauthorized(format!(
                "wrong token for agent session {} (the session whose process tree this is)",
                s.id
            )))
        }
        (Some(s), _, _) => in_session(board, off, s),
    }
}

/// The caller is session `s` (found by its tree): itself while live, `lapsed` once ended.
fn in_session(board: &Board, off: &OffReactor, s: SessionRow) -> BoardResult<Caller> {
    if s.ended_at.is_some() {
        return Err(ended(board, off, &s)?);
    }
    Ok(Caller::Agent(SessionId(s.id)))
}

/// The session, of this boot, whose agent process (anywhere in `chain`) or launcher (a strict
/// ancestor) is nearest to the caller. At one pid a launcher match wins over an agent match: an
/// orphan adopted by a nested `board run` belongs to that inner session. A live session wins over
/// an ended one holding the same process.
fn nearest_session(
    board: &Board,
    off: &OffReactor,
    chain: &[(i32, u64)],
) -> BoardResult<Option<SessionRow>> {
    let pids: Vec<i32> = chain.iter().map(|&(p, _)| p).collect();
    let rows = board
        .store(off)
        .sessions_with_pids(board.boot_id(), &pids)?;
    if rows.is_empty() {
        return Ok(None);
    }
    let rank = |row: &SessionRow| -> Option<(usize, u8, u8)> {
        let live = u8::from(row.ended_at.is_some());
        let at = |proc: Option<(i32, u64)>, strict: bool| {
            let (pid, start) = proc?;
            chain
                .iter()
                .position(|&p| p == (pid, start))
                .filter(|&i| !strict || i > 0)
        };
        let as_launcher = at(row.launcher, true).map(|i| (i, 0, live));
        let as_agent = at(row.agent, false).map(|i| (i, 1, live));
        match (as_launcher, as_agent) {
            (Some(l), Some(a)) => Some(l.min(a)),
            (l, a) => l.or(a),
        }
    };
    Ok(rows
        .into_iter()
        .filter_map(|row| rank(&row).map(|r| (r, row)))
        .min_by_key(|(r, _)| *r)
        .map(|(_, row)| row))
}

/// Identity from the params alone (no process tree): the pre-ancestry rule.
fn by_token_only(
    board: &Board,
    off: &OffReactor,
    agent: Option<&str>,
    token: Option<&str>,
) -> BoardResult<Caller> {
    match (agent, token) {
        (None, None) => Ok(Caller::Operator),
        (Some(a), Some(t)) => {
            let row = verified(board, off, a, t)?;
            in_session(board, off, row)
        }
        (a, t) => Err(partial_identity(a, t)),
    }
}

/// The stored session `agent` if `token` is its token.
fn verified(board: &Board, off: &OffReactor, agent: &str, token: &str) -> BoardResult<SessionRow> {
    let Some(row) = board.store(off).session(agent)? else {
        return Err(unknown_session(board, off, agent));
    };
    if row.token_hash != hash_token(token) {
        return Err(BoardError::unauthorized(format!(
            "wrong token for agent session {}",
            shown(agent)
        )));
    }
    Ok(row)
}

/// `unauthorized` for an agent session the store does not know. On a store that opened an
/// epoch (restored from an older copy, failed over), the likeliest cause is that the session
/// began after the copy was taken: the message says so, and that the agent must be started
/// again (`data.epoch`, and `data.epoch_at` when the store keeps it).
fn unknown_session(board: &Board, off: &OffReactor, agent: &str) -> BoardError {
    let unknown = format!("no agent session {}", shown(agent));
    let store = board.store(off);
    let epoch = store.meta("epoch").ok().flatten().unwrap_or_default();
    let at = store.meta("epoch_at").ok().flatten();
    // The embedded store starts at epoch 1; the shared one records when each epoch opened.
    if at.is_none() && epoch.parse::<i64>().unwrap_or(0) <= 1 {
        return BoardError::unauthorized(unknown);
    }
    let when = at
        .as_deref()
        .map(|a| format!(" at {a}"))
        .unwrap_or_default();
    let err = BoardError::unauthorized(format!(
        "{unknown}: the store was restored to an older copy or failed over (new epoch \
         {epoch}{when}), which does not know this session or its claims; start the agent \
         again with `board run`"
    ))
    .with("epoch", epoch);
    match at {
        Some(a) => err.with("epoch_at", a),
        None => err,
    }
}

fn partial_identity(agent: Option<&str>, token: Option<&str>) -> BoardError {
    match (agent, token) {
        (Some(a), _) => BoardError::unauthorized(format!(
            "agent {} sent no token (BOARD_TOKEN), and this process is not inside its process tree",
            shown(a)
        )),
        _ => BoardError::unauthorized("a token was sent without an agent (BOARD_AGENT)"),
    }
}

/// The `lapsed` error for a request of an ended session.
fn ended(board: &Board, off: &OffReactor, s: &SessionRow) -> BoardResult<BoardError> {
    let ended = s.ended_at.clone().unwrap_or_default();
    let reason = board
        .store(off)
        .session_end_reason(&s.id)?
        .unwrap_or_default();
    Ok(BoardError::new(
        ErrorKind::Lapsed,
        format!(
            "agent session {} ended at {ended} ({reason}); its claims were expelled",
            s.id
        ),
    )
    .with("ended_at", ended)
    .with("end_reason", reason))
}

/// An agent name from the request, cut to 64 characters for messages.
fn shown(agent: &str) -> String {
    let s: String = agent.chars().take(64).collect();
    format!("{s:?}")
}
