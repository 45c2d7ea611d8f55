//! The board's methods: [`dispatch`] authenticates the caller, renews its claims and runs the
//! one handler function of the request's method, grouped by concern ([`tasks`], [`claims`],
//! [`board`], [`team`], [`review`], [`launcher`]); [`pair`] answers a client's `hello` and its
//! call together. Every handler gets a [`cx::Cx`] and gives an [`answer::Answer`].

pub mod answer;
pub mod board;
pub mod claims;
pub mod cx;
pub mod dispatch;
pub mod launcher;
pub mod pair;
pub mod review;
pub mod tasks;
pub mod team;

pub use answer::Answer;
pub use dispatch::handle;
pub use pair::{handle_after_hello, rides_with_hello};
