//! A fast hasher for the simulator's own lookup tables (user word values,
//! wait chains by bucket), which are consulted at every simulated futex op.
//! The standard SipHash guards against chosen keys an attacker sends; the
//! simulator's keys are its own, so one multiply per word is enough. Nothing
//! depends on a map's iteration order, so the choice cannot change a result.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The multiplier of rustc's FxHasher: odd, with bits spread over the word.
const K: u64 = 0xf135_7aea_2e62_a9c5;

#[derive(Clone, Copy, Debug, Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(K);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n.into());
    }

    #[inline]
    fn write_u16(&mut self, n: u16) {
        self.write_u64(n.into());
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.write_u64(n.into());
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    /// A multiply carries entropy only upwards; the table indexes by the low
    /// bits, so the well-mixed high bits are rotated down.
    #[inline]
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// A HashMap with [`WordHasher`].
pub type WordMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    /// Futex keys differ only in page-aligned addresses and 4-byte offsets;
    /// their hashes must still spread over the low bits a table indexes by.
    #[test]
    fn aligned_keys_spread_over_low_bits() {
        let build = BuildHasherDefault::<WordHasher>::default();
        let mut seen = std::collections::HashSet::new();
        for page in 0..64u64 {
            for offset in (0..4096u32).step_by(256) {
                let key = (
                    0xffff_8881_0000_0000u64,
                    0x5555_0000_0000 + page * 4096,
                    offset,
                );
                seen.insert(build.hash_one(key) & 0x3ff);
            }
        }
        // 1024 keys into 1024 slots: a uniform hash fills about 63% of them.
        assert!(
            seen.len() > 550,
            "{} of 1024 low-bit slots used",
            seen.len()
        );
        let mut m: WordMap<u64, u32> = WordMap::default();
        m.insert(7, 1);
        assert_eq!(m.get(&7), Some(&1));
        let mut h = WordHasher::default();
        b"abc".hash(&mut h);
        assert_ne!(h.finish(), WordHasher::default().finish());
    }
}
