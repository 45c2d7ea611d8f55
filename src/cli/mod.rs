//! The command line: clap definitions and one thin function per client command.
//!
//! Every client command sends one request and prints its answer: human text by default, or with
//! `--json` exactly one JSON document on stdout (the `result` or `error` object of the call).
//! Exit codes follow the design: 0 ok, 1 internal, 2 usage, 3 no ready task, 4 conflict,
//! 5 lapsed, 6 not found, 7 unauthorized, 8 board unavailable.

pub mod backlog_cmd;
pub mod demo;
pub mod run;
pub mod supervise;
pub mod up;

pub mod doors;
pub mod hints;
pub mod print;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use serde_json::{json, Value};

use crate::proto::client::{self, Client};
use crate::proto::error::{BoardError, BoardResult, ErrorKind};

/// board: one shared goal and backlog for several terminal coding agents, with claims that are
/// leases (they end when the agent dies, pauses too long, or its pane closes).
#[derive(Debug, Parser)]
#[command(name = "board", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// Print exactly one JSON document on stdout (the result or the error).
    #[arg(long, global = true)]
    pub json: bool,

    /// The command (none: open the TUI).
    #[command(subcommand)]
    pub command: Option<Cmd>,
}

/// Every `board` subcommand.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Create board.toml and .board/ here (idempotent).
    Init {
        /// Board name (default: this directory's name).
        #[arg(long)]
        name: Option<String>,
        /// --agents, --mcp, --git-hooks.
        #[command(flatten)]
        extras: doors::InitExtras,
    },
    /// Show the goal, or set it.
    Goal {
        /// New goal text.
        text: Option<String>,
    },
    /// Add a task to the backlog.
    Add {
        /// One-line title.
        title: String,
        /// Longer description.
        #[arg(long, default_value = "")]
        body: String,
        /// Higher runs first (default 0).
        #[arg(long, short, default_value_t = 0, allow_negative_numbers = true)]
        priority: i64,
        /// Ids of tasks that must be done first.
        #[arg(long, num_args = 1..)]
        after: Vec<i64>,
    },
    /// Change a task's title, body, priority or dependencies.
    Edit {
        /// Task id.
        task: i64,
        /// New title.
        #[arg(long)]
        title: Option<String>,
        /// New body.
        #[arg(long)]
        body: Option<String>,
        /// New priority.
        #[arg(long, allow_negative_numbers = true)]
        priority: Option<i64>,
        /// New dependency list (replaces the old one; pass none to clear with --no-after).
        #[arg(long, num_args = 1..)]
        after: Option<Vec<i64>>,
        /// Remove all dependencies.
        #[arg(long, conflicts_with = "after")]
        no_after: bool,
    },
    /// Cancel a task (its claim, if any, ends).
    Cancel {
        /// Task id.
        task: i64,
    },
    /// List tasks.
    List {
        /// Only tasks in this state (open, ready, blocked, claimed, done, cancelled); repeatable.
        #[arg(long)]
        state: Vec<String>,
        /// One page of at most N tasks; the JSON result's `next` is the cursor for `--after`.
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..=crate::daemon::handlers::tasks::MAX_PAGE))]
        limit: Option<i64>,
        /// Only tasks with an id above this (the `next` cursor of the previous page).
        #[arg(long, requires = "limit")]
        after: Option<i64>,
    },
    /// List ready tasks in claim order.
    Ready {
        /// At most N tasks (the first N in claim order).
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..=crate::daemon::handlers::tasks::MAX_PAGE))]
        limit: Option<i64>,
    },
    /// Show one task with its notes and history.
    Show {
        /// Task id.
        task: i64,
    },
    /// Claim a task (or the best ready one) for this agent session.
    Claim {
        /// Task id (default: highest priority, then oldest ready task).
        task: Option<i64>,
        /// When nothing is ready but work remains, wait for a task to become ready.
        #[arg(long)]
        wait: bool,
        /// Longest wait with --wait (e.g. "10m").
        #[arg(long, value_parser = crate::config::parse_duration, default_value = "1h")]
        timeout: Duration,
    },
    /// Finish a claimed task.
    Done {
        /// Task id.
        task: i64,
        /// A closing note.
        #[arg(long)]
        note: Option<String>,
        /// Require this claim generation (fencing token).
        #[arg(long)]
        generation: Option<i64>,
    },
    /// Give a claimed task back.
    Release {
        /// Task id.
        task: i64,
        /// Why.
        #[arg(long)]
        note: Option<String>,
        /// Operator only: end whoever's claim.
        #[arg(long)]
        force: bool,
        /// Require this claim generation.
        #[arg(long)]
        generation: Option<i64>,
    },
    /// Add a note to a task (as its holder, or as an operator).
    Note {
        /// Task id.
        task: i64,
        /// The note.
        text: String,
        /// As holder: require this claim generation.
        #[arg(long)]
        generation: Option<i64>,
    },
    /// Renew this agent's claims now.
    Renew,
    /// Exit 0 only if this agent holds a live claim (on TASK, at --generation).
    Check {
        /// Task id (default: any live claim).
        task: Option<i64>,
        /// Require this generation.
        #[arg(long)]
        generation: Option<i64>,
    },
    /// Say this agent is waiting for a human (its claims are kept meanwhile).
    Wait {
        /// The question for the human.
        question: String,
    },
    /// End waiting for a human.
    Resume,
    /// List agent sessions.
    Agents {
        /// Include ended sessions.
        #[arg(long)]
        all: bool,
    },
    /// Show the event log.
    Log {
        /// Keep printing new events.
        #[arg(long, short)]
        follow: bool,
        /// How many recent events.
        #[arg(long, default_value_t = 50)]
        limit: i64,
    },
    /// Add the tasks of a backlog file: a Markdown checklist (a parent item waits for the items
    /// nested under it), or TOML/JSON (`goal`, `[[tasks]]` with key, title, body, priority,
    /// state, after). All of it in one transaction, or nothing.
    Import {
        /// The file (`-`: stdin).
        file: PathBuf,
        /// Its format (default: from the extension; Markdown otherwise).
        #[arg(long, value_enum)]
        format: Option<crate::backlog::Format>,
    },
    /// Print the backlog (goal and tasks) as a file `board import` reads back.
    Export {
        /// md (a checklist), toml or json.
        #[arg(long, value_enum, default_value = "md")]
        format: crate::backlog::Format,
    },
    /// Send a message to an agent session (by id, or by name when one live session has it) or
    /// to `operator`. The recipient's next board call says it has unread messages.
    Send {
        /// Recipient: agent session id or name, or `operator`.
        to: String,
        /// The message.
        text: String,
    },
    /// Read (once) the unread messages sent to this agent session (or to the operator).
    Inbox,
    /// Show the board process and its settings.
    Status,
    /// Stop the board process.
    Stop,
    /// Run the board process in the foreground.
    Serve {
        /// Accept a missing, empty or other board's database by opening a new epoch: every
        /// generation starts above the board's high-water mark (.board/generation.hwm).
        #[arg(long)]
        new_epoch: bool,
    },
    /// The live board in this terminal (also what `board` with no command opens).
    Tui,
    /// Run an agent under the board: CMD gets BOARD_SOCKET, BOARD_AGENT, BOARD_TOKEN.
    Run {
        /// Session name (ids become NAME, NAME-2, …).
        #[arg(long, default_value = "agent")]
        name: String,
        /// tmux pane id this agent runs in (set by `board up`).
        #[arg(long, hide = true)]
        pane: Option<String>,
        /// When the agent ends, keep the terminal: show its exit status and the board's reason,
        /// then wait (Enter starts it again, Ctrl-D closes). `board up` panes use this.
        #[arg(long)]
        hold: bool,
        /// After a hangup (pane closed), how long the agent may take to exit before its process
        /// tree gets SIGTERM, then SIGKILL (e.g. "3s"; default: `[run] hangup_grace`).
        #[arg(long, value_parser = crate::config::parse_duration)]
        hangup_grace: Option<std::time::Duration>,
        /// Show the session as "needs attention" when neither a board call nor a hook of the
        /// agent came this long after its start (e.g. "45s"; `board up` takes it from the profile).
        #[arg(long, value_parser = crate::config::parse_duration)]
        attention_after: Option<Duration>,
        /// The agent's command line.
        #[arg(last = true, required = true)]
        cmd: Vec<String>,
    },
    /// Open the team in tmux: the TUI and one pane per agent of `[[agents]]` in board.toml.
    /// Checks every agent's command first; run again, starts only the agents that are missing
    /// or ended.
    Up {
        /// Attach to the tmux session afterwards.
        #[arg(long)]
        attach: bool,
    },
    /// End the tmux session of `board up` (its agents' claims are expelled) and remove the
    /// agents' worktrees that hold no uncommitted work (their branches stay).
    Down,
    /// Run the scripted demo agent (used by the demo profile).
    #[command(hide = true)]
    DemoAgent,
    /// Demo: three scripted agents work a sample backlog; one crashes mid-task.
    Demo {
        /// Directory to run in (default: a new temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Keep the demo directory afterwards.
        #[arg(long)]
        keep: bool,
    },
    /// Agent tooling: json, mcp, completions, man (see [`doors::DoorCmd`]).
    #[command(flatten)]
    Doors(doors::DoorCmd),
}

