//! `board tui` (and `board` with no command): the live board in a terminal pane.
//!
//! Threads and data flow:
//!
//! - **events**: a connection subscribed to the board's event stream ([`Client::follow`]). Each
//!   event becomes a `Msg::Event`; when the board goes away it reports
//!   `Msg::Disconnected` and reconnects with backoff (100 ms doubling to 2 s), resuming after
//!   the last event it saw.
//! - **fetch**: a second connection that answers `Job`s: a refresh (`status`, `goal`, `list`,
//!   `agents`, `log` → `Msg::Snapshot`) or a steering call (`add`, `edit`, `goal`, `release`,
//!   `cancel`, `show` → `Msg::CallDone`). Writes carry an `op_id`, so the one retry after a
//!   broken connection is never applied twice.
//! - **input**: crossterm key, paste and resize events.
//! - **main**: the UI loop. It owns the [`App`], applies each message with the pure update
//!   functions of [`update`], carries out the [`Effect`]s they return, and redraws with
//!   [`view::draw`] after every batch of messages and once a second (lease countdowns). Refreshes
//!   are coalesced: at most one in flight and one queued, however many events arrive.
//!
//! Layers, each importing only those below it: [`state`] (the data) ← [`update`] (what keys,
//! refreshes and answers do to it) ← [`view`] (drawing it, no I/O) ← this loop (the terminal,
//! the board's connections, tmux and git). [`notice`], `team_io` and `review_diff` are the
//! loop's I/O helpers.
//!
//! Every connection is an operator's: the TUI drops any `BOARD_AGENT`/`BOARD_TOKEN` identity.

#[cfg(test)]
mod form_tests;
pub mod notice;
mod review_diff;
#[cfg(test)]
mod review_tests;
pub mod state;
mod team_io;
pub mod update;
#[cfg(test)]
mod update_tests;
pub mod view;

use std::io::{stdout, IsTerminal};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste, Event};
use crossterm::execute;
use nix::sys::signal::{SigSet, Signal};
use ratatui::DefaultTerminal;
use serde::Deserialize;
use serde_json::Value;

use crate::proto::client::{self, Client, Target};
use crate::proto::error::{BoardError, BoardResult, ErrorKind};
use crate::proto::methods::{AgentsParams, Call, GoalParams, ListParams, LogParams, NoParams};
use crate::proto::methods::{AgentsResult, GoalResult, LogResult, StatusResult, TasksResult};
use crate::proto::sanitize::inert;
use state::app::{App, Effect, Purpose, Request};
use state::snapshot::Snapshot;

/// How often the snapshot is re-fetched without any event (agents' own requests renew leases
/// and update "last heard" without an event).
const PERIODIC_REFRESH: Duration = Duration::from_secs(5);
/// Events kept in the feed.
const FEED_EVENTS: i64 = 200;
/// Messages applied before the screen is redrawn, at most.
const BATCH: usize = 512;

/// Why the TUI could not run.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The board could not be reached or refused us (before the screen was taken).
    #[error("{0}")]
    Board(#[from] BoardError),
    /// stdin or stdout is not a terminal.
    #[error(
        "the TUI needs a terminal; in scripts use `board list`, `board agents` or `board log --follow`"
    )]
    NotATerminal,
    /// Setting up, drawing to or reading from the terminal failed.
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
    /// SIGTERM, SIGINT or SIGHUP arrived; the terminal was restored before exiting.
    #[error("stopped by {}", .0.as_str())]
    Signal(Signal),
}

impl TuiError {
    /// The process exit code (design: "CLI exit codes").
    pub fn exit_code(&self) -> i32 {
        match self {
            TuiError::Board(e) => e.kind.exit_code(),
            TuiError::NotATerminal => ErrorKind::Usage.exit_code(),
            TuiError::Terminal(_) => 1,
            // The shell's convention for "killed by signal N".
            TuiError::Signal(sig) => 128 + *sig as i32,
        }
    }
}

