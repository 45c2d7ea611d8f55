//! Events committed by other hosts' boards on a shared PostgreSQL store reach this board's
//! streams (the TUI, `log --follow`, `claim --wait`).
//!
//! The event table is the truth; NOTIFY is only a wake-up hint. Each write transaction of the
//! PostgreSQL store commits its events in id order and a statement trigger sends
//! `NOTIFY board_events, '<max id>'` at commit. This task keeps one LISTEN connection; each
//! notification wakes the [`super::events::EventBus`], whose streams then read the log by id,
//! so a missed or merged notification loses nothing. After the connection drops, it connects
//! again, LISTENs again, then wakes every stream once: they catch up by id from where they were,
//! so an event committed while the connection was down is neither lost nor delivered twice.

use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::AsyncMessage;

use super::state::Board;

/// The channel the PostgreSQL store notifies on (see `migrations/postgres`).
pub const CHANNEL: &str = "board_events";

/// First wait before connecting again after the LISTEN connection failed; doubles up to
/// [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(50);
/// Longest wait between two connection attempts.
const RETRY_MAX: Duration = Duration::from_secs(2);

/// Follows the store at `url` until the board stops.
pub async fn run(board: Arc<Board>, url: String) {
    let mut wait = RETRY_FIRST;
    loop {
        match listen(&board, &url).await {
            Ok(()) => {
                tracing::warn!("the LISTEN connection to the store closed; connecting again");
                wait = RETRY_FIRST;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot LISTEN on the store; trying again");
                wait = (wait * 2).min(RETRY_MAX);
            }
        }
        tokio::time::sleep(wait).await;
    }
}

/// One LISTEN connection, until it ends. Ok when the server closed it.
async fn listen(
    board: &Arc<Board>,
    url: &str,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let tls = crate::store::pg::tls::connector()?;
    let (client, mut connection) = tokio_postgres::connect(url, tls).await?;
    let wake_board = Arc::clone(board);
    // The connection object does the I/O; notifications arrive through it, not the client.
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    wake_board.events().wake(n.payload().parse().unwrap_or(0));
                }
                Some(Ok(AsyncMessage::Notice(n))) => {
                    tracing::debug!(notice = %n, "store notice");
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            }
        }
    });
    client
        .batch_execute(&format!(
            "SET application_name = 'board follower'; LISTEN {CHANNEL}"
        ))
        .await?;
    // Catch up on whatever was committed before this LISTEN took effect.
    board.events().wake(0);
    tracing::info!("listening for other hosts' events");
    let ended = driver.await;
    drop(client);
    match ended {
        Ok(r) => r.map_err(Into::into),
        Err(join) => {
            tracing::error!(error = %join, "the LISTEN task failed");
            Ok(())
        }
    }
}