impl Cli {
    /// Whether this command is a one-shot printer that should simply end when its stdout closes
    /// (the board process, launchers and interactive doors handle EPIPE themselves).
    pub fn dies_on_closed_stdout(&self) -> bool {
        !matches!(
            self.command,
            None | Some(Cmd::Serve { .. })
                | Some(Cmd::Run { .. })
                | Some(Cmd::Tui)
                | Some(Cmd::Up { .. })
                | Some(Cmd::Demo { .. })
        )
    }
}

/// Runs the parsed command line and returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let json_out = cli.json;
    let Some(cmd) = cli.command else {
        return tui(json_out);
    };
    let out = match cmd {
        Cmd::Tui => return tui(json_out),
        Cmd::Serve { new_epoch } => return serve(new_epoch),
        Cmd::Run {
            name,
            pane,
            hold,
            hangup_grace,
            attention_after,
            cmd,
        } => {
            return crate::cli::run::run(
                &name,
                pane.as_deref(),
                hold,
                hangup_grace,
                attention_after,
                &cmd,
            )
        }
        Cmd::Demo { dir, keep } => return crate::cli::demo::run(dir, keep),
        Cmd::Log {
            follow: true,
            limit,
        } => return follow_log(json_out, limit),
        Cmd::Claim {
            task,
            wait: true,
            timeout,
        } => claim_wait(task, timeout),
        Cmd::Init { name, extras } => init(name).and_then(|out| doors::init_extras(out, extras)),
        Cmd::DemoAgent => return crate::cli::up::demo_agent(),
        Cmd::Up { attach } => crate::cli::up::up(attach).map(|v| {
            let panes = v["panes"].as_array().cloned().unwrap_or_default();
            let count = |o: &str| panes.iter().filter(|p| p["outcome"] == o).count();
            let mut done = Vec::new();
            for (o, word) in [
                ("started", "started"),
                ("restarted", "started again"),
                ("running", "already running"),
            ] {
                if count(o) > 0 {
                    done.push(format!("{} {word}", count(o)));
                }
            }
            let h = format!(
                "tmux session {} is up with {} agent pane(s) ({}); `board up --attach` to see it",
                v["session"].as_str().unwrap_or(""),
                panes.len(),
                done.join(", ")
            );
            (v, h)
        }),
        Cmd::Down => crate::cli::up::down().map(|v| {
            let mut h = if v["was_up"] == json!(true) {
                "tmux session ended".to_string()
            } else {
                "no tmux session was up".to_string()
            };
            for w in v["worktrees"].as_array().into_iter().flatten() {
                let (agent, branch) = (print::s(&w["agent"]), print::s(&w["branch"]));
                if w["removed"] == json!(true) {
                    h.push_str(&format!(
                        "\nremoved the worktree of {agent} (branch {branch} stays)"
                    ));
                } else {
                    h.push_str(&format!(
                        "\nkept the worktree of {agent} at {}: {}",
                        print::s(&w["path"]),
                        print::s(&w["kept_because"])
                    ));
                }
            }
            (v, h)
        }),
        Cmd::Doors(door) => return doors::run(door),
        Cmd::List {
            state,
            limit: None,
            after: None,
        } => return list_all(json_out, &state),
        Cmd::Import { file, format } => backlog_cmd::import(&file, format),
        Cmd::Export { format } => backlog_cmd::export(format),
        other => one_call(&other),
    };
    match out {
        Ok((v, human)) => {
            if json_out {
                println!("{v}");
            } else {
                if !human.is_empty() {
                    println!("{human}");
                }
                if let Some(note) = hints::inbox_note(v.get("inbox")) {
                    eprintln!("{note}");
                }
            }
            0
        }
        Err(e) => {
            if !json_out {
                if let Some(note) = hints::inbox_note(e.data.get("inbox")) {
                    eprintln!("{note}");
                }
            }
            fail(json_out, &e)
        }
    }
}

