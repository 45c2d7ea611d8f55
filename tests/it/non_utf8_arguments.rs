//! A command-line argument that is not UTF-8 is a usage error (exit 2) with a clear message, never
//! a panic of the CLI, with and without `--json`.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

use crate::harness::{scrub, BOARD};

fn board_with(args: &[&OsStr]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    scrub(&mut Command::new(BOARD))
        .args(args)
        .current_dir(dir.path())
        .output()
        .unwrap()
}

#[test]
fn a_non_utf8_argument_is_a_usage_error_not_a_panic() {
    let bad = OsStr::from_bytes(b"\xff");
    let plain = board_with(&[OsStr::new("note"), OsStr::new("1"), bad]);
    assert_eq!(plain.status.code(), Some(2), "{plain:?}");
    let stderr = String::from_utf8_lossy(&plain.stderr);
    assert!(
        stderr.contains("UTF-8"),
        "stderr names the problem: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let json = board_with(&[
        OsStr::new("note"),
        OsStr::new("1"),
        bad,
        OsStr::new("--json"),
    ]);
    assert_eq!(json.status.code(), Some(2), "{json:?}");
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["data"]["kind"], "usage", "{doc}");
    assert!(doc["message"].as_str().unwrap().contains("UTF-8"), "{doc}");
}

#[test]
fn a_non_utf8_subcommand_or_flag_is_named_as_not_utf8_not_as_unknown() {
    for args in [
        vec![OsStr::from_bytes(b"\xff")],
        vec![
            OsStr::new("note"),
            OsStr::new("2"),
            OsStr::new("ok"),
            OsStr::from_bytes(b"--json\xff"),
        ],
    ] {
        let out = board_with(&args);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is not UTF-8") && stderr.contains("\\xff"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("unrecognized"), "{args:?}: {stderr}");
    }
}
