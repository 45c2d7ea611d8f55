//! `board up` / `board down`: the team in tmux. `up` opens a tmux session named after the board,
//! with the TUI in the first window and one `board run` pane per agent of `[[agents]]` in
//! `board.toml` (tiled in the `agents` window). Each launcher registers its pane, so the board
//! watches the pane's process and closing a pane expels its claims.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::agent_tools::profile::Profile;
use crate::config::{self, Config, Paths};
use crate::proto::client::{self, Client};
use crate::proto::error::{BoardError, BoardResult};

/// The tmux session name of a board: its name (characters tmux reserves replaced) and a short
/// hash of its root, so two projects with the same name never share (or end) a session.
pub fn session_name(cfg: &Config, root: &std::path::Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut h);
    format!("{}-{:04x}", base_name(cfg), h.finish() & 0xffff)
}

fn base_name(cfg: &Config) -> String {
    let n: String = cfg
        .board
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if n.is_empty() {
        "board".into()
    } else {
        n
    }
}

/// Most agent panes `board up` opens (tmux needs room for each in one window).
const MAX_PANES: u32 = 16;

fn tmux(args: &[&str]) -> BoardResult<String> {
    let out = Command::new("tmux")
        .args(args)
        .env_remove("TMUX")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            BoardError::unavailable(format!(
                "cannot run tmux ({e}); install tmux to use `board up`"
            ))
        })?;
    if !out.status.success() {
        return Err(BoardError::internal(format!(
            "tmux {} failed: {}",
            args.first().copied().unwrap_or(""),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn has_session(name: &str) -> bool {
    Command::new("tmux")
        .args(["has-session", "-t", &format!("={name}")])
        .env_remove("TMUX")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `board up`: starts the board if needed, then the tmux session. Returns the panes started as
/// `{"session": NAME, "panes": [{"agent_name", "profile", "pane", "pid"}]}`.
pub fn up(attach: bool) -> BoardResult<Value> {
    let (cfg, paths) = config::discover().map_err(|e| BoardError::unavailable(e.to_string()))?;
    let name = session_name(&cfg, &paths.root);
    // Make sure the board runs before any agent tries to register.
    let target = client::target()?;
    Client::connect(&target, true)?.call("hello", json!({}))?;
    let exe = std::env::current_exe().map_err(|e| BoardError::internal(e.to_string()))?;
    let exe = exe.to_string_lossy().to_string();
    let mut panes = Vec::new();
    if has_session(&name) {
        if !attach {
            return Err(BoardError::usage(format!(
                "tmux session {name:?} is already up: `board up --attach` to see it, `board down` to end it"
            )));
        }
    } else {
        // Check every profile first: a half-built session would block the next `up`.
        let mut profiles = Vec::new();
        for entry in &cfg.agents {
            let profile = Profile::load(&paths.root, &entry.profile)
                .map_err(|e| BoardError::usage(e.to_string()))?;
            profiles.push((entry, profile));
        }
        let total: u32 = cfg.agents.iter().map(|a| a.count).sum();
        if total > MAX_PANES {
            return Err(BoardError::usage(format!(
                "board.toml asks for {total} agent panes; `board up` opens at most {MAX_PANES}"
            )));
        }
        if profiles
            .iter()
            .any(|(_, p)| p.cli == Some(crate::agent_tools::profile::CliKind::Shell))
        {
            write_shell_rc(&paths, &exe)?;
        }
        let root = paths.root.to_string_lossy().to_string();
        let tui = format!("{} tui", shell_quote(&exe));
        tmux(&[
            "new-session",
            "-d",
            "-s",
            &name,
            "-n",
            "board",
            "-c",
            &root,
            "-x",
            "200",
            "-y",
            "50",
            &tui,
        ])?;
        let started = (|| -> BoardResult<()> {
            let mut first = true;
            for (entry, profile) in &profiles {
                for _ in 0..entry.count {
                    let pane = start_pane(&name, &paths, &exe, entry, profile, first)?;
                    first = false;
                    panes.push(json!({
                        "agent_name": entry.name, "profile": entry.profile, "pane": pane.0, "pid": pane.1
                    }));
                }
            }
            if !first {
                tmux(&["select-layout", "-t", &format!("={name}:agents"), "tiled"])?;
            }
            Ok(())
        })();
        if let Err(e) = started {
            // Leave nothing half-built behind; agents already started are expelled as their
            // panes close.
            let _ = tmux(&["kill-session", "-t", &format!("={name}")]);
            return Err(e);
        }
        save_panes(&paths, &name, &panes);
    }
    if attach {
        let err = if std::env::var_os("TMUX").is_some() {
            Command::new("tmux")
                .args(["switch-client", "-t", &format!("={name}")])
                .exec()
        } else {
            Command::new("tmux")
                .args(["attach-session", "-t", &format!("={name}")])
                .exec()
        };
        return Err(BoardError::internal(format!(
            "cannot attach to tmux: {err}"
        )));
    }
    Ok(json!({ "session": name, "panes": panes }))
}

/// Writes the bash rc file of the `shell` profile ([`crate::agent_tools::profile::SHELL_RC`]):
/// it reads what an interactive bash reads (`--rcfile` replaces both), then shows the agent in
/// the prompt, and at each prompt tells the board the shell is in use (in the background, so a
/// stopped board never slows the prompt).
fn write_shell_rc(paths: &Paths, exe: &str) -> BoardResult<()> {
    let rc = format!(
        "# Written by `board up` for the shell profile; rewritten at every `board up`.\n\
         [ -r /etc/bash.bashrc ] && . /etc/bash.bashrc\n\
         [ -r \"$HOME/.bashrc\" ] && . \"$HOME/.bashrc\"\n\
         PS1='[board:'\"${{BOARD_AGENT:-?}}\"'] \\w\\$ '\n\
         __board_prompt() {{ ( {} hook shell prompt </dev/null >/dev/null 2>&1 & ) ; }}\n\
         PROMPT_COMMAND=\"__board_prompt${{PROMPT_COMMAND:+; $PROMPT_COMMAND}}\"\n",
        shell_quote(exe)
    );
    let path = paths.data_dir.join(crate::agent_tools::profile::SHELL_RC);
    std::fs::write(&path, rc)
        .map_err(|e| BoardError::internal(format!("writing {}: {e}", path.display())))
}

fn start_pane(
    session: &str,
    paths: &Paths,
    exe: &str,
    entry: &crate::config::AgentEntry,
    profile: &Profile,
    first: bool,
) -> BoardResult<(String, i64)> {
    let root = paths.root.to_string_lossy().to_string();
    let root = root.as_str();
    let argv = profile.argv(exe, &paths.root, &paths.data_dir);
    let mut cmd = vec![
        shell_quote(exe),
        "run".into(),
        "--name".into(),
        shell_quote(&entry.name),
    ];
    let attention = entry.attention_after.or(profile.attention_after);
    if let Some(d) = attention {
        cmd.push("--attention-after".into());
        cmd.push(format!("{}ms", d.0.as_millis()));
    }
    cmd.push("--".into());
    cmd.extend(argv.iter().map(|a| shell_quote(a)));
    let cmd = cmd.join(" ");
    let target = format!("={session}:agents");
    let mut args: Vec<String> = if first {
        vec![
            "new-window".into(),
            "-d".into(),
            "-t".into(),
            format!("={session}:"),
            "-n".into(),
            "agents".into(),
        ]
    } else {
        vec![
            "split-window".into(),
            "-d".into(),
            "-t".into(),
            target.clone(),
        ]
    };
    args.extend([
        "-c".into(),
        root.into(),
        "-P".into(),
        "-F".into(),
        "#{pane_id} #{pane_pid}".into(),
    ]);
    for (k, v) in &profile.env {
        args.extend(["-e".into(), format!("{k}={v}")]);
    }
    args.push(cmd);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = tmux(&refs)?;
    if !first {
        // Keep room for the next split.
        let _ = tmux(&["select-layout", "-t", &target, "tiled"]);
    }
    let mut parts = out.split_whitespace();
    let pane = parts.next().unwrap_or_default().to_string();
    let pid = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    Ok((pane, pid))
}

fn save_panes(paths: &Paths, session: &str, panes: &[Value]) {
    let doc = json!({ "session": session, "panes": panes });
    let _ = std::fs::write(paths.data_dir.join("up.json"), format!("{doc:#}\n"));
}

/// `board down`: ends the tmux session; every launcher sees its pane close and the board expels
/// the claims of its agent.
pub fn down() -> BoardResult<Value> {
    let (cfg, paths) = config::discover().map_err(|e| BoardError::unavailable(e.to_string()))?;
    let name = session_name(&cfg, &paths.root);
    if !has_session(&name) {
        return Ok(json!({ "session": name, "was_up": false }));
    }
    tmux(&["kill-session", "-t", &format!("={name}")])?;
    let _ = std::fs::remove_file(paths.data_dir.join("up.json"));
    Ok(json!({ "session": name, "was_up": true }))
}

/// `board demo-agent`: runs the scripted demo agent (built in) in place of this process.
pub fn demo_agent() -> i32 {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().to_string())
        .unwrap_or_else(|_| "board".into());
    let err = Command::new("bash")
        .arg("-c")
        .arg(crate::cli::demo::AGENT_SCRIPT)
        .arg("board-demo-agent")
        .env("BOARD_BIN", &exe)
        .exec();
    eprintln!("board demo-agent: cannot run bash: {err}");
    1
}
