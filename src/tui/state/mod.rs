//! The TUI's state: the [`app::App`] and everything it holds, as data.
//!
//! The lowest layer of the TUI. Its files import only each other (in one direction: `app`
//! holds the others' types; `snapshot`, `form`, `input`, `agents` and `needs` import nothing
//! of `app`) and the crate's protocol, never the update code, the view or the event loop.
//! Nothing here does I/O or reads a clock.

pub mod agents;
pub mod app;
pub mod form;
pub mod input;
pub mod needs;
pub mod snapshot;
