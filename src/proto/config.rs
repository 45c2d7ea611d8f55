//! `board.toml`: finding the board a command belongs to, and reading its configuration.
//!
//! The file marks the project root (found by walking up from the working directory, as git finds
//! `.git`). Unknown keys are errors; durations are strings with a unit (`"120s"`, `"250ms"`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use super::config_store::{StoreChoice, StoreKind, StoreSection};
pub use super::duration::{parse_duration, Dur};

/// Name of the file that marks a board's project root.
pub const CONFIG_FILE: &str = "board.toml";

/// Errors reading or finding a board configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// No `board.toml` in the working directory or any parent.
    #[error("no board.toml here or in any parent directory of {0}; run `board init` first")]
    NotFound(PathBuf),
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// File path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown keys / bad values.
    #[error("{path} is invalid: {message}")]
    Invalid {
        /// File path.
        path: PathBuf,
        /// What is wrong, from the TOML parser or our checks.
        message: String,
    },
}

impl ConfigError {
    /// The error a command answers for it: `usage` (exit 2) for a file that is invalid (the
    /// person must fix it; every command says the same), `unavailable` (exit 8) otherwise.
    pub fn into_board_error(self) -> crate::proto::error::BoardError {
        use crate::proto::error::BoardError;
        match self {
            ConfigError::Invalid { .. } => BoardError::usage(format!(
                "the board cannot start: {self}; fix it and run the command again"
            )),
            other => BoardError::unavailable(other.to_string()),
        }
    }
}

/// Longest report of what is wrong with `board.toml`, in terminal columns: the file's text is
/// the user's (or an agent's), and a 5 MiB line must not become 5 MiB on every command's
/// stderr, in `board status` and in the log.
pub const MAX_REPORT_COLS: usize = 200;

/// A parser's report as one inert line of at most [`MAX_REPORT_COLS`] columns: the position and
/// the reason, without the quoted source line; control characters made visible.
fn quoted(report: &str) -> String {
    let line = crate::proto::config_notice::one_line(report);
    let line = crate::proto::sanitize::one_line(&line);
    crate::proto::sanitize::truncate_width(&line, MAX_REPORT_COLS)
}

/// How the sweep decides that a living agent deserves renewal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LivenessMode {
    /// Renew only if the agent's process tree used CPU or it talked to the board since the last
    /// sweep.
    Activity,
    /// Renew any agent whose process is alive and not stopped.
    Process,
}

/// `[board]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BoardSection {
    /// Shown in the TUI and used as the tmux session name.
    pub name: String,
    /// Where `board.db`, `board.sock` and `board.log` live, relative to the project root.
    pub data_dir: PathBuf,
}

impl Default for BoardSection {
    fn default() -> Self {
        BoardSection {
            name: "board".into(),
            data_dir: PathBuf::from(".board"),
        }
    }
}

/// `[lease]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LeaseSection {
    /// How long a claim lasts without renewal (default 120 s).
    pub duration: Dur,
    /// How often the liveness sweep runs (default 30 s).
    pub sweep: Dur,
    /// What counts as progress for renewal by the sweep.
    pub liveness: LivenessMode,
}

impl Default for LeaseSection {
    fn default() -> Self {
        LeaseSection {
            duration: Dur(Duration::from_secs(120)),
            sweep: Dur(Duration::from_secs(30)),
            liveness: LivenessMode::Activity,
        }
    }
}

/// `[identity]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdentitySection {
    /// Require the calling process to descend from the agent's process (Linux).
    pub check_process_tree: bool,
}

impl Default for IdentitySection {
    fn default() -> Self {
        IdentitySection {
            check_process_tree: true,
        }
    }
}

/// `[run]`: how `board run` supervises its agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// After the terminal or pane hung up (SIGHUP, forwarded to the agent), how long the agent
    /// may take to exit on its own before its whole process tree gets SIGTERM, then SIGKILL 1 s
    /// later (default 3 s). Some CLIs ignore SIGHUP at their prompt.
    pub hangup_grace: Dur,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            hangup_grace: Dur(Duration::from_secs(3)),
        }
    }
}