/// Runs the TUI until the user quits; returns the exit code.
pub fn run() -> i32 {
    match try_run() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("board: {}", inert(&e.to_string()));
            e.exit_code()
        }
    }
}

/// What the UI loop hears about.
enum Msg {
    /// A terminal event.
    Term(Event),
    /// Reading the terminal failed.
    TermError(std::io::Error),
    /// The event stream is (re)connected.
    Connected,
    /// The event stream broke; `attempt` failures in a row.
    Disconnected { attempt: u32, error: String },
    /// The board published an event.
    Event,
    /// The board made a notice (`[notify] terminal`): written to the terminal between draws.
    Notice(crate::proto::NoticeView),
    /// A refresh finished; the instant is when the task list was fetched.
    Snapshot(BoardResult<(Snapshot, Instant)>),
    /// A call finished.
    CallDone(Purpose, BoardResult<Value>),
    /// A signal that ends the TUI arrived.
    Signal(Signal),
}

/// Work for the fetch thread.
enum Job {
    Refresh,
    Call(Request),
    /// Type an answer into an agent's tmux pane (pane, text).
    Type(String, String),
    /// The diff of a task in review (task, commit).
    Diff(crate::proto::glossary::TaskId, String),
}

fn operator(mut c: Client) -> Client {
    c.identity = None;
    c
}

fn try_run() -> Result<(), TuiError> {
    if !stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(TuiError::NotATerminal);
    }
    // Before any thread starts, so that every thread inherits the mask and the signals reach
    // only the `signals` thread: the UI loop then leaves the screen as it found it.
    let ending = ending_signals();
    ending.thread_block().map_err(std::io::Error::from)?;
    let target = client::target()?;
    // Start the board if none runs and check its protocol before taking over the screen, so
    // these errors print plainly.
    operator(Client::connect(&target, true)?).send(Call::Hello(NoParams {}))?;
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());

    let (tx, rx) = mpsc::channel::<Msg>();
    let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
    let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(format!("board-tui-{name}"))
            .spawn(f)
            .map(|_| ())
    };
    {
        let (target, tx) = (target.clone(), tx.clone());
        spawn("events", Box::new(move || event_stream(&target, &tx)))?;
    }
    {
        let (target, tx) = (target.clone(), tx.clone());
        spawn(
            "fetch",
            Box::new(move || fetch_worker(&target, &jobs_rx, &tx)),
        )?;
    }
    {
        let tx = tx.clone();
        spawn("signals", Box::new(move || wait_for_ending(ending, &tx)))?;
    }
    let mut terminal = setup_terminal()?;
    {
        let tx = tx.clone();
        if let Err(e) = spawn("input", Box::new(move || read_input(&tx))) {
            restore_terminal();
            return Err(e.into());
        }
    }
    drop(tx);
    let out = event_loop(&mut terminal, &rx, &jobs_tx, color);
    restore_terminal();
    out
}

/// The signals that end the TUI. In raw mode Ctrl-C is a key, so these come from `kill`, a
/// closed terminal (SIGHUP) or a supervisor (SIGTERM).
fn ending_signals() -> SigSet {
    let mut set = SigSet::empty();
    for sig in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        set.add(sig);
    }
    set
}

/// Waits (blocked in `sigwait`) for one of `set` and tells the UI loop. Children started later
/// do not inherit the mask: `std::process::Command` resets it in the child.
fn wait_for_ending(set: SigSet, tx: &Sender<Msg>) {
    if let Ok(sig) = set.wait() {
        let _ = tx.send(Msg::Signal(sig));
    }
}

/// Raw mode, alternate screen, bracketed paste; a panic hook that undoes them first.
fn setup_terminal() -> std::io::Result<DefaultTerminal> {
    // try_init installs a hook restoring raw mode and the main screen; ours runs before it.
    let terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            restore_terminal();
            return Err(e);
        }
    };
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(stdout(), DisableBracketedPaste, crossterm::cursor::Show);
        previous(info);
    }));
    if let Err(e) = execute!(stdout(), EnableBracketedPaste) {
        restore_terminal();
        return Err(e);
    }
    Ok(terminal)
}

