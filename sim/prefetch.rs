//! Hints to the host CPU that runs the simulation. The simulator's state
//! for a large machine (a directory entry per line, a lock per bucket) is far
//! bigger than the host's caches, and each simulated op lands on a random
//! bucket; an op knows the lines it will touch when it begins, events before
//! it touches them, so loading them early hides the host's cache misses.

const HOST_LINE: usize = 64;

/// Starts loading `value` into the host's cache; changes no state.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    prefetch_at((value as *const T).cast());
}

/// Starts loading every host cache line `value` spans.
#[inline(always)]
pub fn prefetch_whole<T>(value: &T) {
    let start = (value as *const T).cast::<u8>();
    let size = std::mem::size_of::<T>();
    for offset in (0..size).step_by(HOST_LINE) {
        prefetch_at(start.wrapping_add(offset));
    }
    // A value that may straddle a host line also ends in one more. Known
    // when compiled: a value aligned to host lines, a whole number of them
    // long, ends in the last the loop loaded.
    if std::mem::align_of::<T>() < HOST_LINE || !size.is_multiple_of(HOST_LINE) {
        prefetch_at(start.wrapping_add(size.saturating_sub(1)));
    }
}

#[inline(always)]
fn prefetch_at(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and never faults,
    // whatever the address, and SSE, which provides it, is part of the
    // x86-64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
