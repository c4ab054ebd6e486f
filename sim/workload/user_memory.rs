//! Where real programs put the things a futex key is made of: the kernel's
//! `mm_struct` objects and the user addresses of the futex words of perf bench
//! futex hash and will-it-scale (docs/kernel-facts.md §6.1, §7).
//!
//! The hash sees these addresses bit for bit, so made-up addresses such as
//! 0x1000, 0x2000, ... would test a hash on inputs no kernel ever gets. Each
//! function draws the few random choices the kernel and glibc make (ASLR
//! bases, slab pages) from the caller's generator, so a seed fixes them all,
//! and derives everything else from how the allocators lay memory out.

use super::WorkloadError;
use crate::address_map::{MMAP_BASE, MM_SLABS, RANDOMIZED_PAGES, STACK_TOP, USER_PROGRAM};
use crate::memory::MemoryMap;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

const PAGE: u64 = 4096;

/// `sizeof(struct mm_struct)` plus its cpumask, rounded to the line because
/// the cache is created with SLAB_HWCACHE_ALIGN: about 1.2 KiB on 6.x x86-64
/// (slabinfo shows 1152 to 1344 depending on config and CPU count).
const MM_OBJECT_BYTES: u64 = 19 * 64;
/// SLUB gives a cache of ~1.2 KiB objects order-3 slabs (8 pages), the
/// largest order it picks by default, to fit enough objects per slab.
const MM_SLAB_BYTES: u64 = 8 * PAGE;

/// `mm_struct` addresses for `processes` processes: distinct, 64-byte aligned
/// objects of a kmem cache in the direct map.
///
/// A slab is an order-3 block of pages, naturally aligned, anywhere in
/// physical memory, so each slab's page is a random choice. Objects sit at
/// multiples of the object size inside it, and with
/// CONFIG_SLAB_FREELIST_RANDOM (on in distribution kernels) a fresh slab hands
/// its objects out in a random order. Consecutive forks fill one slab, then
/// the next.
pub fn mm_addresses(processes: u32, rng: &mut Xoshiro256PlusPlus) -> Vec<u64> {
    let per_slab = MM_SLAB_BYTES / MM_OBJECT_BYTES;
    let slabs = u64::from(processes).div_ceil(per_slab);
    let mut slab_starts: Vec<u64> = Vec::with_capacity(slabs as usize);
    while (slab_starts.len() as u64) < slabs {
        let start =
            MM_SLABS.base + rng.gen_range(0..MM_SLABS.extent / MM_SLAB_BYTES) * MM_SLAB_BYTES;
        if !slab_starts.contains(&start) {
            slab_starts.push(start);
        }
    }
    let mut objects = Vec::with_capacity(processes as usize);
    for start in slab_starts {
        let mut slots: Vec<u64> = (0..per_slab).collect();
        slots.shuffle(rng);
        objects.extend(slots.into_iter().map(|slot| start + slot * MM_OBJECT_BYTES));
    }
    objects.truncate(processes as usize);
    objects
}

/// glibc malloc on x86-64: a chunk's size field is 8 bytes and the previous
/// chunk's size field 8 more, so user memory starts 16 bytes into the chunk;
/// chunks are multiples of 16.
const CHUNK_HEADER: u64 = 16;
const SIZE_SZ: u64 = 8;
const MALLOC_ALIGN: u64 = 16;
const MIN_CHUNK: u64 = 32;
/// glibc's initial M_MMAP_THRESHOLD. It only rises when an mmapped chunk is
/// freed, which perf does not do before it allocates the futex arrays.
const MMAP_THRESHOLD: u64 = 128 << 10;
/// The first allocation of a process creates the tcache
/// (`tcache_perthread_struct`, glibc >= 2.26): a 0x290-byte chunk at the very
/// start of the heap.
const TCACHE_CHUNK: u64 = 0x290;
/// perf allocates before the benchmark starts (option parsing, CPU maps, the
/// worker array). How much depends on the perf build and its config file, so
/// that amount is drawn below this bound, in chunk units.
const PERF_PRELUDE_MAX: u64 = 64 << 10;
/// pthread_create allocates the new thread's dynamic thread vector from the
/// calling thread's arena (glibc `allocate_dtv`: calloc(modules + 14 + 2,
/// 16)). Assuming the handful of TLS modules a perf binary links (4), that is
/// a 320-byte request between one futex array and the next.
const DTV_REQUEST: u64 = (4 + 14 + 2) * 16;

