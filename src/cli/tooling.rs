//! The agent tooling commands: `board json`, `board mcp`, `board hook`, `board instructions`,
//! `board completions` and `board man`. (`board json` lives in [`crate::agent_tools::json`],
//! `board mcp` in [`crate::agent_tools::mcp`], the hooks in [`crate::agent_tools::hooks`].)

use std::io::Write;

use clap::CommandFactory;

use super::args::{Cli, ToolingCmd};

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
\fBBOARD_AGENT_NAME\fR
The agent's name as people see it (in its shell prompt, \fBboard agents\fR, the TUI), set by
\fBboard run\fR; a restarted agent takes its name back while \fBBOARD_AGENT\fR, its session id,
is new.
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
///
/// One page for the whole tool: the generated sections, then every command with its synopsis
/// and description in a COMMANDS section (clap's own subcommand section would refer to
/// `board-claim(1)` pages that are not installed), then `MAN_EXTRA`.
pub fn man() -> i32 {
    let mut page = Vec::new();
    if let Err(e) = render_man(&mut page) {
        eprintln!("board man: {e}");
        return 1;
    }
    page.extend_from_slice(MAN_EXTRA.as_bytes());
    print_bytes("board man", &page)
}

fn render_man(page: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Write;
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(page)?;
    man.render_name_section(page)?;
    man.render_synopsis_section(page)?;
    man.render_description_section(page)?;
    man.render_options_section(page)?;
    writeln!(
        page,
        ".SH COMMANDS\nEach command's options: \\fBboard \\fICOMMAND\\fB \\-\\-help\\fR."
    )?;
    for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
        let usage = sub
            .clone()
            .bin_name(format!("board {}", sub.get_name()))
            .render_usage()
            .to_string();
        let usage = usage.trim_start_matches("Usage: ").trim();
        writeln!(page, ".TP\n\\fB{}\\fR", roff_escape(usage))?;
        let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
        writeln!(page, "{}", roff_escape(&about))?;
    }
    Ok(())
}

/// Text made safe for a roff line: backslashes and hyphens escaped, no leading control dot.
fn roff_escape(s: &str) -> String {
    let out = s.replace('\\', "\\e").replace('-', "\\-");
    match out.strip_prefix(['.', '\'']) {
        Some(_) => format!("\\&{out}"),
        None => out,
    }
}

/// Runs one of the agent tooling commands; returns the exit code.
pub fn run(cmd: ToolingCmd) -> i32 {
    match cmd {
        ToolingCmd::Json { schema: true } => crate::agent_tools::json::print_schema(),
        ToolingCmd::Json { schema: false } => crate::agent_tools::json::run(),
        ToolingCmd::Mcp => crate::agent_tools::mcp::run(),
        ToolingCmd::Completions { shell } => completions(shell),
        ToolingCmd::Man => man(),
        ToolingCmd::Instructions => print_bytes(
            "board instructions",
            crate::agent_tools::profile::INSTRUCTIONS.as_bytes(),
        ),
        ToolingCmd::Hook { name, args } => match crate::agent_tools::profile::CliKind::parse(&name)
        {
            Some(cli) => crate::agent_tools::agent_hooks::run(cli, &args),
            None => crate::agent_tools::hooks::run(&name, &args),
        },
    }
}
