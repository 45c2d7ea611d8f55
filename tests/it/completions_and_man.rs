//! `board completions SHELL` and `board man` print what shells and `man` read.

use std::process::Command;

use crate::harness::{scrub, BOARD};

fn stdout_of(args: &[&str]) -> String {
    let out = scrub(&mut Command::new(BOARD)).args(args).output().unwrap();
    assert!(out.status.success(), "board {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn completions_cover_the_commands_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout_of(&["completions", shell]);
        for word in ["claim", "json", "mcp", "completions"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    let out = scrub(&mut Command::new(BOARD))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

#[test]
fn the_man_page_is_roff_with_commands_and_exit_codes() {
    let page = stdout_of(&["man"]);
    assert!(page.contains(".TH board 1"), "{page}");
    for needle in [
        ".SH SUBCOMMANDS",
        "EXIT STATUS",
        "BOARD_AGENT",
        "claim",
        "json",
        "mcp",
    ] {
        assert!(page.contains(needle), "man page lacks {needle}");
    }
}
