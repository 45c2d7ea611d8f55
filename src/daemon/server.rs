//! The socket server: accepts connections on the board's Unix socket, refuses other users
//! (SO_PEERCRED), reads one bounded JSON-RPC line at a time and answers in order.
//!
//! Stopping drains ([`InFlight`]): once the board stops, every request already read is
//! finished and answered before the process ends, and a request read after that is answered
//! `unavailable` with `data.stopping` (nothing applied), so its client asks again, with the same
//! `op_id`, the board that starts next. No request is ever cut off with an internal error.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};

use super::handlers::{handle, handle_after_hello, rides_with_hello, Answer};
use super::identity::Peer;
use super::state::{stopping_error, Board};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::line::{read_line_async, Line};
use crate::proto::{self, error_line, parse_request, result_line, Call, Id, Method, MAX_LINE};

/// How soon an event stream looks again at events held back behind a gap (see
/// [`crate::store::Store::events_waiting`]): a gap usually closes within a commit's time.
const GAP_RETRY: Duration = Duration::from_millis(5);

/// The requests being answered, and whether the board is stopping (see the module docs).
#[derive(Debug, Default)]
pub struct InFlight {
    stopping: AtomicBool,
    count: AtomicUsize,
    idle: tokio::sync::Notify,
}

/// One request being answered; dropping it (after its answer is written) ends it.
pub struct Answering<'a>(&'a InFlight);

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl InFlight {
    /// Counts a request in, unless the board is stopping (`None`: answer it with
    /// [`stopping_error`] instead).
    pub fn enter(&self) -> Option<Answering<'_>> {
        // Counted before the flag is read, and the flag is set before the count is read (both
        // SeqCst): a request that got in is always waited for by [`InFlight::drain`].
        self.count.fetch_add(1, Ordering::SeqCst);
        let guard = Answering(self);
        if self.stopping.load(Ordering::SeqCst) {
            return None;
        }
        Some(guard)
    }

    /// Stops taking requests, then waits until every request already taken was answered, at
    /// most `limit`. Returns how many were still unanswered at the deadline (0 normally).
    pub async fn drain(&self, limit: Duration) -> usize {
        self.stopping.store(true, Ordering::SeqCst);
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let idle = self.idle.notified();
            let left = self.count.load(Ordering::SeqCst);
            if left == 0 {
                return 0;
            }
            if tokio::time::timeout_at(deadline, idle).await.is_err() {
                return self.count.load(Ordering::SeqCst);
            }
        }
    }
}

/// Accepts connections until the board stops.
pub async fn serve(board: Arc<Board>, listener: UnixListener, inflight: Arc<InFlight>) {
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
            // The start time is read now, while the peer is surely alive: identity by process
            // ancestry checks later that the pid still names this process.
            Ok(c) => Peer::new(c.pid(), c.uid()),
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
        let inflight = Arc::clone(&inflight);
        tokio::spawn(async move {
            if let Err(e) = connection(board, stream, peer, &inflight).await {
                tracing::debug!(error = %e, "connection ended");
            }
        });
    }
}

async fn refuse(mut stream: UnixStream) -> std::io::Result<()> {
    let e = BoardError::unauthorized("this board belongs to another user");
    stream
        .write_all(format!("{}\n", error_line(&Id::null(), &e)).as_bytes())
        .await
}

async fn connection(
    board: Arc<Board>,
    stream: UnixStream,
    peer: Peer,
    inflight: &InFlight,
) -> std::io::Result<()> {
    let (rd, mut wr) = stream.into_split();
    let mut rd = BufReader::with_capacity(64 * 1024, rd);
    // A line read with a `hello` that could not be answered together with it: the next request.
    let mut pending = None;
    loop {
        let mut answering = None;
        let next = match pending.take() {
            Some(line) => line,
            None => read_line_async(&mut rd, MAX_LINE).await?,
        };
        let line = match next {
            Line::Eof => return Ok(()),
            Line::TooLong(n) => {
                let e = BoardError::invalid(format!(
                    "request is {n} bytes; the limit is {MAX_LINE} bytes (1 MiB)"
                ))
                .with_code(-32600);
                error_line(&Id::null(), &e)
            }
            Line::Text(t) if t.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Text(t) => match parse_request(&t) {
                Err((id, e)) => error_line(&id, &e),
                Ok(proto::Request {
                    id,
                    call: Call::Subscribe(p),
                    ..
                }) => {
                    let notices = p.notices.unwrap_or(false);
                    return subscribe(board, wr, rd, id, p.after, notices).await;
                }
                Ok(req) => match inflight.enter() {
                    None => error_line(&req.id, &stopping_error()),
                    Some(guard) => {
                        answering = Some(guard);
                        // A client command's call, written with its `hello`, is already here.
                        let with = match req.method == Method::Hello && rd.buffer().contains(&b'\n')
                        {
                            true => Some(read_line_async(&mut rd, MAX_LINE).await?),
                            false => None,
                        };
                        let (out, rest) = answer(&board, req, with, peer).await;
                        pending = rest;
                        out
                    }
                },
            },
        };
        let mut line = line;
        // One write per answer: a separate write of the newline cost a second syscall.
        line.push('\n');
        let written = wr.write_all(line.as_bytes()).await;
        // Answered (or its client is gone): only now may a stopping board end.
        drop(answering);
        written?;
        if line.len() >= crate::os::memory::LARGE_ANSWER {
            drop(line);
            // The answer's tree and text are freed now; hand their pages back.
            tokio::task::spawn_blocking(crate::os::memory::give_back);
        }
    }
}

