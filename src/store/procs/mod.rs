//! Store procedures written once for both backends, over [`crate::store::db::Backend`]: the
//! SQL text both dialects accept (see [`crate::store::db`]) and the Rust around it. The
//! `store_api!` list names them `shared fn`; what must differ stays in the backends. A
//! procedure named like a [`crate::store::Store`] method is that method (its doc is the
//! trait's); the others are steps several procedures share.

mod claims;
mod holder_writes;
mod import;
mod lapse;
mod messages;
mod meta;
mod op_results;
mod refusals;
mod review;
#[macro_use]
mod sessions;
#[macro_use]
mod tasks;

pub(in crate::store) use claims::*;
pub(in crate::store) use holder_writes::*;
pub(in crate::store) use import::*;
pub(in crate::store) use lapse::*;
pub(in crate::store) use messages::*;
pub(in crate::store) use meta::*;
pub(in crate::store) use op_results::*;
pub(in crate::store) use refusals::*;
pub(in crate::store) use review::*;
pub(in crate::store) use sessions::*;
pub(in crate::store) use tasks::*;
