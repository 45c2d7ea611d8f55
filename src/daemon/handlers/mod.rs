//! The board's methods: [`dispatch`] authenticates the caller, renews its claims and runs the
//! one handler of the request's method through [`table`] (generated from the method table);
//! the handlers are trait impls for each method's verb type, grouped by concern as the table
//! is ([`tasks`], [`claims`], [`board`], [`team`], [`review`], [`launcher`]); [`pair`] answers
//! a client's `hello` and its call together. Every handler gets a [`cx::Cx`] and gives its
//! method's result, which [`answer`] turns into the wire's JSON.

pub mod answer;
pub mod board;
pub mod claims;
pub mod cx;
pub mod dispatch;
pub mod launcher;
pub mod pair;
pub mod review;
pub mod table;
pub mod tasks;
pub mod team;

pub use answer::Answer;
pub use dispatch::handle;
pub use pair::{handle_after_hello, rides_with_hello};
pub use table::{HandleLaunch, HandleRead, HandleWrite};
