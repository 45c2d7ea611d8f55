//! Labels and the `for` names of tasks (an agent name or a role): what the store keeps and
//! `board.toml`'s `role` must both be, so the check lives where both sides can use it.

use crate::proto::error::{BoardError, BoardResult};

/// The longest label or `for` name, in characters.
pub const MAX_LABEL: usize = 64;

/// Checks one label or `for` name (`what` names which, for the error): 1 to [`MAX_LABEL`]
/// characters, no comma (labels are stored joined by commas), no whitespace, no control
/// character.
///
/// # Errors
/// `invalid` naming `what` and the bad text (escaped, cut to [`MAX_LABEL`] characters).
pub fn check_label(what: &str, text: &str) -> BoardResult<()> {
    let why = if text.is_empty() {
        Some("it is empty")
    } else if text.chars().count() > MAX_LABEL {
        Some("it is longer than 64 characters")
    } else if text.contains(',') {
        Some("it contains a comma")
    } else if text.chars().any(char::is_whitespace) {
        Some("it contains whitespace")
    } else if text.chars().any(char::is_control) {
        Some("it contains a control character")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => {
            let shown: String = text.chars().take(MAX_LABEL).collect();
            Err(
                BoardError::invalid(format!("{what} {shown:?} is not valid: {why}"))
                    .with("field", what.to_string()),
            )
        }
    }
}
