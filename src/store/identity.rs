//! Generations never go backwards (ARCHITECTURE.md rule 8a), not even across a restored backup.
//!
//! A counter kept only inside `board.db` moves back with the file: restore yesterday's copy and
//! a task that reached generation 4 is granted generation 2 again, so a fence that remembers 4
//! (a commit trailer, an external resource) would accept the old holder's writes. "Restoring an
//! old backup can move even a previously durable counter backward … use a provably new ordered
//! epoch" (the fencing seed notes; Kleppmann 2016). So the board keeps, beside the database, a
//! durable **high-water mark** in `generation.hwm` (fsynced, replaced atomically):
//!
//! ```text
//! board=3f9c…        identity of the board (also in the database's meta table)
//! epoch=2            rises whenever the store may have gone back in time
//! reserved=300       every generation ever issued is ≤ this
//! events=1234        the database's last event id: exact at a clean stop, a lower bound while running
//! state=running      or `stopped` (clean stop)
//! ```
//!
//! Writing the mark is kept off the hot path by reserving generations in blocks of
//! [`BLOCK`]: a grant writes the file only when its generation passes `reserved`.
//!
//! On start (`SqliteStore::open_board`):
//! - a database that is **behind** the mark (its last event is older than the mark's) was
//!   restored: the board opens a **new epoch** — every generation is raised to at least
//!   `reserved` (the next grant is above every generation ever issued) and every claim ends
//!   (its holder is told, `lost` with end `epoch`);
//! - after an **unclean stop** (crash, `kill -9`, power cut) claims are kept (rule 8) but new
//!   grants start above `reserved`, since the last grants may not be in the database;
//! - a **missing or 0-byte** database of a board that existed, or a database of **another
//!   board**, is refused with a message naming the file, unless `board serve --new-epoch`
//!   accepts it (a new epoch above the mark);
//! - a **foreign** SQLite file (not marked with the board's `application_id`) or a file that
//!   is not SQLite at all is always refused: the board never migrates its schema into it.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::proto::error::{BoardError, BoardResult};

/// `PRAGMA application_id` of a board's database: "BoRd".
pub const APPLICATION_ID: i32 = 0x426F_5264;

/// Generations reserved per write of the high-water mark.
pub const BLOCK: i64 = 100;

/// The high-water mark file's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// Identity of the board.
    pub board: String,
    /// Current epoch.
    pub epoch: i64,
    /// Upper bound of every generation ever issued.
    pub reserved: i64,
    /// The database's last event id (exact when `stopped`, a lower bound while running).
    pub events: i64,
    /// True after a clean stop.
    pub stopped: bool,
}

impl Mark {
    pub(crate) fn parse(text: &str, path: &Path) -> BoardResult<Mark> {
        let get = |k: &str| {
            text.lines()
                .filter_map(|l| l.split_once('='))
                .find(|(key, _)| key.trim() == k)
                .map(|(_, v)| v.trim().to_string())
        };
        let bad = |what: &str| {
            BoardError::internal(format!(
                "{} is damaged ({what}); it guards the board's generations: restore it, or move it away and start with `board serve --new-epoch`",
                path.display()
            ))
        };
        let num = |k: &str| -> BoardResult<i64> {
            get(k)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| bad(&format!("no number `{k}`")))
        };
        Ok(Mark {
            board: get("board")
                .filter(|b| !b.is_empty())
                .ok_or_else(|| bad("no `board`"))?,
            epoch: num("epoch")?,
            reserved: num("reserved")?,
            events: num("events")?,
            stopped: get("state").as_deref() == Some("stopped"),
        })
    }

    fn text(&self) -> String {
        format!(
            "# board: high-water mark of issued generations; do not edit (see README, \"Backups\")\nboard={}\nepoch={}\nreserved={}\nevents={}\nstate={}\n",
            self.board,
            self.epoch,
            self.reserved,
            self.events,
            if self.stopped { "stopped" } else { "running" }
        )
    }
}

/// The mark on disk, written durably: a temporary file, fsync, rename, fsync of the directory.
#[derive(Debug)]
pub struct MarkFile {
    /// The `generation.hwm` file beside the database.
    pub(crate) path: PathBuf,
    /// What the file says now.
    pub mark: Mark,
}

impl MarkFile {
    pub(crate) fn write(&mut self, mark: Mark) -> BoardResult<()> {
        let tmp = self.path.with_extension("hwm.tmp");
        let io = |e: std::io::Error| {
            BoardError::internal(format!("writing {}: {e}", self.path.display()))
        };
        {
            let mut f = fs::File::create(&tmp).map_err(io)?;
            f.write_all(mark.text().as_bytes()).map_err(io)?;
            f.sync_all().map_err(io)?;
        }
        fs::rename(&tmp, &self.path).map_err(io)?;
        if let Some(dir) = self.path.parent() {
            fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
        }
        self.mark = mark;
        Ok(())
    }

    /// Makes sure `generation` is covered by the reservation, writing a new block first when it
    /// is not (before the grant commits). `events` is a lower bound of the database's progress.
    pub fn reserve(&mut self, generation: i64, events: i64) -> BoardResult<()> {
        if generation <= self.mark.reserved {
            return Ok(());
        }
        let mark = Mark {
            reserved: generation + BLOCK,
            events: events.max(self.mark.events),
            stopped: false,
            ..self.mark.clone()
        };
        self.write(mark)
    }
}

/// What `SqliteStore::open_board` found and did, for the log and `board status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// A new board (no database, no mark).
    Created,
    /// The database matches the mark of its clean stop.
    Clean,
    /// The previous board did not stop cleanly: new grants start above the reservation.
    Unclean,
    /// A database without a mark (an older board version): the mark was created from it.
    Adopted,
    /// A new epoch was opened, for this reason.
    NewEpoch(String),
}