/// `[client]`: how commands, `board json` and `board mcp` wait for the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClientSection {
    /// The longest wait for one answer of the board (default 5 s); a board that accepted the
    /// request but does not answer in time (stopped with SIGSTOP, stuck) makes the command exit
    /// 8, naming the board's pid and socket. An answer lost because the board closed the
    /// connection (it stopped or restarted) is asked again with the same `op_id` for up to this
    /// long. `BOARD_TIMEOUT` overrides it.
    pub timeout: Dur,
}

/// Default of `[client] timeout`.
pub const DEFAULT_CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

impl Default for ClientSection {
    fn default() -> Self {
        ClientSection {
            timeout: Dur(DEFAULT_CLIENT_TIMEOUT),
        }
    }
}

pub use crate::proto::config_land::{GitSection, LandMode, ReviewSection};
pub use crate::proto::config_notify::NotifySection;

/// One `[[agents]]` entry: what `board up` starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentEntry {
    /// Session name (ids become `name`, `name-2`, …).
    pub name: String,
    /// Profile file stem in `agents/` (`claude` → `agents/claude.toml`).
    pub profile: String,
    /// How many panes of this agent (default 1).
    #[serde(default = "one")]
    pub count: u32,
    /// Give each of this entry's agents its own git worktree on its own branch (`board/NAME`),
    /// created by `board up` and removed by `board down` (default false).
    #[serde(default)]
    pub worktree: bool,
    /// With `worktree`: the branch or commit a new agent branch starts from (default: the
    /// project's `HEAD`). An agent branch that exists already is checked out as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// With `worktree`: files and directories (git-ignored ones, like `.env`) copied from the
    /// project into a worktree that lacks them, paths relative to the project root.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// With `worktree`: a command run with `sh -c` in a new worktree before the agent starts,
    /// its output in the agent's pane; the agent starts only when it succeeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    /// With `worktree`: a command run with `sh -c` in the worktree before `board down` removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teardown: Option<String>,
    /// Overrides the profile's `attention_after` (needs attention when no hook or board call
    /// came this long after the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_after: Option<Dur>,
    /// The agents' role (e.g. `"reviewer"`, the rules of a label): claim-next gives them the
    /// tasks added `--for` that role as well as those for their own names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// `[git] base` names a branch: not empty, no whitespace or control characters, no leading `-`
/// (git itself refuses the rest when the board lands).
fn check_base_branch(base: &str) -> Result<(), String> {
    let bad = base.is_empty()
        || base.starts_with('-')
        || base.chars().any(|c| c.is_whitespace() || c.is_control());
    if bad {
        return Err(format!(
            "git.base {:?} is not a branch name (like \"main\")",
            base.chars().take(64).collect::<String>()
        ));
    }
    Ok(())
}

fn one() -> u32 {
    1
}

/// The whole `board.toml`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `[board]`
    pub board: BoardSection,
    /// `[lease]`
    pub lease: LeaseSection,
    /// `[identity]`
    pub identity: IdentitySection,
    /// `[run]`
    pub run: RunSection,
    /// `[client]`
    pub client: ClientSection,
    /// `[store]`
    pub store: StoreSection,
    /// `[notify]`
    pub notify: NotifySection,
    /// `[review]`
    pub review: ReviewSection,
    /// `[git]`
    pub git: GitSection,
    /// `[[agents]]`
    pub agents: Vec<AgentEntry>,
}

