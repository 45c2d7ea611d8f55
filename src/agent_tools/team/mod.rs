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

mod commands;
mod pane_state;
pub mod panes;
mod session;
mod slot;
pub mod tmux;
pub mod worktree;
pub mod worktree_files;
pub mod worktree_removal;

pub use commands::{check_commands, find_program};
pub use pane_state::{pane_ended, started_with, StartedWith, SETUP_FAILED};
pub use panes::{attach, open_pane, pane_command, respawn, AGENTS_WINDOW};
pub use session::{session_name, start_slot, up, Outcome, PaneReport, BOARD_WINDOW};
pub use slot::{prepare_worktrees, slot_names, slots, Slot, MAX_PANES};

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use super::*;
    use crate::proto::config::{Config, Paths};

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
