//! The messaging part of `board mcp`: tools `board_send`, `board_answer` and `board_inbox` (the
//! notice of unread messages in any tool result is added by the `tool_result` module).

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::{tool, tool_router};

use super::args::{input_schema, parse};
use super::BoardTools;
use crate::proto::methods::{AnswerParams, Call, InboxParams, NoParams, SendParams};

#[tool_router(router = inbox_router, vis = "pub(super)")]
impl BoardTools {
    #[tool(
        description = "Send a message to another agent session (by id or name) or to `operator` (the human). The recipient's next board call tells it it has unread messages.",
        input_schema = input_schema::<SendParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_send(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a: SendParams = match parse("board_send", raw) {
            Ok(a) => a,
            Err(e) => return e,
        };
        self.forward(Call::Send(a)).await
    }

    #[tool(
        description = "Answer the open question of an agent session (`to`: its id or name) — for the operator, or an agent that knows the answer. The answer goes to its inbox and its question ends. Error not_found: it has no open question.",
        input_schema = input_schema::<AnswerParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_answer(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a: AnswerParams = match parse("board_answer", raw) {
            Ok(a) => a,
            Err(e) => return e,
        };
        self.forward(Call::Answer(a)).await
    }

    #[tool(
        description = "Read the messages sent to you that you have not read yet (each is shown once), oldest first. Call it when a result carries `inbox` (you have unread messages).",
        input_schema = input_schema::<NoParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_inbox(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        if let Err(e) = parse::<NoParams>("board_inbox", raw) {
            return e;
        }
        self.forward(Call::Inbox(InboxParams::default())).await
    }
}
