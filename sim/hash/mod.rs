//! The kernel's Jenkins hashes (`include/linux/jhash.h`), bit-exact.
//!
//! The futex code picks a hash bucket with `jhash2` over the words of the futex key, so the
//! simulator needs the exact function each kernel used to reproduce its bucket collisions.
//! Two forms exist:
//!
//! - [`lookup2`]: the "golden ratio" jhash (David S. Miller's header, after Bob Jenkins'
//!   lookup2.c, 1996). Used by kernels up to and including 2.6.36 (so 2.6.29 too).
//! - [`lookup3`]: Jozsef Kadlecsik's rewrite after Bob Jenkins' lookup3.c (2006), "The new
//!   jhash implementation". Used from 2.6.37 or 2.6.38 on (the exact release is unconfirmed)
//!   through current kernels.
//!
//! [`multiplicative`] is the kernel's other hash, `hash_64`, which the page wait table uses.
//!
//! [`word_hasher`] is apart from both: the simulator's own fast hasher for its lookup tables.
//!
//! Both are written here from the algorithm descriptions (mix and final step tables) in
//! `docs/kernel-facts.md` §1, not from kernel source. Byte input is read
//! little-endian, matching the kernel on x86.

pub mod lookup2;
pub mod lookup3;
pub mod multiplicative;
pub mod word_hasher;

use std::fmt;
use std::str::FromStr;

/// Which Jenkins hash a simulated kernel uses for its futex buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HashForm {
    /// Kernels <= 2.6.36.
    Lookup2,
    /// Kernels >= 2.6.37/38.
    Lookup3,
}

impl HashForm {
    /// Every form, in the order they appeared in the kernel.
    pub const ALL: [HashForm; 2] = [HashForm::Lookup2, HashForm::Lookup3];

    /// The kernel's `jhash2` over 32-bit words in this form.
    #[inline]
    pub fn jhash2(self, k: &[u32], initval: u32) -> u32 {
        match self {
            HashForm::Lookup2 => lookup2::jhash2(k, initval),
            HashForm::Lookup3 => lookup3::jhash2(k, initval),
        }
    }

    /// The kernel's byte-wise `jhash` in this form.
    #[inline]
    pub fn jhash(self, key: &[u8], initval: u32) -> u32 {
        match self {
            HashForm::Lookup2 => lookup2::jhash(key, initval),
            HashForm::Lookup3 => lookup3::jhash(key, initval),
        }
    }

    /// The lowercase name used in configs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            HashForm::Lookup2 => "lookup2",
            HashForm::Lookup3 => "lookup3",
        }
    }
}

impl fmt::Display for HashForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A hash form name that is neither "lookup2" nor "lookup3".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown hash form {0:?}; valid names: lookup2, lookup3")]
pub struct UnknownHashForm(pub String);

impl FromStr for HashForm {
    type Err = UnknownHashForm;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HashForm::ALL
            .into_iter()
            .find(|form| form.name() == s)
            .ok_or_else(|| UnknownHashForm(s.to_owned()))
    }
}

/// Three little-endian words of a full 12-byte block.
#[inline(always)]
fn le_words(block: &[u8; 12]) -> [u32; 3] {
    let word = |i: usize| u32::from_le_bytes([block[i], block[i + 1], block[i + 2], block[i + 3]]);
    [word(0), word(4), word(8)]
}

/// A tail of fewer than 13 bytes as three little-endian words, zero-padded.
///
/// Both headers add tail bytes one by one (`k[n] << 8*(n%4)`) into a, b and c; since each byte
/// lands on its own bit range, that sum equals the padded little-endian word.
#[inline(always)]
fn le_tail_words(tail: &[u8]) -> [u32; 3] {
    let mut block = [0u8; 12];
    block[..tail.len()].copy_from_slice(tail);
    le_words(&block)
}
