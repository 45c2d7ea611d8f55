//! Whether aider, when it runs its notifications command, is about to ask a person something
//! ("Run shell command?") or waits at its prompt with the turn finished.
//!
//! aider has no hooks. Its only signal is `--notifications-command` (board's `.aider.conf.yml`
//! sets it to `board hook aider notify`), which aider runs synchronously at its first input after
//! a reply, whichever input that is: its prompt, or a confirmation such as "Run shell command?".
//! The command gets no argument and runs *before* the question is printed, so neither the
//! payload nor the terminal (nor the pane, under `board up`) can tell them apart at that moment,
//! and aider's process state is the same at both (reading its terminal).
//!
//! What does tell them apart is the reply itself, which aider has already appended to its chat
//! history file (`.aider.chat.history.md` at the git root) when the command runs: aider asks
//! before running each shell block of a reply (```` ```bash ````, ```` ```sh ````, … — the fences
//! its edit formats recognise), with an explicit yes required. So a last reply holding a shell
//! block means the input aider waits for is that question. This is read from aider's own record,
//! not guessed from the screen, and needs no terminal: it works under `board run` as in a pane.
//! It errs towards `waiting` when aider skips the question (a command the person told it never
//! to ask about again, or `--no-suggest-shell-commands`): a person then finds aider at its prompt.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The chat history file aider writes by default, at the root of the git repository.
pub const HISTORY_FILE: &str = ".aider.chat.history.md";
/// How much of the end of the history is read (one reply is far smaller; the file grows for
/// ever).
const TAIL_BYTES: u64 = 64 * 1024;
/// The fences aider reads as shell commands (aider 0.86 `editblock_coder.py`).
const SHELL_FENCES: &[&str] = &[
    "```bash",
    "```sh",
    "```shell",
    "```cmd",
    "```batch",
    "```powershell",
    "```ps1",
    "```zsh",
    "```fish",
    "```ksh",
    "```csh",
    "```tcsh",
];

/// The shell command aider asks to run next, given the end of its chat history (`tail`): the
/// first shell block of the last reply, its lines joined by `; ` (comments and blank lines
/// left out). None when the last reply has no shell block (aider waits at its prompt).
pub fn pending_command(tail: &str) -> Option<String> {
    let reply = last_reply(tail);
    let mut lines = reply.lines();
    lines.find(|l| SHELL_FENCES.iter().any(|f| l.trim().starts_with(f)))?;
    let commands: Vec<&str> = lines
        .take_while(|l| !l.trim().starts_with("```"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    (!commands.is_empty()).then(|| commands.join("; "))
}

/// The last reply of the model in a chat history: the text after the last user message
/// (`#### …`), less aider's own lines (`> …`: token counts, questions, command output).
fn last_reply(tail: &str) -> String {
    let after_user = tail
        .rfind("\n#### ")
        .map_or(tail, |i| &tail[i + 1..])
        .split_once('\n')
        .map_or("", |(_, rest)| rest);
    // aider's lines after a reply (token counts, ...) start with "> "; a reflected reply after
    // them (lint errors sent back) is the one aider acts on, so the last block of text counts.
    let mut blocks: Vec<Vec<&str>> = vec![Vec::new()];
    for line in after_user.lines() {
        if line.starts_with('>') {
            if blocks.last().is_some_and(|b| !b.is_empty()) {
                blocks.push(Vec::new());
            }
        } else if let Some(b) = blocks.last_mut() {
            b.push(line);
        }
    }
    blocks
        .into_iter()
        .rev()
        .find(|b| b.iter().any(|l| !l.trim().is_empty()))
        .map(|b| b.join("\n"))
        .unwrap_or_default()
}

/// The chat history aider started in `dir` writes: [`HISTORY_FILE`] at the git root above
/// `dir` (aider's default), else in `dir`.
pub fn history_path(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
        .join(HISTORY_FILE)
}

/// The last 64 KiB (`TAIL_BYTES`) of the file at `path`, lossily as UTF-8; None when it cannot be read.
pub fn read_tail(path: &Path) -> Option<String> {
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)))
        .ok()?;
    let mut buf = Vec::new();
    f.take(TAIL_BYTES).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What aider 0.86 wrote, as measured, when it was about to ask "Run shell command?".
    const ASKING: &str = "\n# aider chat started at 2026-12-03 20:40:54\n\n\
        > Aider v0.86.2  \n> Main model: openai/gpt-4o with diff edit format  \n\n\
        #### work the backlog  \n\nNext:\n\n```bash\nboard claim --json\n```\n\n\
        > Tokens: 2.4k sent, 12 received.  \n";

    #[test]
    fn a_reply_with_a_shell_block_is_a_question_naming_its_command() {
        assert_eq!(
            pending_command(ASKING).as_deref(),
            Some("board claim --json")
        );
        let two = "#### go\n\nRun:\n\n```sh\n# first\nmake\n\nmake test\n```\n";
        assert_eq!(pending_command(two).as_deref(), Some("make; make test"));
    }

    #[test]
    fn a_reply_without_a_shell_block_is_a_finished_turn() {
        let done = format!(
            "{ASKING}> board claim --json  \n> Run shell command? (Y)es/(N)o [Yes]: y  \n\n\
             #### go on  \n\nBoth tasks are done.\n\n> Tokens: 2.4k sent, 9 received.  \n"
        );
        assert_eq!(pending_command(&done), None);
        let python = "#### show\n\n```python\nprint(1)\n```\n";
        assert_eq!(pending_command(python), None);
        assert_eq!(pending_command(""), None);
    }

    #[test]
    fn a_shell_block_in_an_earlier_message_is_not_asked_again() {
        let earlier = "#### run it\n\n```bash\nls\n```\n\n> Tokens: 1 sent  \n\n\
            #### thanks\n\nYou are welcome.\n";
        assert_eq!(pending_command(earlier), None);
    }

    #[test]
    fn the_history_is_found_at_the_git_root() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git")).unwrap();
        std::fs::create_dir_all(d.path().join("src/a")).unwrap();
        let p = history_path(&d.path().join("src/a"));
        assert_eq!(p, d.path().join(HISTORY_FILE));
        std::fs::write(&p, format!("{}{ASKING}", "x".repeat(100_000))).unwrap();
        let tail = read_tail(&p).unwrap();
        assert_eq!(tail.len() as u64, TAIL_BYTES);
        assert_eq!(
            pending_command(&tail).as_deref(),
            Some("board claim --json")
        );
    }
}
