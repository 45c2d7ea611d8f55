//! Events committed by other hosts' boards on a shared PostgreSQL store reach this board's
//! streams (the TUI, `log --follow`, `claim --wait`), and this board's reach theirs.
//!
//! The event table is the truth; NOTIFY is only a wake-up hint. This task keeps one connection
//! that LISTENs and also tells the other hosts of this board's commits: after each commit the
//! newest id goes out as `NOTIFY board_events, '<id>'` (several commits meanwhile as one). It is
//! sent after the commit, not by it: a transaction that notifies holds PostgreSQL's one
//! notification lock through its commit's flush to disk, so notifying writers commit one at a
//! time, ~600 a second here (BENCHMARKS.md). Each notification wakes the
//! [`super::state::events::EventBus`], whose streams then read the log by id, so a missed or merged
//! notification loses nothing; every [`CATCH_UP`] the streams look anyway (a board that died
//! between its commit and its notification told nobody). After the connection drops, it
//! connects again, LISTENs again, then wakes every stream once: they catch up by id from where
//! they were, so an event committed while the connection was down is neither lost nor
//! delivered twice.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_postgres::AsyncMessage;

use super::state::Board;

/// The channel the PostgreSQL store notifies on (see `migrations/postgres`).
pub const CHANNEL: &str = "board_events";

/// First wait before connecting again after the LISTEN connection failed; doubles up to
/// [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(50);
/// Longest wait between two connection attempts.
const RETRY_MAX: Duration = Duration::from_secs(2);
/// How often the streams read the log without a notification.
pub const CATCH_UP: Duration = Duration::from_secs(1);

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
    // This connection's own notifications come back to it: they name this board's commits.
    let me = Arc::new(AtomicI32::new(0));
    let me_seen = Arc::clone(&me);
    // The connection object does the I/O; notifications arrive through it, not the client.
    let mut driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if n.process_id() != me_seen.load(Ordering::Relaxed) {
                        wake_board.events().wake(n.payload().parse().unwrap_or(0));
                    }
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
    let pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await?
        .get(0);
    me.store(pid, Ordering::Relaxed);
    client
        .batch_execute(&format!(
            "SET application_name = 'board follower'; LISTEN {CHANNEL}"
        ))
        .await?;
    // Catch up on whatever was committed before this LISTEN took effect.
    board.events().wake(0);
    tracing::info!("listening for other hosts' events");
    let catch_up = async {
        let mut every = tokio::time::interval(CATCH_UP);
        loop {
            every.tick().await;
            board.events().wake(0);
        }
    };
    let ended = tokio::select! {
        ended = &mut driver => ended,
        told = tell_others(&client, board.events().own()) => {
            driver.abort();
            return told.map_err(Into::into);
        }
        () = catch_up => Ok(Ok(())),
    };
    drop(client);
    match ended {
        Ok(r) => r.map_err(Into::into),
        Err(join) => {
            tracing::error!(error = %join, "the LISTEN task failed");
            Ok(())
        }
    }
}

/// Sends `NOTIFY board_events, '<id>'` for each newest id this board committed (see the module
/// docs), until the connection fails; once at start too (a commit made while it was down).
async fn tell_others(
    client: &tokio_postgres::Client,
    mut own: watch::Receiver<i64>,
) -> Result<(), tokio_postgres::Error> {
    let notify = client.prepare("SELECT pg_notify($1, $2)").await?;
    own.mark_changed();
    while own.changed().await.is_ok() {
        let id = *own.borrow_and_update();
        if id > 0 {
            client
                .execute(&notify, &[&CHANNEL, &id.to_string()])
                .await?;
        }
    }
    // The board is stopping.
    std::future::pending().await
}
