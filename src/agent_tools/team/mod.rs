//! The team `board up` runs in tmux, shared by the `board up` command and the TUI.
//!
//! Every `[[agents]]` entry of `board.toml` gives `count` **slots**: stable names (`claude`, or
//! `claude`, `claude-2`, … when `count` > 1) that stay with a pane through restarts. A slot's
//! pane runs `board run --name SLOT --hold -- CMD…` in the `agents` window and is tagged with the
//! tmux pane option `@board_slot`; its launcher sets `@board_state` to `running` and, once the
//! agent has exited and the pane shows why, to `ended`. The agent session id stays unique (an
//! ended id is never reused, so a restarted `claude` may be session `claude-2`); the slot name is
//! what people see.
//!
//! [`up`] starts what is missing or ended and leaves running agents alone. Before it creates any
//! pane it checks every agent's command exists (on `PATH` or as a path), so a session is never
//! half built.

pub mod panes;
pub mod tmux;
pub mod worktree;
pub mod worktree_files;
pub mod worktree_removal;

pub use panes::{attach, open_pane, respawn, start_slot};

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::agent_tools::profile::Profile;
use crate::proto::config::{Config, Paths};
use crate::proto::error::{BoardError, BoardResult};

/// Most agent panes `board up` opens (tmux needs room for each in one window).
pub const MAX_PANES: u32 = 16;

/// Name of the window holding the agent panes.
pub const AGENTS_WINDOW: &str = "agents";

/// Name of the window holding the TUI.
pub const BOARD_WINDOW: &str = "board";

/// One agent pane of the team, as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// Stable display name and requested session name.
    pub name: String,
    /// The profile's name (`claude` → `agents/claude.toml` or the built-in one).
    pub profile_name: String,
    /// The loaded profile.
    pub profile: Profile,
    /// Directory the agent starts in: the project root, or its place in the slot's worktree
    /// once [`prepare_worktrees`] made it.
    pub workdir: PathBuf,
    /// The slot's own git worktree and branch (`worktree = true`).
    pub worktree: Option<worktree::Worktree>,
    /// The worktree's `setup` command, when it is still to run before the agent starts (set by
    /// [`prepare_worktrees`]).
    pub setup: Option<String>,
    /// The project root (the profiles' `{root}`).
    pub root: PathBuf,
    /// The board's data directory (where the `shell` profile's rc file is).
    pub data_dir: PathBuf,
    /// Needs attention when no hook or board call came this long after the start: the entry's
    /// `attention_after`, else the profile's.
    pub attention_after: Option<crate::proto::config::Dur>,
    /// The entry's `role`, passed to `board run --role`.
    pub role: Option<String>,
}

impl Slot {
    /// The agent's command line (`board_bin` fills the profile's `{board}`).
    pub fn argv(&self, board_bin: &str) -> Vec<String> {
        self.profile.argv(board_bin, &self.root, &self.data_dir)
    }
}

/// The slot names of one `[[agents]]` entry: `name`, then `name-2`, `name-3`, … for `count` > 1.
pub fn slot_names(entry: &crate::proto::config::AgentEntry) -> Vec<String> {
    (1..=entry.count)
        .map(|i| {
            if i == 1 {
                entry.name.clone()
            } else {
                format!("{}-{i}", entry.name)
            }
        })
        .collect()
}

/// Creates (or keeps) the worktree of every slot that has one, furnishes it (`include` files,
/// the agent CLI's settings calling `board_bin`, see [`worktree_files::furnish`]) and moves the
/// slot's working directory into it. `root` is the board's project root. Returns the `include`
/// paths the project lacks, each once.
///
/// Errors (`usage`): no git repository or no commit at `root`, a `base` naming no commit, git
/// refusing, a settings file that cannot take the board's settings.
pub fn prepare_worktrees(
    slots: &mut [Slot],
    root: &Path,
    board_bin: &Path,
) -> BoardResult<Vec<String>> {
    let mut missing: Vec<String> = Vec::new();
    for s in slots.iter_mut() {
        if let Some(wt) = &s.worktree {
            s.workdir = worktree::ensure(root, wt)?;
            let f = worktree_files::furnish(root, wt, &s.workdir, &s.profile, board_bin)?;
            s.setup = f.setup;
            for m in f.missing {
                if !missing.contains(&m) {
                    missing.push(m);
                }
            }
        }
    }
    Ok(missing)
}

