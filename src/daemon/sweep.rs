//! The liveness sweep (ARCHITECTURE.md rule 3): every `lease.sweep`, look at each live agent session's
//! processes; expel the dead, hold the stopped, renew those showing progress; then lapse every
//! claim whose expiry has passed.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use super::state::{Board, OffReactor};
use super::{terminal, watchers};
use crate::daemon::lease::{LeaseRules, Observation, Verdict};
use crate::os::procfs::{self, Liveness, ProcTable};
use crate::proto::error::BoardResult;
use crate::store::{AgentState, Generation, SessionRow, TaskId};

/// Runs the sweep until the board stops. The interval is re-read after each sweep, so a
/// `board.toml` edit applies without restart.
pub async fn run(board: Arc<Board>) {
    loop {
        // Store reads and /proc scans block: every step runs on the blocking pool.
        let every = match board.blocking(|b, off| next_sweep_in(b, off)).await {
            Ok(d) => d,
            Err(e) => {
                tracing::error!(error = %e, "could not time the next sweep");
                Duration::from_millis(board.rules().sweep_ms.max(1) as u64)
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = board.sweep_changed().notified() => continue,
        }
        match board.blocking(sweep_once).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "sweep failed"),
            Err(e) => tracing::error!(error = %e, "sweep task failed"),
        }
    }
}

/// Time to the next sweep: the sweep interval, or sooner when a live claim expires before that,
/// so a claim lapses at its expiry (not up to one interval late) and a claim granted under a
/// shorter sweep interval than the one now in force is still looked at before it runs out.
fn next_sweep_in(board: &Board, off: &OffReactor) -> Duration {
    let interval = board.rules().sweep_ms.max(1);
    let until_expiry = match board.store(off).earliest_expiry() {
        Ok(Some(e)) => (e - board.now_ms()).max(10),
        _ => interval,
    };
    let until_warning =
        terminal::until_next_warning(board, off, &board.rules()).unwrap_or(interval);
    Duration::from_millis(interval.min(until_expiry).min(until_warning.max(10)) as u64)
}

/// One sweep. Returns the sessions whose claims it renewed. Each renewal is logged with its
/// cause through [`Board::log_renewal`] (once per cause per lease: a renew event every sweep
/// per agent would drown the feed).
pub fn sweep_once(board: &Arc<Board>, off: &OffReactor) -> BoardResult<BTreeSet<String>> {
    // A sweep far later than scheduled means the board was not running: that time must not
    // lapse anything.
    board.check_stall(off)?;
    let rules = board.rules();
    let sessions = board.store(off).live_sessions()?;
    // One pass over /proc answers every session's liveness and CPU time: reading the whole of
    // /proc once per session made a sweep of 200 sessions cost hundreds of milliseconds.
    let table = ProcTable::scan();
    let mut due = Vec::new();
    let mut idle_holders = Vec::new();
    let mut causes = HashMap::new();
    for row in &sessions {
        let (obs, talk_source) = observe_session(board, off, &table, row)?;
        if obs.idle {
            idle_holders.push((row.id.as_str(), obs));
        }
        match rules.sweep_verdict(&obs) {
            Verdict::Expel(reason) => expel_exited(board, off, row, &reason)?,
            Verdict::Renew => {
                due.push(row.id.as_str());
                let cause = match (&talk_source, obs.waiting) {
                    (Some(source), false) => source.clone(),
                    _ => rules.renew_cause(&obs).to_string(),
                };
                causes.insert(row.id.as_str(), cause);
            }
            Verdict::NoRenew => {}
        }
    }
    let renewed = renew_due(board, off, &rules, &due, &causes)?;
    nudge_idle_holders(board, off, &rules, &idle_holders)?;
    terminal::warn_before_lapse(board, off, &rules)?;
    let now = board.now_checked(off)?;
    if board.store(off).any_due(now)? {
        let ev = board.store(off).lapse_due(now, rules.duration_ms)?;
        board.publish(ev);
    }
    Ok(renewed)
}

