//! `board show` (and every command generated from the method table) and one page of
//! `board list`: one request, printed with each agent session
//! named as people know it (`done by claude`, not its session id; `name@host` on a shared
//! store), as `board log` does. `--json` prints the answer as it is, ids and all.

use serde_json::Value;

use super::{call, print};
use crate::proto::client;
use crate::proto::error::BoardResult;

/// Sends the one request of `cmd` (a generated command such as `show`, or `list` with `--limit`) and answers it with its
/// human text. Without `--json` (`json_out` false) and only when the answer names a session,
/// one more request asks the board for the sessions' names; when that fails, ids are shown.
pub(super) fn one_call(cmd: &super::args::Cmd, json_out: bool) -> BoardResult<(Value, String)> {
    let request = call::request_of(cmd);
    let method = request.method();
    let target = client::target()?;
    let v = client::send_once(&target, true, request)?;
    if json_out || !print::names_sessions(&v) {
        let human = print::human(method, &v);
        return Ok((v, human));
    }
    let mut named = v.clone();
    print::name_sessions(&mut named, &call::session_names(&target));
    Ok((v, print::human(method, &named)))
}
