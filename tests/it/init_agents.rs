//! `board init --agents` and `--mcp`: one instruction block however often it
//! runs, the user's text around it untouched, other MCP servers kept.

use crate::harness::schema::check_cli;
use crate::harness::test_board::TestBoard;
use serde_json::{json, Value};

const BEGIN: &str = "<!-- board:begin -->";
const END: &str = "<!-- board:end -->";

fn read(p: &TestBoard, name: &str) -> String {
    std::fs::read_to_string(p.root().join(name)).unwrap()
}

/// The actions on AGENTS.md and CLAUDE.md, in that order.
fn actions(v: &Value) -> Vec<&str> {
    let list = v["agents"].as_array().unwrap();
    ["AGENTS.md", "CLAUDE.md"]
        .iter()
        .map(|name| {
            list.iter()
                .find(|a| a["path"].as_str().unwrap().ends_with(&format!("/{name}")))
                .unwrap_or_else(|| panic!("{name} not reported: {v}"))["action"]
                .as_str()
                .unwrap()
        })
        .collect()
}

#[test]
fn twice_leaves_one_block_and_the_users_text_unchanged() {
    let p = TestBoard::builder().unserved();
    let user_before = "# Our rules\n\nUse tabs. Never push on Fridays.\n";
    std::fs::write(p.root().join("CLAUDE.md"), user_before).unwrap();

    let (first, code) = p.board_json(&["init", "--agents"]).json_and_code();
    assert_eq!(code, 0, "{first}");
    check_cli("init", code, &first);
    assert_eq!(actions(&first), ["created", "updated"]);
    let claude_once = read(&p, "CLAUDE.md");
    let agents_once = read(&p, "AGENTS.md");

    let (second, code) = p.board_json(&["init", "--agents"]).json_and_code();
    assert_eq!(code, 0);
    check_cli("init", code, &second);
    assert_eq!(actions(&second), ["unchanged", "unchanged"]);
    let all = second["agents"].as_array().unwrap();
    assert!(
        all.iter().all(|a| a["action"] == "unchanged"),
        "a second run changes no file: {second}"
    );
    assert_eq!(read(&p, "CLAUDE.md"), claude_once);
    assert_eq!(read(&p, "AGENTS.md"), agents_once);

    for text in [&claude_once, &agents_once] {
        assert_eq!(text.matches(BEGIN).count(), 1, "{text}");
        assert_eq!(text.matches(END).count(), 1, "{text}");
        assert!(text.contains("board claim"), "the instructions are inside");
    }
    assert!(claude_once.starts_with(user_before), "{claude_once}");
    assert!(agents_once.starts_with(BEGIN));

    // The user writes after the block and meddles inside it: a third run restores the block
    // and keeps everything outside it byte for byte.
    let after = "\n## Local notes\nKeep this.\n";
    let meddled = claude_once.replace("board claim", "board clam") + after;
    std::fs::write(p.root().join("CLAUDE.md"), &meddled).unwrap();
    let (third, code) = p.board_json(&["init", "--agents"]).json_and_code();
    assert_eq!(code, 0);
    assert_eq!(actions(&third), ["unchanged", "updated"]);
    assert_eq!(read(&p, "CLAUDE.md"), format!("{claude_once}{after}"));
}

#[test]
fn a_broken_block_is_refused_and_left_alone() {
    let p = TestBoard::builder().unserved();
    let broken = format!("mine\n{BEGIN}\nhalf a block, no end\n");
    std::fs::write(p.root().join("AGENTS.md"), &broken).unwrap();
    let (err, code) = p.board_json(&["init", "--agents"]).json_and_code();
    assert_eq!(code, 2, "{err}");
    check_cli("init", code, &err);
    assert!(err["message"].as_str().unwrap().contains("AGENTS.md"));
    assert_eq!(read(&p, "AGENTS.md"), broken);
    assert!(!p.root().join("CLAUDE.md").exists(), "nothing written");
}

