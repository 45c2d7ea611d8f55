//! The agent tooling commands' glue: `board completions`, `board man`, and the `--agents`,
//! `--mcp` and `--git-hooks` parts of `board init`. (`board json` lives in
//! [`crate::agent_tools::json`], `board mcp` in [`crate::agent_tools::mcp`], the hooks in [`crate::agent_tools::hooks`].)

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, CommandFactory, Subcommand};
use serde_json::{json, Value};

use super::Cli;
use crate::agent_tools::init::{self, Action};
use crate::agent_tools::profile::Profile;
use crate::proto::error::{BoardError, BoardResult};

/// `board completions SHELL`: prints the completion script; returns the exit code.
pub fn completions(shell: clap_complete::Shell) -> i32 {
    let mut cmd = Cli::command();
    // Generate into memory first: clap_complete panics when its writer fails (closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "board", &mut script);
    print_bytes("board completions", &script)
}

fn print_bytes(what: &str, bytes: &[u8]) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{what}: {e}");
            1
        }
    }
}

/// Extra man page sections (roff) after the generated ones.
const MAN_EXTRA: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
ok
.TP
\fB1\fR
internal error
.TP
\fB2\fR
usage, or invalid input
.TP
\fB3\fR
no ready task
.TP
\fB4\fR
conflict: another agent session holds the task
.TP
\fB5\fR
lapsed or stale: the caller's claim ended, the write was rejected
.TP
\fB6\fR
not found
.TP
\fB7\fR
unauthorized
.TP
\fB8\fR
board unavailable
.SH ENVIRONMENT
.TP
\fBBOARD_AGENT\fR, \fBBOARD_TOKEN\fR
The agent identity, set by \fBboard run\fR for the agent it starts.
.TP
\fBBOARD_SOCKET\fR
The board's socket; overrides finding \fIboard.toml\fR from the working directory.
.TP
\fBBOARD_ROOT\fR
Where to start looking for \fIboard.toml\fR instead of the working directory.
.TP
\fBBOARD_TASK\fR
For the git hooks of \fBboard init \-\-git\-hooks\fR: the task a commit belongs to.
.TP
\fBBOARD_LOG\fR
Log filter of the board process (e.g. \fIdebug\fR); the log is \fI.board/board.log\fR.
.SH FILES
.TP
\fIboard.toml\fR
Marks the project root; the board's configuration.
.TP
\fI.board/\fR
\fIboard.db\fR (SQLite), \fIboard.sock\fR, \fIboard.log\fR.
.TP
\fIagents/\fR
Agent profiles and the instruction text given to agents.
"#;

/// `board man`: prints the man page (roff) on stdout; returns the exit code.
pub fn man() -> i32 {
    let mut page = Vec::new();
    if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut page) {
        eprintln!("board man: {e}");
        return 1;
    }
    page.extend_from_slice(MAN_EXTRA.as_bytes());
    print_bytes("board man", &page)
}

