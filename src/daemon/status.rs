//! `board status`: what the board process is and how it is configured right now.

use super::state::Board;
use crate::daemon::state::OffReactor;
use crate::proto::results::{LeaseSettings, StatusAgent, StatusResult};

/// The status document: pid, uptime (s), paths, lease settings in force (ms), config error,
/// pidfd support, and counts of sessions and tasks.
pub fn status(board: &Board, off: &OffReactor) -> StatusResult {
    let rules = board.rules();
    let cfg = board.config().clone();
    let config_error = board.config_error();
    let store = board.store(off);
    let sessions = store.live_sessions().map(|s| s.len()).unwrap_or(0);
    // Each live agent with the branch it started on (its worktree's, with `worktree = true`).
    let agents: Vec<StatusAgent> = store
        .sessions(Some(0), &|_| None)
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.ended_at.is_none())
        .map(|s| StatusAgent {
            id: s.id,
            name: s.name,
            branch: s.branch,
        })
        .collect();
    let unfinished = store.unfinished_count().unwrap_or(0);
    let goal = store.goal().ok().flatten();
    let store_info = store.describe();
    let hosts = store.hosts().unwrap_or_default();
    let liveness = serde_json::to_value(rules.liveness)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    StatusResult {
        name: cfg.board.name.clone(),
        pid: std::process::id(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        protocol: crate::proto::PROTOCOL_VERSION,
        started_at: board.started().1.to_string(),
        uptime_s: board.started().0.elapsed().as_secs(),
        root: board.paths().root.display().to_string(),
        socket: board.paths().socket.display().to_string(),
        db: store_info.location.clone(),
        log: board.paths().log.display().to_string(),
        lease: LeaseSettings {
            duration_ms: rules.duration_ms,
            sweep_ms: rules.sweep_ms,
            liveness,
        },
        check_process_tree: cfg.identity.check_process_tree,
        config_error,
        pidfd: board.pidfd(),
        live_sessions: sessions as u64,
        agents,
        unfinished_tasks: unfinished,
        goal,
        store: store_info,
        store_unreachable: board.store_unreachable(),
        hosts,
    }
}
