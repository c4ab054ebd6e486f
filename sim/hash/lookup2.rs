//! lookup2 jhash: the kernel's "golden ratio" Jenkins hash up to 2.6.36 (after Bob Jenkins'
//! lookup2.c).
//!
//! Unlike lookup3, the final mix always runs (even for empty input), the length is added to c
//! after the block loop, and `jhash_3words` is a single mix, so it differs from `jhash2` of
//! the same three words. `jhash2` over words still equals `jhash` over their little-endian
//! bytes, because a word count of n is a byte count of 4n in every branch.

use super::{le_tail_words, le_words};

/// The kernel's `JHASH_GOLDEN_RATIO`, the start value of a and b.
pub const JHASH_GOLDEN_RATIO: u32 = 0x9e37_79b9;

/// `__jhash_mix`: nine steps `x -= y; x -= z; x ^= z shifted` (logical shifts, not rotates).
#[inline(always)]
fn mix(mut a: u32, mut b: u32, mut c: u32) -> (u32, u32, u32) {
    a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 13);
    b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 8);
    c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 13);
    a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 12);
    b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 16);
    c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 5);
    a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 3);
    b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 10);
    c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 15);
    (a, b, c)
}

/// The kernel's `jhash(key, length, initval)` over bytes.
#[inline]
pub fn jhash(key: &[u8], initval: u32) -> u32 {
    let (mut a, mut b, mut c) = (JHASH_GOLDEN_RATIO, JHASH_GOLDEN_RATIO, initval);
    let (blocks, tail) = key.as_chunks::<12>();
    for block in blocks {
        let [k0, k1, k2] = le_words(block);
        (a, b, c) = mix(a.wrapping_add(k0), b.wrapping_add(k1), c.wrapping_add(k2));
    }
    // The kernel's length is a u32 and wraps.
    c = c.wrapping_add(key.len() as u32);
    // The low byte of c holds the length, so tail bytes 8..=10 go in one byte higher.
    let [k0, k1, k2] = le_tail_words(tail);
    mix(
        a.wrapping_add(k0),
        b.wrapping_add(k1),
        c.wrapping_add(k2 << 8),
    )
    .2
}

/// Hides a constant from the optimizer; the value is unchanged. With the
/// golden ratio and the length in view, LLVM rewrites the first mix steps
/// as `k - (c + a) + constant`, which puts two more operations on the path
/// from one hash to the next (12.6 ns per dependent 4-word hash against
/// 10.4 ns for gcc's code, which keeps the kernel's order).
#[inline(always)]
fn opaque(mut x: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: an empty instruction string: it reads and writes nothing but
    // claims to change the register, so the constant cannot be folded.
    unsafe {
        std::arch::asm!("/* {0:e} */", inout(reg) x, options(pure, nomem, nostack));
    }
    x
}

/// The kernel's `jhash2(k, length, initval)` over 32-bit words.
#[inline]
pub fn jhash2(k: &[u32], initval: u32) -> u32 {
    let golden = opaque(JHASH_GOLDEN_RATIO);
    let (mut a, mut b, mut c) = (golden, golden, initval);
    let (triples, tail) = k.as_chunks::<3>();
    for &[k0, k1, k2] in triples {
        (a, b, c) = mix(a.wrapping_add(k0), b.wrapping_add(k1), c.wrapping_add(k2));
    }
    // The original word count times 4, not what is left; the length is a u32 and wraps.
    c = c.wrapping_add(opaque((k.len() as u32) << 2));
    match *tail {
        // as_chunks leaves at most 2 words, so this arm is exactly [k0, k1].
        [k0, k1, ..] => {
            a = a.wrapping_add(k0);
            b = b.wrapping_add(k1);
        }
        [k0] => a = a.wrapping_add(k0),
        [] => {}
    }
    mix(a, b, c).2
}

/// The kernel's `jhash_3words(a, b, c, initval)`: one mix of the golden-ratio state, with no
/// length and no second mix, so it is not `jhash2(&[a, b, c], initval)`.
#[inline]
pub fn jhash_3words(a: u32, b: u32, c: u32, initval: u32) -> u32 {
    mix(
        a.wrapping_add(JHASH_GOLDEN_RATIO),
        b.wrapping_add(JHASH_GOLDEN_RATIO),
        c.wrapping_add(initval),
    )
    .2
}

/// The kernel's `jhash_2words(a, b, initval)` = `jhash_3words(a, b, 0, initval)`.
#[inline]
pub fn jhash_2words(a: u32, b: u32, initval: u32) -> u32 {
    jhash_3words(a, b, 0, initval)
}

/// The kernel's `jhash_1word(a, initval)` = `jhash_3words(a, 0, 0, initval)`.
#[inline]
pub fn jhash_1word(a: u32, initval: u32) -> u32 {
    jhash_3words(a, 0, 0, initval)
}
