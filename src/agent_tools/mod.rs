//! The agent CLIs and the board: their profiles, how they are started as a team in tmux panes
//! ([`team`], for `board up` and the TUI), how they reach the board besides the CLI (`board
//! json`, `board mcp`, their hooks), and the `board init` extras (instructions, MCP entries, git
//! hooks).

pub mod agent_hooks;
pub mod aider_question;
pub mod cli_files;
pub mod hooks;
pub mod init;
pub mod json;
pub mod mcp;
pub mod profile;
pub mod team;
pub mod trust;
