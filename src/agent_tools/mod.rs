//! How agents reach the board besides the CLI: `board json`, `board mcp`, agent profiles, and the
//! `board init` extras (instructions, MCP entries, git hooks).

pub mod agent_hooks;
pub mod cli_files;
pub mod hooks;
pub mod init;
pub mod json;
pub mod mcp;
pub mod profile;
pub mod trust;
