//! `[store]` of `board.toml`: where the board keeps its goals, tasks, claims and events.
//!
//! The embedded SQLite file (`.board/board.db`) is the default and needs nothing. Boards on
//! several hosts share one PostgreSQL database instead (`kind = "postgres"`): each host runs its
//! own `board serve`, which holds a *host session* in the store, renewed by a heartbeat; a host
//! whose heartbeat stops for `host_ttl` is declared gone by whichever host sweeps next, and its
//! agents' claims end.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::duration::Dur;

/// Environment variable that overrides `[store] url` (and selects PostgreSQL when set), so a
/// password never has to be written into a committed `board.toml`.
pub const STORE_URL_ENV: &str = "BOARD_STORE_URL";

/// Which backend keeps the board's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    /// The embedded SQLite file in the data directory (one host).
    #[default]
    Sqlite,
    /// A PostgreSQL database shared by the boards of several hosts.
    Postgres,
}

/// `[store]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// `sqlite` (default) or `postgres`.
    pub kind: StoreKind,
    /// `postgres://user@host:port/db` or a libpq key/value string (`host=/run/pg dbname=board`);
    /// `BOARD_STORE_URL` overrides it.
    pub url: Option<String>,
    /// This host's name among the boards that share the store (default: the machine's host
    /// name). Each board sharing the store needs its own: a board that starts under a name in use
    /// takes that host's session over (a board restarting on its host does exactly that).
    pub host: Option<String>,
    /// How long a host's session lasts without a heartbeat (default 30 s): a host that stops
    /// (crash, power, partition) ends its agents' claims after at most `host_ttl + heartbeat`.
    pub host_ttl: Dur,
    /// How often a board renews its host session and looks for hosts that are gone (default 5 s).
    pub heartbeat: Dur,
    /// Connections each board keeps to the store for requests (default 4, at most 32), besides
    /// the one that listens for other hosts' events: requests beyond these wait their turn.
    pub connections: usize,
}

/// Default of `[store] host_ttl`.
pub const DEFAULT_HOST_TTL: Duration = Duration::from_secs(30);
/// Default of `[store] heartbeat`.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(5);
/// Longest host name, in bytes.
const MAX_HOST: usize = 64;
/// Default of `[store] connections`.
pub const DEFAULT_CONNECTIONS: usize = 4;
/// Most `[store] connections` a board may hold.
const MAX_CONNECTIONS: usize = 32;

impl Default for StoreSection {
    fn default() -> Self {
        StoreSection {
            kind: StoreKind::Sqlite,
            url: None,
            host: None,
            host_ttl: Dur(DEFAULT_HOST_TTL),
            heartbeat: Dur(DEFAULT_HEARTBEAT),
            connections: DEFAULT_CONNECTIONS,
        }
    }
}

/// The store a board opens, with the environment applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreChoice {
    /// The embedded SQLite file.
    Sqlite,
    /// A shared PostgreSQL database.
    Postgres {
        /// Connection string (may hold a password: never print it, see [`redact_url`]).
        url: String,
        /// This host's name.
        host: String,
        /// Host session lifetime without a heartbeat (ms).
        host_ttl_ms: i64,
        /// Heartbeat period (ms).
        heartbeat_ms: i64,
        /// Connections for requests.
        connections: usize,
    },
}

impl StoreSection {
    /// Checks the section on its own (the environment is applied by [`StoreSection::choice`]).
    pub fn validate(&self) -> Result<(), String> {
        if self.heartbeat.0 < Duration::from_millis(10) {
            return Err("store.heartbeat must be at least 10ms".into());
        }
        if self.heartbeat.0 >= self.host_ttl.0 {
            return Err(format!(
                "store.heartbeat ({}) must be shorter than store.host_ttl ({})",
                humantime::format_duration(self.heartbeat.0),
                humantime::format_duration(self.host_ttl.0)
            ));
        }
        if let Some(h) = &self.host {
            check_host(h)?;
        }
        if self.kind == StoreKind::Sqlite && self.url.is_some() {
            // A url without `kind = "postgres"` would silently give this host a board of its
            // own, and two hosts could claim the same task.
            return Err(
                "store.url is set but store.kind is \"sqlite\" (the default): add kind = \"postgres\", or remove url".into(),
            );
        }
        if !(1..=MAX_CONNECTIONS).contains(&self.connections) {
            return Err(format!(
                "store.connections must be 1 to {MAX_CONNECTIONS}, not {}",
                self.connections
            ));
        }
        Ok(())
    }

    /// The store to open: PostgreSQL when `kind = "postgres"` or `BOARD_STORE_URL` is set, the
    /// embedded SQLite file otherwise. Errors name what is missing or wrong.
    pub fn choice(&self) -> Result<StoreChoice, String> {
        self.choice_with(env_url())
    }

