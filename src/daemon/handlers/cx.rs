//! What every handler gets: the board, the authenticated caller and the time of the request
//! ([`Cx`]).

use std::sync::Arc;

use crate::daemon::identity::Caller;
use crate::daemon::state::store_pool::StoreGuard;
use crate::daemon::state::{Board, OffReactor};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::Method;

/// The caller's method must come from an agent session.
pub(super) trait RequireAgent {
    /// The agent session id; `unauthorized` for an operator (`what` names the method).
    fn require_agent(&self, what: Method) -> BoardResult<&str>;
}

impl RequireAgent for Caller {
    fn require_agent(&self, what: Method) -> BoardResult<&str> {
        self.agent().ok_or_else(|| {
            BoardError::unauthorized(format!(
                "`{what}` needs an agent identity (BOARD_AGENT and BOARD_TOKEN); start the agent with `board run`"
            ))
        })
    }
}

/// What every handler gets: the board, the authenticated caller, and the lease-clock time (ms)
/// the request is handled at (read with the stall check, before the store is locked).
pub struct Cx<'a> {
    /// The board.
    pub board: &'a Arc<Board>,
    /// Who is calling.
    pub caller: &'a Caller,
    /// Lease-clock now, ms.
    pub now: i64,
    /// The handler runs on the blocking pool.
    pub off: &'a OffReactor,
}

impl Cx<'_> {
    /// A store of the pool ([`Board::store`]).
    pub fn store(&self) -> StoreGuard<'_> {
        self.board.store(self.off)
    }
}
