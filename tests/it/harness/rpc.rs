//! Raw access to the board's socket, without the CLI (so it never starts a board): one
//! JSON-RPC connection ([`Rpc`]) and one request on a fresh connection ([`call`]).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use serde_json::{json, Value};

use super::STEP;

/// One JSON-RPC connection to the board's socket, used the way a client would (or a bad one).
pub struct Rpc {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
}

impl Rpc {
    /// Connects to `socket`; reads and writes time out after [`STEP`].
    pub fn connect(socket: &Path) -> std::io::Result<Rpc> {
        let stream = UnixStream::connect(socket)?;
        stream.set_read_timeout(Some(STEP))?;
        stream.set_write_timeout(Some(STEP))?;
        let reader = BufReader::new(stream.try_clone()?);
        Ok(Rpc {
            stream,
            reader,
            next_id: 1,
        })
    }

    /// Sends raw bytes (a newline is not added).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write to the board");
    }

    /// Reads one line as JSON; `Err` when the board closed the connection, timed out or
    /// answered something that is not JSON.
    pub fn try_read(&mut self) -> Result<Value, String> {
        let mut line = String::new();
        let n = self
            .reader
            .read_line(&mut line)
            .map_err(|e| format!("read from the board: {e}"))?;
        if n == 0 {
            return Err("the board closed the connection".into());
        }
        serde_json::from_str(&line).map_err(|e| format!("not JSON ({e}): {line:?}"))
    }

    /// Reads one response (or notification) line as JSON.
    #[track_caller]
    pub fn read_response(&mut self) -> Value {
        self.try_read().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Sends one request; returns the whole response object (`result` or `error`), or `Err`
    /// when the connection failed.
    pub fn try_call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.stream
            .write_all(format!("{req}\n").as_bytes())
            .map_err(|e| format!("write to the board: {e}"))?;
        let resp = self.try_read()?;
        if resp["id"] != json!(id) {
            return Err(format!("response to another request: {resp}"));
        }
        Ok(resp)
    }

    /// Sends one request and returns the whole response object (`result` or `error`).
    #[track_caller]
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.try_call(method, params)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Like [`Rpc::call`], but expects success and returns `result`.
    #[track_caller]
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let resp = self.call(method, params.clone());
        assert!(
            resp.get("error").is_none(),
            "{method} {params} failed: {resp}"
        );
        resp["result"].clone()
    }
}

/// One request on a new connection to `socket`: `result`, or `Err` with the error object (or
/// why the connection failed).
pub fn call(socket: &Path, method: &str, params: Value) -> Result<Value, String> {
    let resp = Rpc::connect(socket)
        .map_err(|e| e.to_string())?
        .try_call(method, params)?;
    match resp.get("error") {
        Some(e) => Err(e.to_string()),
        None => Ok(resp["result"].clone()),
    }
}
