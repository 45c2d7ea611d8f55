//! Error kinds shared by the board, the wire protocol and the CLI.
//!
//! Every failure a client can see is a [`BoardError`] with an [`ErrorKind`]. The kind fixes the
//! JSON-RPC error code (in `error.code`), the `data.kind` string and the CLI exit code, as listed in
//! ARCHITECTURE.md "Exit codes" (`usage` 2, `no_ready_task` 3, `conflict` 4, `lapsed` 5, `not_found` 6,
//! `unauthorized` 7, `unavailable` 8, `internal` and `invalid` 1).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What went wrong, as a client must react to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request is well-formed but asks for something that makes no sense (bad flag mix).
    Usage,
    /// The task, session or goal named does not exist.
    NotFound,
    /// `claim` without a task id found no ready task.
    NoReadyTask,
    /// Another agent session holds the task.
    Conflict,
    /// The caller's claim ended (expelled, lapsed, released) or its generation is stale.
    Lapsed,
    /// Identity missing, wrong token, or the caller is not inside the agent's process tree.
    Unauthorized,
    /// The request could not be parsed or has wrong types (JSON-RPC -32700/-32600/-32602).
    Invalid,
    /// The board is not running and could not be started, or refused the protocol version.
    Unavailable,
    /// A bug or an I/O failure inside the board.
    Internal,
}

impl ErrorKind {
    /// Every kind.
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::Usage,
        ErrorKind::NotFound,
        ErrorKind::NoReadyTask,
        ErrorKind::Conflict,
        ErrorKind::Lapsed,
        ErrorKind::Unauthorized,
        ErrorKind::Invalid,
        ErrorKind::Unavailable,
        ErrorKind::Internal,
    ];

    /// The JSON-RPC `error.code` of this kind (application codes are -32001 … -32009).
    pub fn code(self) -> i64 {
        match self {
            ErrorKind::Usage => -32001,
            ErrorKind::NotFound => -32002,
            ErrorKind::NoReadyTask => -32003,
            ErrorKind::Conflict => -32004,
            ErrorKind::Lapsed => -32005,
            ErrorKind::Unauthorized => -32006,
            ErrorKind::Invalid => -32600,
            ErrorKind::Unavailable => -32008,
            ErrorKind::Internal => -32603,
        }
    }

    /// The CLI exit code of this kind (design: "CLI exit codes").
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::Internal => 1,
            // Bad input is the caller's to fix, like a usage error.
            ErrorKind::Usage | ErrorKind::Invalid => 2,
            ErrorKind::NoReadyTask => 3,
            ErrorKind::Conflict => 4,
            ErrorKind::Lapsed => 5,
            ErrorKind::NotFound => 6,
            ErrorKind::Unauthorized => 7,
            ErrorKind::Unavailable => 8,
        }
    }

    /// The `data.kind` string, e.g. `"no_ready_task"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Usage => "usage",
            ErrorKind::NotFound => "not_found",
            ErrorKind::NoReadyTask => "no_ready_task",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Lapsed => "lapsed",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::Invalid => "invalid",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Internal => "internal",
        }
    }
}

/// A failure to report to a client: a kind, a human message, and extra structured fields that
/// travel in the JSON-RPC `error.data` object beside `kind` (e.g. `holder`, `generation`).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct BoardError {
    /// What class of failure this is.
    pub kind: ErrorKind,
    /// One sentence for a human, naming what was wrong.
    pub message: String,
    /// Extra fields for `error.data` (never contains `kind`; that is added on the wire).
    pub data: Map<String, Value>,
    /// A JSON-RPC code other than the kind's own (-32700 parse error, -32601 unknown method).
    pub code: Option<i64>,
}

/// `error.data` key of [`BoardError::store_down`]: the board runs but its store is unreachable.
pub const STORE_DOWN: &str = "store_down";

impl BoardError {
    /// A new error of `kind` with `message` and no extra data.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        BoardError {
            kind,
            message: message.into(),
            data: Map::new(),
            code: None,
        }
    }

    /// Adds one field to `error.data`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.data.insert(key.to_string(), value.into());
        self
    }

    /// Shorthand for [`ErrorKind::Invalid`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, message)
    }

    /// Sets a JSON-RPC code other than the kind's default.
    pub fn with_code(mut self, code: i64) -> Self {
        self.code = Some(code);
        self
    }

    /// Shorthand for [`ErrorKind::Internal`].
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// Shorthand for [`ErrorKind::NotFound`].
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// Shorthand for [`ErrorKind::Usage`].
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Usage, message)
    }

    /// Shorthand for [`ErrorKind::Unauthorized`].
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unauthorized, message)
    }

    /// Shorthand for [`ErrorKind::Unavailable`].
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, message)
    }

    /// [`ErrorKind::Unavailable`] because the board cannot reach its shared store (exit 8):
    /// `data.store_down` names the store (`"postgres"`), so the TUI and tools can tell it from
    /// a board that is not running. Nothing was applied.
    pub fn store_down(store: &str, message: impl Into<String>) -> Self {
        Self::unavailable(message).with(STORE_DOWN, store)
    }

    /// The JSON-RPC `error` object: `{"code":…, "message":…, "data":{"kind":…, …}}`.
    pub fn to_json(&self) -> Value {
        let mut data = self.data.clone();
        data.insert("kind".into(), Value::String(self.kind.as_str().into()));
        serde_json::json!({ "code": self.code.unwrap_or(self.kind.code()), "message": self.message, "data": data })
    }

    /// Rebuilds an error from a JSON-RPC `error` object (unknown kinds become `internal`).
    pub fn from_json(v: &Value) -> Self {
        let message = v
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("error")
            .to_string();
        let mut data = v
            .get("data")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let kind = data
            .remove("kind")
            .and_then(|k| serde_json::from_value::<ErrorKind>(k).ok())
            .unwrap_or(ErrorKind::Internal);
        let code = v
            .get("code")
            .and_then(Value::as_i64)
            .filter(|c| *c != kind.code());
        BoardError {
            kind,
            message,
            data,
            code,
        }
    }
}

/// Result alias used at module boundaries.
pub type BoardResult<T> = Result<T, BoardError>;
