//! A broken `board.toml` is told once per change, not on every call of every agent.
//!
//! Every client command reads `board.toml` to find the board. When the file is invalid, the
//! first command that reads this version of it prints a one-line warning; later commands (of
//! any agent) stay quiet until the file changes again. "This version" is the SHA-256 of the
//! file's bytes, remembered as an empty marker file `config-warned/<hash>` in the data
//! directory, created with `O_EXCL` so that of several agents racing, exactly one warns. A valid
//! file removes the markers, so breaking it again the same way warns again.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const MARKERS: &str = "config-warned";

/// Whether this caller is the first to meet this version of the invalid file at `config`
/// (and so should warn). When the marker cannot be written (no data directory yet, read-only),
/// it answers true: a warning too many beats none.
pub fn first_to_see(config: &Path, data_dir: &Path) -> bool {
    let Ok(bytes) = std::fs::read(config) else {
        return true;
    };
    let hash: String = Sha256::digest(&bytes)
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    let dir = data_dir.join(MARKERS);
    if std::fs::create_dir_all(&dir).is_err() {
        return true;
    }
    let marker = dir.join(&hash);
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&marker)
    {
        Ok(_) => {
            remove_others(&dir, &marker);
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(_) => true,
    }
}

/// The file is valid (again): forget what was warned about.
pub fn forget(data_dir: &Path) {
    // One failing syscall in the common case (no markers): cheap enough for every command.
    let _ = std::fs::remove_dir_all(data_dir.join(MARKERS));
}

fn remove_others(dir: &Path, keep: &PathBuf) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if &e.path() != keep {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// A parser's multi-line report (`TOML parse error at line 3, column 1`, the source line, a
/// caret, the reason) as one line: the position and the reason.
pub fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('|') && !l.contains(" | "))
        .collect();
    match lines.as_slice() {
        [] => String::new(),
        [only] => (*only).to_string(),
        [first, .., last] => format!("{first}: {last}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_broken_file_is_reported_once() {
        let d = tempfile::tempdir().unwrap();
        let cfg = d.path().join("board.toml");
        let data = d.path().join(".board");
        std::fs::write(&cfg, "[lease\n").unwrap();
        assert!(first_to_see(&cfg, &data));
        assert!(!first_to_see(&cfg, &data));
        std::fs::write(&cfg, "[lease]\nnope = 1\n").unwrap();
        assert!(first_to_see(&cfg, &data), "a new edit is a new warning");
        assert!(!first_to_see(&cfg, &data));
        forget(&data);
        assert!(first_to_see(&cfg, &data), "broken again after a fix");
    }

    #[test]
    fn a_toml_report_becomes_one_line() {
        let report = "TOML parse error at line 3, column 1\n  |\n3 | nope = 1\n  | ^^^^\nunknown field `nope`, expected one of `duration`, `sweep`\n";
        assert_eq!(
            one_line(report),
            "TOML parse error at line 3, column 1: unknown field `nope`, expected one of `duration`, `sweep`"
        );
    }
}