/// The slots of `cfg`, each profile loaded.
///
/// Errors (`usage`): a profile that cannot be loaded, two slots with one name, more than
/// [`MAX_PANES`] panes.
pub fn slots(cfg: &Config, paths: &Paths) -> BoardResult<Vec<Slot>> {
    let total: u32 = cfg.agents.iter().map(|a| a.count).sum();
    if total > MAX_PANES {
        return Err(BoardError::usage(format!(
            "board.toml asks for {total} agent panes; `board up` opens at most {MAX_PANES}"
        )));
    }
    let mut out: Vec<Slot> = Vec::new();
    for entry in &cfg.agents {
        let profile = Profile::load(&paths.root, &entry.profile)
            .map_err(|e| BoardError::usage(e.to_string()))?;
        for name in slot_names(entry) {
            if out.iter().any(|s| s.name == name) {
                return Err(BoardError::usage(format!(
                    "board.toml names two agent panes {name:?}; give each [[agents]] entry its own name"
                )));
            }
            let worktree = entry
                .worktree
                .then(|| worktree::Worktree::for_entry(&paths.data_dir, &name, entry));
            out.push(Slot {
                name,
                profile_name: entry.profile.clone(),
                profile: profile.clone(),
                workdir: paths.root.clone(),
                worktree,
                setup: None,
                root: paths.root.clone(),
                data_dir: paths.data_dir.clone(),
                attention_after: entry.attention_after.or(profile.attention_after),
                role: entry.role.clone(),
            });
        }
    }
    Ok(out)
}

/// Finds `program` as a shell would: a name with a `/` is a path (relative to `cwd`), any other
/// name is looked up in the directories of `path` (`PATH`). Returns the executable file found.
pub fn find_program(program: &str, cwd: &Path, path: Option<&OsStr>) -> Option<PathBuf> {
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = cwd.join(program);
        return executable(&p).then_some(p);
    }
    if program.is_empty() {
        return None;
    }
    std::env::split_paths(path?)
        .map(|d| {
            if d.as_os_str().is_empty() {
                cwd.to_path_buf()
            } else {
                cwd.join(d)
            }
        })
        .map(|d| d.join(program))
        .find(|p| executable(p))
}

/// Checks that the command of every slot exists, naming the first missing one.
///
/// `board_bin` fills the profiles' `{board}` placeholder. Errors: `usage`, naming the slot, its
/// profile and the command, and saying nothing was started.
pub fn check_commands(slots: &[Slot], board_bin: &str) -> BoardResult<()> {
    let path = std::env::var_os("PATH");
    for s in slots {
        let argv = s.argv(board_bin);
        let Some(program) = argv.first() else {
            continue;
        };
        if find_program(program, &s.workdir, path.as_deref()).is_none() {
            let where_ = if program.contains('/') {
                format!("{program:?} is not an executable file")
            } else {
                format!("{program:?} is not on PATH")
            };
            return Err(BoardError::usage(format!(
                "agent {:?} (profile {:?}): its command {where_}; install it or fix the profile \
                 (agents/{}.toml) or board.toml. Nothing was started.",
                s.name, s.profile_name, s.profile_name
            ))
            .with("agent", s.name.clone())
            .with("command", program.clone()));
        }
    }
    Ok(())
}

/// The tmux session name of a board: its name (characters tmux reserves replaced) and a short
/// hash of its root (the first 4 hex digits of SHA-256, [`crate::proto::config::path_hash`]), so two
/// projects with the same name never share (or end) a session, whatever toolchain built it.
pub fn session_name(cfg: &Config, root: &Path) -> String {
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
    let n = if n.is_empty() { "board".into() } else { n };
    format!("{n}-{}", crate::proto::config::path_hash(root, 4))
}

/// The `sh -c` line of a slot's pane: `board run --name SLOT --hold -- CMD…`.
pub fn pane_command(slot: &Slot, board_bin: &str) -> String {
    let mut cmd = vec![
        tmux::shell_quote(board_bin),
        "run".into(),
        "--name".into(),
        tmux::shell_quote(&slot.name),
        "--hold".into(),
    ];
    if let Some(role) = &slot.role {
        cmd.push("--role".into());
        cmd.push(tmux::shell_quote(role));
    }
    if let Some(d) = slot.attention_after {
        cmd.push("--attention-after".into());
        cmd.push(format!("{}ms", d.0.as_millis()));
    }
    if let Some(setup) = &slot.setup {
        cmd.push("--setup".into());
        cmd.push(tmux::shell_quote(setup));
    }
    cmd.push("--".into());
    cmd.extend(slot.argv(board_bin).iter().map(|a| tmux::shell_quote(a)));
    cmd.join(" ")
}

/// What happened to one slot in [`up`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// A new pane was opened.
    Started,
    /// An ended pane was started again in place.
    Restarted,
    /// Its agent was running; left alone.
    Running,
}