/// `board tui`: interactive only, so `--json` is a usage error.
fn tui(json_out: bool) -> i32 {
    if json_out {
        return fail(
            json_out,
            &BoardError::usage(
                "the TUI has no JSON output; use `board list --json` or `board log --follow --json`",
            ),
        );
    }
    crate::tui::run()
}

fn fail(json_out: bool, e: &BoardError) -> i32 {
    if json_out {
        println!("{}", e.to_json());
    } else {
        let data = Value::Object(e.data.clone());
        if let Some(lost) = print::lost_lines(&data) {
            eprintln!("board: {}", crate::proto::sanitize::inert(&lost));
        }
        eprintln!("board: {}", crate::proto::sanitize::inert(&e.message));
    }
    e.kind.exit_code()
}

fn serve(new_epoch: bool) -> i32 {
    let (cfg, paths) = match crate::config::discover() {
        Ok(x) => x,
        Err(e) => {
            eprintln!("board: {e}");
            return ErrorKind::Unavailable.exit_code();
        }
    };
    match crate::daemon::serve(cfg, paths, new_epoch) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("board: {e:#}");
            1
        }
    }
}

/// The request a one-shot command sends: method and params.
fn request_of(cmd: &Cmd) -> (&'static str, Value) {
    match cmd {
        Cmd::Doors(_) => ("hello", json!({})),
        Cmd::Goal { text } => ("goal", json!({ "text": text })),
        Cmd::Add {
            title,
            body,
            priority,
            after,
        } => (
            "add",
            json!({ "title": title, "body": body, "priority": priority, "after": after }),
        ),
        Cmd::Edit {
            task,
            title,
            body,
            priority,
            after,
            no_after,
        } => {
            let after = if *no_after {
                Some(Vec::new())
            } else {
                after.clone()
            };
            (
                "edit",
                json!({ "task": task, "title": title, "body": body, "priority": priority, "after": after }),
            )
        }
        Cmd::Cancel { task } => ("cancel", json!({ "task": task })),
        Cmd::List {
            state,
            limit,
            after,
        } => {
            let mut p = json!({ "limit": limit, "after": after });
            if !state.is_empty() {
                p["state"] = json!(state);
            }
            ("list", p)
        }
        Cmd::Ready { limit } => ("ready", json!({ "limit": limit })),
        Cmd::Show { task } => ("show", json!({ "task": task })),
        Cmd::Claim { task, .. } => ("claim", json!({ "task": task })),
        Cmd::Done {
            task,
            note,
            generation,
        } => (
            "done",
            json!({ "task": task, "note": note, "generation": generation }),
        ),
        Cmd::Release {
            task,
            note,
            force,
            generation,
        } => (
            "release",
            json!({ "task": task, "note": note, "force": force, "generation": generation }),
        ),
        Cmd::Note {
            task,
            text,
            generation,
        } => (
            "note",
            json!({ "task": task, "text": text, "generation": generation }),
        ),
        Cmd::Renew => ("renew", json!({})),
        Cmd::Check { task, generation } => {
            ("check", json!({ "task": task, "generation": generation }))
        }
        Cmd::Wait { question } => ("wait", json!({ "question": question })),
        Cmd::Resume => ("resume", json!({})),
        Cmd::Agents { all } => ("agents", json!({ "all": all })),
        Cmd::Log { limit, .. } => ("log", json!({ "limit": limit })),
        Cmd::Status => ("status", json!({})),
        Cmd::Send { to, text } => ("send", json!({ "to": to, "text": text })),
        Cmd::Inbox => ("inbox", json!({})),
        Cmd::Stop => ("stop", json!({})),
        Cmd::Init { .. }
        | Cmd::Serve { .. }
        | Cmd::Tui
        | Cmd::Run { .. }
        | Cmd::Demo { .. }
        | Cmd::Up { .. }
        | Cmd::Down
        | Cmd::Import { .. }
        | Cmd::Export { .. }
        | Cmd::DemoAgent => ("hello", json!({})),
    }
}

