//! `board init --agents --trust`: marks the project as trusted in the user's own settings of
//! each agent CLI, so their workspace-trust dialogs do not block the panes of `board up`.
//!
//! These are the user's global files, so this runs only on that explicit flag, and every change
//! is reported. What each CLI reads (measured with the real CLIs):
//! - Claude Code: `~/.claude.json` `projects[<root>].hasTrustDialogAccepted` (what its trust
//!   dialog writes; no project file or flag can skip it);
//! - Codex: `~/.codex/config.toml` (`$CODEX_HOME` when set) `[projects."<root>"]
//!   trust_level = "trusted"` (a `-c` flag does not count, a project file is not read before it),
//!   and each of the board's hooks in `<root>/.codex/hooks.json` trusted by hash
//!   (`[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash`, what Codex's "Hooks need
//!   review" dialog writes; headless `codex exec` has no dialog and runs no untrusted hook);
//! - Gemini CLI: `~/.gemini/trustedFolders.json` `{"<root>": "TRUST_FOLDER"}` (`board up`
//!   panes trust the project for their session anyway), and `~/.gemini/policies/board.toml`: a
//!   rule of Gemini's policy engine that lets its shell tool run `board …` without a dialog
//!   (0.61 ignores a project's `.gemini/policies`, and `tools.allowed` is deprecated and denies
//!   every other shell command). The rule names the command, not the project: it holds for
//!   `board` in every folder.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::cli_files::{is_board_hook, Written};
use super::init::{self, Action, AgentsInitError};
use super::profile::CliKind;

fn settings_error(path: &Path, problem: String) -> AgentsInitError {
    AgentsInitError::Settings {
        path: path.to_path_buf(),
        problem,
    }
}

/// Sets `doc[keys…] = value` in the JSON object file at `path` (created when missing), keeping
/// everything else; unchanged files are not rewritten.
fn set_json(
    path: PathBuf,
    keys: &[&str],
    value: Value,
    what: String,
) -> Result<Written, AgentsInitError> {
    let old = init::read_optional(&path)?;
    let mut doc = match old.as_deref().map(str::trim) {
        None | Some("") => Value::Object(Map::new()),
        Some(t) => serde_json::from_str(t)
            .map_err(|e| settings_error(&path, format!("not valid JSON ({e})")))?,
    };
    let mut at = &mut doc;
    for k in keys {
        let Value::Object(m) = at else {
            return Err(settings_error(
                &path,
                format!("`{k}`'s parent is not an object"),
            ));
        };
        at = m
            .entry((*k).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    let action = if *at == value && old.is_some() {
        Action::Unchanged
    } else {
        *at = value;
        let text =
            serde_json::to_string_pretty(&doc).map_err(|e| settings_error(&path, e.to_string()))?;
        init::write_if_changed(&path, old.as_deref(), &format!("{text}\n"))?
    };
    Ok(Written { path, action, what })
}

/// Codex's user settings file.
fn codex_config(home: &Path) -> PathBuf {
    std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".codex"))
        .join("config.toml")
}

fn codex(home: &Path, root: &str) -> Result<Written, AgentsInitError> {
    let path = codex_config(home);
    let old = init::read_optional(&path)?;
    let text = old.as_deref().unwrap_or("");
    let table: toml::Table = text
        .parse()
        .map_err(|e| settings_error(&path, format!("not valid TOML ({e})")))?;
    let what = format!("Codex trusts {root} (user settings)");
    let entry = table.get("projects").and_then(|p| p.get(root));
    let action = match entry.map(|e| e.get("trust_level").and_then(|t| t.as_str())) {
        Some(Some("trusted")) => Action::Unchanged,
        Some(_) => {
            return Err(settings_error(
                &path,
                format!(
                "[projects.{root:?}] is there already; set trust_level = \"trusted\" in it by hand"
            ),
            ))
        }
        None => {
            let key = toml::Value::String(root.to_string());
            let mut new = text.to_string();
            if !new.is_empty() && !new.ends_with('\n') {
                new.push('\n');
            }
            new.push_str(&format!("\n[projects.{key}]\ntrust_level = \"trusted\"\n"));
            new.parse::<toml::Table>().map_err(|e| {
                settings_error(&path, format!("adding the project would break it ({e})"))
            })?;
            init::write_if_changed(&path, old.as_deref(), &new)?
        }
    };
    Ok(Written { path, action, what })
}