    /// [`StoreSection::choice`] with `env_url` standing for `BOARD_STORE_URL`.
    pub fn choice_with(&self, env_url: Option<String>) -> Result<StoreChoice, String> {
        let postgres = self.kind == StoreKind::Postgres || env_url.is_some();
        let url = env_url.or_else(|| self.url.clone());
        if !postgres {
            return Ok(StoreChoice::Sqlite);
        }
        let url = url.ok_or_else(|| {
            format!("store.kind = \"postgres\" needs store.url or {STORE_URL_ENV}")
        })?;
        let host = match &self.host {
            Some(h) => h.clone(),
            None => machine_host_name()?,
        };
        check_host(&host)?;
        Ok(StoreChoice::Postgres {
            url,
            host,
            host_ttl_ms: ms(self.host_ttl.0),
            heartbeat_ms: ms(self.heartbeat.0),
            connections: self.connections,
        })
    }
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn env_url() -> Option<String> {
    std::env::var(STORE_URL_ENV).ok().filter(|u| !u.is_empty())
}

/// A host name must be short and printable: it is shown in every other host's TUI.
fn check_host(h: &str) -> Result<(), String> {
    let ok = !h.is_empty()
        && h.len() <= MAX_HOST
        && h.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "store.host must be 1 to {MAX_HOST} letters, digits, '-', '_' or '.', not {:?}",
            crate::proto::sanitize::truncate_width(&crate::proto::sanitize::one_line(h), 80)
        ))
    }
}

/// The machine's host name (uname), for hosts that do not name themselves.
fn machine_host_name() -> Result<String, String> {
    let name = nix::unistd::gethostname()
        .map_err(|e| format!("cannot read the host name ({e}); set store.host"))?;
    let name = name.to_string_lossy().into_owned();
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(MAX_HOST)
        .collect();
    if cleaned.is_empty() {
        return Err("the machine has no host name; set store.host".into());
    }
    Ok(cleaned)
}

/// `url` without its password, for status lines and logs: `postgres://u:secret@h/db` →
/// `postgres://u@h/db`, `password=secret` → `password=…`.
pub fn redact_url(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        if let Some((userinfo, tail)) = rest.rsplit_once('@') {
            let user = userinfo.split(':').next().unwrap_or("");
            return format!("{scheme}://{user}@{tail}");
        }
        return url.to_string();
    }
    url.split_whitespace()
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=…"),
            _ => kv.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_a_status_line() {
        assert_eq!(
            redact_url("postgres://board:s3cret@db.example:5432/board"),
            "postgres://board@db.example:5432/board"
        );
        assert_eq!(
            redact_url("host=/tmp/pg user=board password=s3cret dbname=b"),
            "host=/tmp/pg user=board password=… dbname=b"
        );
        assert_eq!(redact_url("postgres:///board"), "postgres:///board");
    }

    #[test]
    fn a_heartbeat_as_long_as_the_host_ttl_is_refused() {
        let s = StoreSection {
            heartbeat: Dur(Duration::from_secs(30)),
            ..StoreSection::default()
        };
        let e = s.validate().unwrap_err();
        assert!(e.contains("store.heartbeat"), "{e}");
    }

    #[test]
    fn a_url_without_kind_postgres_is_refused_instead_of_ignored() {
        let s = StoreSection {
            url: Some("postgres:///board".into()),
            ..StoreSection::default()
        };
        let e = s.validate().unwrap_err();
        assert!(
            e.contains("store.url") && e.contains("kind = \"postgres\""),
            "{e}"
        );
    }

    #[test]
    fn a_pool_of_no_connections_or_too_many_is_refused_by_name() {
        for n in [0, 33] {
            let s = StoreSection {
                connections: n,
                ..StoreSection::default()
            };
            let e = s.validate().unwrap_err();
            assert!(
                e.contains("store.connections") && e.contains(&n.to_string()),
                "{e}"
            );
        }
        let s = StoreSection {
            connections: 32,
            ..StoreSection::default()
        };
        assert_eq!(s.validate(), Ok(()));
    }

    #[test]
    fn a_host_name_with_escape_sequences_is_refused_by_name() {
        let s = StoreSection {
            host: Some("a\u{1b}[2Jb".into()),
            ..StoreSection::default()
        };
        let e = s.validate().unwrap_err();
        assert!(e.contains("store.host") && !e.contains('\u{1b}'), "{e}");
    }

    #[test]
    fn sqlite_is_the_default_and_needs_nothing() {
        assert_eq!(
            StoreSection::default().choice_with(None),
            Ok(StoreChoice::Sqlite)
        );
    }

    #[test]
    fn the_environment_url_selects_postgres_and_wins_over_the_file() {
        let s = StoreSection {
            url: Some("postgres:///file".into()),
            host: Some("a".into()),
            ..StoreSection::default()
        };
        let Ok(StoreChoice::Postgres { url, host, .. }) =
            s.choice_with(Some("postgres:///env".into()))
        else {
            panic!("postgres expected");
        };
        assert_eq!((url.as_str(), host.as_str()), ("postgres:///env", "a"));
        let postgres_without_url = StoreSection {
            kind: StoreKind::Postgres,
            ..StoreSection::default()
        };
        let e = postgres_without_url.choice_with(None).unwrap_err();
        assert!(e.contains(STORE_URL_ENV), "{e}");
    }
}