fn one_call(cmd: &Cmd) -> BoardResult<(Value, String)> {
    let (method, params) = request_of(cmd);
    let target = client::target()?;
    if !matches!(cmd, Cmd::Stop) {
        let v = client::call_once(&target, true, method, params)?;
        return Ok((v.clone(), print::human(method, &v)));
    }
    // `stop` must not start a board just to stop it.
    let mut c = match Client::connect(&target, false) {
        Ok(c) => c,
        Err(e) if e.kind == ErrorKind::Unavailable => {
            return Ok((
                json!({ "stopping": false, "running": false }),
                "no board is running".into(),
            ));
        }
        Err(e) => return Err(e),
    };
    let v = c.call(method, params)?;
    wait_gone(&target.socket);
    let human = print::human(method, &v);
    Ok((v, human))
}

/// Tasks per request when `board list` pages through the whole backlog.
const LIST_PAGE: i64 = 1000;

/// `board list` without `--limit`: pages through the backlog with the `after` cursor on one
/// connection and prints each page as it arrives, so neither the board nor this process holds
/// the whole backlog as one document. With `--json` the output is still one document,
/// `{"tasks":[…]}`, as the result of an unpaged `list` call would be. Tasks added or changed
/// while paging may or may not be shown; none is shown twice.
fn list_all(json_out: bool, states: &[String]) -> i32 {
    use std::io::Write;
    let run = || -> BoardResult<()> {
        let target = client::target()?;
        let mut c = Client::connect(&target, true)?;
        let mut params = json!({ "limit": LIST_PAGE });
        if !states.is_empty() {
            params["state"] = json!(states);
        }
        let mut page = c.call("list", params.clone())?;
        let io = |e: std::io::Error| BoardError::internal(format!("writing the list: {e}"));
        let enc = |e: serde_json::Error| BoardError::internal(format!("writing the list: {e}"));
        let stdout = std::io::stdout();
        // JSON is printed only once complete, so an error on a later page still leaves exactly
        // one document (the error) on stdout; human lines are printed page by page.
        let mut tasks: Vec<u8> = Vec::with_capacity(64 * 1024);
        // The rest of each answer (`lost`, told once, on the first page) joins the document.
        let mut extra = serde_json::Map::new();
        let mut first = true;
        loop {
            if let Value::Object(m) = &mut page {
                for (k, v) in std::mem::take(m) {
                    match (k.as_str(), extra.get_mut(&k), v) {
                        ("tasks" | "next", _, v) => {
                            m.insert(k, v);
                        }
                        (_, Some(Value::Array(have)), Value::Array(more)) => have.extend(more),
                        (_, _, v) => {
                            extra.insert(k, v);
                        }
                    }
                }
            }
            if !json_out && first {
                if let Some(lost) = print::lost_lines(&Value::Object(extra.clone())) {
                    writeln!(tasks, "{lost}").map_err(io)?;
                }
            }
            for t in page["tasks"].as_array().into_iter().flatten() {
                if json_out {
                    if !first {
                        tasks.push(b',');
                    }
                    serde_json::to_writer(&mut tasks, t).map_err(enc)?;
                } else {
                    writeln!(tasks, "{}", print::task_line(t)).map_err(io)?;
                }
                first = false;
            }
            if !json_out {
                stdout.lock().write_all(&tasks).map_err(io)?;
                tasks.clear();
            }
            let Some(next) = page["next"].as_i64() else {
                break;
            };
            params["after"] = json!(next);
            page = c.call_raw("list", params.clone())?;
        }
        let mut out = stdout.lock();
        if json_out {
            // Keys in sorted order, as the board prints one unpaged answer.
            extra.insert("tasks".into(), Value::Null);
            out.write_all(b"{").map_err(io)?;
            for (i, (k, v)) in extra.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",").map_err(io)?;
                }
                serde_json::to_writer(&mut out, k).map_err(enc)?;
                out.write_all(b":").map_err(io)?;
                if k == "tasks" {
                    out.write_all(b"[").map_err(io)?;
                    out.write_all(&tasks).map_err(io)?;
                    out.write_all(b"]").map_err(io)?;
                } else {
                    serde_json::to_writer(&mut out, v).map_err(enc)?;
                }
            }
            out.write_all(b"}\n").map_err(io)?;
        } else if first {
            out.write_all(b"no tasks\n").map_err(io)?;
        }
        out.flush().map_err(io)
    };
    match run() {
        Ok(()) => 0,
        Err(e) => fail(json_out, &e),
    }
}

