//! The worktree options of an `[[agents]]` entry (`base`, `include`, `setup`, `teardown`
//! beside `worktree = true`): their checks. What they do is `board up`'s and `board down`'s
//! business (the agent tools' team module).

use std::path::{Component, Path};

/// The worktree options of one `[[agents]]` entry, borrowed from it for [`validate`].
#[derive(Debug, Clone, Copy)]
pub struct WorktreeOptions<'a> {
    /// The entry's `name`, for the error.
    pub name: &'a str,
    /// `worktree = true`.
    pub worktree: bool,
    /// `base`.
    pub base: Option<&'a str>,
    /// `include`.
    pub include: &'a [String],
    /// `setup`.
    pub setup: Option<&'a str>,
    /// `teardown`.
    pub teardown: Option<&'a str>,
}

/// Checks the worktree options `a` of one entry; the error names the entry and the option.
///
/// Refused: any of them without `worktree = true` (it would do nothing), a `base` that is empty,
/// starts with `-` (git would read an option) or holds spaces or control characters, an
/// `include` path that is empty, absolute or climbs out of the project with `..`, an empty
/// `setup` or `teardown`.
pub fn validate(a: WorktreeOptions<'_>) -> Result<(), String> {
    let name = a.name;
    if !a.worktree {
        let set: Vec<&str> = [
            ("base", a.base.is_some()),
            ("include", !a.include.is_empty()),
            ("setup", a.setup.is_some()),
            ("teardown", a.teardown.is_some()),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(k, _)| *k)
        .collect();
        if !set.is_empty() {
            return Err(format!(
                "[[agents]] {name:?} sets {} but not `worktree = true`; they apply to an agent's \
                 own worktree only",
                set.join(", ")
            ));
        }
    }
    if let Some(base) = a.base {
        if base.is_empty()
            || base.starts_with('-')
            || base.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(format!(
                "[[agents]] {name:?}: base {base:?} is not a branch name (no spaces, not \
                 starting with -)"
            ));
        }
    }
    for path in a.include {
        include_path_ok(path).map_err(|why| {
            format!("[[agents]] {name:?}: include {path:?} {why}; give a path inside the project")
        })?;
    }
    for (key, cmd) in [("setup", a.setup), ("teardown", a.teardown)] {
        if cmd.is_some_and(|c| c.trim().is_empty()) {
            return Err(format!(
                "[[agents]] {name:?}: {key} is empty; remove it or give a command"
            ));
        }
    }
    Ok(())
}

fn include_path_ok(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("is empty");
    }
    if path.chars().any(char::is_control) {
        return Err("holds control characters");
    }
    let p = Path::new(path);
    if p.is_absolute() {
        return Err("is absolute");
    }
    if p.components().any(|c| c == Component::ParentDir) {
        return Err("climbs out with `..`");
    }
    if p.components().all(|c| c == Component::CurDir) {
        return Err("names the whole project");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::proto::config::Config;
    use std::path::Path;

    fn parse(entry: &str) -> Result<Config, String> {
        Config::parse(
            &format!("[[agents]]\nname = \"a\"\nprofile = \"shell\"\n{entry}"),
            Path::new("board.toml"),
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn worktree_options_are_read() {
        let c = parse(
            "worktree = true\nbase = \"main\"\ninclude = [\".env\", \"config/local.toml\"]\n\
             setup = \"npm ci\"\nteardown = \"make clean\"\n",
        )
        .unwrap();
        let a = &c.agents[0];
        assert_eq!(a.base.as_deref(), Some("main"));
        assert_eq!(a.include, [".env", "config/local.toml"]);
        assert_eq!(a.setup.as_deref(), Some("npm ci"));
        assert_eq!(a.teardown.as_deref(), Some("make clean"));
    }

    #[test]
    fn include_paths_outside_the_project_are_refused() {
        for (path, why) in [
            ("../secrets", "climbs out"),
            ("config/../../x", "climbs out"),
            ("/etc/passwd", "absolute"),
            ("", "empty"),
            (".", "whole project"),
        ] {
            let e = parse(&format!("worktree = true\ninclude = [{path:?}]\n")).unwrap_err();
            assert!(e.contains("include") && e.contains(why), "{path}: {e}");
        }
    }

    #[test]
    fn worktree_options_without_a_worktree_are_refused() {
        let e = parse("setup = \"npm ci\"\ninclude = [\".env\"]\n").unwrap_err();
        assert!(
            e.contains("include, setup") && e.contains("worktree = true"),
            "{e}"
        );
    }

    #[test]
    fn a_base_that_git_would_read_as_an_option_is_refused() {
        let e = parse("worktree = true\nbase = \"--orphan\"\n").unwrap_err();
        assert!(e.contains("base"), "{e}");
        let e = parse("worktree = true\nsetup = \"  \"\n").unwrap_err();
        assert!(e.contains("setup is empty"), "{e}");
    }
}