/// The agent tooling subcommands (flattened into [`super::Cmd`]).
#[derive(Debug, Subcommand)]
pub enum DoorCmd {
    /// JSON-RPC on stdin/stdout: one request per line in, one response per line out, with the
    /// agent identity of the environment.
    Json {
        /// Print the JSON Schema of every request and response, and exit.
        #[arg(long)]
        schema: bool,
    },
    /// Serve the board's operations as MCP tools over stdio (for agents that take MCP tools).
    Mcp,
    /// Print a shell completion script (e.g. `board completions bash > ~/.local/share/bash-completion/completions/board`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout (e.g. `board man | man -l -`).
    Man,
    /// Print the protocol an agent follows on the board (the text `board init --agents` puts in
    /// AGENTS.md, CLAUDE.md, …).
    Instructions,
    /// The work of a hook: git hooks installed by `board init --git-hooks` (`board hook
    /// pre-commit`), and agent CLI hooks installed by `board init --agents` (`board hook claude
    /// Stop`: reads the CLI's JSON payload on stdin, tells the board, always exits 0).
    #[command(hide = true)]
    Hook {
        /// Git hook name (pre-commit, prepare-commit-msg), or the agent CLI (claude, codex,
        /// gemini, aider, shell) followed by its hook event.
        name: String,
        /// The hook's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// Runs one of the agent tooling commands; returns the exit code.
pub fn run(cmd: DoorCmd) -> i32 {
    match cmd {
        DoorCmd::Json { schema: true } => crate::agent_tools::json::print_schema(),
        DoorCmd::Json { schema: false } => crate::agent_tools::json::run(),
        DoorCmd::Mcp => crate::agent_tools::mcp::run(),
        DoorCmd::Completions { shell } => completions(shell),
        DoorCmd::Man => man(),
        DoorCmd::Instructions => print_bytes(
            "board instructions",
            crate::agent_tools::profile::INSTRUCTIONS.as_bytes(),
        ),
        DoorCmd::Hook { name, args } => match crate::agent_tools::profile::CliKind::parse(&name) {
            Some(cli) => crate::agent_tools::agent_hooks::run(cli, &args),
            None => crate::agent_tools::hooks::run(&name, &args),
        },
    }
}

/// Which extras `board init` was asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Args)]
pub struct InitExtras {
    /// Configure every agent CLI the profiles name: instructions (AGENTS.md, CLAUDE.md,
    /// CONVENTIONS.md, between markers) and each CLI's own settings files in the project.
    #[arg(long)]
    pub agents: bool,
    /// With --agents: also mark this project as trusted in YOUR user settings of Claude Code
    /// (~/.claude.json), Codex (~/.codex/config.toml) and Gemini CLI
    /// (~/.gemini/trustedFolders.json), so their trust dialogs do not block `board up`. Every
    /// change is printed.
    #[arg(long, requires = "agents")]
    pub trust: bool,
    /// Add the `board mcp` server to .mcp.json (other servers are kept).
    #[arg(long)]
    pub mcp: bool,
    /// Install git hooks that refuse an agent's commit without a live claim and add
    /// Board-Task / Board-Generation trailers.
    #[arg(long)]
    pub git_hooks: bool,
}

fn action_json(path: &std::path::Path, a: Action) -> Value {
    json!({ "path": path, "action": a.as_str() })
}

/// The profiles `board init --agents` configures: every built-in one that starts a known CLI,
/// and every profile `board.toml` names (a project's `agents/NAME.toml` wins over the built-in).
fn agent_profiles(root: &std::path::Path) -> BoardResult<Vec<Profile>> {
    let mut names: Vec<String> = crate::agent_tools::profile::BUILTIN
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    let cfg_path = root.join(crate::config::CONFIG_FILE);
    let cfg =
        crate::config::Config::load(&cfg_path).map_err(|e| BoardError::usage(e.to_string()))?;
    for a in &cfg.agents {
        if !names.contains(&a.profile) {
            names.push(a.profile.clone());
        }
    }
    names
        .iter()
        .map(|n| Profile::load(root, n).map_err(|e| BoardError::usage(e.to_string())))
        .collect()
}

/// Adds the requested extras to the result of plain `board init` (`v`, `human`): writes the
/// files and reports them under `agents`, `mcp` and `git_hooks`. Errors: `usage` when a file
/// cannot be understood (unbalanced markers, a broken .mcp.json, not a git repository, a chained
/// hook in the way), `internal` on I/O failures.
pub fn init_extras(
    (mut v, mut human): (Value, String),
    extras: InitExtras,
) -> BoardResult<(Value, String)> {
    let root = v["root"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| BoardError::internal("init did not report its root"))?;
    let usage_or_internal = |e: init::AgentsInitError| match e {
        init::AgentsInitError::Io { .. } => BoardError::internal(e.to_string()),
        _ => BoardError::usage(e.to_string()),
    };
    let exe = || {
        std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .map_err(|e| BoardError::internal(format!("cannot find the board binary: {e}")))
    };
    if extras.agents {
        let profiles = agent_profiles(&root)?;
        let mut files: Vec<String> = Vec::new();
        for p in &profiles {
            if let Some(f) = &p.instructions_file {
                if !files.contains(f) {
                    files.push(f.clone());
                }
            }
        }
        let written =
            init::write_instructions(&root, &files, crate::agent_tools::profile::INSTRUCTIONS)
                .map_err(usage_or_internal)?;
        let mut all: Vec<crate::agent_tools::cli_files::Written> = written
            .into_iter()
            .map(|(path, action)| crate::agent_tools::cli_files::Written {
                path,
                action,
                what: format!(
                    "board instructions between {} and {}",
                    init::BEGIN,
                    init::END
                ),
            })
            .collect();
        let bin = exe()?;
        all.extend(
            crate::agent_tools::cli_files::configure(&root, &bin, &profiles)
                .map_err(usage_or_internal)?,
        );
        for w in &all {
            human.push_str(&format!(
                "\n{} {} ({})",
                w.action.as_str(),
                w.path.display(),
                w.what
            ));
        }
        human.push_str(&format!(
            "\nhooks and MCP entries call {}; run `board init --agents` again if board moves",
            bin.display()
        ));
        v["agents"] = all
            .iter()
            .map(|w| json!({ "path": w.path, "action": w.action.as_str(), "what": w.what }))
            .collect::<Vec<_>>()
            .into();
        if extras.trust {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .ok_or_else(|| BoardError::usage("--trust needs HOME (your user settings)"))?;
            let real_root = root.canonicalize().unwrap_or_else(|_| root.clone());
            let kinds: Vec<crate::agent_tools::profile::CliKind> =
                crate::agent_tools::profile::CliKind::ALL
                    .into_iter()
                    .filter(|k| profiles.iter().any(|p| p.cli == Some(*k)))
                    .collect();
            let changed = crate::agent_tools::trust::trust(&home, &real_root, &kinds)
                .map_err(usage_or_internal)?;
            for w in &changed {
                human.push_str(&format!(
                    "\n{} {} ({}){}",
                    w.action.as_str(),
                    w.path.display(),
                    w.what,
                    if w.action == Action::Unchanged {
                        ""
                    } else {
                        ": your user settings were changed"
                    }
                ));
            }
            v["trust"] = changed
                .iter()
                .map(|w| json!({ "path": w.path, "action": w.action.as_str(), "what": w.what }))
                .collect::<Vec<_>>()
                .into();
        } else {
            human.push_str(
                "\nClaude Code and Codex still ask once whether to trust this folder \
                 (`board init --agents --trust` records that in your user settings)",
            );
        }
    }
    if extras.mcp {
        let bin = exe()?;
        let (path, a) =
            init::write_mcp(&root, &bin.to_string_lossy()).map_err(usage_or_internal)?;
        human.push_str(&format!(
            "\n{} {} (MCP server `board mcp`)",
            a.as_str(),
            path.display()
        ));
        v["mcp"] = action_json(&path, a);
    }
    if extras.git_hooks {
        let exe = exe()?;
        let report = crate::agent_tools::hooks::install(&root, &exe).map_err(|e| match e {
            crate::agent_tools::hooks::HooksError::Io { .. }
            | crate::agent_tools::hooks::HooksError::Git(_) => BoardError::internal(e.to_string()),
            _ => BoardError::usage(e.to_string()),
        })?;
        for h in &report.hooks {
            human.push_str(&format!(
                "\n{} git hook {}",
                h.action.as_str(),
                h.path.display()
            ));
            if let Some(c) = &h.chained {
                human.push_str(&format!(" (runs the earlier hook {})", c.display()));
            }
        }
        v["git_hooks"] = report.to_json();
    }
    Ok((v, human))
}
