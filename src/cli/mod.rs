//! The command line: clap definitions ([`args`]), the dispatch ([`run`](fn@run)) and one file per
//! command that is more than one request ([`init`], `list`, `log`, `named`, `claim`,
//! [`backlog`], [`up`], [`run`](mod@run), [`demo`], [`tooling`]); every other command is one
//! request (`call`), printed by [`print`](mod@print).
//!
//! Every client command sends one request and prints its answer: human text by default, or with
//! `--json` exactly one JSON document on stdout (the `result` or `error` object of the call).
//! Exit codes follow the design: 0 ok, 1 internal, 2 usage, 3 no ready task, 4 conflict,
//! 5 lapsed, 6 not found, 7 unauthorized, 8 board unavailable; `board wait --block` adds
//! 9 (no answer in time) and 10 (the question ended unanswered).

pub mod args;
pub mod backlog;
mod call;
mod claim;
pub mod demo;
mod exit;
pub mod hints;
pub mod hot_path;
pub mod init;
mod list;
mod log;
mod named;
pub mod print;
mod print_status;
mod question;
pub mod run;
pub mod supervise;
pub mod tooling;
pub mod up;
pub mod verbs;

use serde_json::Value;

use crate::proto::error::{BoardError, BoardResult, ErrorKind};
pub use args::{Cli, Cmd};

/// Runs the parsed command line and returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let json_out = cli.json;
    let Some(cmd) = cli.command else {
        return tui(json_out);
    };
    // Each family takes its commands and gives back any other (boxed: a command is large);
    // what none takes is one request.
    let cmd = match processes(cmd, json_out).or_else(|cmd| printing_commands(*cmd, json_out)) {
        Ok(code) => return code,
        Err(cmd) => cmd,
    };
    let out = answered_commands(*cmd, json_out).unwrap_or_else(|other| call::one_call(&other));
    print_answer(json_out, out)
}

/// Commands that are a process of their own (the TUI, the board, the launcher, the demo, the
/// tooling) and return its exit code; any other command is given back.
fn processes(cmd: Cmd, json_out: bool) -> Result<i32, Box<Cmd>> {
    Ok(match cmd {
        Cmd::Tui => tui(json_out),
        Cmd::Serve { new_epoch } => serve(new_epoch),
        Cmd::Run {
            name,
            role,
            pane,
            hold,
            hangup_grace,
            attention_after,
            setup,
            cmd,
        } => crate::cli::run::run(
            &name,
            role.as_deref(),
            pane.as_deref(),
            hold,
            hangup_grace,
            attention_after,
            setup.as_deref(),
            &cmd,
        ),
        Cmd::Demo { dir, keep } => crate::cli::demo::run(dir, keep),
        Cmd::DemoAgent => crate::cli::up::demo_agent(),
        Cmd::Tooling(cmd) => tooling::run(cmd),
        other => return Err(Box::new(other)),
    })
}

/// Client commands that print as they go (a followed log, a paged list, a blocking wait) and
/// return their exit code; any other command is given back.
fn printing_commands(cmd: Cmd, json_out: bool) -> Result<i32, Box<Cmd>> {
    Ok(match cmd {
        Cmd::Log {
            follow: true,
            limit,
        } => log::follow_log(json_out, limit),
        Cmd::List {
            state,
            limit: None,
            after: None,
            label,
        } => list::list_all(json_out, &state, label.as_deref()),
        Cmd::Wait {
            question,
            block: true,
            timeout,
        } => question::wait_block(json_out, &question, timeout),
        other => return Err(Box::new(other)),
    })
}

/// Commands of more than one request that answer once, printed like a single call's answer
/// (a waiting claim, init, up, down, import, export, and the generated one-request commands
/// and a page of `list`, which name agent sessions); any other command is given back.
fn answered_commands(cmd: Cmd, json_out: bool) -> Result<BoardResult<(Value, String)>, Box<Cmd>> {
    Ok(match cmd {
        // Every generated one-request command (`show`, `cancel`, `accept`, …) prints tasks
        // whose holder or finisher is named.
        Cmd::Verb(_) | Cmd::List { .. } => named::one_call(&cmd, json_out),
        Cmd::Claim {
            task,
            label,
            wait: true,
            timeout,
        } => claim::claim_wait(task, label.as_deref(), timeout),
        Cmd::Init { name, extras } => {
            init::init(name).and_then(|out| init::init_extras(out, extras))
        }
        Cmd::Up { attach } => up::up_told(attach),
        Cmd::Down => up::down_told(),
        Cmd::Import { file, format } => backlog::import(&file, format),
        Cmd::Export { format } => backlog::export(format),
        other => return Err(Box::new(other)),
    })
}

/// Prints an answer (the JSON document, or the human text and any inbox note) or the error, and
/// returns the exit code.
fn print_answer(json_out: bool, out: BoardResult<(Value, String)>) -> i32 {
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
            exit::fail(json_out, &e)
        }
    }
}

/// `board tui`: interactive only, so `--json` is a usage error.
fn tui(json_out: bool) -> i32 {
    if json_out {
        return exit::fail(
            json_out,
            &BoardError::usage(
                "the TUI has no JSON output; use `board list --json` or `board log --follow --json`",
            ),
        );
    }
    crate::tui::run()
}

fn serve(new_epoch: bool) -> i32 {
    let (cfg, paths) = match crate::proto::config::discover() {
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
            // A setting to fix (the store's URL, credentials) is a usage error (exit 2), a
            // store that cannot be reached `unavailable` (8); anything else is internal (1).
            e.downcast_ref::<BoardError>()
                .map_or(ErrorKind::Internal.exit_code(), |b| b.kind.exit_code())
        }
    }
}
