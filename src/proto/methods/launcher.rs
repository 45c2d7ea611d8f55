//! The `board run` launcher's own calls: `session.register`, `session.attach`, `session.exit`:
//! their rows of the method table, their parameters and their results.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// This group's rows of the method table (see [`super`]): passed on to the next group's rows.
macro_rules! launcher_rows {
    ([$next:ident $($rest:ident)*] $d:tt $($rows:tt)*) => { $next! { [$($rest)*] $d $($rows)*
        /// Launcher only (`board run`): register an agent session.
        SessionRegister = "session.register", Launcher, SessionRegisterParams => SessionRegisterResult;
        /// Launcher only: attach the agent's process (and tmux pane) to its session.
        SessionAttach = "session.attach", Launcher, SessionAttachParams => SessionAttachResult;
        /// Launcher only: the agent exited (or its pane closed); its claims are expelled.
        SessionExit = "session.exit", Launcher, SessionExitParams => SessionExitResult;
    } };
}

/// `session.register` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionRegisterParams {
    /// Requested session name: the name people see unless a live session has it (then
    /// NAME-2, …); ids become NAME, NAME-2, … and are never reused.
    pub name: String,
    /// The git branch the agent starts on, when it starts in a git work tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Needs attention when neither a call nor a hook came this long after the start, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_ms: Option<i64>,
    /// The agent's role (`board run --role`, `[[agents]] role`): claim-next gives it the tasks
    /// meant for that role as well as those meant for its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// `session.attach` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionAttachParams {
    /// Session id from `session.register`.
    pub agent: String,
    /// Its token.
    pub token: String,
    /// The agent process id.
    pub pid: i64,
    /// tmux pane id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    /// The pane's process id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane_pid: Option<i64>,
    /// The terminal the agent runs on (`/dev/pts/N`): input there is activity; the lapse
    /// warning is written there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty: Option<String>,
}

/// `session.exit` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionExitParams {
    /// Session id.
    pub agent: String,
    /// Its token.
    pub token: String,
    /// Exit status, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// Signal number, when killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i64>,
    /// Reason to record instead of one made from code/signal (`pane closed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `session.register`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionRegisterResult {
    /// The session id given (unique for ever; the identity in `BOARD_AGENT`).
    pub agent: String,
    /// The name people see: the requested name unless a live session has it, else the first
    /// free `NAME-N`.
    #[serde(default)]
    pub name: String,
    /// Its secret token (≥ 128 bit, hex); the board keeps only its hash.
    pub token: String,
}

/// `session.attach`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionAttachResult {
    /// Session id.
    pub agent: String,
    /// The attached agent process id.
    pub pid: i64,
}

/// `session.exit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionExitResult {
    /// Whether this call ended the session (false: it had ended already).
    pub ended: bool,
    /// The reason recorded.
    pub reason: String,
}
