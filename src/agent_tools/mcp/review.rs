//! The review part of `board mcp`: tools `board_accept` and `board_reject`, so an agent session
//! can review another's finished work (never its own).

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::{tool, tool_router};

use super::args::{input_schema, parse};
use super::BoardTools;
use crate::proto::methods::{AcceptParams, Call, RejectParams};

#[tool_router(router = review_router, vis = "pub(super)")]
impl BoardTools {
    #[tool(
        description = "Accept a task in review (someone else's finished work; never your own): the board lands its commit on the base branch, then the task is done. Error conflict: it does not merge cleanly (the task goes back to ready with the paths in a note) or the base kept moving; lapsed: a commit of a lapsed holder is in it.",
        input_schema = input_schema::<AcceptParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_accept(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a: AcceptParams = match parse("board_accept", raw) {
            Ok(a) => a,
            Err(e) => return e,
        };
        self.forward(Call::Accept(a)).await
    }

    #[tool(
        description = "Reject a task in review (someone else's finished work; never your own): it goes back to ready with your note saying what is wrong and what to do instead.",
        input_schema = input_schema::<RejectParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_reject(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a: RejectParams = match parse("board_reject", raw) {
            Ok(a) => a,
            Err(e) => return e,
        };
        self.forward(Call::Reject(a)).await
    }
}
