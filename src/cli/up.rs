//! `board up` / `board down`: the team in tmux. `up` opens a tmux session named after the board,
//! with the TUI in the first window and one `board run` pane per agent of `[[agents]]` in
//! `board.toml` (tiled in the `agents` window); run again, it starts only what is missing or
//! ended (see [`crate::agent_tools::team`]). Each launcher registers its pane, so the board watches the pane's
//! process and closing a pane expels its claims.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use crate::agent_tools::team;
use crate::proto::client::{self, Client};
use crate::proto::config::{self, Paths};
use crate::proto::error::{BoardError, BoardResult};
use crate::proto::methods::{Call, NoParams};
use crate::proto::sanitize::one_line;

/// `board up`: starts the board if needed, prepares the agents' worktrees, then opens the tmux
/// session or completes it (see [`team::up`]): only slots without a pane or whose agent ended
/// are started. Returns `{"session": NAME, "panes": [{"agent_name", "profile", "pane", "pid",
/// "outcome", "branch"?, "setup"?, "setup_had_failed"?, "needs_restart"?}],
/// "skipped_includes": [PATH]}`.
///
/// Errors: no board.toml, a bad profile or a missing agent command (before any pane exists),
/// tmux failures.
pub fn up(attach: bool) -> BoardResult<UpReport> {
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
    let skipped = team::prepare_worktrees(&mut slots, &paths.root, Path::new(&exe))?;
    // Make sure the board runs before any agent tries to register.
    let target = client::target()?;
    Client::connect(&target, true)?.send(Call::Hello(NoParams {}))?;
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
    Ok(UpReport {
        session: name,
        panes,
        skipped_includes: skipped,
    })
}

/// What `board up` did (its `--json` document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UpReport {
    /// The tmux session.
    pub session: String,
    /// What became of each agent's pane.
    pub panes: Vec<team::PaneReport>,
    /// `include` paths the project lacks (skipped).
    pub skipped_includes: Vec<String>,
}

/// What `board down` did (its `--json` document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DownReport {
    /// The tmux session.
    pub session: String,
    /// Whether it was up.
    pub was_up: bool,
    /// What became of each agent's worktree.
    pub worktrees: Vec<WorktreeReport>,
}

/// One worktree of `board down`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorktreeReport {
    /// The agent's slot.
    pub agent: String,
    /// The worktree's directory.
    pub path: std::path::PathBuf,
    /// Its branch (kept either way).
    pub branch: String,
    /// Whether the worktree was removed.
    pub removed: bool,
    /// Paths with changes not committed (why it was kept).
    pub uncommitted: Vec<String>,
    /// Commits of its branch not on the base branch, when git can tell.
    pub commits_not_on_base: Option<usize>,
    /// That base branch.
    pub base: Option<String>,
    /// How its teardown failed, if it did.
    pub teardown_failed: Option<String>,
}

/// A report as the one JSON document a command prints (keys in sorted order, as always).
fn document<T: Serialize>(report: &T) -> Value {
    // Plain strings, numbers, bools and lists: serializing cannot fail.
    serde_json::to_value(report).unwrap_or(Value::Null)
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

fn save_panes(paths: &Paths, session: &str, panes: &[team::PaneReport]) {
    let doc = json!({ "session": session, "panes": panes });
    let _ = std::fs::write(paths.data_dir.join("up.json"), format!("{doc:#}\n"));
}

/// `board down`: ends the tmux session (every launcher sees its pane close and the board expels
/// the claims of its agent), then removes the agents' worktrees that hold no uncommitted work
/// (their branches stay; the files the board put there do not count), running each one's
/// `teardown` first.
pub fn down() -> BoardResult<DownReport> {
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
            let wt = team::worktree::Worktree::for_entry(&paths.data_dir, &slot, entry);
            if let Some(w) = down_worktree(&paths.root, &slot, &wt)? {
                worktrees.push(w);
            }
        }
    }
    Ok(DownReport {
        session: name,
        was_up,
        worktrees,
    })
}

/// Removes the worktree `wt` of agent `slot` unless it holds uncommitted work, and says what
/// became of it and of its branch (None: there was none).
fn down_worktree(
    root: &Path,
    slot: &str,
    wt: &team::worktree::Worktree,
) -> BoardResult<Option<WorktreeReport>> {
    use team::worktree_removal::Removed;
    let (removed, uncommitted, teardown_failed) = match team::worktree_removal::remove(root, wt)? {
        Removed::Absent => return Ok(None),
        Removed::Removed { teardown_failed } => (true, Vec::new(), teardown_failed),
        Removed::Kept(paths) => (false, paths, None),
    };
    let ahead = team::worktree_removal::commits_not_on_base(root, wt);
    Ok(Some(WorktreeReport {
        agent: slot.to_string(),
        path: wt.path.clone(),
        branch: wt.branch.clone(),
        removed,
        uncommitted,
        commits_not_on_base: ahead.as_ref().map(|(n, _)| *n),
        base: ahead.map(|(_, b)| b),
        teardown_failed,
    }))
}

