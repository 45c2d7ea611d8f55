//! Each agent CLI's own settings files, as `board init --agents` writes them from the profiles.
//!
//! Every file keeps the user's content: JSON files are merged key by key (the board's entries are
//! recognised by their content: the `board` MCP server, hook commands `… hook <cli> <event>`,
//! the permission rules), TOML and YAML files get a block between `# board:begin` and
//! `# board:end`. Running it again changes nothing. Which keys, and why, per CLI (measured with
//! the real CLIs, see the README):
//! - Claude Code: `.mcp.json` (the server), the git-ignored `.claude/settings.local.json`
//!   `enabledMcpjsonServers` (the approval Claude itself writes) and `permissions.allow`
//!   (`mcp__board`, `Bash(board:*)`, `Bash(ABSOLUTE-BOARD:*)`), both honoured before workspace
//!   trust; the committed `.claude/settings.json` `permissions.allow` (`mcp__board`,
//!   `Bash(board:*)`) and `hooks`, naming no machine-specific path (hooks run
//!   `"${BOARD_BIN:-board}"`).
//! - Codex: `.codex/config.toml` (the MCP server with `env_vars` and its tools approved,
//!   sandbox network access for the socket, board's directory on the commands' PATH) and
//!   `.codex/hooks.json`; Codex reads both only in a trusted project. No `notify`: Codex
//!   ignores it in a project file.
//! - Gemini CLI: `.gemini/settings.json` `context.fileName`, `mcpServers` (the server with
//!   `trust`: its tools run without a dialog, and headless at all),
//!   `security.environmentVariableRedaction.allowed` (`BOARD_TOKEN`, which it strips otherwise),
//!   `hooks`. Its shell rule for `board …` lives in the user's policies (see `trust`): 0.61
//!   does not read a project's `.gemini/policies`.
//! - aider: `.aider.conf.yml` (`read:` the conventions file, the notification command that
//!   reports its questions and finished replies, no first-run questions).

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::agent_hooks::installed_events;
use super::init::{self, Action, AgentsInitError};
use super::profile::{
    codex_command_path as command_path, toml_list, CliKind, Profile, IDENTITY_VARS,
};

/// Marker lines of the board's block in TOML and YAML files.
pub const HASH_MARKERS: (&str, &str) = (
    "# board:begin (written by `board init --agents`; this block is replaced on every run)",
    "# board:end",
);

/// One file `board init --agents` wrote or checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file.
    pub path: PathBuf,
    /// What happened to it.
    pub action: Action,
    /// What the board keeps there, for people.
    pub what: String,
}

/// `word` quoted for `sh` when it needs it.
fn sh_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The shell command a CLI runs for one hook event.
/// `board_bin` is a path (quoted here when it needs it) or [`CLAUDE_PORTABLE_BIN`] (as is).
pub fn hook_command(board_bin: &str, cli: CliKind, event: &str) -> String {
    let word = if board_bin == CLAUDE_PORTABLE_BIN {
        board_bin.to_string()
    } else {
        sh_word(board_bin)
    };
    format!("{word} hook {} {event}", cli.as_str())
}

/// Whether `command` is a hook command the board installed for `cli` (any board path).
pub(super) fn is_board_hook(command: &str, cli: CliKind) -> bool {
    let Some((bin, rest)) = command.split_once(" hook ") else {
        return false;
    };
    let bin = bin.trim().trim_matches('\'');
    (bin == "board" || bin.ends_with("/board") || bin == CLAUDE_PORTABLE_BIN)
        && rest.split_whitespace().next() == Some(cli.as_str())
}

fn object<'a>(v: &'a mut Value, key: &str) -> Result<&'a mut Map<String, Value>, String> {
    let Value::Object(m) = v else {
        return Err(format!("`{key}`'s parent is not an object"));
    };
    object_in(m, key)
}

/// The object at `key` of `m`, created when missing. Errors: it is something else.
fn object_in<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Map<String, Value>, String> {
    let entry = m
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    match entry {
        Value::Object(o) => Ok(o),
        _ => Err(format!("`{key}` is not an object")),
    }
}