fn restore_terminal() {
    let _ = execute!(stdout(), DisableBracketedPaste, crossterm::cursor::Show);
    ratatui::restore();
}

fn read_input(tx: &Sender<Msg>) {
    loop {
        let msg = match crossterm::event::read() {
            Ok(ev) => Msg::Term(ev),
            Err(e) => {
                let _ = tx.send(Msg::TermError(e));
                return;
            }
        };
        if tx.send(msg).is_err() {
            return;
        }
    }
}

fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn mono_ms(start: Instant, at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(start).as_millis()).unwrap_or(u64::MAX)
}

/// At most one refresh in flight and one queued.
#[derive(Default)]
struct Refreshes {
    in_flight: bool,
    wanted: bool,
    last_sent: Option<Instant>,
}

impl Refreshes {
    fn request(&mut self, jobs: &Sender<Job>) {
        if self.in_flight {
            self.wanted = true;
        } else if jobs.send(Job::Refresh).is_ok() {
            self.in_flight = true;
            self.last_sent = Some(Instant::now());
        }
    }

    fn finished(&mut self, jobs: &Sender<Job>) {
        self.in_flight = false;
        if std::mem::take(&mut self.wanted) {
            self.request(jobs);
        }
    }
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    rx: &Receiver<Msg>,
    jobs: &Sender<Job>,
    color: bool,
) -> Result<(), TuiError> {
    let start = Instant::now();
    let mut app = App::new(color);
    let mut refreshes = Refreshes::default();
    let mut next_tick = start + Duration::from_secs(1);
    let size = terminal.size()?;
    app.set_size(size.width, size.height);
    loop {
        app.set_clock(mono_ms(start, Instant::now()), wall_ms());
        terminal.draw(|f| view::draw(f, &app))?;

        let timeout = next_tick.saturating_duration_since(Instant::now());
        let first = match rx.recv_timeout(timeout) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        let now = Instant::now();
        if now >= next_tick {
            // Whole seconds since start, so countdowns tick together.
            let secs = now.saturating_duration_since(start).as_secs() + 1;
            next_tick = start + Duration::from_secs(secs);
            refresh_if_stale(&app, &mut refreshes, jobs, now);
        }
        let mut effects = Vec::new();
        let more = std::iter::from_fn(|| rx.try_recv().ok());
        for msg in first.into_iter().chain(more).take(BATCH) {
            app.set_clock(mono_ms(start, Instant::now()), wall_ms());
            apply_msg(&mut app, &mut refreshes, jobs, start, msg, &mut effects)?;
        }
        for fx in effects {
            if carry_out(&mut app, &mut refreshes, jobs, fx).is_break() {
                return Ok(());
            }
        }
    }
}

/// On each second's tick: asks for a snapshot when the last one is older than
/// [`PERIODIC_REFRESH`] and the board is connected.
fn refresh_if_stale(app: &App, refreshes: &mut Refreshes, jobs: &Sender<Job>, now: Instant) {
    // While the store is unreachable, every tick: the banner clears with the first
    // snapshot the store answers again.
    let every = match app.store_error {
        Some(_) => Duration::ZERO,
        None => PERIODIC_REFRESH,
    };
    let stale = refreshes
        .last_sent
        .is_none_or(|t| now.saturating_duration_since(t) >= every);
    if stale && app.conn == state::app::Conn::Live {
        refreshes.request(jobs);
    }
}

