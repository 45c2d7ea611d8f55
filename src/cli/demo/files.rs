//! What the demo writes into its directory: the `[board]` section of its board.toml, and a
//! write that fails as a board error naming the file.

use std::path::Path;

use crate::proto::error::{BoardError, BoardResult};

/// The `[board]` section of every board.toml the demo writes.
pub(super) const BOARD_SECTION: &str = "[board]\nname = \"demo\"\n";

/// Writes `text` to `path`. Errors: `internal` naming the file.
pub(super) fn write(path: &Path, text: &str) -> BoardResult<()> {
    std::fs::write(path, text)
        .map_err(|e| BoardError::internal(format!("writing {}: {e}", path.display())))
}
