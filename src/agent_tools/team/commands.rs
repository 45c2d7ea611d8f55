//! Whether every slot's command exists, found as a shell would find it, so a session is never
//! half built.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::slot::Slot;
use crate::proto::error::{BoardError, BoardResult};

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
