//! Keeping the board's resident memory near what it holds, not what it once held (glibc malloc).
//!
//! glibc gives each thread that allocates concurrently its own arena and returns freed memory
//! to the system only from the top of the main heap. A board that answered a few full lists
//! (each a few MB of JSON built on a blocking thread) from several connections at once kept
//! every arena's high-water mark mapped: 90–130 MiB after a burst of 10 000 requests, against
//! 17 MiB before it. Two arenas are enough for two cores, and trimming after a large answer hands
//! the pages back. Other allocators (musl) already behave, so elsewhere these do nothing.

/// At most two malloc arenas for the whole process. Call first: arenas already made stay.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        #[allow(unsafe_code, reason = "mallopt(3) is a C function")]
        // SAFETY: mallopt only sets an allocator parameter (under the allocator's own lock);
        // M_ARENA_MAX takes any positive count.
        let _ = unsafe { nix::libc::mallopt(nix::libc::M_ARENA_MAX, 2) };
    }
}

/// Answers at least this large (bytes) are followed by [`give_back`].
pub const LARGE_ANSWER: usize = 1 << 20;

/// Returns the free memory of every arena to the system (`malloc_trim(0)`). Takes each arena's
/// lock in turn, ~1 ms on a heap of 100 MB: call it off the reactor threads, after large answers.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        #[allow(unsafe_code, reason = "malloc_trim(3) is a C function")]
        // SAFETY: malloc_trim takes the allocator's own locks and only releases free pages.
        let _ = unsafe { nix::libc::malloc_trim(0) };
    }
}
