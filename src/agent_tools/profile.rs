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

/// The bash rc file of the `shell` profile, in the data directory (`.board/`).
pub const SHELL_RC: &str = "agent.bashrc";

/// The environment variables that carry an agent's identity to the board; MCP servers and hooks
/// must get them passed through.
pub const IDENTITY_VARS: &[&str] = &["BOARD_AGENT", "BOARD_TOKEN", "BOARD_SOCKET", "BOARD_ROOT"];

/// `["a", "b"]` as an inline TOML array of strings.
pub fn toml_list(items: &[&str]) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|s| toml::Value::String((*s).to_string()).to_string())
        .collect();
    format!("[{}]", parts.join(", "))
}

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

/// Which agent CLI a profile starts: it decides which of that CLI's own files
/// `board init --agents` writes and which settings `board up` passes on its command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CliKind {
    /// Claude Code: `CLAUDE.md`, `.mcp.json`, `.claude/settings.json` (permissions, hooks),
    /// `.claude/settings.local.json` (MCP approval).
    Claude,
    /// Codex CLI: `AGENTS.md`, `.codex/config.toml`, `.codex/hooks.json`; MCP as `-c` flags.
    Codex,
    /// Gemini CLI: `.gemini/settings.json` (context files, MCP, redaction allow-list, hooks).
    Gemini,
    /// aider: the conventions file and `.aider.conf.yml`.
    Aider,
    /// bash: an rc file that shows the agent in the prompt.
    Shell,
}

impl CliKind {
    /// Every kind, in the order `board init --agents` reports them.
    pub const ALL: [CliKind; 5] = [
        CliKind::Claude,
        CliKind::Codex,
        CliKind::Gemini,
        CliKind::Aider,
        CliKind::Shell,
    ];

    /// `claude`, `codex`, `gemini`, `aider`, `shell`: also the `<cli>` of `board hook <cli> <event>`.
    pub fn as_str(self) -> &'static str {
        match self {
            CliKind::Claude => "claude",
            CliKind::Codex => "codex",
            CliKind::Gemini => "gemini",
            CliKind::Aider => "aider",
            CliKind::Shell => "shell",
        }
    }

    /// The kind named `s`, if any.
    pub fn parse(s: &str) -> Option<CliKind> {
        CliKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One agent profile.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// What this agent is, for people.
    pub description: String,
    /// The command line; `{board}` is replaced by the path of the running board binary,
    /// `{root}` by the project root, `{shell_rc}` by the bash rc file `board up` writes
    /// ([`SHELL_RC`]).
    pub command: Vec<String>,
    /// The agent CLI this profile starts (None: a program board knows nothing about).
    #[serde(default)]
    pub cli: Option<CliKind>,
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
    /// Whether the agent takes MCP tools (`board mcp`): `board init --agents` registers the
    /// server in the CLI's own MCP configuration, and `board up` passes it on the command line
    /// where the CLI reads none from the project (Codex, for an untrusted project).
    #[serde(default)]
    pub mcp: bool,
    /// A session that has neither called the board nor fired a hook this long after its start is
    /// shown as **needs attention** (it is most likely stuck in a first-run dialog). None: never
    /// (for agents with no hook that fires at start, such as aider).
    #[serde(default)]
    pub attention_after: Option<crate::proto::config::Dur>,
    /// Extra environment for the agent.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// The prompt given when a profile names none. `board instructions` exists wherever board is
/// installed, unlike any file of this repository.
pub const DEFAULT_PROMPT: &str = "You are one agent of a team working from a shared board. \
Run `board instructions` and follow that protocol: `board claim --json` to take a task, work only \
on what you claimed, and finish with `board done ID --generation N --note ...`.";

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

    /// The full command line: `command`, the settings board adds for this CLI
    /// ([`Profile::cli_args`]), then `prompt_args`; placeholders filled in.
    pub fn argv(&self, board_bin: &str, root: &Path, data_dir: &Path) -> Vec<String> {
        let prompt = self.prompt.as_deref().unwrap_or(DEFAULT_PROMPT);
        let rc = data_dir.join(SHELL_RC);
        let (root, rc) = (root.to_string_lossy(), rc.to_string_lossy());
        self.command
            .iter()
            .map(|a| {
                a.replace("{board}", board_bin)
                    .replace("{root}", &root)
                    .replace("{shell_rc}", &rc)
            })
            .chain(self.cli_args(board_bin))
            .chain(
                self.prompt_args
                    .iter()
                    .map(|a| a.replace("{prompt}", prompt)),
            )
            .collect()
    }

    /// Settings that only the command line can carry. Codex reads a project's
    /// `.codex/config.toml` only once the user trusted the project, so these go in `-c` flags,
    /// which need no trust: with `mcp`, the board server (with the identity variables passed
    /// through, which Codex strips otherwise) and its tools approved (Codex asks before every
    /// tool annotated destructive, `board_done` among them, and headless `codex exec` refuses
    /// it); always, board's directory on the PATH of the commands Codex runs
    /// ([`codex_command_path`]).
    pub fn cli_args(&self, board_bin: &str) -> Vec<String> {
        if self.cli != Some(CliKind::Codex) {
            return Vec::new();
        }
        let mut args = Vec::new();
        if self.mcp {
            let bin = toml::Value::String(board_bin.to_string());
            args.extend([
                "-c".into(),
                format!("mcp_servers.board.command={bin}"),
                "-c".into(),
                "mcp_servers.board.args=[\"mcp\"]".into(),
                "-c".into(),
                format!("mcp_servers.board.env_vars={}", toml_list(IDENTITY_VARS)),
                "-c".into(),
                "mcp_servers.board.default_tools_approval_mode=\"approve\"".into(),
            ]);
        }
        let path = toml::Value::String(codex_command_path(board_bin));
        args.extend([
            "-c".into(),
            format!("shell_environment_policy.set.PATH={path}"),
        ]);
        args
    }
}

