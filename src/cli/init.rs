//! `board init`: board.toml and .board/ here, and the extras asked for (`--agents`, `--trust`,
//! `--mcp`, `--git-hooks`).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::args::InitExtras;
use crate::agent_tools::init::{self, Action};
use crate::agent_tools::profile::Profile;
use crate::proto::error::{BoardError, BoardResult};

pub(super) fn init(name: Option<String>) -> BoardResult<(Value, String)> {
    let cwd = std::env::current_dir().map_err(|e| BoardError::internal(e.to_string()))?;
    let path = cwd.join(crate::proto::config::CONFIG_FILE);
    let created = !path.exists();
    if created {
        let name = name.unwrap_or_else(|| {
            cwd.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "board".into())
        });
        std::fs::write(&path, crate::proto::config::Config::default_text(&name))
            .map_err(|e| BoardError::internal(format!("writing {}: {e}", path.display())))?;
    }
    let cfg =
        crate::proto::config::Config::load(&path).map_err(|e| BoardError::usage(e.to_string()))?;
    let paths = crate::proto::config::Paths::new(&cwd, &cfg);
    crate::daemon::ensure_data_dir(&paths).map_err(|e| BoardError::internal(format!("{e:#}")))?;
    let gitignore = paths.data_dir.join(".gitignore");
    if !gitignore.exists() {
        let _ = std::fs::write(&gitignore, "*\n");
    }
    let human = if created {
        format!(
            "created {} and {}/",
            path.display(),
            paths.data_dir.display()
        )
    } else {
        format!(
            "{} already exists; {}/ is ready",
            path.display(),
            paths.data_dir.display()
        )
    };
    Ok((
        json!({ "root": cwd, "config": path, "data_dir": paths.data_dir, "created": created }),
        human,
    ))
}

fn action_json(path: &std::path::Path, a: Action) -> Value {
    json!({ "path": path, "action": a.as_str() })
}

/// The profiles `board init --agents` configures: those `board.toml`'s `[[agents]]` name (a
/// project's `agents/NAME.toml` wins over the built-in), or, with no `[[agents]]` at all, every
/// built-in one (the project has not said which CLIs it uses yet).
/// The second value says whether it is every built-in one for want of `[[agents]]`.
fn agent_profiles(root: &std::path::Path) -> BoardResult<(Vec<Profile>, bool)> {
    let cfg_path = root.join(crate::proto::config::CONFIG_FILE);
    let cfg = crate::proto::config::Config::load(&cfg_path)
        .map_err(|e| BoardError::usage(e.to_string()))?;
    let mut names: Vec<String> = Vec::new();
    for a in &cfg.agents {
        if !names.contains(&a.profile) {
            names.push(a.profile.clone());
        }
    }
    let every = names.is_empty();
    if every {
        names = crate::agent_tools::profile::BUILTIN
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
    }
    let profiles = names
        .iter()
        .map(|n| Profile::load(root, n).map_err(|e| BoardError::usage(e.to_string())))
        .collect::<BoardResult<Vec<Profile>>>()?;
    Ok((profiles, every))
}

/// Adds the requested extras to the result of plain `board init` (`v`, `human`): writes the
/// files and reports them under `agents`, `mcp` and `git_hooks`. Errors: `usage` when a file
/// cannot be understood (unbalanced markers, a broken .mcp.json, not a git repository, a chained
/// hook in the way), `internal` on I/O failures.
pub fn init_extras(
    (mut v, mut human): (Value, String),
    extras: InitExtras,
) -> BoardResult<(Value, String)> {
    let root = v["root"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| BoardError::internal("init did not report its root"))?;
    if extras.agents {
        let profiles = init_agents(&root, &mut v, &mut human)?;
        if extras.trust {
            trust_folder(&root, &profiles, &mut v, &mut human)?;
        } else {
            human.push_str(
                "\nClaude Code and Codex still ask once whether to trust this folder \
                 (`board init --agents --trust` records that in your user settings)",
            );
        }
    }
    if extras.mcp {
        let bin = board_exe()?;
        let (path, a) =
            init::write_mcp(&root, &bin.to_string_lossy()).map_err(usage_or_internal)?;
        human.push_str(&format!(
            "\n{} {} (MCP server `board mcp`)",
            a.as_str(),
            path.display()
        ));
        v["mcp"] = action_json(&path, a);
    }
    if extras.git_hooks {
        init_git_hooks(&root, &mut v, &mut human)?;
    }
    Ok((v, human))
}

