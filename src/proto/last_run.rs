//! `.board/last-run.json`: when the board process last started and, once it stopped cleanly,
//! when and why. `board status` reads it when no board runs, to say when and why the last one
//! stopped; a record without a stop whose process is gone means that board crashed or was
//! killed. Best effort: a record that cannot be written is logged, never fatal.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::proto::config::Paths;

/// File name of the record in the data directory.
pub const FILE: &str = "last-run.json";

/// The record of the last board process of a data directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastRun {
    /// Its process id.
    pub pid: u32,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// RFC 3339 UTC; None while it runs, or when it never stopped cleanly.
    #[serde(default)]
    pub stopped_at: Option<String>,
    /// Why it stopped (`board stop`, `SIGTERM`, `SIGINT`, or the error it stopped with).
    #[serde(default)]
    pub reason: Option<String>,
}

/// Where the record of the board of `paths` lives.
pub fn path(paths: &Paths) -> PathBuf {
    paths.data_dir.join(FILE)
}

/// Records that this process started serving.
pub fn started(paths: &Paths) {
    write(
        &path(paths),
        &LastRun {
            pid: std::process::id(),
            started_at: now_wall(),
            stopped_at: None,
            reason: None,
        },
    );
}

/// Records that this process stopped cleanly, and why; keeps the start time it recorded.
pub fn stopped(paths: &Paths, reason: &str) {
    let file = path(paths);
    let started_at = read(&file)
        .filter(|r| r.pid == std::process::id())
        .map_or_else(now_wall, |r| r.started_at);
    write(
        &file,
        &LastRun {
            pid: std::process::id(),
            started_at,
            stopped_at: Some(now_wall()),
            reason: Some(reason.chars().take(500).collect()),
        },
    );
}

/// The record at `file`, if there is a readable one.
pub fn read(file: &Path) -> Option<LastRun> {
    let text = std::fs::read_to_string(file).ok()?;
    serde_json::from_str(&text).ok()
}

/// What `board status` says about the last board when none runs: when and why it stopped, or
/// that it stopped without saying so (crashed or killed). None without a record.
pub fn describe(run: &LastRun) -> String {
    match (&run.stopped_at, &run.reason) {
        (Some(at), Some(why)) => format!("the last board (pid {}) stopped at {at}: {why}", run.pid),
        (Some(at), None) => format!("the last board (pid {}) stopped at {at}", run.pid),
        (None, _) => format!(
            "the last board (pid {}, started at {}) did not stop cleanly: it crashed or was \
             killed (its log says more)",
            run.pid, run.started_at
        ),
    }
}

/// Now, as an RFC 3339 UTC time with milliseconds (the form the store's times take).
fn now_wall() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

fn write(file: &Path, run: &LastRun) {
    let text = match serde_json::to_string_pretty(run) {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "cannot encode the last-run record");
            return;
        }
    };
    // Through a temporary file and a rename: a reader never sees half a record.
    let tmp = file.with_extension("json.tmp");
    let result =
        std::fs::write(&tmp, format!("{text}\n")).and_then(|()| std::fs::rename(&tmp, file));
    if let Err(e) = result {
        tracing::warn!(error = %e, file = %file.display(), "cannot write the last-run record");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_without_a_stop_reads_as_a_crash_and_one_with_a_stop_names_its_reason() {
        let mut run = LastRun {
            pid: 42,
            started_at: "2026-12-03T10:00:00.000Z".into(),
            stopped_at: None,
            reason: None,
        };
        assert!(describe(&run).contains("did not stop cleanly"));
        run.stopped_at = Some("2026-12-03T11:00:00.000Z".into());
        run.reason = Some("board stop".into());
        assert_eq!(
            describe(&run),
            "the last board (pid 42) stopped at 2026-12-03T11:00:00.000Z: board stop"
        );
    }
}
