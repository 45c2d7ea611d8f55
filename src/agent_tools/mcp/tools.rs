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

use super::args::*;
use super::BoardTools;
use crate::proto::methods::{
    AddParams, AgentsParams, Call, CheckParams, ClaimParams, DoneParams, EditParams, GoalParams,
    ListParams, NoParams, NoteParams, ReadyParams, ReleaseParams, ShowParams, StateFilter,
    WaitParams,
};

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
        input_schema = input_schema::<NoParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_status(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let _: NoParams = args!("board_status", NoParams, raw);
        self.forward(Call::Status(NoParams {})).await
    }

    #[tool(
        description = "Read the team's shared goal, or set a new one with `text` (older goals are kept).",
        input_schema = input_schema::<GoalParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_goal(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let p = args!("board_goal", GoalParams, raw);
        self.forward(Call::Goal(p)).await
    }

    #[tool(
        description = "List the tasks that are ready to claim (open, all dependencies done), best first. Does not claim anything.",
        input_schema = input_schema::<ReadyParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_ready(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let p = args!("board_ready", ReadyParams, raw);
        self.forward(Call::Ready(p)).await
    }

    #[tool(
        description = "List the backlog's tasks with their state and holder, optionally only those in the given states.",
        input_schema = input_schema::<ListArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_list(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_list", ListArgs, raw);
        let params = ListParams {
            state: a.state.map(StateFilter::Many),
            ..ListParams::default()
        };
        self.forward(Call::List(params)).await
    }

    #[tool(
        description = "Show one task in full: title, body, state, holder, generation, its notes and its history.",
        input_schema = input_schema::<ShowParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_show(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let p = args!("board_show", ShowParams, raw);
        self.forward(Call::Show(p)).await
    }

    #[tool(
        description = "Claim a task for yourself (a lease: it lasts while you keep using the board and ends if you stop). Without `task`, claims the best ready task (with `label`, the best carrying that label); with `wait_s`, waits that long for one to become ready. Returns the task and its `generation`: keep it and pass it to board_done. Errors: no_ready_task (nothing ready; the backlog may be finished), conflict (another agent holds it: pick another, never work on it).",
        input_schema = input_schema::<ClaimArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_claim(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_claim", ClaimArgs, raw);
        // A named task wins over a label.
        let params = ClaimParams {
            label: a.label.filter(|_| a.task.is_none()),
            task: a.task,
        };
        match a.wait_s.filter(|s| *s > 0) {
            None => self.forward(Call::Claim(params)).await,
            Some(s) => {
                let timeout = Duration::from_secs(s.clamp(0, 600) as u64);
                self.claim_waiting(params, a.task.is_some(), timeout).await
            }
        }
    }

    #[tool(
        description = "Renew your claims now (any board call does too). Use it during long work without other board calls. Lists your live claims.",
        input_schema = input_schema::<NoParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_renew(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let _: NoParams = args!("board_renew", NoParams, raw);
        self.forward(Call::Renew(NoParams {})).await
    }

    #[tool(
        description = "Check that you still hold a live claim (on `task`, at `generation`) before you commit or publish work for it. Error lapsed: your claim ended, do not land the work.",
        input_schema = input_schema::<CheckParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_check(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let p = args!("board_check", CheckParams, raw);
        self.forward(Call::Check(p)).await
    }

    #[tool(
        description = "Finish a task you claimed, with a note saying what you did. Pass the `generation` from board_claim. Error lapsed: your claim ended (lease expired or someone else holds the task now): stop working on it, do not commit, re-read it with board_show.",
        input_schema = input_schema::<DoneParams>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_done(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let p = args!("board_done", DoneParams, raw);
        self.forward(Call::Done(p)).await
    }

    #[tool(
        description = "Give a claimed task back unfinished (it becomes ready for others), with a note saying why and what you learned. Operators only: `force` ends the claim whoever holds it.",
        input_schema = input_schema::<ReleaseParams>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_release(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let p = args!("board_release", ReleaseParams, raw);
        self.forward(Call::Release(p)).await
    }

    #[tool(
        description = "Add a note to a task you hold: findings, decisions, warnings the next agent should know.",
        input_schema = input_schema::<NoteParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_note(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let p = args!("board_note", NoteParams, raw);
        self.forward(Call::Note(p)).await
    }

    #[tool(
        description = "Add a new task to the shared backlog (for work you found that is outside your claimed task). It is not claimed for you. Optional: `labels`, `for` (the agent name or role that may claim it), `review` (true: its done waits for a person; false: it skips review).",
        input_schema = input_schema::<AddParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn board_add(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let p = args!("board_add", AddParams, raw);
        self.forward(Call::Add(p)).await
    }

    #[tool(
        description = "Change a task's title, body, priority, dependencies (`after`), labels (replaced whole; [] clears them), `for` (\"\" makes it for any agent) or `review`. Members you leave out stay as they are.",
        input_schema = input_schema::<EditParams>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_edit(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let p = args!("board_edit", EditParams, raw);
        self.forward(Call::Edit(p)).await
    }

    #[tool(
        description = "Ask a person a question: the board shows it loudly, notifies, and keeps your claims while it is open. It stays open until a person answers it, you withdraw it (board_resume) or your session ends; your other calls do not end it. With `wait_s`, waits that long for the answer and returns it (`outcome`: answered, with `answer`; timed_out: still open, ask again to keep waiting or carry on and read it later with board_inbox).",
        input_schema = input_schema::<WaitArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_wait(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let a = args!("board_wait", WaitArgs, raw);
        match a.wait_s.filter(|s| *s > 0) {
            None => {
                self.forward(Call::Wait(WaitParams {
                    question: a.question,
                }))
                .await
            }
            Some(s) => {
                let timeout = Duration::from_secs(s.clamp(0, 600) as u64);
                self.question_waiting(a.question, timeout).await
            }
        }
    }

    #[tool(
        description = "Withdraw your open question (you no longer need the answer); also ends a permission wait.",
        input_schema = input_schema::<NoParams>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn board_resume(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let _: NoParams = args!("board_resume", NoParams, raw);
        self.forward(Call::Resume(NoParams {})).await
    }

    #[tool(
        description = "List the agent sessions: who is working, waiting or idle, and which claims each holds.",
        input_schema = input_schema::<AgentsParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn board_agents(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        let p = args!("board_agents", AgentsParams, raw);
        self.forward(Call::Agents(p)).await
    }
}
