//! Opening the SQLite database against the high-water mark (see the store's `identity`
//! module for the rule): what kind of file it is, new epochs, unclean stops, the clean stop.

use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};

use super::lite::Lite;
use super::*;
use crate::proto::error::{BoardError, BoardResult};
use crate::store::db::Db;
use crate::store::identity::{Mark, MarkFile, Opened, APPLICATION_ID};

fn refuse(msg: String) -> BoardError {
    BoardError::internal(msg)
}

/// What kind of file `db` is, without creating or changing it.
enum Found {
    Missing,
    Empty,
    Board,
    /// A board's database of a version before the mark (application_id not set yet).
    LegacyBoard,
}

// The store is the one place that opens the database; this look is read-only.
#[allow(clippy::disallowed_methods)]
fn inspect(db: &Path) -> BoardResult<Found> {
    let meta = match fs::metadata(db) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(refuse(format!("cannot read {}: {e}", db.display()))),
    };
    if meta.len() == 0 {
        return Ok(Found::Empty);
    }
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| refuse(format!("cannot open {}: {e}", db.display())))?;
    let not_sqlite = |e: rusqlite::Error| {
        refuse(format!(
            "{} is not a board's database (not a SQLite database: {e}); move it away or set another `data_dir`",
            db.display()
        ))
    };
    let app: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(not_sqlite)?;
    if app == APPLICATION_ID {
        return Ok(Found::Board);
    }
    let tables: Vec<String> = {
        let mut st = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .map_err(not_sqlite)?;
        let rows = st.query_map([], |r| r.get(0)).map_err(not_sqlite)?;
        rows.collect::<Result<_, _>>().map_err(not_sqlite)?
    };
    // A SQLite file without a single table (created, never written) holds nothing.
    if app == 0 && tables.is_empty() {
        return Ok(Found::Empty);
    }
    let has = |t: &str| tables.iter().any(|x| x == t);
    if app == 0
        && ["meta", "tasks", "claims", "sessions", "events"]
            .iter()
            .all(|t| has(t))
    {
        return Ok(Found::LegacyBoard);
    }
    let shown: Vec<&str> = tables.iter().take(8).map(String::as_str).collect();
    Err(refuse(format!(
        "{} is not a board's database (application_id {app:#x}, tables: {}); the board never migrates its schema into a foreign file: move it away or set another `data_dir`",
        db.display(),
        if shown.is_empty() { "none".to_string() } else { shown.join(", ") }
    )))
}

fn new_board_id() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl SqliteStore {
    /// Opens the board's database `db` under the high-water mark `data_dir/generation.hwm`
    /// (see the module docs for every case). `new_epoch` (`board serve --new-epoch`) accepts a
    /// missing, empty or other board's database by opening a new epoch above the mark.
    /// Errors (`internal`, naming the file and what was found): a foreign or non-SQLite file;
    /// a missing, 0-byte or other board's database without `new_epoch`; a damaged mark.
    pub fn open_board(db: &Path, new_epoch: bool) -> BoardResult<(SqliteStore, Opened)> {
        let dir = db.parent().unwrap_or(Path::new("."));
        let hwm = dir.join("generation.hwm");
        let found = inspect(db)?;
        let mark = read_mark(&hwm)?;
        if let (Some(m), false) = (&mark, new_epoch) {
            refuse_missing(db, &hwm, m, &found)?;
        }
        if matches!(found, Found::Empty) {
            // SQLite would take a 0-byte file as a new database; only `--new-epoch` gets here.
            fs::remove_file(db)
                .map_err(|e| refuse(format!("replacing the empty {}: {e}", db.display())))?;
        }
        let mut store = SqliteStore::open(db)?;
        store
            .conn
            .pragma_update(None, "application_id", APPLICATION_ID)?;
        let db_board = store.meta("board_id")?;
        let last_event = store.last_event_id()?;
        let max_gen: i64 =
            store
                .conn
                .query_row("SELECT COALESCE(MAX(generation), 0) FROM tasks", [], |r| {
                    r.get(0)
                })?;
        let (opened, mut mark) = match mark {
            None => first_mark(&found, db_board.clone(), max_gen, last_event),
            Some(m) => {
                let seen = Seen {
                    db,
                    hwm: &hwm,
                    found: &found,
                    db_board: db_board.as_deref(),
                    last_event,
                    new_epoch,
                };
                (judge(&seen, &m)?, m)
            }
        };
        mark.reserved = mark.reserved.max(max_gen);
        if db_board.as_deref() != Some(mark.board.as_str()) {
            store.set_meta("board_id", &mark.board)?;
        }
        store.settle_epoch(&opened, mark, hwm)?;
        Ok((store, opened))
    }

    /// Moves to a new epoch or raises the generation floor as `opened` says, then writes the
    /// high-water mark `mark` to `hwm` and keeps it for the grants to come.
    fn settle_epoch(&mut self, opened: &Opened, mut mark: Mark, hwm: PathBuf) -> BoardResult<()> {
        match opened {
            Opened::NewEpoch(reason) => {
                mark.epoch += 1;
                self.open_epoch(mark.epoch, mark.reserved, reason)?;
            }
            Opened::Unclean => self.set_meta("generation_floor", &mark.reserved.to_string())?,
            _ => {}
        }
        self.set_meta("epoch", &mark.epoch.to_string())?;
        mark.stopped = false;
        mark.events = mark.events.min(self.last_event_id()?);
        let mut file = MarkFile {
            path: hwm,
            mark: mark.clone(),
        };
        file.write(mark)?;
        self.mark = Some(std::sync::Arc::new(std::sync::Mutex::new(file)));
        Ok(())
    }

    pub(in crate::store) fn mark_clean_stop(&mut self) -> BoardResult<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        let last = self.last_event_id()?;
        let Some(file) = &self.mark else {
            return Ok(());
        };
        let mut f = file.lock().unwrap_or_else(|p| p.into_inner());
        let mark = Mark {
            events: last,
            stopped: true,
            ..f.mark.clone()
        };
        f.write(mark)
    }

    /// The epoch and reserved high-water mark in force, for `board status`.
    pub fn mark(&self) -> Option<Mark> {
        self.mark
            .as_ref()
            .map(|f| f.lock().unwrap_or_else(|p| p.into_inner()).mark.clone())
    }

    /// A new epoch (in one transaction): every task's generation is raised to at least `floor`
    /// (so the next grant is above every generation ever issued), later grants start above it
    /// too, and every live claim ends (`epoch`; its holder is told on its next call).
    fn open_epoch(&mut self, epoch: i64, floor: i64, reason: &str) -> BoardResult<Events> {
        let (_, ev) = self.tx(|tx, ev| {
            let why = format!("new epoch {epoch}: {reason}; every claim ended");
            crate::store::procs::end_claims_for_epoch(&mut Lite::new(tx), ev, &why)?;
            tx.execute(
                "UPDATE tasks SET generation = MAX(generation, ?1)",
                params![floor],
            )?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('generation_floor', ?1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![floor.to_string()],
            )?;
            Lite::new(tx).emit(ev, EventKind::Epoch, None, None, Some(floor), &why)?;
            Ok(())
        })?;
        Ok(ev)
    }
}