/// glibc `request2size`: the chunk for `bytes`. The next chunk's prev_size
/// field overlaps the tail of this one, so only SIZE_SZ is added.
fn chunk_size(bytes: u64) -> u64 {
    (bytes + SIZE_SZ)
        .next_multiple_of(MALLOC_ALIGN)
        .max(MIN_CHUNK)
}

/// Refuses `heaps` process heaps of `bytes` each that would take more than
/// a quarter of the addresses [`heap_start`] draws them from.
pub fn check_heaps(what: &str, heaps: u64, bytes: u64) -> Result<(), WorkloadError> {
    let limit = RANDOMIZED_PAGES * PAGE / 4;
    if heaps.saturating_mul(bytes.saturating_add(2 * PAGE)) > limit {
        return Err(format!(
            "{what}: {heaps} processes x {bytes} bytes of memory is more than the {limit} bytes of heap addresses futexsim draws them from"
        )
        .into());
    }
    Ok(())
}

/// Every 4-KiB page in the 28 bits of page number that the kernel randomizes
/// above `lowest`: 0x55XX_XXXX_X000 for a PIE program and its brk heap,
/// 0x7fXX_XXXX_X000 for the mmap base.
fn randomized_base(lowest: u64, rng: &mut Xoshiro256PlusPlus) -> u64 {
    lowest + rng.gen_range(0..RANDOMIZED_PAGES) * PAGE
}

/// The kernel's top-down mmap placement: with nothing unmapped in between,
/// each new mapping goes directly below the previous one.
struct TopDownMmap {
    next_top: u64,
}

/// Default pthread stack: RLIMIT_STACK (8 MiB), with glibc's one-page guard
/// mapped below it in the same mmap.
const THREAD_STACK: u64 = 8 << 20;
const STACK_GUARD: u64 = PAGE;

impl TopDownMmap {
    fn random(rng: &mut Xoshiro256PlusPlus) -> TopDownMmap {
        TopDownMmap {
            next_top: randomized_base(MMAP_BASE, rng),
        }
    }

    /// Start of a new mapping of `len` bytes (rounded to pages).
    fn map(&mut self, len: u64) -> u64 {
        self.next_top -= len.next_multiple_of(PAGE);
        self.next_top
    }

    /// A thread stack; returns its top (the highest address, exclusive).
    fn thread_stack(&mut self) -> u64 {
        self.map(STACK_GUARD + THREAD_STACK) + STACK_GUARD + THREAD_STACK
    }
}

/// The start of each thread's `calloc(futexes, 4)` futex array in perf bench
/// futex hash, in thread order.
///
/// The main thread runs one loop: calloc thread i's array, then
/// pthread_create thread i, which callocs the new thread's DTV and mmaps its
/// stack. So:
/// - a small array (chunk below the mmap threshold) comes from the brk heap,
///   right after the previous array's chunk and the previous thread's DTV
///   chunk; the heap starts on a randomized page after the program, holds the
///   tcache chunk first, then whatever perf allocated earlier;
/// - a large array is its own mmap, page-aligned with the user pointer 16
///   bytes in, placed top-down below the previous thread's stack.
pub fn perf_hash_arrays(threads: u32, futexes: u32, rng: &mut Xoshiro256PlusPlus) -> Vec<u64> {
    let array_chunk = chunk_size(u64::from(futexes) * 4);
    if array_chunk >= MMAP_THRESHOLD {
        // glibc maps the chunk plus the next chunk's size field, rounded to pages.
        let mapping = array_chunk + SIZE_SZ;
        let mut mmap = TopDownMmap::random(rng);
        (0..threads)
            .map(|_| {
                let array = mmap.map(mapping) + CHUNK_HEADER;
                mmap.thread_stack();
                array
            })
            .collect()
    } else {
        let heap = randomized_base(USER_PROGRAM.base, rng);
        let prelude = rng.gen_range(0..PERF_PRELUDE_MAX / MALLOC_ALIGN) * MALLOC_ALIGN;
        let first_chunk = heap + TCACHE_CHUNK + prelude;
        let stride = array_chunk + chunk_size(DTV_REQUEST);
        (0..u64::from(threads))
            .map(|i| first_chunk + i * stride + CHUNK_HEADER)
            .collect()
    }
}

