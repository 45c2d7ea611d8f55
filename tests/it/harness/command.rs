//! One command's outcome ([`Out`]) and the one way to run a command to its end with a deadline
//! ([`run_within`]).

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::{exit_code, wait_child};

/// The output of one command (a `board` call, an agent's shell line).
#[derive(Clone)]
pub struct Out {
    /// Exit code (128 + signal if killed).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Out {
    /// Whether the command exited 0.
    pub fn success(&self) -> bool {
        self.code == 0
    }

    /// Stdout parsed as exactly one JSON document (whitespace around it allowed).
    #[track_caller]
    pub fn json(&self) -> Value {
        one_document(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{self:?}"))
    }

    /// Stdout's one JSON document and the exit code, for a command that may fail.
    #[track_caller]
    pub fn json_and_code(&self) -> (Value, i32) {
        (self.json(), self.code)
    }

    /// Asserts exit 0 and returns self.
    #[track_caller]
    pub fn ok(self) -> Out {
        assert_eq!(self.code, 0, "expected success:\n{self:?}");
        self
    }

    /// Asserts the exit code and returns self.
    #[track_caller]
    pub fn expect_code(self, code: i32) -> Out {
        assert_eq!(self.code, code, "expected exit {code}:\n{self:?}");
        self
    }

    /// Stdout then stderr, as one text.
    pub fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
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

/// Runs `cmd` to its end with stdout and stderr captured (stdin as the caller set it); panics
/// if it takes longer than `timeout`, after killing it.
pub fn run_within(cmd: &mut Command, timeout: Duration) -> Out {
    run(cmd, None, timeout)
}

/// [`run_within`] with `input` written to the command's stdin, which is then closed.
pub fn run_with_input(cmd: &mut Command, input: &[u8], timeout: Duration) -> Out {
    run(cmd.stdin(Stdio::piped()), Some(input), timeout)
}

fn run(cmd: &mut Command, input: Option<&[u8]>, timeout: Duration) -> Out {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(input).expect("write the command's input");
    }
    // Read both pipes on threads so the deadline also covers a command that hangs.
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = so.read_to_end(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = se.read_to_end(&mut s);
        s
    });
    let Some(status) = wait_child(&mut child, timeout) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{cmd:?} did not finish within {timeout:?}");
    };
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    Out {
        code: exit_code(status),
        stdout: text(t_out.join().unwrap_or_default()),
        stderr: text(t_err.join().unwrap_or_default()),
    }
}