/// The agents of this board's `board up` session that did not start because their worktree
/// setup failed (their panes say why). Empty when there is no such session or tmux cannot tell.
pub fn setup_failures() -> Vec<String> {
    let Ok((cfg, paths)) = config::discover() else {
        return Vec::new();
    };
    let name = team::session_name(&cfg, &paths.root);
    if !team::tmux::has_session(&name) {
        return Vec::new();
    }
    team::tmux::panes(&name)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.state == team::SETUP_FAILED)
        .map(|p| crate::proto::sanitize::inert(&p.slot))
        .collect()
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
    up(attach).map(|r| {
        let count = |o: team::Outcome| r.panes.iter().filter(|p| p.outcome == o).count();
        let mut done = Vec::new();
        for (o, word) in [
            (team::Outcome::Started, "started"),
            (team::Outcome::Restarted, "started again"),
            (team::Outcome::Running, "already running"),
        ] {
            if count(o) > 0 {
                done.push(format!("{} {word}", count(o)));
            }
        }
        let session = r.session.as_str();
        // The hash suffix puzzles people; say once what it is for.
        let suffix = session
            .rsplit_once('-')
            .map(|(_, hash)| {
                format!(
                    " (its `-{hash}` tells it from the session of another project of that name)"
                )
            })
            .unwrap_or_default();
        let mut h = format!(
            "tmux session {session} is up with {} agent pane(s) ({}); `board up --attach` to see \
             it{suffix}",
            r.panes.len(),
            done.join(", ")
        );
        h.push_str(&worktree_notes(&r));
        (document(&r), h)
    })
}

/// The lines of `board up` about worktrees: skipped `include` paths, setups running in panes,
/// setups that had failed, running agents that need a restart to take changed options.
fn worktree_notes(r: &UpReport) -> String {
    let mut h = String::new();
    for path in &r.skipped_includes {
        h.push_str(&format!(
            "\ninclude {}: not in the project, skipped",
            crate::proto::sanitize::inert(&one_line(path))
        ));
    }
    let names = |f: &dyn Fn(&team::PaneReport) -> bool| -> Vec<String> {
        r.panes
            .iter()
            .filter(|p| f(p))
            .map(|p| one_line(&p.agent_name))
            .collect()
    };
    let had_failed = names(&|p| p.setup_had_failed);
    if !had_failed.is_empty() {
        h.push_str(&format!(
            "\nsetup had failed for {}: it runs again in the pane",
            had_failed.join(", ")
        ));
    }
    let setting_up = names(&|p| p.setup.is_some());
    if !setting_up.is_empty() {
        h.push_str(&format!(
            "\nsetup runs first in the worktree of {} (output in the pane); an agent starts only \
             when its setup succeeds",
            setting_up.join(", ")
        ));
    }
    for p in &r.panes {
        let Some(changed) = &p.needs_restart else {
            continue;
        };
        let changed: Vec<String> = changed.iter().map(|c| one_line(c)).collect();
        h.push_str(&format!(
            "\n{} runs with the old {} of board.toml; restart it to take the change (R in the \
             TUI's agents panel, or `board down` then `board up`)",
            one_line(&p.agent_name),
            changed.join(", ")
        ));
    }
    h
}

/// `board down` as a command: [`down`] and what became of the session and each worktree.
pub fn down_told() -> BoardResult<(Value, String)> {
    down().map(|r| {
        let mut h = if r.was_up {
            "tmux session ended".to_string()
        } else {
            "no tmux session was up".to_string()
        };
        for w in &r.worktrees {
            h.push('\n');
            h.push_str(&worktree_told(w));
        }
        (document(&r), h)
    })
}

/// How many of `paths` to name before "and N more".
const NAMED_PATHS: usize = 3;

fn some_paths(paths: &[String]) -> String {
    let mut named: Vec<String> = paths
        .iter()
        .take(NAMED_PATHS)
        .map(|p| crate::proto::sanitize::inert(&one_line(p)))
        .collect();
    if paths.len() > NAMED_PATHS {
        named.push(format!("and {} more", paths.len() - NAMED_PATHS));
    }
    named.join(", ")
}

/// One worktree of `board down`, in words: kept (why, and how to land or discard it) or
/// removed (and what its branch still holds).
fn worktree_told(w: &WorktreeReport) -> String {
    let (agent, branch) = (one_line(&w.agent), one_line(&w.branch));
    let path = one_line(&w.path.to_string_lossy());
    let base = one_line(w.base.as_deref().unwrap_or(""));
    let ahead = w.commits_not_on_base;
    let commits = match ahead {
        Some(n) if n > 0 => format!("; its branch {branch} has {n} commit(s) not on {base}"),
        _ => String::new(),
    };
    let mut h = if w.removed {
        let mut t = format!("removed the worktree of {agent}");
        match ahead {
            Some(n) if n > 0 => t.push_str(&format!(
                "; kept its branch {branch}: {n} commit(s) not on {base}. Land them with \
                 `git merge {branch}` (on {base}), or discard them with `git branch -D {branch}`"
            )),
            _ => t.push_str(&format!(
                " (branch {branch} stays; it has nothing {base} lacks)"
            )),
        }
        t
    } else {
        format!(
            "kept the worktree of {agent} at {path}: {} path(s) with changes not committed \
             ({}){commits}. To land them: commit there, then `git merge {branch}`; to discard \
             them: `git worktree remove --force {path}`",
            w.uncommitted.len(),
            some_paths(&w.uncommitted)
        )
    };
    if let Some(t) = &w.teardown_failed {
        h.push_str(&format!(
            "\n  its teardown failed: {}",
            crate::proto::sanitize::inert(t)
        ));
    }
    h
}