/// The answer line(s) of `req`, off the reactor in one hop: with the line `with` read right
/// after it (a `hello`'s call) when that call rides with it ([`rides_with_hello`]): then both
/// answers, in order, one line each; otherwise `with` comes back to be answered next.
async fn answer(
    board: &Arc<Board>,
    req: proto::Request,
    with: Option<Line>,
    peer: Peer,
) -> (String, Option<Line>) {
    let line = |id: &Id, out: BoardResult<Answer>| match out {
        Ok(v) => result_line(id, &v),
        Err(e) => error_line(id, &e),
    };
    let call = match with {
        Some(Line::Text(t)) => match parse_request(&t) {
            Ok(call) if rides_with_hello(&req, &call) => call,
            _ => return (one(board, req, peer, line).await, Some(Line::Text(t))),
        },
        other => return (one(board, req, peer, line).await, other),
    };
    let (hello_id, id) = (req.id.clone(), call.id.clone());
    // Store calls block briefly; keep them off the reactor threads.
    let out = board
        .blocking(move |b, off| handle_after_hello(b, off, &req, &call, peer))
        .await;
    match out {
        Ok((h, out)) => (format!("{}\n{}", line(&hello_id, h), line(&id, out)), None),
        Err(e) => (
            format!("{}\n{}", error_line(&hello_id, &e), error_line(&id, &e)),
            None,
        ),
    }
}

/// The answer line of one request, off the reactor.
async fn one(
    board: &Arc<Board>,
    req: proto::Request,
    peer: Peer,
    line: impl Fn(&Id, BoardResult<Answer>) -> String,
) -> String {
    let id = req.id.clone();
    // Store calls block briefly; keep them off the reactor threads.
    let out = board
        .blocking(move |b, off| handle(b, off, &req, peer))
        .await
        .and_then(|out| out);
    line(&id, out)
}

/// Streams events in id order with no gaps: first those after `after` (or, without `after`,
/// from the next event on), then each new one, until the client hangs up. Events are always
/// read from the log by id ([`crate::daemon::state::events::EventBus`] only wakes the stream), and the
/// store answers only ids below which nothing can still commit ([`crate::store::Store::events`]), so reading
/// past the last id sent can neither skip nor repeat an event, however the transactions that
/// committed them were scheduled. With `notices`, the notices the board makes while the stream
/// is open are sent between events (`notice` notifications; they are not in the log).
async fn subscribe(
    board: Arc<Board>,
    mut wr: OwnedWriteHalf,
    mut rd: BufReader<OwnedReadHalf>,
    id: Id,
    after: Option<i64>,
    notices: bool,
) -> std::io::Result<()> {
    let mut wake = board.events().subscribe();
    let mut notice_rx = notices.then(|| board.events().notices().terminal());
    let mut sent = match after {
        Some(a) => a,
        None => board
            .with_store(|s| s.last_event_id())
            .await
            .and_then(|r| r)
            .unwrap_or(0),
    };
    let ack = serde_json::json!({ "subscribed": true });
    wr.write_all(format!("{}\n", result_line(&id, &ack)).as_bytes())
        .await?;
    loop {
        // Take the pending wake-ups *before* reading: an event committed after this read
        // publishes a new one, so nothing committed is left unread.
        wake.drain();
        match send_new_events(&board, &mut wr, sent).await? {
            Some(last) => sent = last,
            None => return Ok(()),
        }
        // Events held back behind a gap a slower transaction may still fill (a shared store):
        // look again shortly even if no commit wakes this stream.
        let waiting = board
            .with_store(|s| s.events_waiting())
            .await
            .unwrap_or(false);
        let retry = async {
            if waiting {
                tokio::time::sleep(GAP_RETRY).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let notice = async {
            match notice_rx.as_mut() {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            alive = wake.wait() => if !alive { return Ok(()) },
            () = retry => {}
            n = notice => match n {
                Ok(n) => wr.write_all(format!("{}\n", proto::notice_line(&n)).as_bytes()).await?,
                // Missed notices are old news; the board is stopping when it is closed.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => notice_rx = None,
            },
            line = read_line_async(&mut rd, MAX_LINE) => {
                if matches!(line, Ok(Line::Eof) | Err(_)) {
                    return Ok(());
                }
            }
        }
    }
}

/// Sends the stream every event of the log after id `sent`, in batches; returns the last id
/// sent then (`sent` when there was none). None when the log could not be read: the stream
/// was sent the error and ends.
async fn send_new_events(
    board: &Arc<Board>,
    wr: &mut OwnedWriteHalf,
    mut sent: i64,
) -> std::io::Result<Option<i64>> {
    loop {
        let batch = board
            .with_store(move |s| s.events(sent, 1000))
            .await
            .and_then(|r| r);
        let batch = match batch {
            Ok(b) => b,
            Err(e) => {
                // Its fields stay (`store_down`: a follower waits for the store).
                let e = BoardError {
                    kind: crate::proto::error::ErrorKind::Unavailable,
                    message: format!("reading the event log: {}", e.message),
                    ..e
                };
                let line = error_line(&Id::null(), &e);
                wr.write_all(format!("{line}\n").as_bytes()).await?;
                return Ok(None);
            }
        };
        let Some(last) = batch.last().map(|e| e.id) else {
            return Ok(Some(sent));
        };
        let mut out = String::new();
        for e in &batch {
            out.push_str(&proto::event_line(e));
            out.push('\n');
        }
        wr.write_all(out.as_bytes()).await?;
        sent = last;
    }
}
