//! The TUI's update functions: what a key, a paste, a refresh, a call's answer or a connection
//! change does to the [`App`](crate::tui::state::app::App), and the [`Effect`]s for the event
//! loop to carry out.
//!
//! The middle layer: it imports the state (`crate::tui::state`) and the crate's protocol, never
//! the view or the event loop. It is pure: no I/O, no clock, no terminal; what the details
//! dialog's scroll limit needs of the screen comes from [`detail`], which the view draws from.
//!
//! [`Effect`]: crate::tui::state::app::Effect

pub mod agents;
pub mod app;
pub mod detail;
#[cfg(test)]
pub mod fixture;
pub mod form;
pub mod keys;
pub mod messages;
pub mod needs;
pub mod refresh;
