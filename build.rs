//! Links the `board` binary as a position-dependent executable on Linux.
//!
//! Why: a position-independent `board` carries ~21 600 relative relocations (~520 KB) that the
//! dynamic loader applies at every start, writing ~400 KB of pages that every short client
//! command (`board claim`, `board done`) then faults in: about 280 000 instructions and 90 page
//! faults of each run. A fixed load address leaves none. The cost is that the executable's own
//! code is not placed at a random address (the shared libraries still are).

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
