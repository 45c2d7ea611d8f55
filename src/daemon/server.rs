//! The socket server: accepts connections on the board's Unix socket, refuses other users
//! (SO_PEERCRED), reads one bounded JSON-RPC line at a time and answers in order.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use super::handler::{handle, Peer};
use super::state::Board;
use crate::proto::error::BoardError;
use crate::proto::{self, error_line, event_line, parse_request, result_line, Params, MAX_LINE};

/// One line read from a client, bounded by [`MAX_LINE`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line (newline stripped).
    Text(Vec<u8>),
    /// A line longer than the limit; its bytes were discarded up to the newline. Holds its size.
    TooLong(usize),
    /// End of input.
    Eof,
}

/// Reads one line without ever buffering more than `max` bytes of it.
pub async fn read_line_bounded<R: AsyncBufReadExt + Unpin>(
    r: &mut R,
    max: usize,
) -> std::io::Result<Line> {
    let mut buf = Vec::new();
    let mut size = 0usize;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(match (size, buf.is_empty()) {
                (0, _) => Line::Eof,
                (s, _) if s > max => Line::TooLong(s),
                _ => Line::Text(buf),
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if size + take <= max {
            buf.extend_from_slice(&chunk[..take]);
        } else {
            buf = Vec::new();
        }
        size += take;
        r.consume(if done { take + 1 } else { take });
        if done {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(if size > max {
                Line::TooLong(size)
            } else {
                Line::Text(buf)
            });
        }
    }
}

/// Accepts connections until the board stops.
pub async fn serve(board: Arc<Board>, listener: UnixListener) {
    let me = nix::unistd::getuid().as_raw();
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let peer = match stream.peer_cred() {
            Ok(c) => Peer {
                pid: c.pid(),
                uid: c.uid(),
            },
            Err(e) => {
                tracing::warn!(error = %e, "no peer credentials; dropping connection");
                continue;
            }
        };
        if peer.uid != me {
            tracing::warn!(uid = peer.uid, "refused a connection from another user");
            let _ = refuse(stream).await;
            continue;
        }
        let board = Arc::clone(&board);
        tokio::spawn(async move {
            if let Err(e) = connection(board, stream, peer).await {
                tracing::debug!(error = %e, "connection ended");
            }
        });
    }
}

async fn refuse(mut stream: UnixStream) -> std::io::Result<()> {
    let e = BoardError::unauthorized("this board belongs to another user");
    stream
        .write_all(format!("{}\n", error_line(&serde_json::Value::Null, &e)).as_bytes())
        .await
}

async fn connection(board: Arc<Board>, stream: UnixStream, peer: Peer) -> std::io::Result<()> {
    let (rd, mut wr) = stream.into_split();
    let mut rd = BufReader::with_capacity(64 * 1024, rd);
    loop {
        let line = match read_line_bounded(&mut rd, MAX_LINE).await? {
            Line::Eof => return Ok(()),
            Line::TooLong(n) => {
                let e = BoardError::invalid(format!(
                    "request is {n} bytes; the limit is {MAX_LINE} bytes (1 MiB)"
                ))
                .with_code(-32600);
                error_line(&serde_json::Value::Null, &e)
            }
            Line::Text(t) if t.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Text(t) => match parse_request(&t) {
                Err((id, e)) => error_line(&id, &e),
                Ok(req) if req.method == "subscribe" => {
                    let after = Params(&req.params).opt_i64("after").ok().flatten();
                    return subscribe(board, wr, rd, req.id, after).await;
                }
                Ok(req) => {
                    let b = Arc::clone(&board);
                    let id = req.id.clone();
                    // Store calls block briefly; keep them off the reactor threads.
                    let out = tokio::task::spawn_blocking(move || handle(&b, &req, peer))
                        .await
                        .unwrap_or_else(|e| {
                            Err(BoardError::internal(format!("request failed: {e}")))
                        });
                    match out {
                        Ok(v) => result_line(&id, &v),
                        Err(e) => error_line(&id, &e),
                    }
                }
            },
        };
        let mut line = line;
        // One write per answer: a separate write of the newline cost a second syscall.
        line.push('\n');
        wr.write_all(line.as_bytes()).await?;
    }
}

/// Streams events: first those after `after` from the log, then live ones, until the client
/// hangs up. Live events can arrive slightly out of id order (see below), never missing. A
/// subscriber that falls too far behind gets an `invalid` error and is dropped.
async fn subscribe(
    board: Arc<Board>,
    mut wr: tokio::net::unix::OwnedWriteHalf,
    mut rd: BufReader<tokio::net::unix::OwnedReadHalf>,
    id: serde_json::Value,
    after: Option<i64>,
) -> std::io::Result<()> {
    let mut rx = board.events.subscribe();
    let backlog = match after {
        Some(a) => board.store().events(a, 100_000).unwrap_or_default(),
        None => Vec::new(),
    };
    // Live events up to this id were already sent from the log. Only those are skipped: events
    // are published after their transaction commits, by whichever thread made them, so two
    // transitions committed at nearly the same time can arrive here out of id order, and
    // skipping everything below the highest id seen would lose the later-published one.
    let sent = backlog.last().map(|e| e.id).or(after).unwrap_or(0);
    let ack = serde_json::json!({ "subscribed": true });
    wr.write_all(format!("{}\n", result_line(&id, &ack)).as_bytes())
        .await?;
    for e in &backlog {
        wr.write_all(format!("{}\n", event_line(e)).as_bytes())
            .await?;
    }
    loop {
        tokio::select! {
            ev = rx.recv() => match ev {
                Ok(e) if e.id > sent => {
                    wr.write_all(format!("{}\n", proto::event_line(&e)).as_bytes()).await?;
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    let e = BoardError::unavailable(format!("subscriber fell {n} events behind; resubscribe with `after`"));
                    wr.write_all(format!("{}\n", error_line(&serde_json::Value::Null, &e)).as_bytes()).await?;
                    return Ok(());
                }
                Err(_) => return Ok(()),
            },
            line = read_line_bounded(&mut rd, MAX_LINE) => {
                if matches!(line, Ok(Line::Eof) | Err(_)) {
                    return Ok(());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_skipped_and_the_next_line_is_read() {
        let mut input = vec![b'x'; 100];
        input.push(b'\n');
        input.extend_from_slice(b"ok\n");
        let mut r = BufReader::with_capacity(16, &input[..]);
        assert_eq!(
            read_line_bounded(&mut r, 50).await.unwrap(),
            Line::TooLong(100)
        );
        assert_eq!(
            read_line_bounded(&mut r, 50).await.unwrap(),
            Line::Text(b"ok".to_vec())
        );
        assert_eq!(read_line_bounded(&mut r, 50).await.unwrap(), Line::Eof);
    }
}
