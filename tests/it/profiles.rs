//! Every agent profile shipped in `agents/` loads from disk through `Profile::load` (unknown keys
//! are errors) and starts the program it is meant to.

use std::path::Path;

use board::agent_tools::profile::{Profile, ProfileError};

/// The first word of each shipped profile's command.
const EXPECTED: &[(&str, &str)] = &[
    ("aider", "aider"),
    ("claude", "claude"),
    ("codex", "codex"),
    ("demo", "{board}"),
    ("gemini", "gemini"),
    ("shell", "bash"),
];

#[test]
fn every_profile_on_disk_loads_and_names_its_program() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(root.join("agents")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let p = Profile::load(root, &name).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let first = p.command.first().map(String::as_str).unwrap_or_default();
        let expected = EXPECTED
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("agents/{name}.toml is new: add it to EXPECTED"))
            .1;
        assert_eq!(
            first, expected,
            "agents/{name}.toml starts the wrong program"
        );
        assert!(!first.contains(char::is_whitespace), "{name}: one word");
        assert!(!p.description.trim().is_empty(), "{name}: description");
        if let Some(file) = &p.instructions_file {
            assert!(file.ends_with(".md"), "{name}: instructions_file {file}");
        }
        // The built-in copy (used outside this repository) is the same profile.
        let builtin = board::agent_tools::profile::BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Profile::parse(n, text).unwrap());
        assert_eq!(
            builtin.as_ref(),
            Some(&p),
            "{name}: BUILTIN differs from the file"
        );
        seen.push(name);
    }
    seen.sort();
    let want: Vec<&str> = EXPECTED.iter().map(|(n, _)| *n).collect();
    assert_eq!(seen, want, "every expected profile is on disk");
}

#[test]
fn unknown_keys_in_a_profile_file_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("agents")).unwrap();
    std::fs::write(
        dir.path().join("agents/mine.toml"),
        "description = \"mine\"\ncommand = [\"mine\"]\nmcp_server = true\n",
    )
    .unwrap();
    match Profile::load(dir.path(), "mine") {
        Err(ProfileError::Invalid { message, .. }) => {
            assert!(message.contains("mcp_server"), "{message}")
        }
        other => panic!("expected an invalid-profile error, got {other:?}"),
    }
    std::fs::write(
        dir.path().join("agents/empty.toml"),
        "description = \"x\"\ncommand = []\n",
    )
    .unwrap();
    assert!(Profile::load(dir.path(), "empty").is_err());
}
