//! `[notify] desktop`: a freedesktop notification (`org.freedesktop.Notifications.Notify`) on
//! the session D-Bus the board was started in (`DBUS_SESSION_BUS_ADDRESS`). The summary names
//! the agent, the body carries the question or text, with control characters removed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::super::state::Board;
use crate::proto::NoticeView;

/// Longest body, in terminal columns: notification daemons show a few lines.
const BODY_COLS: usize = 400;
/// The longest a connection and one call may take before the send counts as failed.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Shows `notice` on the desktop. A connection is made per send: sends are rare (bursts are
/// coalesced) and a bus that restarted is found again without bookkeeping. Errors: the bus or
/// the notification service could not be reached, in words.
pub async fn send(_board: Arc<Board>, notice: NoticeView) -> Result<(), String> {
    let summary = crate::proto::sanitize::one_line(&notice.title());
    let body = crate::proto::sanitize::truncate_width(
        &crate::proto::sanitize::one_line(&notice.text),
        BODY_COLS,
    );
    let call = async {
        let bus = zbus::Connection::session().await?;
        let hints: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
        bus.call_method(
            Some("org.freedesktop.Notifications"),
            "/org/freedesktop/Notifications",
            Some("org.freedesktop.Notifications"),
            "Notify",
            &(
                "board",
                0u32,
                "",
                summary.as_str(),
                body.as_str(),
                Vec::<&str>::new(),
                hints,
                -1i32,
            ),
        )
        .await?;
        Ok::<(), zbus::Error>(())
    };
    match tokio::time::timeout(TIMEOUT, call).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("the session D-Bus: {e}")),
        Err(_) => Err(format!(
            "the session D-Bus did not answer within {TIMEOUT:?}"
        )),
    }
}
