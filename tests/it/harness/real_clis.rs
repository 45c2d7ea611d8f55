//! Harness for the tests that drive the real agent CLIs (Claude Code, Codex, Gemini CLI, aider)
//! as installed by `.ci/install-agent-clis` into `.ci/cache/` (or found on PATH): a project set
//! up by `board init --agents`, a throwaway HOME seeded as a user who already uses each CLI
//! (onboarding done, a fake API key accepted or logged in), fake keys in the environment, no
//! network. A CLI that cannot be found makes its test print why and skip, except under CI
//! (`CI` set), where every real-CLI test must run.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::command::run_with_input;
use super::test_board::TestBoard;
use super::{BOARD, STEP};

/// Fake keys: the CLIs accept them offline and never reach a model.
pub const ANTHROPIC_KEY: &str = "sk-ant-api03-board-test-0123456789abcdefghij";
pub const OPENAI_KEY: &str = "sk-board-test-openai-0123456789";
pub const GEMINI_KEY: &str = "board-test-gemini-0123456789";

fn cache() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/cache")
}

/// The directories the CLIs are installed in, then the usual system ones.
fn cli_dirs() -> Vec<PathBuf> {
    vec![
        cache().join("npm/node_modules/.bin"),
        cache().join("aider-venv/bin"),
    ]
}

/// The executable `name`, from the cache or PATH. None (after saying why) when it is missing
/// outside CI; under CI a missing CLI fails the test.
pub fn require(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = cli_dirs()
        .into_iter()
        .chain(std::env::split_paths(&path))
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        let why = format!(
            "{name} is not installed (run .ci/install-agent-clis, which puts it in {})",
            cache().display()
        );
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run every real-CLI test: {why}"
        );
        eprintln!("skipping: {why}");
    }
    found
}

/// A project set up by `board init --agents` (a git repository with one commit), with
/// `extra_toml` in its `board.toml` (`board init`'s lease: 120 s, 30 s sweep), not served yet,
/// whose commands run as a user who already uses each CLI ([`user_env`], a HOME seeded by
/// [`seed_home`]).
pub fn real_project(extra_toml: &str) -> TestBoard {
    let p = TestBoard::builder()
        .name("real")
        .lease("120s")
        .sweep("30s")
        .config(extra_toml)
        .user_home()
        .unserved();
    seed_home(&p);
    p.git(&["init", "-q"]);
    p.board(&["init", "--agents", "--json"]).ok();
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "start"]);
    p
}

/// The environment of the CLIs' user in `home`: PATH (the CLIs' install directories, board's,
/// then the system's), a terminal, UTF-8, the fake keys, no browser.
pub fn user_env(home: &Path) -> Vec<(String, String)> {
    let board_dir = Path::new(BOARD).parent().unwrap().to_path_buf();
    let mut dirs = cli_dirs();
    dirs.push(board_dir);
    let sys = std::env::var_os("PATH").unwrap_or_default();
    dirs.extend(std::env::split_paths(&sys));
    let path = std::env::join_paths(dirs).unwrap();
    [
        ("HOME", home.to_string_lossy().into_owned()),
        ("PATH", path.to_string_lossy().into_owned()),
        ("TERM", "xterm-256color".into()),
        ("LANG", "C.UTF-8".into()),
        ("ANTHROPIC_API_KEY", ANTHROPIC_KEY.into()),
        ("OPENAI_API_KEY", OPENAI_KEY.into()),
        ("GEMINI_API_KEY", GEMINI_KEY.into()),
        ("NO_BROWSER", "1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// A user who already uses each CLI: Claude's onboarding done and this API key accepted,
/// Codex logged in with a key, Gemini's auth method chosen, git's identity set.
fn seed_home(p: &TestBoard) {
    let h = p.home().expect("a user-home board");
    let suffix: String = ANTHROPIC_KEY
        .chars()
        .skip(ANTHROPIC_KEY.len() - 20)
        .collect();
    std::fs::write(
        h.join(".claude.json"),
        json!({"hasCompletedOnboarding": true,
               "customApiKeyResponses": {"approved": [suffix], "rejected": []}})
        .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(h.join(".gemini")).unwrap();
    std::fs::write(
        h.join(".gemini/settings.json"),
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
    )
    .unwrap();
    seed_aider_models(h);
    std::fs::write(
        h.join(".gitconfig"),
        "[user]\n\tname = Board Test\n\temail = test@example.com\n",
    )
    .unwrap();
    if let Some(codex) = find("codex") {
        let mut login = p.command(&codex);
        login.args(["login", "--with-api-key"]);
        // Over 15 s measured on a loaded machine.
        run_with_input(&mut login, OPENAI_KEY.as_bytes(), 4 * STEP).ok();
    }
}

/// aider's cache of model metadata, fresh, with the models the tests name: aider fetches the
/// list from the network when its cache is missing, empty or a day old.
fn seed_aider_models(home: &Path) {
    let model = json!({"max_input_tokens": 128000, "max_output_tokens": 16384,
        "input_cost_per_token": 0.0, "output_cost_per_token": 0.0,
        "litellm_provider": "openai", "mode": "chat"});
    let dir = home.join(".aider/caches");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("model_prices_and_context_window.json"),
        json!({"gpt-4o": model, "gpt-4o-mini": model}).to_string(),
    )
    .unwrap();
}

/// `name` in the cache, without the CI rule (for optional set-up steps).
fn find(name: &str) -> Option<PathBuf> {
    cli_dirs()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
