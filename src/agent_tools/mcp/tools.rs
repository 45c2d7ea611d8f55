//! The MCP tools: one per board verb an agent (or an operator) uses, each forwarding one request.
//!
//! Annotations follow the MCP spec's hints: `readOnlyHint` for tools that change nothing on the
//! board; for the others `destructiveHint` (true when the call ends or overwrites something:
//! finishing a task, giving up or force-ending a claim) and `idempotentHint` (true when repeating
//! the same call changes nothing more). Every tool is `openWorldHint: false`: it touches only the
//! board.

use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::{tool, tool_router};
use serde_json::{json, Value};

use super::args::*;
use super::BoardTools;

macro_rules! args {
    ($tool:literal, $ty:ty, $raw:expr) => {
        match parse::<$ty>($tool, $raw) {
            Ok(a) => a,
            Err(e) => return e,
        }
    };
}

#[tool_router(vis = "pub(super)")]
impl BoardTools {
    #[tool(
        description = "Show the board: the shared goal, the lease settings, how many agent sessions are live and how many tasks are unfinished. Read the goal once before you start.",
        input_schema = input_schema::<NoArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_status(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let _: NoArgs = args!("board_status", NoArgs, raw);
        self.forward("status", json!({})).await
    }

    #[tool(
        description = "Read the team's shared goal, or set a new one with `text` (older goals are kept).",
        input_schema = input_schema::<GoalArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_goal(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_goal", GoalArgs, raw);
        match a.text {
            Some(text) => self.forward("goal", json!({ "text": text })).await,
            None => self.forward("goal", json!({})).await,
        }
    }

    #[tool(
        description = "List the tasks that are ready to claim (open, all dependencies done), best first. Does not claim anything.",
        input_schema = input_schema::<NoArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_ready(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let _: NoArgs = args!("board_ready", NoArgs, raw);
        self.forward("ready", json!({})).await
    }

    #[tool(
        description = "List the backlog's tasks with their state and holder, optionally only those in the given states.",
        input_schema = input_schema::<ListArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_list(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_list", ListArgs, raw);
        let params = match a.state {
            Some(states) => {
                json!({ "state": states.iter().map(|s| s.as_str()).collect::<Vec<_>>() })
            }
            None => json!({}),
        };
        self.forward("list", params).await
    }

    #[tool(
        description = "Show one task in full: title, body, state, holder, generation, its notes and its history.",
        input_schema = input_schema::<ShowArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_show(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_show", ShowArgs, raw);
        self.forward("show", json!({ "task": a.task })).await
    }

    #[tool(
        description = "Claim a task for yourself (a lease: it lasts while you keep using the board and ends if you stop). Without `task`, claims the best ready task; with `wait_s`, waits that long for one to become ready. Returns the task and its `generation`: keep it and pass it to board_done. Errors: no_ready_task (nothing ready; the backlog may be finished), conflict (another agent holds it: pick another, never work on it).",
        input_schema = input_schema::<ClaimArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_claim(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_claim", ClaimArgs, raw);
        let params = match a.task {
            Some(t) => json!({ "task": t }),
            None => json!({}),
        };
        match a.wait_s.filter(|s| *s > 0) {
            None => self.forward("claim", params).await,
            Some(s) => {
                let timeout = Duration::from_secs(s.clamp(0, 600) as u64);
                self.claim_waiting(params, a.task.is_some(), timeout).await
            }
        }
    }

    #[tool(
        description = "Renew your claims now (any board call does too). Use it during long work without other board calls. Lists your live claims.",
        input_schema = input_schema::<NoArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_renew(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let _: NoArgs = args!("board_renew", NoArgs, raw);
        self.forward("renew", json!({})).await
    }

    #[tool(
        description = "Check that you still hold a live claim (on `task`, at `generation`) before you commit or publish work for it. Error lapsed: your claim ended, do not land the work.",
        input_schema = input_schema::<CheckArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_check(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_check", CheckArgs, raw);
        self.forward(
            "check",
            without_nulls(json!({ "task": a.task, "generation": a.generation })),
        )
        .await
    }

    #[tool(
        description = "Finish a task you claimed, with a note saying what you did. Pass the `generation` from board_claim. Error lapsed: your claim ended (lease expired or someone else holds the task now): stop working on it, do not commit, re-read it with board_show.",
        input_schema = input_schema::<DoneArgs>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_done(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_done", DoneArgs, raw);
        self.forward(
            "done",
            without_nulls(json!({ "task": a.task, "generation": a.generation, "note": a.note })),
        )
        .await
    }

    #[tool(
        description = "Give a claimed task back unfinished (it becomes ready for others), with a note saying why and what you learned. Operators only: `force` ends the claim whoever holds it.",
        input_schema = input_schema::<ReleaseArgs>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_release(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_release", ReleaseArgs, raw);
        let mut params = without_nulls(json!({
            "task": a.task, "generation": a.generation, "note": a.note
        }));
        if a.force == Some(true) {
            params["force"] = json!(true);
        }
        self.forward("release", params).await
    }

    #[tool(
        description = "Add a note to a task you hold: findings, decisions, warnings the next agent should know.",
        input_schema = input_schema::<NoteArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_note(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_note", NoteArgs, raw);
        self.forward("note", json!({ "task": a.task, "text": a.text }))
            .await
    }

    #[tool(
        description = "Add a new task to the shared backlog (for work you found that is outside your claimed task). It is not claimed for you.",
        input_schema = input_schema::<AddArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_add(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_add", AddArgs, raw);
        self.forward(
            "add",
            without_nulls(json!({
                "title": a.title, "body": a.body, "priority": a.priority, "after": a.after
            })),
        )
        .await
    }

    #[tool(
        description = "Say you are waiting for a human (a question, a permission): the board shows it loudly and keeps your claims meanwhile. Any later board call, or board_resume, ends the wait.",
        input_schema = input_schema::<WaitArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_wait(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_wait", WaitArgs, raw);
        self.forward("wait", json!({ "question": a.question }))
            .await
    }

    #[tool(
        description = "End waiting for a human (you got the answer and work again).",
        input_schema = input_schema::<NoArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_resume(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let _: NoArgs = args!("board_resume", NoArgs, raw);
        self.forward("resume", json!({})).await
    }

    #[tool(
        description = "List the agent sessions: who is working, waiting or idle, and which claims each holds.",
        input_schema = input_schema::<AgentsArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_agents(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_agents", AgentsArgs, raw);
        self.forward("agents", json!({ "all": a.all.unwrap_or(false) }))
            .await
    }
}

/// The object without its null members (absent and null mean the same to the board, but a
/// strict wire refuses nothing it does not need to see).
fn without_nulls(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        m.retain(|_, x| !x.is_null());
    }
    v
}
