//! What a tool call returns: a board answer as structured content, a refusal (or an argument
//! the tool does not accept) as a tool error, and the notice an agent gets in any tool result
//! while it has unread messages.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Deserialize;
use serde_json::Value;

use crate::proto::error::BoardError;
use crate::proto::methods::InboxNotice;

/// A board answer as a tool result: the result as structured content, or the refusal as a tool
/// error, each with the notice of unread messages when the answer carries one.
pub(super) fn tool_result(out: Result<Value, BoardError>) -> CallToolResult {
    match out {
        Ok(v) => {
            let unread = v.get("inbox").cloned();
            with_notice(CallToolResult::structured(v), unread.as_ref())
        }
        Err(e) => {
            let unread = e.data.get("inbox").cloned();
            with_notice(tool_error(&e), unread.as_ref())
        }
    }
}

/// A board error as an MCP tool error: text `KIND (CODE): message` then the JSON-RPC error
/// object; the same object as structured content.
pub fn tool_error(e: &BoardError) -> CallToolResult {
    let obj = e.to_json();
    let code = e.code.unwrap_or(e.kind.code());
    let text = format!("{} ({code}): {}\n{obj}", e.kind.as_str(), e.message);
    let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
    r.structured_content = Some(obj);
    r
}

/// Adds a line of text to a tool result whose board answer carries `inbox` (unread messages),
/// so a model that reads only text content sees it too.
fn with_notice(mut r: CallToolResult, inbox: Option<&Value>) -> CallToolResult {
    let Some(notice) = inbox
        .and_then(|i| InboxNotice::deserialize(i).ok())
        .filter(|n| n.unread > 0)
    else {
        return r;
    };
    r.content.push(ContentBlock::text(format!(
        "You have {} unread message(s) from {}: call board_inbox to read them.",
        notice.unread,
        notice.from.join(", ")
    )));
    r
}
