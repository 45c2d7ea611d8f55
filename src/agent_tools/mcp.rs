//! `board mcp`: the board's operations as an MCP server over stdio (for agents that take MCP
//! tools rather than shell commands).
//!
//! Tools: `board_status`, `board_ready`, `board_claim`, `board_done`, `board_release`,
//! `board_note`, `board_add`, `board_show`, and `board_send`, `board_inbox` (see [`inbox`]).
//! Each forwards one request to the board socket over one shared connection ([`Link`]) with
//! the identity of the environment (`BOARD_AGENT`, `BOARD_TOKEN`), so the server must run inside the agent's session (the agent starts it, and the
//! agent runs under `board run`). A success returns the request's `result` as structured content
//! (and as JSON text); a refusal returns a tool error (`isError: true`) whose text starts with
//! `KIND (CODE): message` and carries the whole JSON-RPC error object.

use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::agent_tools::json::Link;

#[path = "mcp_inbox.rs"]
mod inbox;
use crate::proto::error::BoardError;

/// Errors that end `board mcp`.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The async runtime could not start.
    #[error("starting the runtime: {0}")]
    Runtime(std::io::Error),
    /// The MCP session could not start (no initialize handshake on stdin, bad first message).
    #[error("MCP handshake failed: {0}")]
    Handshake(String),
    /// The session task failed.
    #[error("MCP session failed: {0}")]
    Session(String),
}

/// `board_claim` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimArgs {
    /// Task id to claim. Omit it to claim the best ready task (highest priority, then oldest).
    #[serde(default)]
    pub task: Option<i64>,
}

/// `board_done` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneArgs {
    /// Id of the task you claimed and finished.
    pub task: i64,
    /// The `generation` board_claim returned (fencing token); the call is refused if your claim
    /// is no longer that one.
    #[serde(default)]
    pub generation: Option<i64>,
    /// What you did, for the people and agents after you.
    #[serde(default)]
    pub note: Option<String>,
}

/// `board_release` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseArgs {
    /// Id of the task you claimed and give back unfinished.
    pub task: i64,
    /// The `generation` board_claim returned.
    #[serde(default)]
    pub generation: Option<i64>,
    /// Why you give it back and what the next agent should know.
    #[serde(default)]
    pub note: Option<String>,
}

/// `board_note` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteArgs {
    /// Task id (you must hold its claim).
    pub task: i64,
    /// The note: a finding, a decision, a warning for the next agent.
    pub text: String,
}

/// `board_add` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddArgs {
    /// One-line title of the new task.
    pub title: String,
    /// Longer description: what to do and how to tell it is done.
    #[serde(default)]
    pub body: Option<String>,
    /// Higher runs first; default 0.
    #[serde(default)]
    pub priority: Option<i64>,
    /// Ids of tasks that must be done before this one is ready.
    #[serde(default)]
    pub after: Option<Vec<i64>>,
}

/// `board_show` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowArgs {
    /// Task id.
    pub task: i64,
}

/// The MCP server: one tool per board operation, all sharing one board connection.
#[derive(Clone)]
pub struct BoardTools {
    link: Arc<Mutex<Link>>,
    tool_router: ToolRouter<Self>,
}

impl Default for BoardTools {
    fn default() -> Self {
        BoardTools::new()
    }
}

#[tool_router]
impl BoardTools {
    /// A server that has not connected to the board yet (it connects on the first tool call).
    pub fn new() -> Self {
        BoardTools {
            link: Arc::new(Mutex::new(Link::new())),
            tool_router: Self::tool_router() + Self::inbox_router(),
        }
    }

    /// Forwards one request on the shared link (blocking socket I/O, off the async threads).
    async fn forward(&self, method: &'static str, params: Value) -> CallToolResult {
        let link = Arc::clone(&self.link);
        let out = tokio::task::spawn_blocking(move || {
            let mut link = link.lock().unwrap_or_else(|p| p.into_inner());
            link.call(method, params)
        })
        .await
        .unwrap_or_else(|e| Err(BoardError::internal(format!("request failed: {e}"))));
        match out {
            Ok(v) => {
                let unread = v.get("inbox").cloned();
                inbox::with_notice(CallToolResult::structured(v), unread.as_ref())
            }
            Err(e) => {
                let unread = e.data.get("inbox").cloned();
                inbox::with_notice(tool_error(&e), unread.as_ref())
            }
        }
    }