/// A failure of the agent files' writers as the board's error: I/O is `internal`, the rest
/// (a file the user must fix) `usage`.
fn usage_or_internal(e: init::AgentsInitError) -> BoardError {
    match e {
        init::AgentsInitError::Io { .. } => BoardError::internal(e.to_string()),
        _ => BoardError::usage(e.to_string()),
    }
}

/// This binary's resolved path, which the written hooks and MCP entries call.
fn board_exe() -> BoardResult<PathBuf> {
    std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| BoardError::internal(format!("cannot find the board binary: {e}")))
}

/// `--agents`: the instructions files and every set-up CLI's settings; returns the profiles
/// set up. Adds `agents` to `v` and a line per file to `human`.
fn init_agents(root: &Path, v: &mut Value, human: &mut String) -> BoardResult<Vec<Profile>> {
    let (profiles, every) = agent_profiles(root)?;
    let mut files: Vec<String> = Vec::new();
    for p in &profiles {
        if let Some(f) = &p.instructions_file {
            if !files.contains(f) {
                files.push(f.clone());
            }
        }
    }
    let written = init::write_instructions(root, &files, crate::agent_tools::profile::INSTRUCTIONS)
        .map_err(usage_or_internal)?;
    let mut all: Vec<crate::agent_tools::cli_files::Written> = written
        .into_iter()
        .map(|(path, action)| crate::agent_tools::cli_files::Written {
            path,
            action,
            what: format!(
                "board instructions between {} and {}",
                init::BEGIN,
                init::END
            ),
        })
        .collect();
    let bin = board_exe()?;
    all.extend(
        crate::agent_tools::cli_files::configure(root, &bin, &profiles)
            .map_err(usage_or_internal)?,
    );
    for w in &all {
        human.push_str(&format!(
            "\n{} {} ({})",
            w.action.as_str(),
            w.path.display(),
            w.what
        ));
    }
    human.push_str(&format!(
        "\nhooks and MCP entries call {}; run `board init --agents` again if board moves",
        bin.display()
    ));
    if every {
        human.push_str(
            "\nboard.toml names no [[agents]]: every known CLI was set up \
             (with [[agents]], only the CLIs their profiles start)",
        );
    }
    v["agents"] = all
        .iter()
        .map(|w| json!({ "path": w.path, "action": w.action.as_str(), "what": w.what }))
        .collect::<Vec<_>>()
        .into();
    Ok(profiles)
}

/// `--trust`: records in the user's settings of each CLI of `profiles` that `root` is trusted.
/// Adds `trust` to `v` and a line per settings file to `human`.
fn trust_folder(
    root: &Path,
    profiles: &[Profile],
    v: &mut Value,
    human: &mut String,
) -> BoardResult<()> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| BoardError::usage("--trust needs HOME (your user settings)"))?;
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let kinds: Vec<crate::agent_tools::profile::CliKind> =
        crate::agent_tools::profile::CliKind::ALL
            .into_iter()
            .filter(|k| profiles.iter().any(|p| p.cli == Some(*k)))
            .collect();
    let changed =
        crate::agent_tools::trust::trust(&home, &real_root, &kinds).map_err(usage_or_internal)?;
    for w in &changed {
        human.push_str(&format!(
            "\n{} {} ({}){}",
            w.action.as_str(),
            w.path.display(),
            w.what,
            if w.action == Action::Unchanged {
                ""
            } else {
                ": your user settings were changed"
            }
        ));
    }
    v["trust"] = changed
        .iter()
        .map(|w| json!({ "path": w.path, "action": w.action.as_str(), "what": w.what }))
        .collect::<Vec<_>>()
        .into();
    Ok(())
}

/// `--git-hooks`: the commit fence hooks. Adds `git_hooks` to `v` and a line per hook.
fn init_git_hooks(root: &Path, v: &mut Value, human: &mut String) -> BoardResult<()> {
    let exe = board_exe()?;
    let report = crate::agent_tools::hooks::install(root, &exe).map_err(|e| match e {
        crate::agent_tools::hooks::HooksError::Io { .. }
        | crate::agent_tools::hooks::HooksError::Git(_) => BoardError::internal(e.to_string()),
        _ => BoardError::usage(e.to_string()),
    })?;
    for h in &report.hooks {
        human.push_str(&format!(
            "\n{} git hook {}",
            h.action.as_str(),
            h.path.display()
        ));
        if let Some(c) = &h.chained {
            human.push_str(&format!(" (runs the earlier hook {})", c.display()));
        }
    }
    v["git_hooks"] = report.to_json();
    Ok(())
}