/// After `stop`, wait (≤ 3 s) until the socket is gone so the next command starts a new board.
fn wait_gone(socket: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if std::os::unix::net::UnixStream::connect(socket).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `claim --wait`: see [`crate::proto::claim_wait::claim_waiting`].
fn claim_wait(task: Option<i64>, timeout: Duration) -> BoardResult<(Value, String)> {
    let target = client::target()?;
    // Each attempt is a new request (a new op_id): a refusal is kept under its op_id.
    let claim = || client::call_once(&target, true, "claim", json!({ "task": task }));
    let v = crate::proto::claim_wait::claim_waiting(claim, task.is_some(), timeout)?;
    let human = print::human("claim", &v);
    Ok((v, human))
}

fn follow_log(json_out: bool, limit: i64) -> i32 {
    let run = || -> BoardResult<()> {
        let target = client::target()?;
        let mut c = Client::connect(&target, true)?;
        let v = c.call("log", json!({ "limit": limit }))?;
        let mut last = 0;
        for e in v["events"].as_array().into_iter().flatten() {
            print_event(json_out, e);
            last = e["id"].as_i64().unwrap_or(last);
        }
        loop {
            let c = Client::connect(&target, true)?;
            c.follow(Some(last), |e| {
                print_event(json_out, e);
                last = last.max(e["id"].as_i64().unwrap_or(last));
                true
            })?;
            // The board went away (stopped or crashed): wait for it to come back, as the TUI
            // does, but do not start one: a deliberate `board stop` must stay stopped.
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if Client::connect(&target, false).is_ok() {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(BoardError::unavailable(
                        "the board went away and did not come back within 10 s",
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    match run() {
        Ok(()) => 0,
        Err(e) => fail(json_out, &e),
    }
}

fn print_event(json_out: bool, e: &Value) {
    use std::io::Write;
    if json_out {
        println!("{e}");
    } else {
        println!("{}", print::event_line(e));
    }
    let _ = std::io::stdout().flush();
}

fn init(name: Option<String>) -> BoardResult<(Value, String)> {
    let cwd = std::env::current_dir().map_err(|e| BoardError::internal(e.to_string()))?;
    let path = cwd.join(crate::config::CONFIG_FILE);
    let created = !path.exists();
    if created {
        let name = name.unwrap_or_else(|| {
            cwd.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "board".into())
        });
        std::fs::write(&path, crate::config::Config::default_text(&name))
            .map_err(|e| BoardError::internal(format!("writing {}: {e}", path.display())))?;
    }
    let cfg = crate::config::Config::load(&path).map_err(|e| BoardError::usage(e.to_string()))?;
    let paths = crate::config::Paths::new(&cwd, &cfg);
    crate::daemon::ensure_data_dir(&paths).map_err(|e| BoardError::internal(format!("{e:#}")))?;
    let gitignore = paths.data_dir.join(".gitignore");
    if !gitignore.exists() {
        let _ = std::fs::write(&gitignore, "*\n");
    }
    let human = if created {
        format!(
            "created {} and {}/",
            path.display(),
            paths.data_dir.display()
        )
    } else {
        format!(
            "{} already exists; {}/ is ready",
            path.display(),
            paths.data_dir.display()
        )
    };
    Ok((
        json!({ "root": cwd, "config": path, "data_dir": paths.data_dir, "created": created }),
        human,
    ))
}
