//! Asks the host kernel to back the simulator's largest arrays with
//! transparent huge pages. At 4096 CPUs the directory, its statistics index
//! and the bucket locks take about 80 MB, touched at random lines: with 4 KiB
//! pages nearly every access also misses the host's TLB, and every page
//! faults once. Where the host grants huge pages only on request
//! (`transparent_hugepage=madvise`), asking makes both go away; elsewhere the
//! request is ignored and nothing changes but speed.

use std::mem::size_of;

/// Huge page size on x86-64 and arm64 with 4 KiB base pages.
const HUGE_PAGE: usize = 2 << 20;

/// An empty vector with room for `capacity` elements, whose memory the host
/// is asked to back with huge pages before any of it is touched.
pub fn vec_with_capacity<T>(capacity: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(capacity);
    advise(v.as_ptr() as usize, capacity.saturating_mul(size_of::<T>()));
    v
}

/// `n` copies of `value` on memory asked to be huge pages.
pub fn vec_filled<T: Clone>(value: T, n: usize) -> Vec<T> {
    let mut v = vec_with_capacity(n);
    v.resize(n, value);
    v
}

#[cfg(target_os = "linux")]
fn advise(start: usize, len: usize) {
    // Only whole huge pages inside the allocation can be huge.
    let from = start.next_multiple_of(HUGE_PAGE);
    let to = (start + len) / HUGE_PAGE * HUGE_PAGE;
    if to > from {
        // SAFETY: the range lies inside the vector's own allocation, and
        // MADV_HUGEPAGE only says how the kernel should back it: it changes
        // no contents and no mapping. A refusal (THP disabled) is harmless.
        unsafe {
            libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_start: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_hold_what_was_asked() {
        let v: Vec<u64> = vec_with_capacity(1 << 20);
        assert!(v.is_empty() && v.capacity() >= 1 << 20);
        let v = vec_filled(7u32, 3 << 20);
        assert_eq!(v.len(), 3 << 20);
        assert!(v.iter().all(|&x| x == 7));
        assert!(vec_filled(0u8, 0).is_empty());
    }
}