/// The PATH Codex is told to give the commands it runs: the directory of `board_bin`, then
/// this process's PATH. Codex otherwise rebuilds PATH from the user's login shell, where a
/// board installed elsewhere is "command not found" (measured with Codex 0.171); its
/// `shell_environment_policy.set` takes a literal value, no `$PATH` expansion.
pub fn codex_command_path(board_bin: &str) -> String {
    let dir = Path::new(board_bin).parent().unwrap_or(Path::new(""));
    let current = std::env::var_os("PATH").unwrap_or_default();
    let rest = std::env::split_paths(&current).filter(|d| d.as_path() != dir);
    let dirs = std::iter::once(dir.to_path_buf())
        .filter(|d| !d.as_os_str().is_empty())
        .chain(rest);
    std::env::join_paths(dirs)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| current.to_string_lossy().into_owned())
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
            p.argv("/bin/board", Path::new("/r"), Path::new("/r/.board")),
            ["/bin/board", "demo-agent", "-p", "go"]
        );
    }

    #[test]
    fn codex_gets_the_board_server_on_its_command_line() {
        let p = Profile::parse(
            "c",
            "description = \"x\"\ncommand = [\"codex\"]\ncli = \"codex\"\nmcp = true\n",
        )
        .unwrap();
        let argv = p.argv("/opt/b\"x/board", Path::new("/r"), Path::new("/d"));
        let (key, value) = argv[2].split_once('=').unwrap();
        assert_eq!(key, "mcp_servers.board.command");
        let parsed: toml::Table = format!("v = {value}").parse().unwrap();
        assert_eq!(parsed["v"].as_str(), Some("/opt/b\"x/board"));
        assert!(argv[6].contains("\"BOARD_TOKEN\""), "{argv:?}");
        assert!(
            argv.contains(&"mcp_servers.board.default_tools_approval_mode=\"approve\"".to_string()),
            "{argv:?}"
        );
        let path = argv
            .iter()
            .find_map(|a| a.strip_prefix("shell_environment_policy.set.PATH="))
            .unwrap_or_else(|| panic!("no PATH for Codex's commands: {argv:?}"));
        let parsed: toml::Table = format!("v = {path}").parse().unwrap();
        assert!(
            parsed["v"].as_str().unwrap().starts_with("/opt/b\"x:"),
            "{path}"
        );
    }
}