impl Outcome {
    /// `started`, `restarted`, `running`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Started => "started",
            Outcome::Restarted => "restarted",
            Outcome::Running => "running",
        }
    }
}

/// What [`up`] reports of one slot: one element of `board up`'s `panes`. Shape:
/// `{"agent_name","profile","pane","pid","outcome"}`, and `branch` (with a worktree),
/// `needs_restart` (the start-time options that changed since its running agent started),
/// `setup` (the setup that runs first in a started pane), `setup_had_failed` only when they
/// apply.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PaneReport {
    /// The slot's name.
    pub agent_name: String,
    /// Its profile.
    pub profile: String,
    /// tmux pane id.
    pub pane: String,
    /// The pane's process id.
    pub pid: i64,
    /// Started, restarted or left running.
    pub outcome: Outcome,
    /// Its worktree's branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The start-time options that changed since its running agent started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_restart: Option<Vec<String>>,
    /// The worktree setup that runs first in a pane started now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    /// A pane started now whose setup had failed before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub setup_had_failed: bool,
}

/// `@board_state` of a pane whose worktree setup failed (the agent never started).
pub const SETUP_FAILED: &str = "setup-failed";

/// Whether a pane's agent has ended (its launcher said so, or tmux kept a dead pane), or never
/// started because its worktree's setup failed.
pub fn pane_ended(p: &tmux::Pane) -> bool {
    p.dead || p.state == "ended" || p.state == SETUP_FAILED
}

/// The options an agent takes only when it starts, recorded on its pane as JSON
/// `{"base","include","role","worktree"}` (`board up` names the running agents whose options
/// changed since). Members in that order, so the record reads as it always has; a member an
/// older record lacks reads as absent (null, `[]`, false).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct StartedWith {
    /// The worktree's base branch (None without a worktree, or from the project's `HEAD`).
    pub base: Option<String>,
    /// The worktree's `include` paths (empty without a worktree).
    pub include: Vec<String>,
    /// The agent's role.
    pub role: Option<String>,
    /// Whether it runs in a worktree of its own.
    pub worktree: bool,
}

/// The start-time options of `slot` now.
pub fn started_with(slot: &Slot) -> StartedWith {
    StartedWith {
        base: slot.worktree.as_ref().and_then(|wt| wt.base.clone()),
        include: slot
            .worktree
            .as_ref()
            .map(|wt| wt.include.clone())
            .unwrap_or_default(),
        role: slot.role.clone(),
        worktree: slot.worktree.is_some(),
    }
}

/// The start-time options (`worktree`, `base`, `include`, `role`) that changed since the running
/// agent of `pane` started; None when it is not running, nothing changed, or its pane has no
/// record.
fn changed_options(pane: &tmux::Pane, slot: &Slot) -> Option<Vec<&'static str>> {
    if pane_ended(pane) {
        return None;
    }
    let then: StartedWith = serde_json::from_str(&pane.started_with).ok()?;
    let now = started_with(slot);
    let changed: Vec<&'static str> = [
        ("worktree", then.worktree != now.worktree),
        ("base", then.base != now.base),
        ("include", then.include != now.include),
        ("role", then.role != now.role),
    ]
    .into_iter()
    .filter_map(|(k, differs)| differs.then_some(k))
    .collect();
    (!changed.is_empty()).then_some(changed)
}

/// Opens the session `session` or completes it: the TUI window if missing, and for every slot
/// without a pane a new pane, for every slot whose agent ended its pane started again in place.
/// Running agents are left alone. Returns one [`PaneReport`] per slot.
///
/// Errors: a missing command (before anything is created), tmux failures. A session this call
/// created is removed again when a later step fails.
pub fn up(
    session: &str,
    slots: &[Slot],
    root: &Path,
    board_bin: &str,
) -> BoardResult<Vec<PaneReport>> {
    check_commands(slots, board_bin)?;
    let created = !tmux::has_session(session);
    let root_s = root.to_string_lossy().to_string();
    if created {
        let tui = format!("{} tui", tmux::shell_quote(board_bin));
        tmux::run(&[
            "new-session",
            "-d",
            "-s",
            session,
            "-n",
            BOARD_WINDOW,
            "-c",
            &root_s,
            "-x",
            "200",
            "-y",
            "50",
            &tui,
        ])?;
    }
    let res = complete(session, slots, root, board_bin);
    if res.is_err() && created {
        // Leave nothing half-built behind; agents already started are expelled as their panes
        // close.
        let _ = tmux::run(&["kill-session", "-t", &format!("={session}")]);
    }
    res
}

