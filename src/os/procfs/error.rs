//! What goes wrong reading or parsing `/proc`: the process is gone, the text is not in the
//! expected format, or another I/O error.

use std::io;

/// Error reading or parsing `/proc`.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    /// The process does not exist (any more), or the pid is not positive.
    #[error("no such process")]
    Gone,
    /// The file was read but its content is not in the expected format.
    #[error("malformed /proc data: {0}")]
    Malformed(String),
    /// Any other I/O error while reading `path`.
    #[error("reading {path}: {source}")]
    Io {
        /// The file that could not be read.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}
