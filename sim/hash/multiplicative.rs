//! The kernel's multiplicative hash (`include/linux/hash.h`): `hash_64`
//! keeps the top `bits` bits of the key times a golden-ratio multiplier;
//! `hash_ptr` is `hash_64` of a pointer. The page wait table hashes struct
//! pages with it, and a program workload its table buckets.

/// `hash_64`'s multiplier before 4.7: sparse, so it spreads neighbouring
/// struct pages badly (sim/kernel/page_wait.rs).
pub const GOLDEN_RATIO_PRIME_64: u64 = 0x9e37_ffff_fffc_0001;
/// `hash_64`'s multiplier from 4.7 on.
pub const GOLDEN_RATIO_64: u64 = 0x61c8_8646_80b5_83eb;

/// `hash_64(key, bits)` with the multiplier of an era: the top `bits` bits
/// of the product; no bits, no choice (0).
pub fn hash_64_by(multiplier: u64, key: u64, bits: u32) -> u64 {
    if bits == 0 {
        return 0;
    }
    key.wrapping_mul(multiplier) >> (64 - bits)
}

/// `hash_64(key, bits)` as kernels from 4.7 on compute it.
pub fn hash_64(key: u64, bits: u32) -> u64 {
    hash_64_by(GOLDEN_RATIO_64, key, bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_64_keeps_the_top_bits_of_the_golden_ratio_product() {
        assert_eq!(hash_64(1, 8), 0x61);
        assert_eq!(hash_64(2, 4), 0xc);
        assert_eq!(hash_64(12345, 0), 0);
        assert_eq!(hash_64_by(GOLDEN_RATIO_PRIME_64, 1, 16), 0x9e37);
    }
}