    #[tool(
        description = "Show the board: the shared goal, the lease settings, how many agent sessions are live and how many tasks are unfinished. Read the goal once before you start."
    )]
    async fn board_status(&self) -> CallToolResult {
        self.forward("status", json!({})).await
    }

    #[tool(
        description = "List the tasks that are ready to claim (open, all dependencies done), best first. Does not claim anything."
    )]
    async fn board_ready(&self) -> CallToolResult {
        self.forward("ready", json!({})).await
    }

    #[tool(
        description = "Claim a task for yourself (a lease: it lasts while you keep using the board and ends if you stop). Without `task`, claims the best ready task. Returns the task and its `generation`: keep it and pass it to board_done. Errors: no_ready_task (nothing ready; the backlog may be finished), conflict (another agent holds it: pick another, never work on it)."
    )]
    async fn board_claim(&self, Parameters(a): Parameters<ClaimArgs>) -> CallToolResult {
        self.forward("claim", json!({ "task": a.task })).await
    }

    #[tool(
        description = "Finish a task you claimed, with a note saying what you did. Pass the `generation` from board_claim. Error lapsed: your claim ended (lease expired or someone else holds the task now) — stop working on it, do not commit, re-read it with board_show."
    )]
    async fn board_done(&self, Parameters(a): Parameters<DoneArgs>) -> CallToolResult {
        self.forward(
            "done",
            json!({ "task": a.task, "generation": a.generation, "note": a.note }),
        )
        .await
    }

    #[tool(
        description = "Give a claimed task back unfinished (it becomes ready for others), with a note saying why and what you learned."
    )]
    async fn board_release(&self, Parameters(a): Parameters<ReleaseArgs>) -> CallToolResult {
        self.forward(
            "release",
            json!({ "task": a.task, "generation": a.generation, "note": a.note }),
        )
        .await
    }

    #[tool(
        description = "Add a note to a task you hold: findings, decisions, warnings the next agent should know."
    )]
    async fn board_note(&self, Parameters(a): Parameters<NoteArgs>) -> CallToolResult {
        self.forward("note", json!({ "task": a.task, "text": a.text }))
            .await
    }

    #[tool(
        description = "Add a new task to the shared backlog (for work you found that is outside your claimed task). It is not claimed for you."
    )]
    async fn board_add(&self, Parameters(a): Parameters<AddArgs>) -> CallToolResult {
        self.forward(
            "add",
            json!({ "title": a.title, "body": a.body, "priority": a.priority, "after": a.after }),
        )
        .await
    }

    #[tool(
        description = "Show one task in full: title, body, state, holder, generation, its notes and its history."
    )]
    async fn board_show(&self, Parameters(a): Parameters<ShowArgs>) -> CallToolResult {
        self.forward("show", json!({ "task": a.task })).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for BoardTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("board", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "{MCP_PREAMBLE}\n\n{}",
                crate::agent_tools::profile::INSTRUCTIONS
            ))
    }
}

/// How the tools map to the CLI verbs of the instructions that follow it.
const MCP_PREAMBLE: &str = "These tools are the `board` commands of the instructions below: \
board_status ≈ `board status`/`board goal`, board_ready = `board ready`, board_claim = \
`board claim`, board_show = `board show`, board_note = `board note`, board_done = `board done`, \
board_release = `board release`, board_add = `board add`. A refused call is a tool error whose \
text starts with its kind (`lapsed`, `conflict`, `no_ready_task`, …) and JSON-RPC code; \
`lapsed` means your claim ended: stop working on that task at once.";

/// A board error as an MCP tool error: text `KIND (CODE): message` then the JSON-RPC error
/// object; the same object as structured content.
pub fn tool_error(e: &BoardError) -> CallToolResult {
    let obj = e.to_json();
    let code = obj["code"].as_i64().unwrap_or_default();
    let text = format!("{} ({code}): {}\n{obj}", e.kind.as_str(), e.message);
    let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
    r.structured_content = Some(obj);
    r
}

/// Serves MCP on stdin/stdout until the client closes stdin. Errors: see [`McpError`].
pub fn serve() -> Result<(), McpError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(McpError::Runtime)?;
    rt.block_on(async {
        let service = BoardTools::new()
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpError::Handshake(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| McpError::Session(e.to_string()))?;
        Ok(())
    })
}

/// `board mcp`: returns the exit code (0 when the client hung up, 1 on failure).
pub fn run() -> i32 {
    match serve() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("board mcp: {e}");
            1
        }
    }
}