impl Config {
    /// Parses TOML text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let cfg: Config = toml::from_str(text).map_err(|e| ConfigError::Invalid {
            path: path.into(),
            message: quoted(&e.to_string()),
        })?;
        cfg.validate().map_err(|message| ConfigError::Invalid {
            path: path.into(),
            message: quoted(&message),
        })?;
        Ok(cfg)
    }

    /// Reads and parses a file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.into(),
            source,
        })?;
        Config::parse(&text, path)
    }

    fn validate(&self) -> Result<(), String> {
        let lease = self.lease.duration.0;
        let sweep = self.lease.sweep.0;
        if lease < Duration::from_millis(100) {
            return Err("lease.duration must be at least 100ms".into());
        }
        if sweep < Duration::from_millis(10) {
            return Err("lease.sweep must be at least 10ms".into());
        }
        check_base_branch(&self.git.base)?;
        if self.client.timeout.0.is_zero() {
            return Err("client.timeout must be longer than 0s".into());
        }
        if sweep >= lease {
            return Err(format!(
                "lease.sweep ({}) must be shorter than lease.duration ({})",
                humantime::format_duration(sweep),
                humantime::format_duration(lease)
            ));
        }
        self.store.validate()?;
        self.notify.validate()?;
        for a in &self.agents {
            if a.name.is_empty() || a.count == 0 {
                return Err("each [[agents]] needs a name and a count ≥ 1".into());
            }
            crate::proto::config_worktree::validate(
                crate::proto::config_worktree::WorktreeOptions {
                    name: &a.name,
                    worktree: a.worktree,
                    base: a.base.as_deref(),
                    include: &a.include,
                    setup: a.setup.as_deref(),
                    teardown: a.teardown.as_deref(),
                },
            )?;
            if let Some(role) = &a.role {
                crate::proto::labels::check_label("role", role)
                    .map_err(|e| format!("[[agents]] {:?}: {}", a.name, e.message))?;
            }
        }
        Ok(())
    }

    /// The text `board init` writes: defaults, commented.
    pub fn default_text(name: &str) -> String {
        let name = name.replace(['"', '\\'], "");
        format!(
            r#"# board: shared goal and backlog for terminal coding agents.
[board]
name = "{name}"
data_dir = ".board"

[lease]
duration = "120s"      # a claim lasts this long without renewal
sweep = "30s"          # liveness check interval
liveness = "activity"  # or "process": alive and not stopped is enough

[identity]
check_process_tree = true

[run]
hangup_grace = "3s"    # after a pane closes: time to exit before TERM, then KILL

[client]
timeout = "5s"         # longest wait for an answer (exit 8 after it); BOARD_TIMEOUT overrides

# Boards on several hosts can share one PostgreSQL database instead of .board/board.db:
# [store]
# kind = "postgres"
# url = "postgres://board@db.example/board"  # BOARD_STORE_URL overrides (keep passwords there)
# host = "laptop"      # this host's name among them (default: the machine's host name)
# host_ttl = "30s"     # a host silent this long is gone: its agents' claims end
# heartbeat = "5s"     # how often each board renews its host session
# connections = 4      # connections each board keeps for requests (1 to 32)

# Notifications that leave the terminal (edits apply while the board runs):
# [notify]
# desktop = false      # desktop notifications over the session D-Bus
# terminal = true      # OSC 9 / OSC 777 and the bell in every `board tui`
# command = ["ntfy", "publish", "my-topic"]  # gets each notice as JSON on stdin
# command_timeout = "10s"
# events = ["question", "permission", "attention", "message", "review", "expel", "finished"]

# Done means landed: a person (or another agent) reviews, the board merges into the base.
# [review]
# required = true      # board done waits in review for board accept / board reject
# [git]
# base = "main"        # the branch finished work lands on
# land = "merge"       # or "rebase", "ff-only"; "none" (default) lands nothing

# What `board up` starts, one tmux pane each:
# [[agents]]
# name = "claude"
# profile = "claude"   # agents/claude.toml
# count = 2
# worktree = true      # each agent in its own git worktree, on branch board/<name>
# base = "main"        # where a new agent branch starts (default: HEAD)
# include = [".env"]   # ignored files copied into a new worktree
# setup = "npm ci"     # run in a new worktree before the agent starts (output in its pane)
# teardown = "make clean"  # run in the worktree before `board down` removes it
# role = "reviewer"    # may claim tasks added with --for reviewer
"#
        )
    }
}

