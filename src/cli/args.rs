//! The command line as clap reads it: every subcommand, its arguments and their help.

use std::path::PathBuf;
use std::time::Duration;

use crate::proto::glossary::{Generation, TaskId};
use clap::{Args, Parser, Subcommand};

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
        extras: InitExtras,
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
        /// Higher runs first.
        #[arg(long, short, default_value_t = 0, allow_negative_numbers = true)]
        priority: i64,
        /// Ids of tasks that must be done first.
        #[arg(long, num_args = 1..)]
        after: Vec<TaskId>,
        /// A label (repeatable): 1 to 64 characters, no comma, whitespace or control character.
        #[arg(long = "label", value_name = "L")]
        labels: Vec<String>,
        /// Only this agent name or role may claim it (default: any agent).
        #[arg(long = "for", value_name = "NAME")]
        meant_for: Option<String>,
        /// Its `done` waits in review for a person, whatever `[review] required` says.
        #[arg(long, conflicts_with = "no_review")]
        review: bool,
        /// Its `done` skips review (and lands at once with `[git] land`), whatever `[review]
        /// required` says.
        #[arg(long)]
        no_review: bool,
    },
    /// Change a task's title, body, priority, dependencies, labels, whom it is for or whether
    /// it goes through review.
    Edit {
        /// Task id.
        task: TaskId,
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
        after: Option<Vec<TaskId>>,
        /// Remove all dependencies.
        #[arg(long, conflicts_with = "after")]
        no_after: bool,
        /// New label set (repeatable; replaces the old labels).
        #[arg(long = "label", value_name = "L")]
        labels: Vec<String>,
        /// Remove all labels.
        #[arg(long, conflicts_with = "labels")]
        no_labels: bool,
        /// Only this agent name or role may claim it.
        #[arg(long = "for", value_name = "NAME")]
        meant_for: Option<String>,
        /// Any agent may claim it again.
        #[arg(long, conflicts_with = "meant_for")]
        for_anyone: bool,
        /// Its `done` waits in review from now on, whatever `[review] required` says.
        #[arg(long, conflicts_with = "no_review")]
        review: bool,
        /// Its `done` skips review from now on, whatever `[review] required` says.
        #[arg(long)]
        no_review: bool,
    },
    /// List tasks.
    List {
        /// Only tasks in this state (open, ready, blocked, claimed, done, cancelled); repeatable.
        #[arg(long)]
        state: Vec<crate::proto::glossary::ListState>,
        /// One page of at most N tasks; the JSON result's `next` is the cursor for `--after`.
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..=crate::proto::views::MAX_PAGE))]
        limit: Option<i64>,
        /// Only tasks with an id above this (the `next` cursor of the previous page).
        #[arg(long, requires = "limit")]
        after: Option<TaskId>,
        /// Only tasks carrying this label.
        #[arg(long, value_name = "L")]
        label: Option<String>,
    },
    /// List ready tasks in claim order.
    Ready {
        /// At most N tasks (the first N in claim order).
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..=crate::proto::views::MAX_PAGE))]
        limit: Option<i64>,
        /// Only tasks carrying this label.
        #[arg(long, value_name = "L")]
        label: Option<String>,
    },
    /// Claim a task (or the best ready one) for this agent session.
    Claim {
        /// Task id (default: highest priority, then oldest ready task).
        task: Option<TaskId>,
        /// Without a task id: the best ready task carrying this label.
        #[arg(long, value_name = "L", conflicts_with = "task")]
        label: Option<String>,
        /// When nothing is ready but work remains, wait for a task to become ready.
        #[arg(long)]
        wait: bool,
        /// Longest wait with --wait (e.g. "10m").
        #[arg(long, value_parser = crate::proto::config::parse_duration, default_value = "1h")]
        timeout: Duration,
    },
    /// Finish a claimed task.
    Done {
        /// Task id.
        task: TaskId,
        /// A closing note.
        #[arg(long)]
        note: Option<String>,
        /// Require this claim generation (fencing token).
        #[arg(long)]
        generation: Option<Generation>,
        /// The commit that finishes the task, when the board reviews or lands work (`[review]
        /// required`, `[git] land`): any revision git resolves here (default: the head of the
        /// branch this agent started on).
        #[arg(long, value_name = "REV")]
        commit: Option<String>,
    },
    /// Give a claimed task back.
    Release {
        /// Task id.
        task: TaskId,
        /// Why.
        #[arg(long)]
        note: Option<String>,
        /// Operator only: end whoever's claim.
        #[arg(long)]
        force: bool,
        /// Require this claim generation.
        #[arg(long)]
        generation: Option<Generation>,
    },
    /// Renew this agent's claims now.
    Renew,
    /// Exit 0 only if this agent holds a live claim (on TASK, at --generation).
    Check {
        /// Task id (default: any live claim).
        task: Option<TaskId>,
        /// Require this generation.
        #[arg(long)]
        generation: Option<Generation>,
    },
    /// The commands that are one request of a method, generated from the method table.
    #[command(flatten)]
    Verb(super::verbs::VerbCmd),
    /// Ask a person a question. It stays open (and this agent's claims are kept) until a
    /// person answers it (`board answer`, `A` in the TUI), you withdraw it (`board resume`) or
    /// the session ends; nothing else you do ends it. Without --block it returns at once: read
    /// the answer later with `board inbox`. With --block it prints the answer on stdout when it
    /// comes (exit 0); exit 9 when --timeout passed first (the question stays open), exit 10
    /// when it was withdrawn or the session ended.
    Wait {
        /// The question for the person.
        question: String,
        /// Wait for the answer and print it.
        #[arg(long)]
        block: bool,
        /// Longest wait with --block (e.g. "30m").
        #[arg(long, requires = "block", value_parser = crate::proto::config::parse_duration, default_value = "24h")]
        timeout: Duration,
    },
    /// List agent sessions by name: the live ones and, for 10 minutes, the last ended one of
    /// each name.
    Agents {
        /// Every session, ended ones included, with its unique id.
        #[arg(long, conflicts_with = "prune")]
        all: bool,
        /// Forget ended sessions (operator only; the event log keeps them).
        #[arg(long)]
        prune: bool,
        /// With --prune: only sessions that ended at least this long ago (e.g. "1h").
        #[arg(long, requires = "prune", value_parser = crate::proto::config::parse_duration)]
        older: Option<Duration>,
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
        format: Option<crate::proto::backlog::Format>,
    },
    /// Print the backlog (goal and tasks) as a file `board import` reads back.
    Export {
        /// md (a checklist), toml or json.
        #[arg(long, value_enum, default_value = "md")]
        format: crate::proto::backlog::Format,
    },
    /// Send a message to an agent session (by id, or by name when one live session has it) or
    /// to `operator`. The recipient's next board call says it has unread messages.
    Send {
        /// Recipient: agent session id or name, or `operator`.
        to: String,
        /// The message.
        text: String,
    },
    /// Read (once) the unread messages sent to this agent session (or to the operator),
    /// answers to its questions among them.
    Inbox,
    /// Show the board process and its settings.
    Status,
    /// Stop the board process; with --agent, stop that agent session instead.
    Stop {
        /// Stop this agent session (id, or the name of one live session) the way a closed pane
        /// does: SIGTERM to its process group, SIGKILL to its tree after `[run] hangup_grace`.
        /// Its claims end with its session; the board keeps running.
        #[arg(long, value_name = "AGENT")]
        agent: Option<String>,
    },
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
        /// The agent's role (e.g. "reviewer"): it may claim the tasks added `--for` that role.
        #[arg(long)]
        role: Option<String>,
        /// tmux pane id this agent runs in (set by `board up`).
        #[arg(long, hide = true)]
        pane: Option<String>,
        /// When the agent ends, keep the terminal: show its exit status and the board's reason,
        /// then wait (Enter starts it again, Ctrl-D closes). `board up` panes use this.
        #[arg(long)]
        hold: bool,
        /// After a hangup (pane closed), how long the agent may take to exit before its process
        /// tree gets SIGTERM, then SIGKILL (e.g. "3s"; default: `[run] hangup_grace`).
        #[arg(long, value_parser = crate::proto::config::parse_duration)]
        hangup_grace: Option<std::time::Duration>,
        /// Show the session as "needs attention" when neither a board call nor a hook of the
        /// agent came this long after its start (e.g. "45s"; `board up` takes it from the profile).
        #[arg(long, value_parser = crate::proto::config::parse_duration)]
        attention_after: Option<Duration>,
        /// First run this with `sh -c` here (its output in this terminal); start the agent only
        /// when it succeeds (`board up` passes a worktree's `setup` until it succeeded once).
        #[arg(long)]
        setup: Option<String>,
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
    /// Agent tooling: json, mcp, completions, man (see [`ToolingCmd`]).
    #[command(flatten)]
    Tooling(ToolingCmd),
}

impl Cli {
    /// Whether this command is a one-shot printer that should simply end when its stdout closes
    /// (the board process, launchers and interactive agent tooling commands handle EPIPE themselves).
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

/// The agent tooling subcommands (flattened into [`super::Cmd`]).
#[derive(Debug, Subcommand)]
pub enum ToolingCmd {
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

/// Which extras `board init` was asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Args)]
pub struct InitExtras {
    /// Configure the agent CLIs that board.toml's `[[agents]]` profiles start (every known CLI
    /// when it has no `[[agents]]`): instructions (AGENTS.md, CLAUDE.md, CONVENTIONS.md,
    /// between markers) and each CLI's own settings files in the project.
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
