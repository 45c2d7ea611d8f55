//! Store procedures written once for both backends, over [`crate::store::db::Backend`]: the
//! SQL text both dialects accept (see [`crate::store::db`]) and the Rust around it. The
//! `store_api!` list names them `shared fn`; what must differ stays in the backends.

#[macro_use]
mod sessions;

pub(in crate::store) use sessions::*;