#[test]
fn mcp_config_keeps_other_servers() {
    let p = TestBoard::builder().unserved();
    let theirs = json!({
        "mcpServers": {"search": {"command": "search-mcp", "args": ["--fast"]}},
        "note": "kept"
    });
    std::fs::write(p.root().join(".mcp.json"), theirs.to_string()).unwrap();

    let (first, code) = p.board_json(&["init", "--mcp"]).json_and_code();
    assert_eq!(code, 0, "{first}");
    check_cli("init", code, &first);
    assert_eq!(first["mcp"]["action"], "updated");
    let (second, _) = p.board_json(&["init", "--mcp", "--agents"]).json_and_code();
    assert_eq!(second["mcp"]["action"], "unchanged");

    let board = std::fs::canonicalize(crate::harness::BOARD).unwrap();
    let board = board.to_str().unwrap();
    let v: Value = serde_json::from_str(&read(&p, ".mcp.json")).unwrap();
    assert_eq!(
        v["mcpServers"]["board"],
        json!({"command": board, "args": ["mcp"]})
    );
    assert_eq!(v["mcpServers"]["search"], theirs["mcpServers"]["search"]);
    assert_eq!(v["note"], "kept");

    // From scratch, too.
    let q = TestBoard::builder().unserved();
    let (made, code) = q.board_json(&["init", "--mcp"]).json_and_code();
    assert_eq!(code, 0);
    assert_eq!(made["mcp"]["action"], "created");
    let v: Value = serde_json::from_str(&read(&q, ".mcp.json")).unwrap();
    assert_eq!(
        v,
        json!({"mcpServers": {"board": {"command": board, "args": ["mcp"]}}})
    );
}

#[test]
fn the_start_prompt_names_a_command_that_prints_the_protocol() {
    let p = TestBoard::builder().unserved();
    let out = p.board(&["instructions"]);
    assert!(out.success(), "{out:?}");
    let text = &out.stdout;
    assert!(text.starts_with("# Working from the board"), "{text}");
    assert!(text.contains("board claim --json"), "{text}");
    for name in ["claude", "codex", "gemini", "aider"] {
        let prof = board::agent_tools::profile::Profile::load(p.root(), name).unwrap();
        let argv = prof.argv("board", p.root(), &p.root().join(".board"));
        let prompt = argv.join(" ");
        if !prof.prompt_args.is_empty() {
            assert!(prompt.contains("`board instructions`"), "{name}: {prompt}");
        }
    }
}

