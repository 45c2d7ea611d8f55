//! `board up` / `board down`: the team in tmux. `up` opens a tmux session named after the board,
//! with the TUI in the first window and one `board run` pane per agent of `[[agents]]` in
//! `board.toml` (tiled in the `agents` window); run again, it starts only what is missing or
//! ended (see [`crate::agent_tools::team`]). Each launcher registers its pane, so the board watches the pane's
//! process and closing a pane expels its claims.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::agent_tools::team;
use crate::proto::client::{self, Client};
use crate::proto::config::{self, Paths};
use crate::proto::error::{BoardError, BoardResult};

/// `board up`: starts the board if needed, then opens the tmux session or completes it (see
/// [`team::up`]): only slots without a pane or whose agent ended are started. Returns
/// `{"session": NAME, "panes": [{"agent_name", "profile", "pane", "pid", "outcome"}]}`.
///
/// Errors: no board.toml, a bad profile or a missing agent command (before any pane exists),
/// tmux failures.
pub fn up(attach: bool) -> BoardResult<Value> {
    let (cfg, paths) = config::discover().map_err(config::ConfigError::into_board_error)?;
    let name = team::session_name(&cfg, &paths.root);
    let exe = std::env::current_exe().map_err(|e| BoardError::internal(e.to_string()))?;
    let exe = exe.to_string_lossy().to_string();
    // Everything that can be checked is checked before the board or tmux is touched.
    let mut slots = team::slots(&cfg, &paths)?;
    team::check_commands(&slots, &exe)?;
    if slots
        .iter()
        .any(|s| s.profile.cli == Some(crate::agent_tools::profile::CliKind::Shell))
    {
        write_shell_rc(&paths, &exe)?;
    }
    team::prepare_worktrees(&mut slots, &paths.root)?;
    // Make sure the board runs before any agent tries to register.
    let target = client::target()?;
    Client::connect(&target, true)?.call("hello", json!({}))?;
    let panes = team::up(&name, &slots, &paths.root, &exe)?;
    save_panes(&paths, &name, &panes);
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
/// the prompt, and at each prompt tells the board the shell is at its prompt (in the background,
/// so a stopped board never slows the prompt).
fn write_shell_rc(paths: &Paths, exe: &str) -> BoardResult<()> {
    let rc = format!(
        "# Written by `board up` for the shell profile; rewritten at every `board up`.\n\
         [ -r /etc/bash.bashrc ] && . /etc/bash.bashrc\n\
         [ -r \"$HOME/.bashrc\" ] && . \"$HOME/.bashrc\"\n\
         PS1='[board:'\"${{BOARD_AGENT_NAME:-${{BOARD_AGENT:-?}}}}\"'] \\w\\$ '\n\
         __board_prompt() {{ ( {} hook shell prompt </dev/null >/dev/null 2>&1 & ) ; }}\n\
         PROMPT_COMMAND=\"__board_prompt${{PROMPT_COMMAND:+; $PROMPT_COMMAND}}\"\n",
        team::tmux::shell_quote(exe)
    );
    let path = paths.data_dir.join(crate::agent_tools::profile::SHELL_RC);
    std::fs::write(&path, rc)
        .map_err(|e| BoardError::internal(format!("writing {}: {e}", path.display())))
}

fn save_panes(paths: &Paths, session: &str, panes: &[Value]) {
    let doc = json!({ "session": session, "panes": panes });
    let _ = std::fs::write(paths.data_dir.join("up.json"), format!("{doc:#}\n"));
}

/// `board down`: ends the tmux session (every launcher sees its pane close and the board expels
/// the claims of its agent), then removes the agents' worktrees that hold no uncommitted work
/// (their branches stay). Returns `{"session", "was_up", "worktrees": [{"agent", "path",
/// "branch", "removed", "kept_because"}]}`.
pub fn down() -> BoardResult<Value> {
    let (cfg, paths) = config::discover().map_err(config::ConfigError::into_board_error)?;
    let name = team::session_name(&cfg, &paths.root);
    let was_up = team::tmux::has_session(&name);
    if was_up {
        let pids: Vec<i64> = team::tmux::panes(&name)
            .unwrap_or_default()
            .iter()
            .map(|p| p.pid)
            .collect();
        team::tmux::run(&["kill-session", "-t", &format!("={name}")])?;
        let _ = std::fs::remove_file(paths.data_dir.join("up.json"));
        // The agents must be gone before their worktrees are: a launcher ends its agent's
        // whole process tree (TERM, then KILL after 1 s) before it exits.
        let deadline = Instant::now() + Duration::from_secs(5);
        while pids
            .iter()
            .any(|p| Path::new(&format!("/proc/{p}")).exists())
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let mut worktrees = Vec::new();
    for entry in cfg.agents.iter().filter(|a| a.worktree) {
        for slot in team::slot_names(entry) {
            let wt = team::worktree::Worktree::of(&paths.data_dir, &slot);
            let (removed, kept) = match team::worktree::remove(&paths.root, &wt)? {
                team::worktree::Removed::Absent => continue,
                team::worktree::Removed::Removed => (true, None),
                team::worktree::Removed::Kept(why) => (false, Some(why)),
            };
            worktrees.push(json!({
                "agent": slot, "path": wt.path, "branch": wt.branch, "removed": removed,
                "kept_because": kept,
            }));
        }
    }
    Ok(json!({ "session": name, "was_up": was_up, "worktrees": worktrees }))
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

/// `board up` as a command: [`up`] and a line saying what was started.
pub fn up_told(attach: bool) -> BoardResult<(Value, String)> {
    up(attach).map(|v| {
        let panes = v["panes"].as_array().cloned().unwrap_or_default();
        let count = |o: &str| panes.iter().filter(|p| p["outcome"] == o).count();
        let mut done = Vec::new();
        for (o, word) in [
            ("started", "started"),
            ("restarted", "started again"),
            ("running", "already running"),
        ] {
            if count(o) > 0 {
                done.push(format!("{} {word}", count(o)));
            }
        }
        let session = v["session"].as_str().unwrap_or("");
        // The hash suffix puzzles people; say once what it is for.
        let suffix = session
            .rsplit_once('-')
            .map(|(_, hash)| {
                format!(
                    " (its `-{hash}` tells it from the session of another project of that name)"
                )
            })
            .unwrap_or_default();
        let h = format!(
            "tmux session {session} is up with {} agent pane(s) ({}); `board up --attach` to see \
             it{suffix}",
            panes.len(),
            done.join(", ")
        );
        (v, h)
    })
}

/// `board down` as a command: [`down`] and what became of the session and each worktree.
pub fn down_told() -> BoardResult<(Value, String)> {
    down().map(|v| {
        let mut h = if v["was_up"] == json!(true) {
            "tmux session ended".to_string()
        } else {
            "no tmux session was up".to_string()
        };
        for w in v["worktrees"].as_array().into_iter().flatten() {
            let (agent, branch) = (super::print::s(&w["agent"]), super::print::s(&w["branch"]));
            if w["removed"] == json!(true) {
                h.push_str(&format!(
                    "\nremoved the worktree of {agent} (branch {branch} stays)"
                ));
            } else {
                h.push_str(&format!(
                    "\nkept the worktree of {agent} at {}: {}",
                    super::print::s(&w["path"]),
                    super::print::s(&w["kept_because"])
                ));
            }
        }
        (v, h)
    })
}