/// Applies one message to the app, collecting the effects it returns. A terminal error or a
/// signal ends the loop with that error.
fn apply_msg(
    app: &mut App,
    refreshes: &mut Refreshes,
    jobs: &Sender<Job>,
    start: Instant,
    msg: Msg,
    effects: &mut Vec<Effect>,
) -> Result<(), TuiError> {
    match msg {
        Msg::Term(Event::Key(k)) => effects.extend(app.on_key(k)),
        Msg::Term(Event::Paste(s)) => app.on_paste(&s),
        Msg::Term(Event::Resize(w, h)) => app.set_size(w, h),
        Msg::Term(_) => {}
        Msg::TermError(e) => return Err(e.into()),
        Msg::Signal(sig) => return Err(TuiError::Signal(sig)),
        Msg::Connected => effects.extend(app.on_connected()),
        Msg::Disconnected { attempt, error } => app.on_disconnected(attempt, &error),
        Msg::Event => effects.push(Effect::Refresh),
        Msg::Notice(n) => notice::emit(&n),
        Msg::Snapshot(r) => {
            refreshes.finished(jobs);
            match r {
                Ok((snap, at)) => effects.extend(app.on_snapshot(snap, mono_ms(start, at))),
                Err(e) => app.on_fetch_error(&e),
            }
        }
        Msg::CallDone(purpose, r) => effects.extend(app.on_call_result(purpose, r)),
    }
    Ok(())
}

/// Carries out one effect. Breaks when the TUI should end: a quit, or the fetch thread gone.
fn carry_out(
    app: &mut App,
    refreshes: &mut Refreshes,
    jobs: &Sender<Job>,
    fx: Effect,
) -> std::ops::ControlFlow<()> {
    let job = match fx {
        Effect::Quit => return std::ops::ControlFlow::Break(()),
        Effect::Refresh => {
            refreshes.request(jobs);
            return std::ops::ControlFlow::Continue(());
        }
        Effect::Team(op) => {
            // A few tmux calls (tens of ms): done here, so no second op can overlap.
            let r = team_io::perform(&op);
            if !update::agents::on_result(app, r).is_empty() {
                refreshes.request(jobs);
            }
            return std::ops::ControlFlow::Continue(());
        }
        Effect::TypeIntoPane { pane, text } => Job::Type(pane, text),
        Effect::Call(c) => Job::Call(c),
        Effect::Diff { task, commit } => Job::Diff(task, commit),
    };
    if jobs.send(job).is_err() {
        return std::ops::ControlFlow::Break(());
    }
    std::ops::ControlFlow::Continue(())
}

/// Follows the board's event stream forever, reconnecting with backoff. Returns when the UI
/// loop is gone.
fn event_stream(target: &Target, tx: &Sender<Msg>) {
    let mut after: Option<i64> = None;
    let mut failures: u32 = 0;
    loop {
        let outcome = (|| -> BoardResult<bool> {
            let mut c = operator(Client::connect(target, false)?);
            let last = c.ask::<LogResult>(Call::Log(LogParams {
                limit: Some(1),
                after: None,
            }))?;
            let last_id = last.result.events.first().map_or(0, |e| e.id);
            // A board with a fresh log (ids restarted) must not be followed from an old id.
            let from = after.filter(|a| *a <= last_id).unwrap_or(last_id);
            after = Some(from);
            failures = 0;
            if tx.send(Msg::Connected).is_err() {
                return Ok(false);
            }
            let mut open = true;
            c.follow_stream(Some(from), true, |item| {
                let msg = match item {
                    client::StreamItem::Event(ev) => {
                        if let Ok(ev) = crate::proto::EventView::deserialize(ev) {
                            after = Some(ev.id);
                        }
                        Msg::Event
                    }
                    client::StreamItem::Notice(n) => match serde_json::from_value(n.clone()) {
                        Ok(n) => Msg::Notice(n),
                        // A notice this TUI cannot read (a newer board's kind) is skipped.
                        Err(_) => return true,
                    },
                };
                open = tx.send(msg).is_ok();
                open
            })?;
            Ok(open)
        })();
        let error = match outcome {
            Ok(false) => return,
            Ok(true) => "the board closed the event stream".to_string(),
            // The board runs but its shared store is unreachable: the refreshes show that
            // banner; the stream follows again once the store is back.
            Err(e) if e.data.contains_key(crate::proto::error::STORE_DOWN) => {
                std::thread::sleep(Duration::from_millis(500));
                continue;
            }
            Err(e) => e.message,
        };
        failures = failures.saturating_add(1);
        if tx
            .send(Msg::Disconnected {
                attempt: failures,
                error,
            })
            .is_err()
        {
            return;
        }
        let backoff = Duration::from_millis(100) * 2u32.saturating_pow(failures.min(5) - 1);
        std::thread::sleep(backoff.min(Duration::from_secs(2)));
    }
}

