//! The JSON Schema `board json --schema` prints, which every `--json` output is checked
//! against.

use std::collections::HashMap;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use serde_json::{json, Value};

use super::BOARD;

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

/// Every way `instance` violates the definition at `$defs/<def>` of the printed schema (one
/// compiled validator per definition, kept for the test binary).
fn violations(def: &str, instance: &Value) -> Vec<String> {
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
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Validates `instance` against the definition at `$defs/<def>` of the printed schema (e.g.
/// `response`, `results/claim`, `error`, `cli/init`); panics with every violation.
pub fn check(def: &str, instance: &Value) {
    let errors = violations(def, instance);
    assert!(
        errors.is_empty(),
        "{instance} does not match $defs/{def}:\n{}",
        errors.join("\n")
    );
}

/// True when `instance` matches `$defs/<def>` (for negative checks).
pub fn matches(def: &str, instance: &Value) -> bool {
    violations(def, instance).is_empty()
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
