//! Ends the hosts that stopped beating (see [`super::hosts`]), every heartbeat period, on the
//! board's pool: the statement takes the store's write lock (it expels claims and reopens
//! tasks), so it runs apart from the heartbeat, which must never wait behind that lock.

use std::sync::Arc;
use std::time::Duration;

use super::hosts::Beat;
use super::state::{Board, OffReactor};
use crate::proto::error::BoardResult;

/// Ends dead hosts until the board stops; a failure (store unreachable) is logged at debug
/// level (the heartbeat reports outages) and tried again one period later.
pub async fn run(board: Arc<Board>, beat: Beat) {
    let every = Duration::from_millis(beat.every_ms.max(1) as u64);
    loop {
        tokio::time::sleep(every).await;
        match board.blocking(reap_once).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "ending dead hosts failed"),
            Err(e) => tracing::error!(error = %e, "host reaper task failed"),
        }
    }
}

/// One pass: the store ends every host whose session expired while this board was in
/// contact (see [`crate::store::Store::end_dead_hosts`]), and the events are published.
pub fn reap_once(board: &Arc<Board>, off: &OffReactor) -> BoardResult<()> {
    let ended = board.store(off).end_dead_hosts()?;
    board.publish(ended);
    Ok(())
}
