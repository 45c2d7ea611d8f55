//! A human at a terminal keeps a claim while reading, and is warned before it lapses.
//!
//! **Input counts as activity.** A person reading code in a shell pane types now and then but
//! uses almost no CPU, so the sweep's CPU test (ARCHITECTURE.md rule 3) would let the claim lapse. The
//! launcher records the terminal the agent runs on (`tty`, its own stdin); each sweep samples
//! (a) the terminal's access time — the kernel touches it when a read returns input — and (b) the
//! bytes read (`rchar` of `/proc/PID/io`) by the session's processes whose controlling terminal
//! it is. Either changing since the previous sweep is activity. (a) alone is not enough: Linux
//! moves a tty's timestamps only when they are 8 s or more out of date (`tty_update_time`), so
//! a keystroke every 3 s under a 10 s lease could go unseen for 11 s; (b) sees every keystroke
//! a shell reads. Output never counts (the warning below writes to the terminal).
//!
//! **The warning.** When a live claim is within a quarter of the lease of lapsing, the sweep
//! writes one line to the holder's terminal (non-blocking; nothing waits for a slow terminal)
//! and logs a `warn` event, which the TUI shows in its feed (and marks the claim). Once per
//! expiry: a renewal moves the expiry and re-arms it.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

use super::state::terminals::{Input, Sample, Seen};
use super::state::Board;
use crate::daemon::lease::LeaseRules;
use crate::daemon::state::OffReactor;
use crate::os::procfs::ProcTable;
use crate::proto::error::BoardResult;
use crate::store::SessionRow;

/// Linux moves a tty's access time only when it leaves its 8-second bucket
/// (`tty_update_time`), and stores whole seconds: the last input read from a terminal came
/// less than this many ms after its access time.
const ATIME_SLACK_MS: i128 = 9_000;

/// Samples session `row`'s terminal `tty` now: the sample, its access time (ms since the
/// epoch) and whether it changed since the previous look. None when the terminal cannot be read.
fn look(board: &Board, table: &ProcTable, row: &SessionRow, tty: &str) -> Option<(Seen, i128)> {
    let meta = std::fs::metadata(tty).ok()?;
    let atime_ns = i128::from(meta.atime()) * 1_000_000_000 + i128::from(meta.atime_nsec());
    let rdev = meta.rdev();
    // The agent's tree, not the launcher's own reads (it talks to the board and reads /proc).
    let root = row.agent.map(|(pid, _)| pid);
    let reads = root.map_or(0, |root| {
        let mut pids = table.descendants_pruned(root, &|_| false);
        pids.push(root);
        pids.into_iter()
            .filter(|pid| controlling_tty(*pid) == Some(rdev))
            .map(read_bytes)
            .sum()
    });
    let sample = Sample { atime_ns, reads };
    let now_ms = board.now_ms();
    let seen = board.terminals().record(&row.id, sample, now_ms);
    Some((seen, atime_ns / 1_000_000))
}

/// Whether session `row`'s terminal `tty` got input since the previous sweep (none at the
/// first sample, and when the terminal cannot be read).
pub fn input_since_last_sweep(
    board: &Board,
    table: &ProcTable,
    row: &SessionRow,
    tty: &str,
) -> Input {
    if look(board, table, row, tty).is_none() {
        return Input::default();
    }
    board.terminals().take_input(&row.id)
}

/// How long (ms) nobody has typed in session `row`'s terminal `tty`, at least: the larger of
/// what its access time proves (input comes less than `ATIME_SLACK_MS` after it) and what
/// this board's looks prove (no change since the last changed look, or since the first look).
/// Looks now. 0 when the terminal cannot be read.
pub fn quiet_ms(board: &Board, table: &ProcTable, row: &SessionRow, tty: &str) -> i64 {
    let Some((seen, atime_ms)) = look(board, table, row, tty) else {
        return 0;
    };
    let wall_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i128)
        .unwrap_or(0);
    let by_atime = i64::try_from(wall_ms - atime_ms - ATIME_SLACK_MS).unwrap_or(0);
    let by_looks = board.now_ms() - seen.changed_ms.unwrap_or(seen.first_ms);
    by_atime.max(by_looks).max(0)
}

/// `tty_nr` of `/proc/PID/stat` (field 7: the device number of the controlling terminal, in the
/// kernel's `new_encode_dev` form, the same `st_rdev` uses), if it has one.
fn controlling_tty(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    // After the command: field 3 is the state, so field 7 is the fifth word.
    let tty: u64 = rest.split_whitespace().nth(4)?.parse().ok()?;
    (tty != 0).then_some(tty)
}

/// `rchar` of `/proc/PID/io`: bytes the process has read (0 when it cannot be read).
fn read_bytes(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("rchar:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The part of the lease left when the warning comes: a quarter (at 75 % of the lease).
fn warn_window_ms(rules: &LeaseRules) -> i64 {
    rules.duration_ms / 4
}

/// Warns the holder of every live claim within a quarter of the lease of lapsing, once per expiry:
/// a line on its terminal and a `warn` event.
pub fn warn_before_lapse(board: &Board, off: &OffReactor, rules: &LeaseRules) -> BoardResult<()> {
    let now = board.now_ms();
    let window = warn_window_ms(rules);
    let claims = board.store(off).live_claims_with_tty()?;
    let mut warned = board.terminals().warned();
    warned.retain(|k, _| claims.iter().any(|c| (c.task, c.generation) == *k));
    for c in claims {
        let left = c.expires_ms - now;
        if left <= 0 || left > window || warned.get(&(c.task, c.generation)) == Some(&c.expires_ms)
        {
            continue;
        }
        warned.insert((c.task, c.generation), c.expires_ms);
        let secs = (left + 999) / 1000;
        let reason = format!(
            "claim on #{} lapses in {secs} s unless renewed (input in its terminal or any board call renews it)",
            c.task
        );
        let ev = board.store(off).record(
            crate::store::EventKind::Warn,
            Some(c.task),
            Some(&c.agent),
            Some(c.generation),
            &reason,
        )?;
        board.publish(ev);
        if let Some(tty) = &c.tty {
            write_line(
                tty,
                &format!(
                    "[board] your claim on task #{} lapses in {secs} s: type anything here or run a board command to keep it",
                    c.task
                ),
            );
        }
    }
    Ok(())
}

/// Time (ms) until the next warning is due, if any claim still has one ahead.
pub fn until_next_warning(board: &Board, off: &OffReactor, rules: &LeaseRules) -> Option<i64> {
    let now = board.now_ms();
    let window = warn_window_ms(rules);
    let claims = board.store(off).live_claims_with_tty().ok()?;
    let warned = board.terminals().warned();
    claims
        .iter()
        .filter(|c| warned.get(&(c.task, c.generation)) != Some(&c.expires_ms))
        .map(|c| c.expires_ms - window - now)
        .filter(|d| *d > 0)
        .min()
}

/// Writes one line to a terminal without ever blocking (a full or stopped terminal drops it).
/// Output only: nothing reaches the program reading the terminal, whatever the text.
pub fn write_line(tty: &str, text: &str) {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(nix::libc::O_NOCTTY | nix::libc::O_NONBLOCK)
        .open(tty);
    match file {
        Ok(mut f) => {
            if let Err(e) = f.write_all(format!("\r\n{text}\r\n").as_bytes()) {
                tracing::debug!(tty, error = %e, "could not write the lapse warning");
            }
        }
        Err(e) => {
            tracing::debug!(tty, error = %e, "could not open the terminal for the lapse warning")
        }
    }
}
