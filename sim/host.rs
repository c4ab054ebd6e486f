//! Hints to the host CPU that runs the simulation. The simulator's state
//! for a large machine (a directory entry per line, a lock per bucket) is far
//! bigger than the host's caches, and each simulated op lands on a random
//! bucket; an op knows the lines it will touch when it begins, events before
//! it touches them, so loading them early hides the host's cache misses.

/// Starts loading `value` into the host's cache; changes no state.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and never faults, and
    // SSE, which provides it, is part of the x86-64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