/// Where a board's files are, derived from its root and configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// Directory holding `board.toml`.
    pub root: PathBuf,
    /// `board.toml`.
    pub config: PathBuf,
    /// The data directory (`.board/`), mode 0700.
    pub data_dir: PathBuf,
    /// SQLite database.
    pub db: PathBuf,
    /// Unix socket (mode 0600); under `$XDG_RUNTIME_DIR` when the path would be too long.
    pub socket: PathBuf,
    /// Log file of the board process.
    pub log: PathBuf,
    /// Lock file held by the running board process.
    pub lock: PathBuf,
}

/// Longest Unix socket path (sun_path is 108 bytes including the NUL).
const MAX_SOCKET_PATH: usize = 107;

impl Paths {
    /// Paths for the board rooted at `root` with `cfg`.
    pub fn new(root: &Path, cfg: &Config) -> Paths {
        let root = root.to_path_buf();
        let data_dir = root.join(&cfg.board.data_dir);
        let mut socket = data_dir.join("board.sock");
        if socket.as_os_str().len() > MAX_SOCKET_PATH {
            socket = short_socket_path(&data_dir);
        }
        Paths {
            config: root.join(CONFIG_FILE),
            db: data_dir.join("board.db"),
            log: data_dir.join("board.log"),
            lock: data_dir.join("board.lock"),
            socket,
            data_dir,
            root,
        }
    }
}

/// A stable short hash of a path, for names derived from it (the socket path, the tmux session
/// name): the first `hex_digits` hex digits (at most 64) of SHA-256 over the path's bytes. Unlike
/// `DefaultHasher`, whose output std documents as not stable across Rust releases, two builds
/// of any version agree, so a board built with another toolchain finds the same socket.
pub fn path_hash(path: &Path, hex_digits: usize) -> String {
    use sha2::{Digest, Sha256};
    use std::os::unix::ffi::OsStrExt;
    let digest = Sha256::digest(path.as_os_str().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex[..hex_digits.min(hex.len())].to_string()
}

fn short_socket_path(data_dir: &Path) -> PathBuf {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join(format!("board-{}", nix::unistd::getuid())));
    base.join(format!("board-{}.sock", path_hash(data_dir, 16)))
}

/// Walks up from `start` to the first directory containing `board.toml`.
///
/// Inside an agent's worktree (`ROOT/DATA_DIR/worktrees/NAME`, see `worktree = true`) the board
/// is the one whose data directory holds the worktree, even when the worktree has its own copy
/// of a committed `board.toml`: otherwise a call that lost `BOARD_ROOT` would start a second
/// board in the worktree.
pub fn find_root(start: &Path) -> Result<PathBuf, ConfigError> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        if d.join(CONFIG_FILE).is_file() {
            return Ok(owning_board(d).unwrap_or_else(|| d.to_path_buf()));
        }
        dir = d.parent();
    }
    Err(ConfigError::NotFound(start.to_path_buf()))
}

/// The root of the board whose data directory (it holds `board.db`) contains `dir` under
/// `worktrees/`, if any.
fn owning_board(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find_map(|a| {
        let data_dir = a
            .parent()
            .filter(|_| a.file_name() == Some("worktrees".as_ref()))?;
        let root = data_dir.parent()?;
        (data_dir.join("board.db").is_file() && root.join(CONFIG_FILE).is_file())
            .then(|| root.to_path_buf())
    })
}

/// The board of the working directory: root, configuration and paths.
pub fn discover() -> Result<(Config, Paths), ConfigError> {
    let cwd = std::env::current_dir().map_err(|source| ConfigError::Io {
        path: PathBuf::from("."),
        source,
    })?;
    let root = find_root(&cwd)?;
    let cfg = Config::load(&root.join(CONFIG_FILE))?;
    let paths = Paths::new(&root, &cfg);
    Ok((cfg, paths))
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
