//! Where the board is and how long to wait for it: the socket of `BOARD_SOCKET` or of the
//! `board.toml` found from the working directory (or `BOARD_ROOT`), the answer deadline of
//! `BOARD_TIMEOUT` or `[client] timeout`, and the agent identity of `BOARD_AGENT`/`BOARD_TOKEN`.
//!
//! An invalid `board.toml` does not cut clients off a running board: its socket is still found
//! through the `data_dir` as written, and the warning is printed once per version of the file.

use std::path::PathBuf;
use std::time::Duration;

use crate::proto::config::{self, Paths};
use crate::proto::config_notice;
use crate::proto::error::{BoardError, BoardResult};

/// The agent identity the environment claims (`BOARD_AGENT`, `BOARD_TOKEN`; an empty variable
/// counts as unset).
///
/// Either part alone is still sent: an identity that names an agent (or carries a token) and
/// cannot be proven is refused by the board (`unauthorized`), never promoted to the operator.
/// Inside that agent's process tree the board recognises the caller without a token. A value
/// that is not UTF-8 is sent with replacement characters, which no session id or token matches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvIdentity {
    /// `BOARD_AGENT`.
    pub agent: Option<String>,
    /// `BOARD_TOKEN`.
    pub token: Option<String>,
}

/// The identity of `BOARD_AGENT`/`BOARD_TOKEN`; None when neither is set (an operator).
pub fn env_identity() -> Option<EnvIdentity> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(|v| v.to_string_lossy().into_owned())
    };
    let id = EnvIdentity {
        agent: var("BOARD_AGENT"),
        token: var("BOARD_TOKEN"),
    };
    (id != EnvIdentity::default()).then_some(id)
}

/// Where to connect, and the board's paths when known (needed to start it).
#[derive(Debug, Clone)]
pub struct Target {
    /// Socket path.
    pub socket: PathBuf,
    /// The board's paths, when it was found through `board.toml`.
    pub paths: Option<Paths>,
    /// The longest wait for one answer, and for the retries of a lost one (see
    /// `call_once` of `retry`): `BOARD_TIMEOUT`, else `[client] timeout` of `board.toml`, else 5 s.
    pub timeout: Duration,
}

impl Target {
    /// A target at `socket` that is never started (no paths), with the timeout of
    /// `BOARD_TIMEOUT` or the default (an invalid `BOARD_TIMEOUT` counts as unset here).
    pub fn new(socket: PathBuf) -> Target {
        Target {
            socket,
            paths: None,
            timeout: env_timeout()
                .ok()
                .flatten()
                .unwrap_or(config::DEFAULT_CLIENT_TIMEOUT),
        }
    }
}

/// The environment variable that overrides `[client] timeout` (a duration with a unit: `"2s"`).
pub const TIMEOUT_ENV: &str = "BOARD_TIMEOUT";

/// `BOARD_TIMEOUT`, if set. Errors: `usage` naming the variable when it is not a duration
/// with a unit or is zero.
pub fn env_timeout() -> BoardResult<Option<Duration>> {
    let Some(raw) = std::env::var_os(TIMEOUT_ENV).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let text = raw.to_string_lossy();
    match config::parse_duration(&text) {
        Ok(d) if !d.is_zero() => Ok(Some(d)),
        Ok(_) => Err(BoardError::usage(format!(
            "{TIMEOUT_ENV} must be longer than 0s"
        ))),
        Err(e) => Err(BoardError::usage(format!(
            "{TIMEOUT_ENV}: {}",
            crate::proto::sanitize::inert(&e.chars().take(200).collect::<String>())
        ))),
    }
}

/// `BOARD_SOCKET` if set, else the board of the working directory (or of `BOARD_ROOT`).
/// Errors: `unavailable` when no board is found; `usage` for a bad `BOARD_TIMEOUT`.
pub fn target() -> BoardResult<Target> {
    let env = env_timeout()?;
    let discovered = discover_paths();
    if let Some(s) = std::env::var_os("BOARD_SOCKET").filter(|s| !s.is_empty()) {
        let socket = PathBuf::from(s);
        let (paths, timeout) = match discovered {
            Ok((p, t)) if p.socket == socket => (Some(p), t),
            _ => (None, config::DEFAULT_CLIENT_TIMEOUT),
        };
        return Ok(Target {
            socket,
            paths,
            timeout: env.unwrap_or(timeout),
        });
    }
    let (paths, timeout) = discovered?;
    Ok(Target {
        socket: paths.socket.clone(),
        paths: Some(paths),
        timeout: env.unwrap_or(timeout),
    })
}

/// The board's paths and `[client] timeout`.
fn discover_paths() -> BoardResult<(Paths, Duration)> {
    let start = match std::env::var_os("BOARD_ROOT").filter(|s| !s.is_empty()) {
        Some(r) => PathBuf::from(r),
        None => std::env::current_dir()
            .map_err(|e| BoardError::unavailable(format!("no working directory: {e}")))?,
    };
    let root = config::find_root(&start).map_err(|e| BoardError::unavailable(e.to_string()))?;
    let file = root.join(config::CONFIG_FILE);
    match config::Config::load(&file) {
        Ok(cfg) => {
            let paths = Paths::new(&root, &cfg);
            config_notice::forget(&paths.data_dir);
            Ok((paths, cfg.client.timeout.0))
        }
        // A broken edit must not cut clients off the running board, which keeps its previous
        // configuration: find the socket through the data_dir as written (or the default).
        Err(config::ConfigError::Invalid { message, .. }) => {
            let cfg = lenient_config(&file);
            let paths = Paths::new(&root, &cfg);
            // Once per version of the file, not on every call of every agent; and only when a
            // board runs to keep previous settings (with none, starting one fails and says why).
            if board_listens(&paths.socket) && config_notice::first_to_see(&file, &paths.data_dir) {
                eprintln!(
                    "board: warning: {} is invalid ({}); the board keeps its previous settings \
                     until it is fixed (`board status` shows the error)",
                    file.display(),
                    config_notice::one_line(&message)
                );
            }
            Ok((paths, cfg.client.timeout.0))
        }
        Err(e) => Err(BoardError::unavailable(e.to_string())),
    }
}

/// Whether a board accepts connections at `socket` (a connection opened and closed at once).
fn board_listens(socket: &std::path::Path) -> bool {
    std::os::unix::net::UnixStream::connect(socket).is_ok()
}

/// The defaults with only `board.data_dir` and `client.timeout` taken from `file`, when the
/// file is invalid otherwise.
fn lenient_config(file: &std::path::Path) -> config::Config {
    let mut cfg = config::Config::default();
    let table = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok());
    let get = |section: &str, key: &str| -> Option<String> {
        Some(
            table
                .as_ref()?
                .get(section)?
                .get(key)?
                .as_str()?
                .to_string(),
        )
    };
    if let Some(d) = get("board", "data_dir") {
        cfg.board.data_dir = PathBuf::from(d);
    }
    if let Some(t) = get("client", "timeout")
        .and_then(|t| config::parse_duration(&t).ok())
        .filter(|t| !t.is_zero())
    {
        cfg.client.timeout = config::Dur(t);
    }
    cfg
}