/// How far into the program's image perf's `.bss` lies: the text, data and
/// relocations of a perf binary come first (several MiB, depending on the
/// build), so the offset is drawn below this bound.
const PERF_BSS_MAX: u64 = 16 << 20;

/// The address of the first of perf's static `u_int32_t` futex words (the
/// `futex1`, `futex2` and `global_futex` of the futex benchmarks); the
/// others follow 4 bytes apart. They sit in the PIE image's `.bss`, on a
/// randomized base, at an offset the perf build fixes.
pub fn perf_static_word(rng: &mut Xoshiro256PlusPlus) -> u64 {
    randomized_base(USER_PROGRAM.base, rng) + rng.gen_range(PERF_BSS_MAX / 2..PERF_BSS_MAX) / 4 * 4
}

/// The first user chunk of a fresh process's brk heap: a randomized page
/// after the program, past the tcache chunk glibc allocates first. Each
/// process randomizes its own, so two may draw the same page; the model
/// keeps every process's lines in one address space, so a process whose
/// `len` bytes there would share a line with memory already laid out
/// draws again. Where no two draws meet, the heaps are the independent
/// draws they always were. Callers keep their processes' heaps to a
/// quarter of the 1 TiB drawn from ([`check_heaps`]), so a draw is free
/// three times in four or more.
pub fn heap_start(memory: &MemoryMap, len: u64, rng: &mut Xoshiro256PlusPlus) -> u64 {
    loop {
        let start = randomized_base(USER_PROGRAM.base, rng) + TCACHE_CHUNK + CHUNK_HEADER;
        if memory.is_free(start, len) {
            return start;
        }
    }
}

/// A fresh mmap of a process with nothing mapped below its randomized mmap base yet.
pub fn first_mmap(len: u64, rng: &mut Xoshiro256PlusPlus) -> u64 {
    TopDownMmap::random(rng).map(len)
}

/// The 22 bits of page number the kernel randomizes the main thread's
/// stack below its top by (STACK_RND_MASK, 16 GiB).
const STACK_RND_PAGES: u64 = 1 << 22;