fn complete(
    session: &str,
    slots: &[Slot],
    root: &Path,
    board_bin: &str,
) -> BoardResult<Vec<PaneReport>> {
    let existing = tmux::panes(session)?;
    let root_s = root.to_string_lossy().to_string();
    if !existing.iter().any(|p| p.window == BOARD_WINDOW) {
        let tui = format!("{} tui", tmux::shell_quote(board_bin));
        tmux::run(&[
            "new-window",
            "-d",
            "-b",
            "-t",
            &format!("={session}:"),
            "-n",
            BOARD_WINDOW,
            "-c",
            &root_s,
            &tui,
        ])?;
    }
    // The TUI's notifications (OSC 9 / OSC 777) reach the outer terminal only through tmux's
    // passthrough, which is off by default; a tmux before 3.3 has no such option (ignored).
    let _ = tmux::run(&[
        "set-option",
        "-w",
        "-t",
        &format!("={session}:{BOARD_WINDOW}"),
        "allow-passthrough",
        "on",
    ]);
    let mut has_agents_window = existing.iter().any(|p| p.window == AGENTS_WINDOW);
    let mut out = Vec::new();
    for slot in slots {
        let pane = existing.iter().find(|p| p.slot == slot.name);
        let (outcome, id, pid) = match pane {
            Some(p) if !pane_ended(p) => (Outcome::Running, p.id.clone(), p.pid),
            Some(p) => {
                let (id, pid) = respawn(&p.id, slot, root, board_bin)?;
                (Outcome::Restarted, id, pid)
            }
            None => {
                let (id, pid) = open_pane(session, slot, root, board_bin, !has_agents_window)?;
                has_agents_window = true;
                (Outcome::Started, id, pid)
            }
        };
        let starting = outcome != Outcome::Running;
        out.push(PaneReport {
            agent_name: slot.name.clone(),
            profile: slot.profile_name.clone(),
            pane: id,
            pid,
            outcome,
            branch: slot.worktree.as_ref().map(|wt| wt.branch.clone()),
            needs_restart: pane
                .and_then(|p| changed_options(p, slot))
                .map(|c| c.into_iter().map(String::from).collect()),
            setup: slot.setup.clone().filter(|_| starting),
            setup_had_failed: starting && pane.is_some_and(|p| p.state == SETUP_FAILED),
        });
    }
    if has_agents_window {
        tmux::run(&[
            "select-layout",
            "-t",
            &format!("={session}:{AGENTS_WINDOW}"),
            "tiled",
        ])?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: &str) -> Config {
        Config::parse(text, Path::new("board.toml")).unwrap()
    }

    #[test]
    fn slots_keep_the_configured_names() {
        let c = cfg("[[agents]]\nname = \"sh\"\nprofile = \"shell\"\ncount = 3\n[[agents]]\nname = \"c\"\nprofile = \"claude\"\n");
        let paths = Paths::new(Path::new("/p"), &c);
        let names: Vec<String> = slots(&c, &paths)
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["sh", "sh-2", "sh-3", "c"]);
    }

    #[test]
    fn two_slots_with_one_name_are_refused() {
        let c = cfg("[[agents]]\nname = \"a\"\nprofile = \"shell\"\ncount = 2\n[[agents]]\nname = \"a-2\"\nprofile = \"shell\"\n");
        let paths = Paths::new(Path::new("/p"), &c);
        let e = slots(&c, &paths).unwrap_err();
        assert!(e.message.contains("\"a-2\""), "{e}");
    }

    #[test]
    fn programs_are_found_on_path_or_as_paths() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let plain = bin.join("plain");
        std::fs::write(&plain, "not executable").unwrap();
        let path = bin.as_os_str();
        assert_eq!(find_program("tool", dir.path(), Some(path)), Some(tool));
        assert_eq!(find_program("plain", dir.path(), Some(path)), None);
        assert_eq!(find_program("nope", dir.path(), Some(path)), None);
        assert!(find_program("./bin/tool", dir.path(), None).is_some());
        assert!(find_program("./bin/plain", dir.path(), None).is_none());
        assert_eq!(find_program("tool", dir.path(), None), None);
    }

    #[test]
    fn a_missing_command_is_named() {
        let c = cfg("[[agents]]\nname = \"coder\"\nprofile = \"codex\"\n");
        let paths = Paths::new(Path::new("/"), &c);
        let mut s = slots(&c, &paths).unwrap();
        s[0].profile.command = vec!["surely-not-installed-xyz".into()];
        let e = check_commands(&s, "/bin/board").unwrap_err();
        assert!(
            e.message.contains("\"coder\"") && e.message.contains("surely-not-installed-xyz"),
            "{e}"
        );
    }
}
