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
        ".SH COMMANDS",
        "board claim",
        "EXIT STATUS",
        "BOARD_AGENT",
        "claim",
        "json",
        "mcp",
    ] {
        assert!(page.contains(needle), "man page lacks {needle}");
    }
    assert!(
        !page.contains("board\\-claim(1)") && !page.contains("(1)\n"),
        "the page refers to no other page that is not installed: {page}"
    );
}

#[test]
fn help_states_each_default_once() {
    for cmd in ["add", "edit", "claim", "done", "list", "log", "run", "wait"] {
        let help = stdout_of(&[cmd, "--help"]);
        for line in help.lines() {
            assert!(
                !(line.contains("(default") && line.contains("[default:")),
                "board {cmd} --help says a default twice: {line}"
            );
        }
    }
}
