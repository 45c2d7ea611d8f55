//! The real agent CLIs accept what `board init --agents` sets up, inside `board run`: Claude Code
//! shows the board MCP server connected with no approval step, Codex lists it (with the identity
//! variables passed through), Gemini CLI shows it connected; Gemini's and aider's loaded
//! context holds the board protocol; with `--trust`, Claude starts without its trust dialog and
//! its SessionStart hook reaches the board offline; under
//! Codex's workspace-write sandbox `board renew` gets through with the profile's settings.

use std::time::Duration;

use board::agent_tools::profile::Profile;

use crate::harness::command::{run_within, Out};
use crate::harness::real_clis::{real_project, require};
use crate::harness::test_board::TestBoard;
use crate::harness::tmux::Tmux;
use crate::harness::{poll, BOARD};

/// Longest a CLI may take for one `mcp list` (Claude checks server health, slowly on 2 cores).
const SLOW: Duration = Duration::from_secs(120);

/// The profile's command line without its prompt (what `board up` starts, minus the prompt).
/// `board run --name NAME -- ARGV…` in the project with `env` added, within `timeout`.
fn run_under_board(
    p: &TestBoard,
    name: &str,
    argv: &[String],
    env: &[(&str, &str)],
    timeout: Duration,
) -> Out {
    let mut c = p.board_cmd(&["run", "--name", name, "--"]);
    c.args(argv).envs(env.iter().copied());
    run_within(&mut c, timeout)
}

fn profile_command(p: &TestBoard, name: &str) -> (Vec<String>, Vec<(String, String)>) {
    let prof = Profile::load(p.root(), name).unwrap();
    let mut argv = prof.argv(BOARD, p.root(), &p.root().join(".board"));
    argv.truncate(argv.len() - prof.prompt_args.len());
    let env = prof.env.into_iter().collect();
    (argv, env)
}

#[test]
fn claude_codex_and_gemini_see_the_board_mcp_server_inside_board_run() {
    let (Some(_), Some(_), Some(_)) = (require("claude"), require("codex"), require("gemini"))
    else {
        return;
    };
    let p = real_project("");
    std::thread::scope(|s| {
        let claude = s.spawn(|| {
            let out = run_under_board(
                &p,
                "claude",
                &["claude".into(), "mcp".into(), "list".into()],
                &[],
                SLOW,
            );
            out.text()
        });
        let codex = s.spawn(|| {
            let (mut argv, env) = profile_command(&p, "codex");
            argv.extend(["mcp".into(), "list".into()]);
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            run_under_board(&p, "codex", &argv, &env, SLOW).text()
        });
        let gemini = s.spawn(|| {
            let (mut argv, env) = profile_command(&p, "gemini");
            argv.extend(["mcp".into(), "list".into()]);
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            run_under_board(&p, "gemini", &argv, &env, SLOW).text()
        });
        let claude = claude.join().unwrap();
        eprintln!("claude mcp list:\n{claude}");
        let line = claude
            .lines()
            .find(|l| l.starts_with("board:"))
            .unwrap_or_else(|| panic!("claude lists no board server:\n{claude}"));
        assert!(line.contains("Connected"), "{claude}");
        assert!(line.contains(BOARD) || line.contains("board mcp"), "{line}");
        assert!(!claude.contains("Pending approval"), "{claude}");

        let codex = codex.join().unwrap();
        eprintln!("codex mcp list:\n{codex}");
        let line = codex
            .lines()
            .find(|l| l.starts_with("board "))
            .unwrap_or_else(|| panic!("codex lists no board server:\n{codex}"));
        assert!(line.contains("enabled"), "{line}");
        assert!(line.contains(" mcp "), "{line}");

        let gemini = gemini.join().unwrap();
        eprintln!("gemini mcp list:\n{gemini}");
        let line = gemini
            .lines()
            .find(|l| l.contains("board:"))
            .unwrap_or_else(|| panic!("gemini lists no board server:\n{gemini}"));
        assert!(line.contains("Connected"), "{gemini}");
    });
}

#[test]
fn aider_reads_the_board_protocol_from_its_conventions() {
    let Some(_) = require("aider") else {
        return;
    };
    let p = real_project("");
    let (mut argv, _) = profile_command(&p, "aider");
    // Do the start-up (config, read-only files), then exit instead of waiting for input.
    argv.extend(["--exit".into(), "--no-pretty".into()]);
    let out = run_under_board(&p, "aider", &argv, &[], SLOW).text();
    eprintln!("aider --exit:\n{out}");
    assert!(
        out.contains("Added CONVENTIONS.md to the chat (read-only)"),
        "{out}"
    );
    let conventions = std::fs::read_to_string(p.root().join("CONVENTIONS.md")).unwrap();
    assert!(
        conventions.contains("# Working from the board"),
        "{conventions}"
    );
    // None of aider's first-run questions (.gitignore, release notes, analytics) came up.
    assert!(!out.contains("(Y)es/(N)o"), "{out}");
}