/// What the sweep sees of session `row` (its processes in `table`, its terminal, what the
/// board remembers of its requests), and what its last request since the previous sweep was
/// (None: it made none).
fn observe_session(
    board: &Board,
    off: &OffReactor,
    table: &ProcTable,
    row: &SessionRow,
) -> BoardResult<(Observation, Option<String>)> {
    let (process, cpu) = observe(board, table, row);
    let (talk_source, prev_cpu, waiting) = board.take_sweep_sample(&row.id, cpu, process);
    let talked = talk_source.is_some();
    // `!=`, not `>`: a helper reaped mid-scan can make the tree's total dip for one sample.
    let cpu_advanced = matches!((prev_cpu, cpu), (Some(p), Some(c)) if c != p);
    // Input in the agent's terminal is progress too: a person reading code types now and
    // then but burns no CPU (see `terminal`).
    let input = match board.store(off).session_tty(&row.id)? {
        Some(tty) => terminal::input_since_last_sweep(board, table, row, &tty),
        None => Default::default(),
    };
    // After a finished turn only input read from the terminal itself counts: an idle
    // CLI keeps reading files and pipes (Claude Code: ~1 KB every few seconds) as it
    // keeps using CPU.
    let idle = board.is_idle(&row.id) && !end_idle_on_input(board, off, &row.id, input.tty)?;
    let typed = match idle {
        true => input.tty,
        false => input.any,
    };
    let obs = Observation {
        process,
        cpu_advanced,
        talked,
        waiting,
        idle,
        typed,
    };
    Ok((obs, talk_source))
}

/// Expels session `row`, which the sweep found gone, with the best reason known: its agent's
/// wait status when it can still be read, else `reason`; not at all while its launcher is
/// reporting the exit (see [`agent_exit`]).
fn expel_exited(
    board: &Board,
    off: &OffReactor,
    row: &SessionRow,
    reason: &str,
) -> BoardResult<()> {
    match agent_exit(board, row) {
        AgentExit::Status(status) => {
            board.expel(off, &row.id, &status)?;
        }
        AgentExit::Reporting => {}
        AgentExit::Unknown => {
            board.expel(off, &row.id, reason)?;
        }
    }
    Ok(())
}

/// Renews the claims of the sessions `due` in one write transaction (ARCHITECTURE.md rule
/// 10) and logs each renewal with its cause (`causes`); returns the sessions whose claims it
/// renewed.
fn renew_due(
    board: &Board,
    off: &OffReactor,
    rules: &LeaseRules,
    due: &[&str],
    causes: &HashMap<&str, String>,
) -> BoardResult<BTreeSet<String>> {
    let renewed: BTreeSet<String> = board
        .renew_many(off, due, board.now_ms(), rules)?
        .into_iter()
        .collect();
    for agent in &renewed {
        if let Some(cause) = causes.get(agent.as_str()) {
            let text = format!("sweep renewed its claims ({cause})");
            board.log_renewal(off, agent, cause, None, &text)?;
        }
    }
    Ok(renewed)
}

/// Input in the terminal of an agent whose turn finished ends `idle`, as a board call does
/// (a person took over, or the agent's CLI read a prompt). Whether it ended it.
fn end_idle_on_input(
    board: &Board,
    off: &OffReactor,
    agent: &str,
    typed: bool,
) -> BoardResult<bool> {
    if !typed {
        return Ok(false);
    }
    board.store(off).set_idle(agent, None)?;
    board.set_idle_flag(agent, false);
    Ok(true)
}

/// Rule 12, last sentence: each session whose CLI said its turn finished while it holds a
/// live claim is nudged once per claim — a `warn` event for the feed and the log, and one
/// line at its prompt (its pane or terminal, see [`super::deliver`]); the sweep no longer
/// renews it by CPU, so the claim lapses one lease after its last act unless it acts.
fn nudge_idle_holders(
    board: &Board,
    off: &OffReactor,
    rules: &LeaseRules,
    idle: &[(&str, Observation)],
) -> BoardResult<()> {
    let claims = board.store(off).live_claims_with_tty()?;
    board.mailbox().keep_nudged(
        &claims.iter().map(|c| (c.task, c.generation)).collect(),
        &claims.iter().map(|c| c.agent.as_str()).collect(),
    );
    let now = board.now_ms();
    for (agent, obs) in idle {
        let held: Vec<_> = claims.iter().filter(|c| c.agent == *agent).collect();
        let nudged = held
            .iter()
            .all(|c| board.mailbox().nudged(c.task, c.generation));
        if !rules.nudge_due(obs, !held.is_empty(), nudged) {
            continue;
        }
        let tasks = held
            .iter()
            .map(|c| format!("#{}", c.task))
            .collect::<Vec<_>>()
            .join(", ");
        let secs = held
            .iter()
            .map(|c| (c.expires_ms - now + 999) / 1000)
            .max()
            .unwrap_or(0)
            .max(0);
        for c in &held {
            let reason = format!(
                "{agent} finished its turn holding #{}: no longer renewed by its CPU; the claim lapses in {secs} s unless it acts (nudged)",
                c.task
            );
            let ev = board.store(off).record(
                crate::store::EventKind::Warn,
                Some(c.task),
                Some(agent),
                Some(c.generation),
                &reason,
            )?;
            board.publish(ev);
        }
        let line = format!("board: you hold {tasks}: finish it, release it, or ask (board wait)");
        let ids: Vec<(TaskId, Generation)> = held.iter().map(|c| (c.task, c.generation)).collect();
        board.mailbox().nudge(agent, &ids, line);
    }
    Ok(())
}

