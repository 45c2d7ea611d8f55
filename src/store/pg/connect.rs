//! Connecting to the server: why a connect failed (an outage, or a setting to fix), the
//! backoff between attempts, and how the store names itself (never with its password).

use std::time::{Duration, Instant};

use super::PgStore;
use crate::proto::error::{BoardError, ErrorKind};

/// The backoff after a failed connect (see `PgStore::retry`).
pub(super) struct Retry {
    /// No new attempt before this instant.
    pub(super) at: Instant,
    /// The current backoff.
    pub(super) backoff: Duration,
    /// What the failed attempt answered, repeated (with its SQLSTATE) until the next one.
    pub(super) failure: BoardError,
    /// The pool's count of successful connects at the failure: when another connection
    /// succeeds meanwhile, the next attempt comes at once.
    pub(super) connects: u64,
}

impl PgStore {
    /// Why a connect failed, as the caller must react to it: a setting to fix (the URL lacks
    /// a password the server asks for, the credentials or the database are refused) is
    /// `usage` (exit 2) naming what is wrong; anything else (no server, a server starting,
    /// stopping or refusing connections for now: SQLSTATE 08…, 53…, 55000, 57P…) is
    /// `unavailable` (exit 8), whatever its SQLSTATE.
    pub(super) fn connect_error(&self, e: &postgres::Error) -> BoardError {
        let at = &self.location;
        if let Some(db) = e.as_db_error() {
            let code = db.code().code();
            let what = match code {
                "28P01" => Some("the password is refused"),
                "28000" => Some("the user is not allowed in"),
                "3D000" => Some("the database does not exist"),
                "42501" => Some("the user may not connect to the database"),
                _ => None,
            };
            return match what {
                Some(what) => BoardError::usage(format!(
                    "the PostgreSQL store at {at} refused the connection: {what} ({}); \
                     fix [store] url or {}",
                    db.message(),
                    crate::proto::config_store::STORE_URL_ENV
                ))
                .with("store", at.clone())
                .with("sqlstate", code),
                None => BoardError::unavailable(format!("PostgreSQL store: {}", db.message()))
                    .with("sqlstate", code),
            };
        }
        let reason = driver_reason(e);
        if e.to_string() == "invalid configuration" {
            let hint = if reason.contains("password") {
                format!(
                    "the server asks for a password and the URL has none: put it in {}",
                    crate::proto::config_store::STORE_URL_ENV
                )
            } else {
                format!(
                    "fix [store] url or {}",
                    crate::proto::config_store::STORE_URL_ENV
                )
            };
            return BoardError::usage(format!(
                "the PostgreSQL store at {at} cannot be used: {reason}; {hint}"
            ))
            .with("store", at.clone());
        }
        BoardError::unavailable(format!("PostgreSQL store: {e}: {reason}"))
    }
}

/// The server dropped the connection (class 08, or 57P01–57P03: shut down, crashed,
/// starting), as opposed to a timeout or a refused statement.
pub(super) fn connection_lost(e: &BoardError) -> bool {
    if e.kind != ErrorKind::Unavailable {
        return false;
    }
    match e.data.get("sqlstate").and_then(|v| v.as_str()) {
        Some(code) => code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03"),
        // No answer at all: the socket broke (e.g. a broken pipe on write).
        None => !e.message.contains("the last attempt failed"),
    }
}

/// The driver's reason for `e`: its own text ("invalid connection string") hides the cause
/// (the option, the value) in its source.
pub(super) fn driver_reason(e: &postgres::Error) -> String {
    match std::error::Error::source(e) {
        Some(cause) => cause.to_string(),
        None => e.to_string(),
    }
}

/// `postgres://user@host:port/db` from a parsed configuration: never the password.
pub(super) fn location(c: &postgres::Config) -> String {
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let port = c.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{}:{port}/{}",
        c.get_user().unwrap_or(""),
        hosts.join(","),
        c.get_dbname().unwrap_or("")
    )
}

/// A PostgreSQL failure. A lost or refused connection, a server shutting down or restarting,
/// a statement or idle-transaction timeout: `unavailable` (exit 8; the store names itself in
/// the message before the board shows it). Anything else the server refused: `internal`, with
/// its SQLSTATE in `data.sqlstate` (deadlocks `40P01` and serialization failures `40001` are
/// retried by the store before they get here).
impl From<postgres::Error> for BoardError {
    fn from(e: postgres::Error) -> Self {
        let Some(db) = e.as_db_error() else {
            // No answer from the server: the connection failed or is closed.
            // The driver's own text ("error connecting to server") hides the cause in its source.
            let cause = std::error::Error::source(&e)
                .map(|c| format!(": {c}"))
                .unwrap_or_default();
            return BoardError::unavailable(format!("PostgreSQL store: {e}{cause}"));
        };
        let code = db.code().code();
        // Class 08: connection exception; 57P01-57P03: shutting down, crashed, starting;
        // 57014: statement_timeout; 25P03: idle_in_transaction_session_timeout; 53300: too many
        // connections.
        let down = code.starts_with("08")
            || matches!(
                code,
                "57P01" | "57P02" | "57P03" | "57014" | "25P03" | "53300"
            );
        let msg = format!("PostgreSQL store: {}", db.message());
        let err = if down {
            BoardError::unavailable(msg)
        } else {
            BoardError::internal(msg)
        };
        err.with("sqlstate", code)
    }
}
