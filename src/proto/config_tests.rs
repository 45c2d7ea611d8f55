//! Unit tests of `board.toml` reading.

use super::*;

#[test]
fn path_hashes_are_sha256_and_stable() {
    // SHA-256("/srv/project/.board") computed independently (sha256sum), so a change of
    // toolchain or hasher cannot move the socket.
    assert_eq!(
        path_hash(Path::new("/srv/project/.board"), 16),
        "25c96ce5ed954a1e"
    );
    assert_eq!(path_hash(Path::new("/a"), 4).len(), 4);
}

#[test]
fn an_agents_role_is_read_and_a_bad_one_refused_naming_it() {
    let toml = "[[agents]]\nname = \"critic\"\nprofile = \"shell\"\nrole = \"reviewer\"\n";
    let c = Config::parse(toml, Path::new("board.toml")).unwrap();
    assert_eq!(c.agents[0].role.as_deref(), Some("reviewer"));
    let bad = toml.replace("\"reviewer\"", "\"code review\"");
    let e = Config::parse(&bad, Path::new("board.toml")).unwrap_err();
    assert!(e.to_string().contains("\"code review\""), "{e}");
}

#[test]
fn defaults_match_the_design() {
    let c = Config::parse("", Path::new("board.toml")).unwrap();
    assert_eq!(c.lease.duration.0, Duration::from_secs(120));
    assert_eq!(c.lease.sweep.0, Duration::from_secs(30));
    assert_eq!(c.lease.liveness, LivenessMode::Activity);
    assert!(c.identity.check_process_tree);
}

#[test]
fn the_init_text_parses_to_the_defaults() {
    let c = Config::parse(&Config::default_text("x"), Path::new("b")).unwrap();
    assert_eq!(c.board.name, "x");
    assert_eq!(c.lease, LeaseSection::default());
}

#[test]
fn unknown_keys_are_errors() {
    let e = Config::parse("[lease]\nduraton = \"1s\"\n", Path::new("board.toml")).unwrap_err();
    assert!(e.to_string().contains("duraton"), "{e}");
}

#[test]
fn durations_need_units() {
    assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
    assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
    assert!(parse_duration("120").unwrap_err().contains("unit"));
}

#[test]
fn sweep_must_be_shorter_than_the_lease() {
    let e = Config::parse("[lease]\nduration=\"1s\"\nsweep=\"2s\"\n", Path::new("b")).unwrap_err();
    assert!(e.to_string().contains("shorter"), "{e}");
}

#[test]
fn a_worktree_of_an_agent_belongs_to_the_board_that_made_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    let wt = root.join(".board/worktrees/claude/sub");
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::write(root.join(CONFIG_FILE), "").unwrap();
    // The worktree's own checked-out copy of board.toml.
    std::fs::write(root.join(".board/worktrees/claude").join(CONFIG_FILE), "").unwrap();
    // Before the board has a database, nothing marks .board as a board's data directory.
    assert_eq!(
        find_root(&wt).unwrap(),
        root.join(".board/worktrees/claude")
    );
    std::fs::write(root.join(".board/board.db"), "").unwrap();
    assert_eq!(find_root(&wt).unwrap(), root);
    assert_eq!(find_root(&root).unwrap(), root);
}

#[test]
fn long_roots_get_a_short_socket() {
    let long = PathBuf::from("/tmp").join("x".repeat(120));
    let p = Paths::new(&long, &Config::default());
    assert!(p.socket.as_os_str().len() <= MAX_SOCKET_PATH);
}