/// The high-water mark at `hwm`, None when there is none yet. Errors: an unreadable or
/// malformed mark.
fn read_mark(hwm: &Path) -> BoardResult<Option<Mark>> {
    match fs::read_to_string(hwm) {
        Ok(t) => Ok(Some(Mark::parse(&t, hwm)?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(refuse(format!("cannot read {}: {e}", hwm.display()))),
    }
}

/// Refuses a missing or empty database where the mark `m` says a board existed (only
/// `--new-epoch` starts over).
fn refuse_missing(db: &Path, hwm: &Path, m: &Mark, found: &Found) -> BoardResult<()> {
    let what = match found {
        Found::Missing => "missing",
        Found::Empty => "empty (0 bytes)",
        _ => return Ok(()),
    };
    Err(refuse(format!(
        "{} is {what}, but this board existed ({} records board {} at epoch {}, generations up to {}): restore the database, or start a new, empty board above those generations with `board serve --new-epoch`",
        db.display(),
        hwm.display(),
        m.board,
        m.epoch,
        m.reserved
    )))
}

/// The first mark of a board that had none: created, or an existing database adopted.
fn first_mark(
    found: &Found,
    db_board: Option<String>,
    max_gen: i64,
    last_event: i64,
) -> (Opened, Mark) {
    let opened = match found {
        Found::Missing | Found::Empty => Opened::Created,
        _ => Opened::Adopted,
    };
    let mark = Mark {
        board: db_board.unwrap_or_else(new_board_id),
        epoch: 1,
        reserved: max_gen,
        events: last_event,
        stopped: false,
    };
    (opened, mark)
}

/// What a starting board found, for [`judge`].
struct Seen<'a> {
    db: &'a Path,
    hwm: &'a Path,
    found: &'a Found,
    /// The board id the database records.
    db_board: Option<&'a str>,
    /// The database's last event id.
    last_event: i64,
    /// `board serve --new-epoch`.
    new_epoch: bool,
}

/// How the database opens against the mark `m` (rule 8a). Errors: a database of another
/// board, without `--new-epoch`.
fn judge(seen: &Seen<'_>, m: &Mark) -> BoardResult<Opened> {
    let other = seen.db_board.is_some_and(|b| b != m.board);
    if other && !seen.new_epoch {
        return Err(refuse(format!(
            "{} belongs to another board ({}), not to the one {} records ({}): move it away, or accept it above this board's generations with `board serve --new-epoch`",
            seen.db.display(),
            seen.db_board.unwrap_or_default(),
            seen.hwm.display(),
            m.board
        )));
    }
    let last_event = seen.last_event;
    Ok(
        if other || matches!(seen.found, Found::Missing | Found::Empty) {
            Opened::NewEpoch(format!(
                "accepted with --new-epoch ({})",
                if other {
                    "a database of another board"
                } else {
                    "a new, empty database"
                }
            ))
        } else if last_event < m.events {
            Opened::NewEpoch(format!(
            "the database is behind {} (its last event is {last_event}, the mark says {}): it was restored from an older copy",
            seen.hwm.display(),
            m.events
        ))
        } else if m.stopped && last_event == m.events {
            Opened::Clean
        } else {
            Opened::Unclean
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(s: &mut SqliteStore, agent: &str, task: TaskId) -> i64 {
        let (c, _) = s
            .claim(agent, Some(task), Lease::until(0, 1_000_000))
            .unwrap();
        s.release(Some(agent), task, None, None, 1).unwrap();
        c.claim.generation.0
    }

    #[test]
    fn a_new_epoch_after_a_restore_issues_only_generations_above_the_mark() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("board.db");
        let (mut s, opened) = SqliteStore::open_board(&db, false).unwrap();
        assert_eq!(opened, Opened::Created);
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let a = s
            .register_session("a", "h", "boot", None, None, None)
            .unwrap()
            .0;
        assert_eq!(grant(&mut s, &a, t.id), 1);
        s.mark_clean_stop().unwrap();
        drop(s);
        fs::copy(&db, dir.path().join("backup.db")).unwrap();
        let (mut s, opened) = SqliteStore::open_board(&db, false).unwrap();
        assert_eq!(opened, Opened::Clean);
        let issued: Vec<i64> = (0..3).map(|_| grant(&mut s, &a, t.id)).collect();
        assert_eq!(issued, vec![2, 3, 4], "no jumps across a clean restart");
        s.mark_clean_stop().unwrap();
        drop(s);
        fs::copy(dir.path().join("backup.db"), &db).unwrap();
        let (mut s, opened) = SqliteStore::open_board(&db, false).unwrap();
        assert!(
            matches!(opened, Opened::NewEpoch(ref r) if r.contains("restored")),
            "{opened:?}"
        );
        assert_eq!(s.mark().unwrap().epoch, 2);
        let g = grant(&mut s, &a, t.id);
        assert!(g > 4, "generation {g} was issued before");
    }

    #[test]
    fn after_a_crash_grants_continue_above_the_reservation_and_claims_stand() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("board.db");
        let (mut s, _) = SqliteStore::open_board(&db, false).unwrap();
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let (u, _) = s.add_task("u", "", 0, &[], OPERATOR, 0).unwrap();
        let a = s
            .register_session("a", "h", "boot", None, None, None)
            .unwrap()
            .0;
        s.claim(&a, Some(t.id), Lease::until(0, 1_000_000)).unwrap();
        let reserved = s.mark().unwrap().reserved;
        drop(s); // no clean stop: a crash
        let (mut s, opened) = SqliteStore::open_board(&db, false).unwrap();
        assert_eq!(opened, Opened::Unclean);
        assert_eq!(
            s.live_claims(&a).unwrap().len(),
            1,
            "rule 8: claims survive a restart"
        );
        let (c, _) = s.claim(&a, Some(u.id), Lease::until(0, 1_000_000)).unwrap();
        assert!(c.claim.generation.0 > reserved);
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // a foreign file, made by someone else
    fn a_missing_empty_or_foreign_database_is_refused_and_new_epoch_accepts_only_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("board.db");
        let (mut s, _) = SqliteStore::open_board(&db, false).unwrap();
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let a = s
            .register_session("a", "h", "boot", None, None, None)
            .unwrap()
            .0;
        let old = grant(&mut s, &a, t.id);
        s.mark_clean_stop().unwrap();
        drop(s);
        fs::write(&db, b"").unwrap();
        let e = SqliteStore::open_board(&db, false).err().unwrap();
        assert!(
            e.message.contains("empty") && e.message.contains("board.db"),
            "{}",
            e.message
        );
        fs::remove_file(&db).unwrap();
        let e = SqliteStore::open_board(&db, false).err().unwrap();
        assert!(e.message.contains("missing"), "{}", e.message);
        assert!(!db.exists());
        let (mut s, opened) = SqliteStore::open_board(&db, true).unwrap();
        assert!(matches!(opened, Opened::NewEpoch(_)), "{opened:?}");
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let a = s
            .register_session("a", "h", "boot", None, None, None)
            .unwrap()
            .0;
        assert!(grant(&mut s, &a, t.id) > old);
        drop(s);
        let foreign = dir.path().join("other");
        fs::create_dir_all(&foreign).unwrap();
        let f = foreign.join("board.db");
        Connection::open(&f)
            .unwrap()
            .execute_batch("CREATE TABLE x (y);")
            .unwrap();
        for accept in [false, true] {
            let e = SqliteStore::open_board(&f, accept).err().unwrap();
            assert!(
                e.message.contains("not a board's database"),
                "{}",
                e.message
            );
        }
    }
}
