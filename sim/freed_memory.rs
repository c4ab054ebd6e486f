//! What the host's allocator does with the memory a run frees. Each run lays
//! out its directory, bucket locks and statistics afresh (megabytes at 64
//! CPUs, hundreds at 4096) and frees them when it ends. glibc's malloc gives
//! a block above its mmap threshold back to the kernel at once, and trims
//! its heap once the free top passes the trim threshold, so the next run
//! faults every page in again: about 2,000 page faults in a 64-CPU
//! benchmark run, 2-3% of its time. A campaign runs simulations back to
//! back, so the futexsim binary and the benchmarks keep what a run frees
//! for the next one (`keep_for_the_next_run`); the library itself leaves
//! the process's allocator as it found it.

/// The largest block glibc's malloc then serves from its heap instead of a
/// mapping of its own: its ceiling on 64-bit hosts (mallopt(3)). Larger
/// arrays, those of thousands of CPUs, still go back to the kernel at once.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 32 << 20;

/// Asks the process's allocator to keep freed memory for reuse: freed
/// blocks up to MMAP_THRESHOLD stay in the heap and the heap is never
/// trimmed. Peak memory is unchanged: what is kept is what the largest run
/// already held. Elsewhere than glibc it does nothing.
pub fn keep_for_the_next_run() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets two of malloc's tuning parameters, under
    // the allocator's own lock; it touches no memory the program owns and
    // leaves every existing allocation valid. A refusal is harmless.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}