/// Answers jobs on one connection, reconnecting (without starting a board) when it broke.
fn fetch_worker(target: &Target, jobs: &Receiver<Job>, tx: &Sender<Msg>) {
    let mut conn: Option<Client> = None;
    while let Ok(job) = jobs.recv() {
        let mut batch = vec![job];
        batch.extend(std::iter::from_fn(|| jobs.try_recv().ok()));
        let mut refresh = false;
        for job in batch {
            match job {
                Job::Refresh => refresh = true,
                Job::Type(pane, text) => {
                    let r = crate::agent_tools::team::tmux::type_into_pane(None, &pane, &text)
                        .map(|()| Value::Null)
                        .map_err(|e| BoardError::internal(format!("tmux: {e}")));
                    if tx.send(Msg::CallDone(Purpose::TypeIntoPane, r)).is_err() {
                        return;
                    }
                }
                Job::Diff(task, commit) => {
                    let r = review_diff::fetch(target, &commit);
                    if tx.send(Msg::CallDone(Purpose::Diff(task), r)).is_err() {
                        return;
                    }
                }
                Job::Call(req) => {
                    // Writes carry one `op_id` for both attempts, so a retry is never applied
                    // twice.
                    let (method, params) = req.call.wire();
                    let params = client::with_op_id(method.name(), params);
                    let r = with_conn(target, &mut conn, |c| c.call(method.name(), params.clone()));
                    if tx.send(Msg::CallDone(req.purpose, r)).is_err() {
                        return;
                    }
                }
            }
        }
        if refresh {
            let r = with_conn(target, &mut conn, fetch_snapshot);
            if tx.send(Msg::Snapshot(r)).is_err() {
                return;
            }
        }
    }
}

/// Runs `f` on the kept connection; when that connection turns out broken, runs it once more
/// on a new one.
fn with_conn<T>(
    target: &Target,
    conn: &mut Option<Client>,
    mut f: impl FnMut(&mut Client) -> BoardResult<T>,
) -> BoardResult<T> {
    let reused = conn.is_some();
    for attempt in 0..2 {
        let c = match conn {
            Some(c) => c,
            None => conn.insert(operator(Client::connect(target, false)?)),
        };
        match f(c) {
            Err(e) if e.kind == ErrorKind::Unavailable => {
                *conn = None;
                if !reused || attempt == 1 {
                    return Err(e);
                }
            }
            other => return other,
        }
    }
    Err(BoardError::unavailable("the board is not answering"))
}

fn fetch_snapshot(c: &mut Client) -> BoardResult<(Snapshot, Instant)> {
    let status = c.ask::<StatusResult>(Call::Status(NoParams {}))?;
    let goal = c.ask_raw::<GoalResult>(Call::Goal(GoalParams::default()))?;
    let list = c.ask_raw::<TasksResult>(Call::List(ListParams::default()))?;
    let at = Instant::now();
    let agents = c.ask_raw::<AgentsResult>(Call::Agents(AgentsParams { all: Some(true) }))?;
    let log = c.ask_raw::<LogResult>(Call::Log(LogParams {
        limit: Some(FEED_EVENTS),
        after: None,
    }))?;
    let snapshot =
        Snapshot::from_results(status, goal.result, list.result, agents.result, log.result);
    Ok((snapshot, at))
}
