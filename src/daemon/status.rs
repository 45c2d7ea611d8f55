//! `board status`: what the board process is and how it is configured right now.

use serde_json::{json, Value};

use super::state::Board;

/// The status document: pid, uptime (s), paths, lease settings in force (ms), config error,
/// pidfd support, and counts of sessions and tasks.
pub fn status(board: &Board) -> Value {
    let rules = board.rules();
    let cfg = board
        .config
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let config_error = board
        .config_error
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let store = board.store();
    let sessions = store.live_sessions().map(|s| s.len()).unwrap_or(0);
    // Each live agent with the branch it started on (its worktree's, with `worktree = true`).
    let agents: Vec<Value> = store
        .sessions(false, &|_| String::new())
        .unwrap_or_default()
        .into_iter()
        .map(|s| json!({ "id": s.id, "name": s.name, "branch": s.branch }))
        .collect();
    let unfinished = store.unfinished_count().unwrap_or(0);
    let goal = store.goal().ok().flatten();
    json!({
        "name": cfg.board.name,
        "pid": std::process::id(),
        "version": env!("CARGO_PKG_VERSION"),
        "protocol": crate::proto::PROTOCOL_VERSION,
        "started_at": board.started_at,
        "uptime_s": board.started.elapsed().as_secs(),
        "root": board.paths.root,
        "socket": board.paths.socket,
        "db": board.paths.db,
        "log": board.paths.log,
        "lease": {
            "duration_ms": rules.duration_ms,
            "sweep_ms": rules.sweep_ms,
            "liveness": rules.liveness,
        },
        "check_process_tree": cfg.identity.check_process_tree,
        "config_error": config_error,
        "pidfd": board.pidfd,
        "live_sessions": sessions,
        "agents": agents,
        "unfinished_tasks": unfinished,
        "goal": goal,
    })
}