#[test]
fn every_cli_is_configured_once_and_the_users_settings_survive() {
    let p = TestBoard::builder().unserved();
    std::fs::create_dir_all(p.root().join(".claude")).unwrap();
    let theirs = json!({"model": "opus", "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}});
    std::fs::write(p.root().join(".claude/settings.json"), theirs.to_string()).unwrap();
    std::fs::write(p.root().join(".aider.conf.yml"), "model: sonnet\n").unwrap();
    let (first, code) = p.board_json(&["init", "--agents"]).json_and_code();
    assert_eq!(code, 0, "{first}");
    check_cli("init", code, &first);
    let (second, _) = p.board_json(&["init", "--agents"]).json_and_code();
    let changed: Vec<&Value> = second["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["action"] != "unchanged")
        .collect();
    assert!(changed.is_empty(), "{changed:?}");

    let claude: Value = serde_json::from_str(&read(&p, ".claude/settings.json")).unwrap();
    assert_eq!(claude["model"], "opus");
    let allow = claude["permissions"]["allow"].as_array().unwrap();
    for rule in ["Bash(npm test)", "mcp__board", "Bash(board:*)"] {
        assert!(allow.iter().any(|r| r == rule), "{rule}: {allow:?}");
    }
    let stop = claude["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 2, "the user's hook and the board's: {stop:?}");
    assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
    assert!(stop[1]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .ends_with(" hook claude Stop"));
    let local: Value = serde_json::from_str(&read(&p, ".claude/settings.local.json")).unwrap();
    assert_eq!(local["enabledMcpjsonServers"], json!(["board"]));
    assert!(read(&p, ".gitignore")
        .lines()
        .any(|l| l == ".claude/settings.local.json"));

    let codex: toml::Table = read(&p, ".codex/config.toml").parse().unwrap();
    assert_eq!(
        codex["mcp_servers"]["board"]["env_vars"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    assert_eq!(
        codex["sandbox_workspace_write"]["network_access"].as_bool(),
        Some(true)
    );
    let hooks: Value = serde_json::from_str(&read(&p, ".codex/hooks.json")).unwrap();
    assert!(hooks["hooks"]["PermissionRequest"].is_array());

    let gemini: Value = serde_json::from_str(&read(&p, ".gemini/settings.json")).unwrap();
    assert_eq!(
        gemini["context"]["fileName"],
        json!(["AGENTS.md", "GEMINI.md"])
    );
    assert_eq!(
        gemini["security"]["environmentVariableRedaction"]["allowed"],
        json!(["BOARD_TOKEN"])
    );
    assert!(gemini["mcpServers"]["board"]["command"].is_string());
    // Trusted: Gemini allows its tools without a dialog (and offers them to `gemini -p`).
    assert_eq!(gemini["mcpServers"]["board"]["trust"], true);
    assert!(gemini["hooks"]["AfterAgent"].is_array());

    let aider = read(&p, ".aider.conf.yml");
    assert!(aider.starts_with("model: sonnet\n"), "{aider}");
    assert!(aider.contains("read: [\"CONVENTIONS.md\"]"), "{aider}");
    assert!(read(&p, "CONVENTIONS.md").contains("# Working from the board"));

    // A key the board's block sets, set by the user too: refused, nothing changed.
    std::fs::write(p.root().join(".aider.conf.yml"), "read: [NOTES.md]\n").unwrap();
    let (err, code) = p.board_json(&["init", "--agents"]).json_and_code();
    assert_eq!(code, 2, "{err}");
    assert!(err["message"].as_str().unwrap().contains("read:"), "{err}");
    assert_eq!(read(&p, ".aider.conf.yml"), "read: [NOTES.md]\n");
}

#[test]
fn only_the_clis_board_toml_starts_are_set_up_and_committed_claude_settings_name_no_machine_path() {
    let p = TestBoard::builder()
        .config("[[agents]]\nname = \"claude\"\nprofile = \"claude\"\n")
        .unserved();
    let (out, code) = p.board_json(&["init", "--agents"]).json_and_code();
    assert_eq!(code, 0, "{out}");
    for other in [
        ".codex/config.toml",
        ".codex/hooks.json",
        ".gemini/settings.json",
        ".aider.conf.yml",
        "CONVENTIONS.md",
    ] {
        assert!(
            !p.root().join(other).exists(),
            "{other} written for a CLI board.toml does not start: {out}"
        );
    }
    assert!(read(&p, "CLAUDE.md").contains("# Working from the board"));

    let board = std::fs::canonicalize(crate::harness::BOARD).unwrap();
    let board = board.to_string_lossy();
    let shared = read(&p, ".claude/settings.json");
    assert!(!shared.contains(&*board), "{shared}");
    let root = p.root().to_string_lossy().into_owned();
    assert!(!shared.contains(&root), "{shared}");
    let shared: Value = serde_json::from_str(&shared).unwrap();
    let stop = shared["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert_eq!(stop, "\"${BOARD_BIN:-board}\" hook claude Stop");
    assert_eq!(
        shared["permissions"]["allow"],
        json!(["mcp__board", "Bash(board:*)"])
    );
    // The untracked local settings carry the rules Claude honours before workspace trust.
    let local: Value = serde_json::from_str(&read(&p, ".claude/settings.local.json")).unwrap();
    let allow = local["permissions"]["allow"].as_array().unwrap();
    for rule in ["mcp__board", "Bash(board:*)", &format!("Bash({board}:*)")] {
        assert!(allow.iter().any(|r| r == rule), "{rule}: {local}");
    }
}
