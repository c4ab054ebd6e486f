//! lookup3 jhash: the kernel's Jenkins hash since 2.6.37/38 (after Bob Jenkins' lookup3.c).
//!
//! On little-endian machines `jhash` equals Jenkins' `hashlittle`, and `jhash2` over words
//! equals `jhash` over their little-endian bytes.

use super::{le_tail_words, le_words};

/// The kernel's `JHASH_INITVAL`, an arbitrary start value.
pub const JHASH_INITVAL: u32 = 0xdead_beef;

/// `__jhash_mix`: six steps `x -= z; x ^= rol(z, r); z += y`, mixing 3 words reversibly.
#[inline(always)]
fn mix(mut a: u32, mut b: u32, mut c: u32) -> (u32, u32, u32) {
    a = a.wrapping_sub(c) ^ c.rotate_left(4);
    c = c.wrapping_add(b);
    b = b.wrapping_sub(a) ^ a.rotate_left(6);
    a = a.wrapping_add(c);
    c = c.wrapping_sub(b) ^ b.rotate_left(8);
    b = b.wrapping_add(a);
    a = a.wrapping_sub(c) ^ c.rotate_left(16);
    c = c.wrapping_add(b);
    b = b.wrapping_sub(a) ^ a.rotate_left(19);
    a = a.wrapping_add(c);
    c = c.wrapping_sub(b) ^ b.rotate_left(4);
    b = b.wrapping_add(a);
    (a, b, c)
}

/// `__jhash_final`: seven steps `x ^= y; x -= rol(y, r)`, so every input bit reaches c.
#[inline(always)]
fn final_mix(mut a: u32, mut b: u32, mut c: u32) -> (u32, u32, u32) {
    c = (c ^ b).wrapping_sub(b.rotate_left(14));
    a = (a ^ c).wrapping_sub(c.rotate_left(11));
    b = (b ^ a).wrapping_sub(a.rotate_left(25));
    c = (c ^ b).wrapping_sub(b.rotate_left(16));
    a = (a ^ c).wrapping_sub(c.rotate_left(4));
    b = (b ^ a).wrapping_sub(a.rotate_left(14));
    c = (c ^ b).wrapping_sub(b.rotate_left(24));
    (a, b, c)
}

/// The byte hash from an explicit start state; returns the whole state so that
/// [`hashlittle2`] can report b as well. An empty key skips the final, as in the kernel.
#[inline(always)]
fn hash_bytes(key: &[u8], mut a: u32, mut b: u32, mut c: u32) -> (u32, u32, u32) {
    if key.is_empty() {
        return (a, b, c);
    }
    // Full blocks are mixed only while more than 12 bytes remain: the last 1..=12 bytes
    // always go through the final instead.
    let (blocks, tail) = key.split_at((key.len() - 1) / 12 * 12);
    for block in blocks.as_chunks::<12>().0 {
        let [k0, k1, k2] = le_words(block);
        (a, b, c) = mix(a.wrapping_add(k0), b.wrapping_add(k1), c.wrapping_add(k2));
    }
    let [k0, k1, k2] = le_tail_words(tail);
    final_mix(a.wrapping_add(k0), b.wrapping_add(k1), c.wrapping_add(k2))
}

/// The start value shared by a, b and c: `JHASH_INITVAL + length + initval`, where the
/// kernel's length is a u32 (bytes for `jhash`, words*4 for `jhash2`), so it wraps.
#[inline(always)]
fn start(length: u32, initval: u32) -> u32 {
    JHASH_INITVAL.wrapping_add(length).wrapping_add(initval)
}

/// The kernel's `jhash(key, length, initval)` over bytes (== `hashlittle` on little-endian).
#[inline]
pub fn jhash(key: &[u8], initval: u32) -> u32 {
    let s = start(key.len() as u32, initval);
    hash_bytes(key, s, s, s).2
}

/// Bob Jenkins' two-result variant `hashlittle2(key, length, *pc, *pb)`, returning (c, b).
///
/// The kernel has no such function; it exists only so the test suite can check the published
/// `hashlittle2` vectors against this module's own mix and final. `pc` is the primary
/// initval; `pb` is added to c only.
pub fn hashlittle2(key: &[u8], pc: u32, pb: u32) -> (u32, u32) {
    let s = start(key.len() as u32, pc);
    let (_, b, c) = hash_bytes(key, s, s, s.wrapping_add(pb));
    (c, b)
}

/// The kernel's `jhash2(k, length, initval)` over 32-bit words.
///
/// Bit-identical to [`jhash`] over the words' little-endian bytes. For the 4-word futex key
/// this is one mix over k0..k2, then a += k3, then the final.
#[inline]
pub fn jhash2(k: &[u32], initval: u32) -> u32 {
    let s = start((k.len() as u32) << 2, initval);
    let (mut a, mut b, mut c) = (s, s, s);
    // As for bytes: triples are mixed only while more than 3 words remain.
    let (triples, tail) = k.split_at(k.len().saturating_sub(1) / 3 * 3);
    for &[k0, k1, k2] in triples.as_chunks::<3>().0 {
        (a, b, c) = mix(a.wrapping_add(k0), b.wrapping_add(k1), c.wrapping_add(k2));
    }
    match *tail {
        [k0, k1, k2] => {
            a = a.wrapping_add(k0);
            b = b.wrapping_add(k1);
            c = c.wrapping_add(k2);
        }
        [k0, k1] => {
            a = a.wrapping_add(k0);
            b = b.wrapping_add(k1);
        }
        // The split leaves at most 3 words, so this arm is exactly [k0].
        [k0, ..] => a = a.wrapping_add(k0),
        // Zero words: the kernel returns the start value without the final.
        [] => return c,
    }
    final_mix(a, b, c).2
}

/// `__jhash_nwords`: the final alone over up to 3 words, with the start value of an n-word
/// `jhash2`, so `jhash_nwords` equals `jhash2` of the same n words.
#[inline(always)]
fn jhash_nwords(a: u32, b: u32, c: u32, initval: u32) -> u32 {
    final_mix(
        a.wrapping_add(initval),
        b.wrapping_add(initval),
        c.wrapping_add(initval),
    )
    .2
}

/// The kernel's `jhash_3words(a, b, c, initval)`; equals `jhash2(&[a, b, c], initval)`.
#[inline]
pub fn jhash_3words(a: u32, b: u32, c: u32, initval: u32) -> u32 {
    jhash_nwords(a, b, c, start(3 << 2, initval))
}

/// The kernel's `jhash_2words(a, b, initval)`; equals `jhash2(&[a, b], initval)`.
#[inline]
pub fn jhash_2words(a: u32, b: u32, initval: u32) -> u32 {
    jhash_nwords(a, b, 0, start(2 << 2, initval))
}

/// The kernel's `jhash_1word(a, initval)`; equals `jhash2(&[a], initval)`.
#[inline]
pub fn jhash_1word(a: u32, initval: u32) -> u32 {
    jhash_nwords(a, 0, 0, start(1 << 2, initval))
}