/// Adds each of `items` to the string array at `key` of `m` (created when missing).
fn add_strings(m: &mut Map<String, Value>, key: &str, items: &[&str]) -> Result<(), String> {
    let arr = m
        .entry(key.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::String(s) = arr {
        *arr = Value::Array(vec![Value::String(std::mem::take(s))]);
    }
    let Value::Array(a) = arr else {
        return Err(format!("`{key}` is not a list"));
    };
    for item in items {
        if !a.iter().any(|v| v == item) {
            a.push(json!(item));
        }
    }
    Ok(())
}

/// Replaces the board's hook groups of `cli` in `doc.hooks` by one group per installed event
/// (Claude Code, Codex and Gemini CLI share this shape: event → matcher groups → handlers).
/// The user's own groups stay where they are.
fn set_hooks(doc: &mut Value, cli: CliKind, board_bin: &str) -> Result<(), String> {
    let hooks = object(doc, "hooks")?;
    let ours = |group: &Value| {
        group["hooks"].as_array().is_some_and(|hs| {
            !hs.is_empty()
                && hs
                    .iter()
                    .all(|h| h["command"].as_str().is_some_and(|c| is_board_hook(c, cli)))
        })
    };
    for (event, groups) in hooks.iter_mut() {
        let Value::Array(list) = groups else {
            return Err(format!("`hooks.{event}` is not a list"));
        };
        list.retain(|g| !ours(g));
    }
    hooks.retain(|_, groups| groups.as_array().is_none_or(|l| !l.is_empty()));
    for event in installed_events(cli) {
        let group = json!({ "hooks": [{
            "type": "command",
            "command": hook_command(board_bin, cli, event),
        }] });
        let list = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(l) = list {
            l.push(group);
        }
    }
    Ok(())
}

/// Applies `edit` to the JSON object in `path` (an empty one when missing) and writes it back
/// only if it changed. Errors: a file that is not a JSON object, or that `edit` refuses.
fn edit_json(
    path: PathBuf,
    what: &str,
    edit: impl FnOnce(&mut Value) -> Result<(), String>,
) -> Result<Written, AgentsInitError> {
    let old = init::read_optional(&path)?;
    let bad = |problem: String| AgentsInitError::Settings {
        path: path.clone(),
        problem,
    };
    let before = match old.as_deref().map(str::trim) {
        None | Some("") => Value::Object(Map::new()),
        Some(text) => {
            serde_json::from_str::<Value>(text).map_err(|e| bad(format!("not valid JSON ({e})")))?
        }
    };
    if !before.is_object() {
        return Err(bad("the top level is not an object".into()));
    }
    let mut after = before.clone();
    edit(&mut after).map_err(bad)?;
    let action = if after == before && old.is_some() {
        Action::Unchanged
    } else {
        let text =
            serde_json::to_string_pretty(&after).map_err(|e| bad(format!("cannot encode: {e}")))?;
        init::write_if_changed(&path, old.as_deref(), &format!("{text}\n"))?
    };
    Ok(Written {
        path,
        action,
        what: what.into(),
    })
}

/// Sets the board's marked block in a TOML or YAML file; `check` sees the whole new text and
/// may refuse it (a key the user set already).
fn edit_block(
    path: PathBuf,
    what: &str,
    content: &str,
    at_top: bool,
    check: impl FnOnce(&str, &str) -> Result<(), String>,
) -> Result<Written, AgentsInitError> {
    let old = init::read_optional(&path)?;
    let bad = |problem: String| AgentsInitError::Settings {
        path: path.clone(),
        problem,
    };
    let existing = old.as_deref().unwrap_or("");
    let new = init::with_marked_block(existing, content, HASH_MARKERS, at_top).map_err(&bad)?;
    check(&new, content).map_err(bad)?;
    let action = init::write_if_changed(&path, old.as_deref(), &new)?;
    Ok(Written {
        path,
        action,
        what: what.into(),
    })
}

/// Adds `entry` as a line of the project's `.gitignore` (kept as it is when the line is there).
/// Claude Code ignores a `.claude/settings.local.json` that git tracks (measured): the approval
/// must stay local to count.
fn ignore_in_git(root: &Path, entry: &str) -> Result<Written, AgentsInitError> {
    let path = root.join(".gitignore");
    let old = init::read_optional(&path)?;
    let text = old.as_deref().unwrap_or("");
    let action = if text.lines().any(|l| l.trim() == entry) {
        Action::Unchanged
    } else {
        let mut new = text.to_string();
        if !new.is_empty() && !new.ends_with('\n') {
            new.push('\n');
        }
        new.push_str(entry);
        new.push('\n');
        init::write_if_changed(&path, old.as_deref(), &new)?
    };
    Ok(Written {
        path,
        action,
        what: format!("{entry} stays untracked (Claude ignores a tracked one)"),
    })
}

/// The board binary as Claude Code's hooks name it in the committed `.claude/settings.json`:
/// the one `board run` / `board up` started the agent with (`BOARD_BIN`), else `board` on
/// PATH. Nothing machine-specific goes into a file the team shares.
pub const CLAUDE_PORTABLE_BIN: &str = "\"${BOARD_BIN:-board}\"";

/// The permission rules that let Claude Code call the board without a prompt.
const CLAUDE_ALLOW: [&str; 2] = ["mcp__board", "Bash(board:*)"];

/// Whether `rule` is a `Bash(PATH:*)` rule for a board binary at an absolute path (what
/// earlier versions wrote into the committed settings).
fn is_absolute_board_rule(rule: &Value) -> bool {
    rule.as_str()
        .and_then(|r| r.strip_prefix("Bash(/"))
        .is_some_and(|r| r.ends_with("/board:*)"))
}

fn claude(root: &Path, bin: &str, mcp: bool) -> Result<Vec<Written>, AgentsInitError> {
    let mut out = Vec::new();
    if mcp {
        let (path, action) = init::write_mcp(root, bin)?;
        out.push(Written {
            path,
            action,
            what: "MCP server `board mcp`".into(),
        });
    }
    // Claude Code honours the untracked local settings before the workspace is trusted (the
    // committed ones only after): the approval and the allow rules go there too, with this
    // machine's board path.
    let own_bash = format!("Bash({bin}:*)");
    out.push(edit_json(
        root.join(".claude/settings.local.json"),
        "board calls allowed before workspace trust, MCP server `board` approved (no dialog)",
        |doc| {
            let Value::Object(m) = doc else {
                return Err("the top level is not an object".into());
            };
            if mcp {
                add_strings(m, "enabledMcpjsonServers", &["board"])?;
            }
            let perms = object_in(m, "permissions")?;
            add_strings(
                perms,
                "allow",
                &[CLAUDE_ALLOW[0], CLAUDE_ALLOW[1], &own_bash],
            )
        },
    )?);
    out.push(ignore_in_git(root, ".claude/settings.local.json")?);
    out.push(edit_json(
        root.join(".claude/settings.json"),
        "board calls allowed without a prompt; hooks for activity, waiting, idle",
        |doc| {
            let perms = object(doc, "permissions")?;
            add_strings(perms, "allow", &CLAUDE_ALLOW)?;
            if let Some(Value::Array(allow)) = perms.get_mut("allow") {
                allow.retain(|r| !is_absolute_board_rule(r));
            }
            set_hooks(doc, CliKind::Claude, CLAUDE_PORTABLE_BIN)
        },
    )?);
    Ok(out)
}

fn codex(root: &Path, bin: &str, mcp: bool) -> Result<Vec<Written>, AgentsInitError> {
    // No `notify`: Codex ignores it in a project file and warns at every start; the `Stop`
    // hook reports the finished turn.
    let mut block = format!(
        "# Codex reads this file only in a trusted project; `board up` passes the same\n\
         # settings on the command line as well.\n\
         sandbox_workspace_write.network_access = true\n\
         shell_environment_policy.set.PATH = {}\n",
        toml::Value::String(command_path(bin))
    );
    if mcp {
        block.push_str(&format!(
            "mcp_servers.board.command = {}\n\
             mcp_servers.board.args = [\"mcp\"]\n\
             mcp_servers.board.env_vars = {}\n\
             mcp_servers.board.default_tools_approval_mode = \"approve\"\n",
            toml::Value::String(bin.to_string()),
            toml_list(IDENTITY_VARS)
        ));
    }
    let config = edit_block(
        root.join(".codex/config.toml"),
        "sandbox access to the board socket, board on the commands' PATH, MCP server with the identity passed through and its tools approved",
        &block,
        true,
        |text, _| {
            text.parse::<toml::Table>()
                .map(|_| ())
                .map_err(|e| format!("with the board's block it would not be valid TOML ({e}); a key of the block is set elsewhere in the file"))
        },
    )?;
    let hooks = edit_json(
        root.join(".codex/hooks.json"),
        "hooks for activity, waiting, idle (Codex asks once to trust them)",
        |doc| set_hooks(doc, CliKind::Codex, bin),
    )?;
    Ok(vec![config, hooks])
}

fn gemini(
    root: &Path,
    bin: &str,
    mcp: bool,
    context_file: &str,
) -> Result<Vec<Written>, AgentsInitError> {
    let w = edit_json(
        root.join(".gemini/settings.json"),
        "context files, MCP server trusted, BOARD_TOKEN kept for it, hooks",
        |doc| {
            let context = object(doc, "context")?;
            // GEMINI.md stays: it is what Gemini reads when fileName is unset.
            add_strings(context, "fileName", &[context_file, "GEMINI.md"])?;
            if mcp {
                // `trust`: Gemini's policy engine allows a trusted server's tools without a
                // dialog; without it, `gemini -p` is offered none of them.
                object(doc, "mcpServers")?.insert(
                    "board".into(),
                    json!({ "command": bin, "args": ["mcp"], "trust": true }),
                );
            }
            let security = object(doc, "security")?;
            let redaction = object_in(security, "environmentVariableRedaction")?;
            add_strings(redaction, "allowed", &["BOARD_TOKEN"])?;
            set_hooks(doc, CliKind::Gemini, bin)
        },
    )?;
    Ok(vec![w])
}

/// The YAML keys the board's `.aider.conf.yml` block sets.
const AIDER_KEYS: &[&str] = &[
    "read",
    "notifications",
    "notifications-command",
    "check-update",
    "show-release-notes",
    "gitignore",
    "analytics",
];

fn aider(root: &Path, bin: &str, conventions: &str) -> Result<Vec<Written>, AgentsInitError> {
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let block = format!(
        "read: [{}]\n\
         notifications: true\n\
         notifications-command: {}\n\
         check-update: false\n\
         show-release-notes: false\n\
         gitignore: false\n\
         analytics: false\n",
        quote(conventions),
        quote(&hook_command(bin, CliKind::Aider, "notify")),
    );
    let w = edit_block(
        root.join(".aider.conf.yml"),
        "reads the conventions, reports its questions and finished replies, skips first-run questions",
        &block,
        false,
        |text, _| {
            let (begin, end) = HASH_MARKERS;
            let outside: String = match (text.find(begin), text.find(end)) {
                (Some(b), Some(e)) => format!("{}{}", &text[..b], &text[e..]),
                _ => text.to_string(),
            };
            match outside.lines().find_map(|l| {
                AIDER_KEYS
                    .iter()
                    .find(|k| l.starts_with(&format!("{k}:")))
            }) {
                Some(k) => Err(format!(
                    "the file sets `{k}:` already; remove it (the board's block sets it) or merge by hand"
                )),
                None => Ok(()),
            }
        },
    )?;
    Ok(vec![w])
}

/// Writes the settings of every CLI named by `profiles` under `root`; `board_bin` is the board
/// binary hooks and MCP entries call (an absolute path: the CLIs rebuild PATH from the login
/// shell). Each file is checked before it is written; the first file that cannot take the
/// board's settings stops the run with nothing more written.
pub fn configure(
    root: &Path,
    board_bin: &Path,
    profiles: &[Profile],
) -> Result<Vec<Written>, AgentsInitError> {
    let bin = board_bin.to_string_lossy();
    let mut out = Vec::new();
    for kind in CliKind::ALL {
        let of_kind: Vec<&Profile> = profiles.iter().filter(|p| p.cli == Some(kind)).collect();
        if of_kind.is_empty() {
            continue;
        }
        let mcp = of_kind.iter().any(|p| p.mcp);
        let file = |default: &str| {
            of_kind
                .iter()
                .find_map(|p| p.instructions_file.clone())
                .unwrap_or_else(|| default.to_string())
        };
        out.extend(match kind {
            CliKind::Claude => claude(root, &bin, mcp)?,
            CliKind::Codex => codex(root, &bin, mcp)?,
            CliKind::Gemini => gemini(root, &bin, mcp, &file("AGENTS.md"))?,
            CliKind::Aider => aider(root, &bin, &file("CONVENTIONS.md"))?,
            CliKind::Shell => Vec::new(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_are_merged_with_the_users_and_idempotent() {
        let mut doc = json!({"hooks": {"Stop": [
            {"hooks": [{"type": "command", "command": "notify-send done"}]},
            {"hooks": [{"type": "command", "command": "'/old path/board' hook claude Stop"}]}
        ]}, "model": "x"});
        set_hooks(&mut doc, CliKind::Claude, "/new/board").unwrap();
        let once = doc.clone();
        set_hooks(&mut doc, CliKind::Claude, "/new/board").unwrap();
        assert_eq!(doc, once);
        let stop = doc["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2, "{stop:?}");
        assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
        assert_eq!(
            stop[1]["hooks"][0]["command"],
            "/new/board hook claude Stop"
        );
        assert_eq!(doc["model"], "x");
        assert!(doc["hooks"]["PermissionRequest"].is_array());
    }

    #[test]
    fn board_hook_commands_are_recognised() {
        assert!(is_board_hook(
            "'/a b/board' hook gemini AfterAgent",
            CliKind::Gemini
        ));
        assert!(is_board_hook("board hook codex Stop", CliKind::Codex));
        assert!(!is_board_hook("board hook codex Stop", CliKind::Claude));
        assert!(!is_board_hook(
            "myboard-ish hook claude Stop",
            CliKind::Claude
        ));
    }

    #[test]
    fn string_settings_become_lists() {
        let mut m = Map::new();
        m.insert("fileName".into(), json!("MY.md"));
        add_strings(&mut m, "fileName", &["AGENTS.md", "MY.md"]).unwrap();
        assert_eq!(m["fileName"], json!(["MY.md", "AGENTS.md"]));
    }
}
