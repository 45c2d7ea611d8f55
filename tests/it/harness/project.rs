//! Shared test fixtures: a project in a temp dir with a real board, the printed JSON Schema, and
//! polling with deadlines.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};

use serde_json::{json, Value};

use super::{scrub, BOARD};

/// A project directory with `board.toml` (made by `board init`) and, once used, a running board
/// that is stopped on drop.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    /// `board init` in a new temp dir.
    pub fn new() -> Project {
        Project::with_lease(None)
    }

    /// `board init`, then `[lease]` replaced by `duration`/`sweep` when given.
    pub fn with_lease(lease: Option<(&str, &str)>) -> Project {
        let dir = tempfile::Builder::new()
            .prefix("bd")
            .tempdir_in("/tmp")
            .expect("tempdir");
        let p = Project { dir };
        let out = p.board(&["init", "--name", "t"]);
        assert!(out.status.success(), "init: {out:?}");
        if let Some((duration, sweep)) = lease {
            let path = p.path().join("board.toml");
            let text = std::fs::read_to_string(&path).unwrap();
            let text = text
                .replace("duration = \"120s\"", &format!("duration = \"{duration}\""))
                .replace("sweep = \"30s\"", &format!("sweep = \"{sweep}\""));
            std::fs::write(&path, text).unwrap();
        }
        p
    }

    /// The project root.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A command in the project with a clean environment and the binary on PATH.
    pub fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        scrub(c.current_dir(self.path())).stdin(Stdio::null());
        c
    }

    /// `board ARGS…` as an operator; waits for it.
    pub fn board(&self, args: &[&str]) -> Output {
        self.cmd(BOARD).args(args).output().expect("run board")
    }

    /// `board ARGS… --json` as an operator: the one JSON document and the exit code.
    pub fn json(&self, args: &[&str]) -> (Value, i32) {
        let out = self.cmd(BOARD).args(args).arg("--json").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let v = one_document(&text).unwrap_or_else(|e| panic!("board {args:?}: {e}"));
        (v, out.status.code().unwrap_or(-1))
    }

    /// `board run --name NAME -- sh -c SCRIPT`, waited for.
    pub fn agent(&self, name: &str, script: &str) -> Output {
        self.cmd(BOARD)
            .args(["run", "--name", name, "--", "sh", "-c", script])
            .output()
            .unwrap()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = self.cmd(BOARD).args(["stop"]).output();
    }
}

/// Parses `text` as exactly one JSON document (whitespace around it allowed).
pub fn one_document(text: &str) -> Result<Value, String> {
    let mut docs = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let first = match docs.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => return Err(format!("not JSON ({e}): {text:?}")),
        None => return Err(format!("no JSON document: {text:?}")),
    };
    match docs.next() {
        None => Ok(first),
        Some(Ok(_)) => Err(format!("more than one JSON document: {text:?}")),
        Some(Err(e)) => Err(format!("trailing text after the document ({e}): {text:?}")),
    }
}

/// The schema as printed by `board json --schema` (once per test binary).
pub fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let out = Command::new(BOARD)
            .args(["json", "--schema"])
            .output()
            .expect("board json --schema");
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).expect("the schema is JSON")
    })
}

/// Validates `instance` against the definition at `$defs/<def>` of the printed schema (e.g.
/// `response`, `results/claim`, `error`, `cli/init`); panics with every violation.
pub fn check(def: &str, instance: &Value) {
    static VALIDATORS: OnceLock<Mutex<HashMap<String, jsonschema::Validator>>> = OnceLock::new();
    let map = VALIDATORS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    let v = map.entry(def.to_string()).or_insert_with(|| {
        let root = schema();
        assert!(
            root.pointer(&format!("/$defs/{def}")).is_some(),
            "the schema has no $defs/{def}"
        );
        let wrapper = json!({
            "$schema": root["$schema"],
            "$defs": root["$defs"],
            "$ref": format!("#/$defs/{def}"),
        });
        jsonschema::validator_for(&wrapper).expect("the schema compiles")
    });
    let errors: Vec<String> = v
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{instance} does not match $defs/{def}:\n{}",
        errors.join("\n")
    );
}

/// True when `instance` matches `$defs/<def>` (for negative checks).
pub fn matches(def: &str, instance: &Value) -> bool {
    let root = schema();
    let wrapper = json!({
        "$schema": root["$schema"],
        "$defs": root["$defs"],
        "$ref": format!("#/$defs/{def}"),
    });
    jsonschema::validator_for(&wrapper)
        .expect("the schema compiles")
        .is_valid(instance)
}

/// Validates a CLI `--json` output of `method` that exited with `code`: the method's result on
/// 0, else an error object whose kind maps to that exit code.
pub fn check_cli(method: &str, code: i32, doc: &Value) {
    if code == 0 {
        let def = match method {
            "init" | "up" | "down" => format!("cli/{method}"),
            m => format!("results/{m}"),
        };
        check(&def, doc);
    } else {
        check("error", doc);
        let kind = doc["data"]["kind"].as_str().unwrap_or_default();
        let expect = match kind {
            "internal" | "invalid" => 1,
            "usage" => 2,
            "no_ready_task" => 3,
            "conflict" => 4,
            "lapsed" => 5,
            "not_found" => 6,
            "unauthorized" => 7,
            "unavailable" => 8,
            other => panic!("unknown kind {other}"),
        };
        assert_eq!(code, expect, "exit code of {method} for {doc}");
    }
}
