//! `board status`: what the board process is and how it is configured right now.

use super::state::store_health::LastKnown;
use super::state::Board;
use crate::daemon::state::OffReactor;
use crate::proto::error::BoardResult;
use crate::proto::methods::{LeaseSettings, StatusAgent, StatusResult};

/// The status document: pid, uptime (s), paths, lease settings in force (ms), config error,
/// pidfd support, and counts of sessions and tasks.
pub fn status(board: &Board, off: &OffReactor) -> StatusResult {
    let rules = board.rules();
    let cfg = board.config().clone();
    let config_error = board.config_error();
    let store = board.store(off);
    let store_info = store.describe();
    let health = board.store_health();
    // While the shared store is unreachable, what `status` last read of it: each read would
    // only wait for a connect that fails.
    let known = match board.store_unreachable() {
        Some(_) => health.last_known().unwrap_or_default(),
        None => match read_store(&**store) {
            Ok(known) => {
                health.remember(known.clone());
                known
            }
            // Lost since the last heartbeat: as for an outage.
            Err(_) => health.last_known().unwrap_or_default(),
        },
    };
    drop(store);
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
        live_sessions: known.live_sessions,
        agents: known.agents,
        unfinished_tasks: known.unfinished_tasks,
        goal: known.goal,
        store: store_info,
        store_unreachable: board.store_unreachable(),
        store_unreachable_since: health.since(),
        store_last_contact: health.last_contact(),
        hosts: known.hosts,
    }
}

/// What `status` reads of the store: sessions, agents, unfinished tasks, goal, hosts.
/// Errors: the first read that failed (the store's).
fn read_store(store: &dyn crate::store::Store) -> BoardResult<LastKnown> {
    let live_sessions = store.live_sessions()?.len() as u64;
    // Each live agent with the branch it started on (its worktree's, with `worktree = true`).
    let agents: Vec<StatusAgent> = store
        .sessions(Some(0), &|_| None)?
        .into_iter()
        .filter(|s| s.ended_at.is_none())
        .map(|s| StatusAgent {
            id: s.id,
            name: s.name,
            branch: s.branch,
        })
        .collect();
    Ok(LastKnown {
        live_sessions,
        agents,
        unfinished_tasks: store.unfinished_count()?,
        goal: store.goal()?,
        hosts: store.hosts()?,
    })
}
