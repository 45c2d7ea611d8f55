//! The schema of the PostgreSQL store: `migrations/postgres/NNNN_*.sql`, applied in order by
//! this small runner. Each pending migration runs in one transaction with its row in
//! `schema_migrations`, under an advisory lock, so boards of several hosts starting at once
//! apply it exactly once (PostgreSQL's DDL is transactional). A migration crate was not worth
//! its dependencies for this: the embedded store's `rusqlite_migration` speaks only SQLite.

use super::{col, Conn};
use crate::proto::error::{BoardError, BoardResult};

/// The migrations, in order: (version, SQL).
const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        include_str!("../../../migrations/postgres/0001_init.sql"),
    ),
    (
        2,
        include_str!("../../../migrations/postgres/0002_claim_in_one_round_trip.sql"),
    ),
    (
        3,
        include_str!("../../../migrations/postgres/0003_notify_after_commit.sql"),
    ),
    (
        4,
        include_str!("../../../migrations/postgres/0004_claim_and_done_in_one_round_trip.sql"),
    ),
    (
        5,
        include_str!("../../../migrations/postgres/0005_questions.sql"),
    ),
    (
        6,
        include_str!("../../../migrations/postgres/0006_session_names.sql"),
    ),
    (
        7,
        include_str!("../../../migrations/postgres/0007_host_regained.sql"),
    ),
    (
        8,
        include_str!("../../../migrations/postgres/0008_review_and_land.sql"),
    ),
    (
        9,
        include_str!("../../../migrations/postgres/0009_labels_and_assignment.sql"),
    ),
    (
        10,
        include_str!("../../../migrations/postgres/0010_review_per_task.sql"),
    ),
];

/// The advisory lock key migrations take ("migrate"), distinct from the write lock.
const MIGRATE_LOCK: i64 = 0x006D_6967_7261_7465;

/// Applies every pending migration (the server's notice that `schema_migrations` exists
/// already is not asked for: every connect would log it). Errors: the refused statement (`internal`), or
/// `unavailable` when the server is lost meanwhile.
pub(super) fn run(c: &mut Conn) -> BoardResult<()> {
    c.batch(&format!(
        "BEGIN; SELECT pg_advisory_xact_lock({MIGRATE_LOCK});
         SET LOCAL client_min_messages = warning;
         CREATE TABLE IF NOT EXISTS schema_migrations (
             version    bigint PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now())"
    ))?;
    let applied = (|| -> BoardResult<()> {
        let r = c.one(
            "SELECT COALESCE(MAX(version), 0)::bigint FROM schema_migrations",
            &[],
        )?;
        let current: i64 = col(&r, 0)?;
        for (version, sql) in MIGRATIONS {
            if *version > current {
                c.batch(sql).map_err(|e| {
                    BoardError::internal(format!(
                        "migrating the PostgreSQL store to version {version}: {}",
                        e.message
                    ))
                    .with(
                        "sqlstate",
                        e.data.get("sqlstate").cloned().unwrap_or_default(),
                    )
                })?;
                c.exec(
                    "INSERT INTO schema_migrations (version) VALUES ($1)",
                    &[version],
                )?;
            }
        }
        Ok(())
    })();
    match applied {
        Ok(()) => c.batch("COMMIT"),
        Err(e) => {
            let _ = c.batch("ROLLBACK");
            Err(e)
        }
    }
}
