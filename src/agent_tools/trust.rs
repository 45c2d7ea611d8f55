//! `board init --agents --trust`: marks the project as trusted in the user's own settings of
//! each agent CLI, so their workspace-trust dialogs do not block the panes of `board up`.
//!
//! These are the user's global files, so this runs only on that explicit flag, and every change
//! is reported. What each CLI reads (measured with the real CLIs):
//! - Claude Code: `~/.claude.json` `projects[<root>].hasTrustDialogAccepted` (what its trust
//!   dialog writes; no project file or flag can skip it);
//! - Codex: `~/.codex/config.toml` (`$CODEX_HOME` when set) `[projects."<root>"]
//!   trust_level = "trusted"` (a `-c` flag does not count, a project file is not read before it);
//! - Gemini CLI: `~/.gemini/trustedFolders.json` `{"<root>": "TRUST_FOLDER"}` (`board up`
//!   panes trust the project for their session anyway), and `~/.gemini/policies/board.toml`: a
//!   rule of Gemini's policy engine that lets its shell tool run `board …` without a dialog
//!   (0.61 ignores a project's `.gemini/policies`, and `tools.allowed` is deprecated and denies
//!   every other shell command). The rule names the command, not the project: it holds for
//!   `board` in every folder.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::cli_files::Written;
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

fn codex(home: &Path, root: &str) -> Result<Written, AgentsInitError> {
    let dir = std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".codex"));
    let path = dir.join("config.toml");
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
            CliKind::Codex => out.push(codex(home, &root_s)?),
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