#[test]
fn gemini_loads_agents_md_and_claude_fires_session_start_offline() {
    let (Some(_), Some(_)) = (require("gemini"), require("claude")) else {
        return;
    };
    if Tmux::missing() {
        return;
    }
    let mut p = real_project("");
    let tmux = p.tmux().share();
    // Claude: the user lets `board init --agents --trust` record the workspace trust (the one
    // dialog no project file can skip); then its SessionStart hook reaches the board with the
    // agent's identity, offline.
    let out = p.board(&["init", "--agents", "--trust"]);
    let said = out.text();
    assert!(out.success(), "{said}");
    assert!(
        said.contains(".claude.json") && said.contains("your user settings were changed"),
        "{said}"
    );
    let again = p.board(&["init", "--agents", "--trust"]).text();
    assert!(
        !again.contains("your user settings were changed"),
        "{again}"
    );

    let (gemini, genv) = profile_command(&p, "gemini");
    let board_run = |name: &str, argv: &[String], env: &[(String, String)]| {
        let mut words = vec![
            format!("'{BOARD}'"),
            "run".into(),
            "--name".into(),
            name.into(),
            "--".into(),
        ];
        words.extend(argv.iter().map(|a| crate::harness::sh_quote(a)));
        let envs: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!(
            "env ANTHROPIC_API_KEY={} GEMINI_API_KEY={} {} {}",
            crate::harness::real_clis::ANTHROPIC_KEY,
            crate::harness::real_clis::GEMINI_KEY,
            envs.join(" "),
            words.join(" ")
        )
    };
    let root_s = p.root().to_string_lossy().into_owned();
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "160",
        "-y",
        "50",
        "-c",
        &root_s,
        &board_run("gemini", &gemini, &genv),
    ]);
    tmux.run(&[
        "new-window",
        "-d",
        "-t",
        "t:",
        "-c",
        &root_s,
        &board_run("claude", &["claude".into()], &[]),
    ]);

    let started = poll(SLOW, || {
        p.session("claude")
            .filter(|a| a["contacted_at"].is_string())
            .map(|_| ())
    });
    assert!(
        started.is_some(),
        "claude's SessionStart hook never reached the board:\n{}\n{:?}",
        tmux.capture("t:1", &[]),
        p.session("claude")
    );

    let ready = tmux.poll_screen("t:0", &[], SLOW, |s| s.contains("Type your message"));
    assert!(
        ready.is_some(),
        "gemini never reached its prompt:\n{}",
        tmux.capture("t:0", &[])
    );
    // Gemini's hooks ran too (SessionStart): the session is not waiting for attention.
    let gm = poll(Duration::from_secs(30), || {
        p.session("gemini")
            .filter(|a| a["contacted_at"].is_string())
    });
    assert!(
        gm.is_some(),
        "gemini's SessionStart hook never reached the board"
    );
    // Gemini may still be starting when its prompt first shows and drop keys typed then:
    // type the command again until its answer is on screen.
    let mut shown = None;
    for _ in 0..4 {
        tmux.run(&["send-keys", "-t", "t:0", "/memory show"]);
        std::thread::sleep(Duration::from_millis(500));
        tmux.run(&["send-keys", "-t", "t:0", "Enter"]);
        shown = poll(Duration::from_secs(10), || {
            std::thread::sleep(Duration::from_millis(200));
            let s = tmux.run(&["capture-pane", "-p", "-S", "-200", "-t", "t:0"]);
            (s.contains("AGENTS.md") && s.contains("Working from the board")).then_some(s)
        });
        if shown.is_some() {
            break;
        }
    }
    assert!(
        shown.is_some(),
        "gemini's /memory show lacks the board protocol:\n{}",
        tmux.run(&["capture-pane", "-p", "-S", "-200", "-t", "t:0"])
    );
}

#[test]
fn under_codex_sandbox_board_renew_gets_through_with_the_profiles_settings() {
    let Some(_) = require("codex") else {
        return;
    };
    let p = real_project("");
    let (argv, _) = profile_command(&p, "codex");
    // The profile's `-c` settings, then `codex sandbox` in its default workspace-write mode.
    let mut cmd: Vec<String> = vec!["codex".into()];
    cmd.extend(argv.iter().skip(1).filter(|a| *a != "--no-daemon").cloned());
    cmd.extend(
        [
            "sandbox",
            "-c",
            "sandbox_mode=\"workspace-write\"",
            "--",
            "sh",
            "-c",
            "touch sandboxed && \"$BOARD_BIN\" renew --json",
        ]
        .map(String::from),
    );
    let out = run_under_board(&p, "sbx", &cmd, &[], SLOW);
    let all = out.text();
    eprintln!("{cmd:?}:\n{all}");
    assert!(
        p.root().join("sandboxed").exists(),
        "the command ran in the sandbox: {all}"
    );
    assert!(out.success(), "{all}");
    assert!(all.contains("\"claims\""), "{all}");
}