/// `PostToolUse` → `post_tool_use`: how Codex names a hook event in its trust keys.
fn snake_event(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The hash Codex 0.171 trusts a command hook by: `sha256:` and the hex SHA-256 of the compact
/// JSON of its normalised identity, keys sorted, Codex's defaults filled in (timeout 600 s, not
/// async). Written out by hand so the key order cannot depend on serde_json's features.
fn codex_hook_hash(event: &str, command: &str) -> String {
    use sha2::{Digest, Sha256};
    let identity = format!(
        r#"{{"event_name":{},"hooks":[{{"async":false,"command":{},"timeout":600,"type":"command"}}]}}"#,
        Value::from(snake_event(event)),
        Value::from(command),
    );
    let digest = Sha256::digest(identity.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// (trust key, hash) of each of the board's hooks in `<root>/.codex/hooks.json`.
fn board_codex_hooks(root: &str) -> Result<Vec<(String, String)>, AgentsInitError> {
    let file = Path::new(root).join(".codex/hooks.json");
    let Some(text) = init::read_optional(&file)? else {
        return Ok(Vec::new());
    };
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| settings_error(&file, format!("not valid JSON ({e})")))?;
    let mut out = Vec::new();
    let Some(events) = doc["hooks"].as_object() else {
        return Ok(out);
    };
    for (event, groups) in events {
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            for (h, handler) in group["hooks"].as_array().into_iter().flatten().enumerate() {
                let Some(cmd) = handler["command"].as_str() else {
                    continue;
                };
                if group.get("matcher").is_none() && is_board_hook(cmd, CliKind::Codex) {
                    let key = format!("{}:{}:{g}:{h}", file.display(), snake_event(event));
                    out.push((key, codex_hook_hash(event, cmd)));
                }
            }
        }
    }
    Ok(out)
}

/// Trusts the board's own Codex hooks of `root` in Codex's user settings (None when the
/// project has none). A trusted hash that no longer matches (board moved) is replaced.
fn codex_hooks(home: &Path, root: &str) -> Result<Option<Written>, AgentsInitError> {
    let hooks = board_codex_hooks(root)?;
    if hooks.is_empty() {
        return Ok(None);
    }
    let path = codex_config(home);
    let old = init::read_optional(&path)?;
    let mut text = old.clone().unwrap_or_default();
    let table: toml::Table = text
        .parse()
        .map_err(|e| settings_error(&path, format!("not valid TOML ({e})")))?;
    let state = table.get("hooks").and_then(|h| h.get("state"));
    for (key, hash) in &hooks {
        match state
            .and_then(|s| s.get(key))
            .and_then(|k| k.get("trusted_hash"))
            .and_then(|h| h.as_str())
        {
            Some(h) if h == hash => {}
            Some(stale) => text = text.replace(stale, hash),
            None => {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                let key = toml::Value::String(key.clone());
                text.push_str(&format!(
                    "\n[hooks.state.{key}]\ntrusted_hash = \"{hash}\"\n"
                ));
            }
        }
    }
    text.parse::<toml::Table>().map_err(|e| {
        settings_error(
            &path,
            format!("trusting the board's hooks would break it ({e})"),
        )
    })?;
    let action = init::write_if_changed(&path, old.as_deref(), &text)?;
    let what = format!("Codex trusts the board's hooks of {root} (user settings)");
    Ok(Some(Written { path, action, what }))
}

/// Gemini CLI's policy rule for the board's own commands in its shell tool: `board …` and
/// `"$BOARD_BIN" …` (what the instructions say when `board` is not on PATH). Redirection stays
/// a question (`allowRedirection` unset). Priority 100 of the user tier: above Gemini's default
/// "ask" for the shell, below any rule the user writes with a higher priority.
const GEMINI_POLICY: &str = r#"# Written by `board init --agents --trust`; replaced on every run.
# Gemini CLI runs the board's own commands in its shell tool without asking.
[[rule]]
toolName = "run_shell_command"
commandPrefix = ["board", "\"$BOARD_BIN\""]
decision = "allow"
priority = 100
"#;

fn gemini_policy(home: &Path) -> Result<Written, AgentsInitError> {
    let path = home.join(".gemini/policies/board.toml");
    let old = init::read_optional(&path)?;
    let action = init::write_if_changed(&path, old.as_deref(), GEMINI_POLICY)?;
    Ok(Written {
        path,
        action,
        what: "Gemini CLI runs `board …` in its shell without asking (user policy)".into(),
    })
}

/// Trusts `root` in the user settings (under `home`) of every CLI in `kinds` that has a trust
/// dialog. Errors: a settings file that cannot be read or understood (nothing written to it).
pub fn trust(home: &Path, root: &Path, kinds: &[CliKind]) -> Result<Vec<Written>, AgentsInitError> {
    let root_s = root.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for kind in kinds {
        match kind {
            CliKind::Claude => out.push(set_json(
                home.join(".claude.json"),
                &["projects", &root_s, "hasTrustDialogAccepted"],
                json!(true),
                format!("Claude Code trusts {root_s} (user settings)"),
            )?),
            CliKind::Codex => {
                out.push(codex(home, &root_s)?);
                out.extend(codex_hooks(home, &root_s)?);
            }
            CliKind::Gemini => {
                out.push(set_json(
                    home.join(".gemini/trustedFolders.json"),
                    &[&root_s],
                    json!("TRUST_FOLDER"),
                    format!("Gemini CLI trusts {root_s} (user settings)"),
                )?);
                out.push(gemini_policy(home)?);
            }
            CliKind::Aider | CliKind::Shell => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_hook_hashes_are_what_codex_writes_when_a_person_trusts_them() {
        // As Codex 0.171's "Trust all and continue" writes it (checked against a recorded hash).
        assert_eq!(
            codex_hook_hash("PostToolUse", "/usr/local/bin/board hook codex PostToolUse"),
            "sha256:38ebc34ed01f74e0d2a5724101b1e50566746e297a212f78aa9e959783a9bd09"
        );
        assert_eq!(snake_event("UserPromptSubmit"), "user_prompt_submit");
    }

    #[test]
    fn board_codex_hooks_are_trusted_once_and_again_when_board_moves() {
        let home = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join(".codex")).unwrap();
        let hooks = |bin: &str| {
            json!({"hooks": {"Stop": [
                {"hooks": [{"type": "command", "command": "notify-send done"}]},
                {"hooks": [{"type": "command", "command": format!("{bin} hook codex Stop")}]}
            ]}})
            .to_string()
        };
        std::fs::write(root.path().join(".codex/hooks.json"), hooks("/a/board")).unwrap();
        let root_s = root.path().to_string_lossy().into_owned();
        let config = home.path().join(".codex/config.toml");
        let state = || -> toml::Table {
            let t: toml::Table = std::fs::read_to_string(&config).unwrap().parse().unwrap();
            t["hooks"]["state"].as_table().unwrap().clone()
        };
        let first = codex_hooks(home.path(), &root_s).unwrap().unwrap();
        assert_ne!(first.action, Action::Unchanged);
        let key = format!("{root_s}/.codex/hooks.json:stop:1:0");
        assert_eq!(state().len(), 1, "only the board's hook: {:?}", state());
        assert_eq!(
            state()[&key]["trusted_hash"].as_str(),
            Some(codex_hook_hash("Stop", "/a/board hook codex Stop").as_str())
        );
        let again = codex_hooks(home.path(), &root_s).unwrap().unwrap();
        assert_eq!(again.action, Action::Unchanged);
        std::fs::write(root.path().join(".codex/hooks.json"), hooks("/b/board")).unwrap();
        codex_hooks(home.path(), &root_s).unwrap();
        assert_eq!(state().len(), 1);
        assert_eq!(
            state()[&key]["trusted_hash"].as_str(),
            Some(codex_hook_hash("Stop", "/b/board hook codex Stop").as_str())
        );
    }

    #[test]
    fn trust_keeps_the_users_settings_and_is_idempotent() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".claude.json"),
            r#"{"numStartups": 3, "projects": {"/other": {"allowedTools": []}}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        std::fs::write(home.path().join(".codex/config.toml"), "model = \"o3\"\n").unwrap();
        let root = Path::new("/work/my \"proj\"");
        let kinds = [CliKind::Claude, CliKind::Codex, CliKind::Gemini];
        let first = trust(home.path(), root, &kinds).unwrap();
        assert!(
            first.iter().all(|w| w.action != Action::Unchanged),
            "{first:?}"
        );
        let again = trust(home.path(), root, &kinds).unwrap();
        assert!(
            again.iter().all(|w| w.action == Action::Unchanged),
            "{again:?}"
        );
        let claude: Value = serde_json::from_str(
            &std::fs::read_to_string(home.path().join(".claude.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(claude["numStartups"], 3);
        assert!(claude["projects"]["/other"].is_object());
        assert_eq!(
            claude["projects"]["/work/my \"proj\""]["hasTrustDialogAccepted"],
            true
        );
        let codex: toml::Table = std::fs::read_to_string(home.path().join(".codex/config.toml"))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(codex["model"].as_str(), Some("o3"));
        assert_eq!(
            codex["projects"]["/work/my \"proj\""]["trust_level"].as_str(),
            Some("trusted")
        );
    }

    #[test]
    fn gemini_gets_a_user_policy_allowing_board_commands_in_its_shell() {
        let home = tempfile::tempdir().unwrap();
        trust(home.path(), Path::new("/p"), &[CliKind::Gemini]).unwrap();
        let text =
            std::fs::read_to_string(home.path().join(".gemini/policies/board.toml")).unwrap();
        let policy: toml::Table = text.parse().unwrap();
        let rule = &policy["rule"].as_array().unwrap()[0];
        assert_eq!(rule["toolName"].as_str(), Some("run_shell_command"));
        assert_eq!(rule["decision"].as_str(), Some("allow"));
        let prefixes: Vec<&str> = rule["commandPrefix"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p.as_str())
            .collect();
        assert_eq!(prefixes, ["board", "\"$BOARD_BIN\""]);
    }
}