/// will-it-scale's stack-local `unsigned int addr`, one per task.
///
/// Thread mode: every task is a pthread with a default stack, mapped top-down
/// one below the other. Each thread runs the same code from the same start
/// routine, so the word sits at the same distance below each stack's top
/// (below glibc's thread descriptor, static TLS and the frames of
/// start_thread and the test loop).
///
/// Process mode: every task is a fork of one parent, and fork copies the
/// address space, so every task's word has the same virtual address, on the
/// main stack below argv, the environment and main's frames.
///
/// The distance below the top depends on the glibc build and the compiler,
/// so it is drawn once (4-byte aligned, a few KiB).
pub fn stack_words(tasks: u32, process_mode: bool, rng: &mut Xoshiro256PlusPlus) -> Vec<u64> {
    if process_mode {
        let top = STACK_TOP - rng.gen_range(0..STACK_RND_PAGES) * PAGE;
        let word = top - 4 * rng.gen_range(0x400..0xc00u64);
        vec![word; tasks as usize]
    } else {
        let mut mmap = TopDownMmap::random(rng);
        let depth = 4 * rng.gen_range(0x280..0x500u64);
        (0..tasks).map(|_| mmap.thread_stack() - depth).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::collections::HashSet;

    fn rng(seed: u64) -> Xoshiro256PlusPlus {
        Xoshiro256PlusPlus::seed_from_u64(seed)
    }

    fn distinct(v: &[u64]) -> bool {
        v.iter().collect::<HashSet<_>>().len() == v.len()
    }

    #[test]
    fn mm_structs_are_distinct_aligned_slab_objects() {
        let mms = mm_addresses(100, &mut rng(1));
        assert_eq!(mms.len(), 100);
        assert!(distinct(&mms));
        for &mm in &mms {
            assert_eq!(mm % 64, 0);
            assert!((MM_SLABS.base..MM_SLABS.end()).contains(&mm));
            // Whole objects inside an order-3 slab.
            let in_slab = mm % MM_SLAB_BYTES;
            assert_eq!(in_slab % MM_OBJECT_BYTES, 0);
            assert!(in_slab + MM_OBJECT_BYTES <= MM_SLAB_BYTES);
        }
        // 26 objects per slab: 100 processes need 4 slabs.
        let slabs: HashSet<u64> = mms.iter().map(|mm| mm / MM_SLAB_BYTES).collect();
        assert_eq!(slabs.len(), 4);
    }

    #[test]
    fn heap_arrays_follow_one_another() {
        let arrays = perf_hash_arrays(32, 1024, &mut rng(2));
        assert_eq!(arrays.len(), 32);
        assert_eq!(arrays[0] >> 40, 0x55);
        // A 4096-byte calloc is a 4112-byte chunk, then the next thread's DTV chunk.
        for pair in arrays.windows(2) {
            assert_eq!(pair[1] - pair[0], 4112 + 336);
        }
        for &a in &arrays {
            assert_eq!(a % 16, 0);
        }
    }

    #[test]
    fn arrays_of_128_kib_and_more_are_mmapped_below_each_other() {
        // 32766 u32s: a 131072-byte chunk, the threshold itself.
        for futexes in [32766, 65536] {
            let arrays = perf_hash_arrays(8, futexes, &mut rng(3));
            assert!(distinct(&arrays));
            for pair in arrays.windows(2) {
                assert_eq!(pair[1] % PAGE, 16);
                assert!(pair[1] < pair[0], "mmaps grow downwards");
                // The thread stack of the previous thread lies in between.
                assert!(pair[0] - pair[1] > THREAD_STACK);
            }
            assert_eq!(arrays[0] >> 40, 0x7f);
        }
        // One u32 fewer fits a 131056-byte chunk: still the heap.
        let arrays = perf_hash_arrays(8, 32762, &mut rng(3));
        assert_eq!(arrays[0] >> 40, 0x55);
    }

    #[test]
    fn thread_stacks_hold_the_word_at_one_depth() {
        let words = stack_words(64, false, &mut rng(4));
        assert!(distinct(&words));
        for pair in words.windows(2) {
            assert_eq!(pair[0] - pair[1], THREAD_STACK + STACK_GUARD);
        }
        for &w in &words {
            assert_eq!(w % 4, 0);
            assert_eq!(w >> 40, 0x7f);
        }
    }

    #[test]
    fn forked_processes_share_one_virtual_address() {
        let words = stack_words(16, true, &mut rng(5));
        assert_eq!(words.len(), 16);
        assert!(words.iter().all(|&w| w == words[0] && w % 4 == 0));
        assert!(words[0] > STACK_TOP - STACK_RND_PAGES * PAGE - 0x3000 && words[0] < STACK_TOP);
    }

    #[test]
    fn perf_statics_are_aligned_words_of_the_pie_image() {
        let word = perf_static_word(&mut rng(6));
        assert_eq!(word % 4, 0);
        assert_eq!(word >> 40, 0x55);
        assert_ne!(word, perf_static_word(&mut rng(7)));
    }

    #[test]
    fn a_seed_fixes_every_address() {
        let draw = |seed| {
            let mut r = rng(seed);
            (
                mm_addresses(40, &mut r),
                perf_hash_arrays(4, 1024, &mut r),
                stack_words(4, false, &mut r),
            )
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }
}
