//! The agent operations the agents panel asks for, and the restart, stop or question they wait
//! on: data only.

/// What to do with an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamAction {
    /// Start the slot whose agent ended (or that has no pane).
    Start,
    /// Bring the agent's tmux pane on screen.
    Attach,
    /// End the running agent and start it again in its pane.
    Restart,
    /// End the agent (its pane stays, showing why).
    Stop,
    /// Start every slot of `board.toml` that is missing or ended.
    Up,
}

/// One agent operation for the event loop to carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamOp {
    /// What to do.
    pub action: TeamAction,
    /// The slot (configured name); empty for [`TeamAction::Up`].
    pub slot: String,
    /// The pane of the slot's latest session, when known.
    pub pane: Option<String>,
    /// The launcher of the slot's live session, when it has one.
    pub launcher_pid: Option<i64>,
    /// The slot's live session id (raw), when it has one.
    pub session: Option<String>,
}

/// A stop the board is carrying out, until a refresh shows the session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopping {
    /// Session id (raw).
    pub session: String,
    /// The agent's name as people see it, inert.
    pub shown: String,
    /// When to give up and say it could not (the app's `now_ms` clock); None until the board
    /// accepted the stop.
    pub deadline_ms: Option<u64>,
}

/// A restart or stop waiting for y/n.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The operation on yes.
    pub op: TeamOp,
    /// The question, inert.
    pub question: String,
}
