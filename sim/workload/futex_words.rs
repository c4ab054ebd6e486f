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
            let mm = self.mms[a.process as usize];
            for i in 0..u64::from(a.words) {
                let uaddr = a.base + 4 * i;
                let source = KeySource::of(self.kind, mm, uaddr, page_size);
                let key = get_futex_key(uaddr, source, bits, page_size)?;
                f(PlacedKey {
                    key,
                    process: a.process,
                });
            }
        }
        Ok(())
    }
}
