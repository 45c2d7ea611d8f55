//! `board mcp`: the board's operations as an MCP server over stdio (for agents that take MCP
//! tools rather than shell commands).
//!
//! Tools (see the `tools` module): one per verb — `board_status`, `board_goal`, `board_ready`,
//! `board_list`, `board_show`, `board_claim` (optionally waiting), `board_renew`, `board_check`,
//! `board_done`, `board_release` (`force` for operators), `board_note`, `board_add`, `board_edit`,
//! `board_wait` (optionally waiting for the answer), `board_resume`, `board_agents`; and
//! `board_send`, `board_inbox`, `board_answer` (see the `inbox` module); `board_accept`,
//! `board_reject` (see the `review` module). Each forwards one request to the board socket
//! over one shared connection ([`Link`], reopened when the board restarted). The caller's identity
//! is the agent session whose process tree the server runs in (the board walks its ancestry), so
//! a host that starts MCP servers with a cleaned environment still gets the agent's identity;
//! `BOARD_AGENT`/`BOARD_TOKEN`, when present, are sent too. A success returns the request's
//! `result` as structured content (and as JSON text); a refusal, and an argument the tool does
//! not accept, returns a tool error (`isError: true`) whose text starts with `KIND (CODE):
//! message` and carries the whole JSON-RPC error object. Lines that are not valid JSON-RPC are
//! answered by the `wire` module with an error carrying the request's id whenever it can be read.

use std::sync::{Arc, Mutex};

use std::time::Duration;

use crate::agent_tools::json::Link;
use crate::proto::error::BoardError;
use crate::proto::methods::{Call, ClaimParams};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool_handler, ServerHandler, ServiceExt};

pub mod args;
mod inbox;
mod review;
mod tool_result;
mod tools;
mod wire;

pub use tool_result::tool_error;
use tool_result::tool_result;

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

impl BoardTools {
    /// A server that has not connected to the board yet (it connects on the first tool call).
    pub fn new() -> Self {
        BoardTools {
            link: Arc::new(Mutex::new(Link::new())),
            tool_router: Self::tool_router() + Self::inbox_router() + Self::review_router(),
        }
    }

    /// Forwards one request on the shared link (blocking socket I/O, off the async threads).
    async fn forward(&self, call: Call) -> CallToolResult {
        let link = Arc::clone(&self.link);
        let out = tokio::task::spawn_blocking(move || {
            let mut link = link.lock().unwrap_or_else(|p| p.into_inner());
            let (method, params) = call.wire();
            link.call(method.name(), params)
        })
        .await
        .unwrap_or_else(|e| Err(BoardError::internal(format!("request failed: {e}"))));
        tool_result(out)
    }

    /// `wait` (asking `question`), then the answer, within `timeout` (see
    /// [`crate::proto::question_wait`]); the link is locked per request only, and the wait
    /// itself follows the event stream on a connection of its own.
    async fn question_waiting(&self, question: String, timeout: Duration) -> CallToolResult {
        let link = Arc::clone(&self.link);
        let out = tokio::task::spawn_blocking(move || {
            let target = crate::proto::client::target()?;
            let mut call = |call: Call| {
                let mut link = link.lock().unwrap_or_else(|p| p.into_inner());
                let (method, params) = call.wire();
                link.call(method.name(), params)
            };
            crate::proto::question_wait::ask_and_wait(&target, &question, timeout, &mut call)
        })
        .await
        .unwrap_or_else(|e| Err(BoardError::internal(format!("request failed: {e}"))));
        tool_result(out.map(|w| w.doc))
    }

    /// `claim` retried until a task is ready or `timeout` passes (the link is locked per
    /// attempt only, so other tool calls go through meanwhile).
    async fn claim_waiting(
        &self,
        params: ClaimParams,
        task_given: bool,
        timeout: Duration,
    ) -> CallToolResult {
        let link = Arc::clone(&self.link);
        let out = tokio::task::spawn_blocking(move || {
            let claim = || {
                let mut link = link.lock().unwrap_or_else(|p| p.into_inner());
                let (method, params) = Call::Claim(params.clone()).wire();
                link.call(method.name(), params)
            };
            crate::proto::claim_wait::claim_waiting(claim, task_given, timeout)
        })
        .await
        .unwrap_or_else(|e| Err(BoardError::internal(format!("request failed: {e}"))));
        tool_result(out)
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
board_status = `board status`, board_goal = `board goal`, board_ready = `board ready`, \
board_list = `board list`, board_show = `board show`, board_claim = `board claim` (`wait_s` = \
`--wait`), board_renew = `board renew`, board_check = `board check`, board_note = `board note`, \
board_done = `board done`, board_release = `board release`, board_add = `board add`, \
board_edit = `board edit`, \
board_wait = `board wait` (`wait_s` = `--block --timeout`), board_resume = `board resume`, \
board_answer = `board answer`, board_agents = `board agents`, board_accept = `board accept`, \
board_reject = `board reject`. A \
refused call is a tool error whose text starts with its kind (`lapsed`, `conflict`, \
`no_ready_task`, …) and JSON-RPC code; `lapsed` means your claim ended: stop working on that \
task at once.";

/// Serves MCP on stdin/stdout until the client closes stdin. Errors: see [`McpError`].
pub fn serve() -> Result<(), McpError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(McpError::Runtime)?;
    rt.block_on(async {
        let (transport, pumps) = wire::stdio_filtered();
        let service = BoardTools::new()
            .serve(transport)
            .await
            .map_err(|e| McpError::Handshake(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| McpError::Session(e.to_string()))?;
        pumps.finish().await;
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