/// What the sweep can tell about an agent that exited while its launcher lives.
enum AgentExit {
    /// Not yet reaped: its wait status gives the real reason (`exited (status 3)`).
    Status(String),
    /// Already reaped by the launcher, which is reporting the status (`session.exit`); the
    /// agent's watcher bounds that wait. The sweep leaves the session to them.
    Reporting,
    /// Anything else: the sweep's own reason stands.
    Unknown,
}

/// A sweep that runs between the agent's exit and its launcher's report must not expel with a
/// vaguer reason (`process gone`) than the one the report carries.
fn agent_exit(board: &Board, row: &SessionRow) -> AgentExit {
    let alive = |(pid, start): (i32, u64)| {
        matches!(
            procfs::liveness(pid, start),
            Liveness::Alive | Liveness::Stopped
        )
    };
    let (Some(agent), Some(launcher)) = (row.agent, row.launcher) else {
        return AgentExit::Unknown;
    };
    if row.boot_id != board.boot_id() || !alive(launcher) {
        return AgentExit::Unknown;
    }
    match procfs::liveness(agent.0, agent.1) {
        Liveness::Zombie => match procfs::read_stat(agent.0).ok().and_then(|s| s.exit_code) {
            Some(status) => AgentExit::Status(watchers::decode_wait_status(status)),
            None => AgentExit::Unknown,
        },
        Liveness::Gone if board.pidfd() => AgentExit::Reporting,
        _ => AgentExit::Unknown,
    }
}

/// The state of a session's processes and the CPU ticks of the agent's tree. A session from
/// another boot, or whose launcher or pane is gone, counts as gone.
fn observe(board: &Board, table: &ProcTable, row: &SessionRow) -> (Liveness, Option<u64>) {
    if row.boot_id != board.boot_id() {
        return (Liveness::Gone, None);
    }
    let gone = |p: Option<(i32, u64)>| {
        p.is_some_and(|(pid, st)| {
            matches!(table.liveness(pid, st), Liveness::Gone | Liveness::Zombie)
        })
    };
    if gone(row.launcher) || gone(row.pane.as_ref().map(|p| (p.1, p.2))) {
        return (Liveness::Gone, None);
    }
    let Some((pid, start)) = row.agent.or(row.launcher) else {
        return (Liveness::Gone, None);
    };
    let state = table.liveness(pid, start);
    // Count from the launcher when there is one: helpers the agent double-forked were re-parented
    // to it (it is a subreaper), and their work is the agent's progress too.
    let cpu_root = row.launcher.map(|l| l.0).unwrap_or(pid);
    // The board itself may be in that tree (autostarted from inside the agent and adopted by
    // the launcher): its own work is not the agent's progress.
    let me = std::process::id() as i32;
    let cpu =
        (state == Liveness::Alive).then(|| table.tree_cpu_ticks_pruned(cpu_root, |p| p == me));
    (state, cpu)
}

/// The state `board agents` shows for a live session as its processes say: `starting`,
/// `stopped` or `gone`; None while it runs (the store then tells `working`, `idle` and
/// `needs_attention` apart).
pub fn describe(board: &Board, row: &SessionRow) -> Option<AgentState> {
    let Some((pid, start)) = row.agent.or(row.launcher) else {
        return Some(AgentState::Starting);
    };
    if row.boot_id != board.boot_id() {
        return Some(AgentState::Gone);
    }
    match procfs::liveness(pid, start) {
        Liveness::Alive => None,
        Liveness::Stopped => Some(AgentState::Stopped),
        Liveness::Zombie | Liveness::Gone => Some(AgentState::Gone),
    }
}
