//! Agent profiles (`agents/NAME.toml`): how `board up` starts one kind of agent and how that
//! agent is told about the board.
//!
//! A profile is looked up in the project's `agents/` directory first, then among the profiles
//! built into the binary (the ones shipped in this repository's `agents/`), so `board up` works in
//! any project. Unknown keys are errors.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// Profiles shipped with board, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("claude", include_str!("../../agents/claude.toml")),
    ("codex", include_str!("../../agents/codex.toml")),
    ("gemini", include_str!("../../agents/gemini.toml")),
    ("aider", include_str!("../../agents/aider.toml")),
    ("shell", include_str!("../../agents/shell.toml")),
    ("demo", include_str!("../../agents/demo.toml")),
];

/// The agent protocol text given to agents (`agents/INSTRUCTIONS.md`).
pub const INSTRUCTIONS: &str = include_str!("../../agents/INSTRUCTIONS.md");

/// Errors loading a profile.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Neither `agents/NAME.toml` nor a built-in profile exists.
    #[error("no agent profile {0:?} (looked in agents/ and the built-in profiles: claude, codex, gemini, aider, shell, demo)")]
    NotFound(String),
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// File path.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// Invalid TOML, unknown key or bad value.
    #[error("agent profile {name:?} is invalid: {message}")]
    Invalid {
        /// Profile name.
        name: String,
        /// What is wrong.
        message: String,
    },
}

/// One agent profile.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// What this agent is, for people.
    pub description: String,
    /// The command line; `{board}` is replaced by the path of the running board binary.
    pub command: Vec<String>,
    /// Arguments appended to pass the initial prompt; `{prompt}` is replaced by [`Profile::prompt`].
    #[serde(default)]
    pub prompt_args: Vec<String>,
    /// The initial prompt (default: the short board protocol pointer).
    #[serde(default)]
    pub prompt: Option<String>,
    /// The file this agent reads its standing instructions from (`CLAUDE.md`, `AGENTS.md`, …),
    /// where `board init --agents` writes the instruction block.
    #[serde(default)]
    pub instructions_file: Option<String>,
    /// Whether the agent takes MCP tools (`board mcp`).
    #[serde(default)]
    pub mcp: bool,
    /// Extra environment for the agent.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// The prompt given when a profile names none.
pub const DEFAULT_PROMPT: &str = "You are one agent of a team working from a shared board. \
Follow the board protocol in agents/INSTRUCTIONS.md (or `board --help`): run `board claim` to take \
a task, work only on what you claimed, and finish with `board done ID --note ...`.";

impl Profile {
    /// Parses profile text; `name` only labels errors.
    pub fn parse(name: &str, text: &str) -> Result<Profile, ProfileError> {
        let p: Profile = toml::from_str(text).map_err(|e| ProfileError::Invalid {
            name: name.into(),
            message: e.to_string(),
        })?;
        if p.command.is_empty() || p.command[0].trim().is_empty() {
            return Err(ProfileError::Invalid {
                name: name.into(),
                message: "`command` must not be empty".into(),
            });
        }
        Ok(p)
    }

    /// Loads `root/agents/NAME.toml`, else the built-in profile `name`.
    pub fn load(root: &Path, name: &str) -> Result<Profile, ProfileError> {
        let path = root.join("agents").join(format!("{name}.toml"));
        if path.is_file() {
            let text = std::fs::read_to_string(&path).map_err(|source| ProfileError::Io {
                path: path.display().to_string(),
                source,
            })?;
            return Profile::parse(name, &text);
        }
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Profile::parse(n, text))
            .unwrap_or_else(|| Err(ProfileError::NotFound(name.into())))
    }

    /// The full command line: `command` then `prompt_args`, placeholders filled in.
    pub fn argv(&self, board_bin: &str) -> Vec<String> {
        let prompt = self.prompt.as_deref().unwrap_or(DEFAULT_PROMPT);
        self.command
            .iter()
            .map(|a| a.replace("{board}", board_bin))
            .chain(
                self.prompt_args
                    .iter()
                    .map(|a| a.replace("{prompt}", prompt)),
            )
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_profile_is_valid() {
        for (name, text) in BUILTIN {
            let p = Profile::parse(name, text).unwrap_or_else(|e| panic!("{e}"));
            assert!(!p.description.is_empty(), "{name} needs a description");
        }
    }

    #[test]
    fn unknown_keys_are_errors() {
        let e = Profile::parse("x", "description = \"x\"\ncommand = [\"x\"]\ncolour = 1\n")
            .unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
    }

    #[test]
    fn placeholders_are_filled() {
        let p = Profile::parse("x", "description = \"x\"\ncommand = [\"{board}\", \"demo-agent\"]\nprompt_args = [\"-p\", \"{prompt}\"]\nprompt = \"go\"\n").unwrap();
        assert_eq!(
            p.argv("/bin/board"),
            ["/bin/board", "demo-agent", "-p", "go"]
        );
    }
}
