//! The futex words a workload placed, in the form the layout analysis
//! hashes: arrays of consecutive u32 words, each in one process, with what
//! the kernel makes their keys from. A workload that has them hands the
//! same words to its tasks and to the analysis, so the two cannot differ.

use crate::kernel::key::{get_futex_key, FutexKey, KeyError, KeyKind, KeySource, WordSize};

/// Consecutive u32 futex words of one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WordArray {
    /// The first word's user address.
    pub base: u64,
    pub words: u32,
    pub process: u32,
}

/// A workload's futex words and the processes they are in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FutexWords {
    /// mm_struct address of each process.
    pub mms: Vec<u64>,
    /// Threads of each process.
    pub threads: Vec<u64>,
    pub arrays: Vec<WordArray>,
    /// How every word is mapped.
    pub kind: KeyKind,
}

/// One futex key and the process whose futex it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedKey {
    pub key: FutexKey,
    pub process: u32,
}

impl FutexWords {
    /// How many words there are.
    pub fn count(&self) -> u64 {
        self.arrays.iter().map(|a| u64::from(a.words)).sum()
    }

    /// Hands each word's key to `f`, array by array: millions of them need
    /// not sit in memory to be counted. Keys split addresses by pages of
    /// `page_size` bytes.
    pub fn for_each_key(
        &self,
        bits: WordSize,
        page_size: u64,
        mut f: impl FnMut(PlacedKey),
    ) -> Result<(), KeyError> {
        for a in &self.arrays {
            for i in 0..u64::from(a.words) {
                f(PlacedKey {
                    key: self.key(a, i, bits, page_size)?,
                    process: a.process,
                });
            }
        }
        Ok(())
    }

    /// What `for_each_key` would refuse, without walking every key: a
    /// word's alignment is its array's base's, and the values a 32-bit
    /// kernel's key must fit are the array's own (its mm or inode) or grow
    /// with the address, so each array's first and last words answer for
    /// all of it. Where one of them fails, the keys are walked to the
    /// first that does, the error `for_each_key` gives.
    pub fn check_keys(&self, bits: WordSize, page_size: u64) -> Result<(), KeyError> {
        let ends_valid = self.arrays.iter().filter(|a| a.words > 0).all(|a| {
            let last = u64::from(a.words) - 1;
            self.key(a, 0, bits, page_size).is_ok() && self.key(a, last, bits, page_size).is_ok()
        });
        if ends_valid {
            Ok(())
        } else {
            self.for_each_key(bits, page_size, |_| {})
        }
    }

    /// The key of word `i` of array `a`.
    fn key(
        &self,
        a: &WordArray,
        i: u64,
        bits: WordSize,
        page_size: u64,
    ) -> Result<FutexKey, KeyError> {
        let uaddr = a.base + 4 * i;
        let source = KeySource::of(self.kind, self.mms[a.process as usize], uaddr, page_size);
        get_futex_key(uaddr, source, bits, page_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bases anywhere in 33 bits, and bases just below the 32-bit limit,
    /// whose arrays cross it; mostly 4-byte aligned.
    fn base() -> impl Strategy<Value = u64> {
        let limit = u64::from(u32::MAX);
        let at = prop_oneof![0u64..(1 << 33), (limit - 8000)..(limit + 8)];
        (at, 0u64..8).prop_map(|(at, skew)| if skew < 6 { at & !3 } else { at | (skew - 5) })
    }

    proptest! {
        /// The check from each array's ends refuses exactly what walking
        /// every key refuses, with the same error: misaligned bases, and
        /// addresses or an mm that a 32-bit kernel cannot hold, wherever in
        /// an array they begin.
        #[test]
        fn checking_the_ends_finds_what_walking_every_key_finds(
            arrays in proptest::collection::vec((base(), 0u32..2000, 0u32..2), 0..5),
            wide_mm in any::<bool>(),
            shared in any::<bool>(),
            bits32 in any::<bool>(),
        ) {
            let words = FutexWords {
                mms: vec![0xffff_8881_00ab_c000 * u64::from(wide_mm), 0x1000],
                threads: vec![1, 1],
                arrays: arrays
                    .into_iter()
                    .map(|(base, words, process)| WordArray { base, words, process })
                    .collect(),
                kind: if shared { KeyKind::SharedFile } else { KeyKind::Private },
            };
            let bits = if bits32 { WordSize::Bits32 } else { WordSize::Bits64 };
            prop_assert_eq!(
                words.check_keys(bits, 4096),
                words.for_each_key(bits, 4096, |_| {})
            );
        }
    }
}
