//! Bit-exactness of the Jenkins hashes against the vectors of
//! `docs/kernel-facts.md` §1.4 (published) and §1.5 (derived futex keys).
//!
//! Every expected value is copied from those tables; none is computed by this crate.

use futexsim::hash::{lookup2, lookup3, HashForm};
use proptest::prelude::*;

const LOREM_IPSUM: &[u8] = b"Lorem ipsum dolor sit amet, consectetur adipiscing elit.  \
Ut ornare aliquam mauris, at volutpat massa.  Phasellus pulvinar purus eu venenatis commodo.";
const FOUR_SCORE: &[u8] = b"Four score and seven years ago";

fn le_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

// ---- lookup3: Bob Jenkins' driver5 and Data.HashFunction (hashlittle == kernel jhash) ----

#[test]
fn lookup3_jhash_published() {
    let cases: &[(&[u8], u32, u32)] = &[
        (b"", 0, 0xdeadbeef),
        (FOUR_SCORE, 0, 0x17770551),
        (FOUR_SCORE, 1, 0xcd628161),
        (b"foobar", 0, 0xaeb72b0c),
        (&LOREM_IPSUM[..12], 0, 0x8e663aee),
        (&LOREM_IPSUM[..15], 0, 0x9b484ed5),
        (&LOREM_IPSUM[..19], 0, 0xad9cba6f),
        (&LOREM_IPSUM[..23], 0, 0x57c46621),
        (&LOREM_IPSUM[..24], 0, 0xf2b662ef),
        (b"foobar", 0x7da236b9, 0x7306b2fc),
    ];
    for &(key, initval, expected) in cases {
        let got = lookup3::jhash(key, initval);
        assert_eq!(
            got,
            expected,
            "lookup3 jhash({:?}, {initval:#x}) = {got:#010x}, want {expected:#010x}",
            String::from_utf8_lossy(key)
        );
    }
}

#[test]
fn lookup3_hashlittle2_published() {
    // (key, pc, pb, expected c, expected b)
    let cases: &[(&[u8], u32, u32, u32, u32)] = &[
        (b"", 0, 0xdeadbeef, 0xbd5b7dde, 0xdeadbeef),
        (b"", 0xdeadbeef, 0xdeadbeef, 0x9c093ccd, 0xbd5b7dde),
        (FOUR_SCORE, 0, 0, 0x17770551, 0xce7226e6),
        (FOUR_SCORE, 0, 1, 0xe3607cae, 0xbd371de4),
        (FOUR_SCORE, 1, 0, 0xcd628161, 0x6cbea4b3),
    ];
    for &(key, pc, pb, c, b) in cases {
        assert_eq!(
            lookup3::hashlittle2(key, pc, pb),
            (c, b),
            "hashlittle2({:?}, pc={pc:#x}, pb={pb:#x})",
            String::from_utf8_lossy(key)
        );
    }
}

#[test]
fn lookup3_jhash2_anchored() {
    // "Lorem ipsum " and "Lorem ipsum dolor sit amet" as little-endian words.
    let words = [
        0x65726f4c, 0x7069206d, 0x206d7573, 0x6f6c6f64, 0x69732072, 0x6d612074,
    ];
    assert_eq!(le_bytes(&words), LOREM_IPSUM[..24]);
    assert_eq!(lookup3::jhash2(&words[..3], 0), 0x8e663aee);
    assert_eq!(lookup3::jhash2(&words, 0), 0xf2b662ef);
    for iv in [0, 1, 0xabc, 0x2152_4111, u32::MAX] {
        assert_eq!(lookup3::jhash2(&[], iv), 0xdeadbeef_u32.wrapping_add(iv));
    }
}

// ---- lookup2: Data.HashFunction and the KSoft test ----

#[test]
fn lookup2_jhash_published() {
    let cases: &[(&[u8], u32, u32)] = &[
        (b"", 0, 0xbd49d10d),
        (b"foobar", 0, 0x9d3ffa02),
        (&LOREM_IPSUM[..15], 0, 0x0c39787e),
        (&LOREM_IPSUM[..19], 0, 0x2a06cf89),
        (&LOREM_IPSUM[..23], 0, 0xa4fd862c),
        (FOUR_SCORE, 0, 0x50f2424b),
        (FOUR_SCORE, 1, 0x89deae7e),
    ];
    for &(key, initval, expected) in cases {
        let got = lookup2::jhash(key, initval);
        assert_eq!(
            got,
            expected,
            "lookup2 jhash({:?}, {initval:#x}) = {got:#010x}, want {expected:#010x}",
            String::from_utf8_lossy(key)
        );
    }
}

#[test]
fn lookup2_jhash_alphabet_prefixes() {
    // "ABCDEFGHIJKLMN"[..n] for n = 0..=14 covers every tail length and one full block.
    let expected: [u32; 15] = [
        0xBD49D10D, 0xA1614B4D, 0xB0A9479A, 0x3E36495D, 0x1C31FD95, 0xFD4870C0, 0xE019DD73,
        0x2BB00418, 0x77FC8C38, 0x92952498, 0xEBF300C1, 0x98AB491F, 0xEA9C4F7A, 0xC9A8AD4D,
        0xbde38428,
    ];
    let alphabet = b"ABCDEFGHIJKLMN";
    for (n, &want) in expected.iter().enumerate() {
        let got = lookup2::jhash(&alphabet[..n], 0);
        assert_eq!(got, want, "lookup2 jhash(ABC..[..{n}]) = {got:#010x}");
    }
}

#[test]
fn lookup2_jhash2_anchored() {
    // "ABCD", "EFGH", "IJKL" as little-endian words.
    let words = [0x44434241, 0x48474645, 0x4c4b4a49];
    assert_eq!(le_bytes(&words), b"ABCDEFGHIJKL");
    assert_eq!(lookup2::jhash2(&words[..1], 0), 0x1c31fd95);
    assert_eq!(lookup2::jhash2(&words[..2], 0), 0x77fc8c38);
    assert_eq!(lookup2::jhash2(&words, 0), 0xea9c4f7a);
    assert_eq!(lookup2::jhash2(&[], 0), 0xbd49d10d);
}

#[test]
fn lookup2_jhash_3words_is_one_mix() {
    // §1.1: the zero-length hash is mix(GR, GR, 0), which is jhash_3words(0, 0, 0, 0).
    assert_eq!(lookup2::jhash_3words(0, 0, 0, 0), 0xbd49d10d);
    assert_eq!(lookup2::jhash_2words(0, 0, 0), 0xbd49d10d);
    assert_eq!(lookup2::jhash_1word(0, 0), 0xbd49d10d);
    // jhash2 mixes twice, so the same three words hash differently.
    let [a, b, c] = [0x44434241, 0x48474645, 0x4c4b4a49];
    assert_ne!(lookup2::jhash_3words(a, b, c, 0), 0xea9c4f7a);
    assert_ne!(
        lookup2::jhash_3words(0, 0, 0, 0),
        lookup2::jhash2(&[0, 0, 0], 0)
    );
}

// ---- §1.5 derived futex keys (regression anchors, not published) ----

const MM: u64 = 0xffff_8881_00ab_c000;

fn lo_hi(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

/// ≤ 5.5 key order: [address, mm], each split lo/hi.
fn old_order(address: u64) -> [u32; 4] {
    let ([a0, a1], [m0, m1]) = (lo_hi(address), lo_hi(MM));
    [a0, a1, m0, m1]
}

/// 5.6+ key order: [mm, address].
fn new_order(address: u64) -> [u32; 4] {
    let ([a0, a1], [m0, m1]) = (lo_hi(address), lo_hi(MM));
    [m0, m1, a0, a1]
}

#[test]
fn futex_key_words_split_lo_hi() {
    assert_eq!(
        old_order(0x7f12_3456_7000),
        [0x34567000, 0x00007f12, 0x00abc000, 0xffff8881]
    );
    assert_eq!(
        new_order(0x7f12_3456_7000),
        [0x00abc000, 0xffff8881, 0x34567000, 0x00007f12]
    );
}

#[test]
fn futex_uaddr_7f1234567abc() {
    let (address, offset) = (0x7f12_3456_7000, 0xabc);
    let h = lookup2::jhash2(&old_order(address), offset);
    assert_eq!(h, 0x96836945);
    assert_eq!(h & 255, 69);
    assert_eq!(lookup3::jhash2(&old_order(address), offset), 0x182ea177);
    let h = lookup3::jhash2(&new_order(address), offset);
    assert_eq!(h, 0x5e886637);
    assert_eq!(h & 8191, 1591);
    let h = lookup3::jhash2(&lo_hi(address), offset);
    assert_eq!(h, 0x55834d30);
    assert_eq!((h & 15, h & 127), (0, 48));
}

#[test]
fn futex_uaddr_7f1234567ac0() {
    let (address, offset) = (0x7f12_3456_7000, 0xac0);
    assert_eq!(lookup2::jhash2(&old_order(address), offset), 0xeafa38ed);
    assert_eq!(lookup3::jhash2(&new_order(address), offset), 0xe6f16344);
    assert_eq!(lookup3::jhash2(&lo_hi(address), offset), 0x7f728ac6);
}

#[test]
fn futex_uaddr_7f1234568abc() {
    let (address, offset) = (0x7f12_3456_8000, 0xabc);
    assert_eq!(lookup2::jhash2(&old_order(address), offset), 0xcdec4476);
    assert_eq!(lookup3::jhash2(&new_order(address), offset), 0xaa57f895);
    assert_eq!(lookup3::jhash2(&lo_hi(address), offset), 0x10525809);
}

#[test]
fn hash_form_dispatches_to_its_module() {
    let key = old_order(0x7f12_3456_7000);
    assert_eq!(HashForm::Lookup2.jhash2(&key, 0xabc), 0x96836945);
    assert_eq!(HashForm::Lookup3.jhash2(&key, 0xabc), 0x182ea177);
    assert_eq!(HashForm::Lookup2.jhash(b"foobar", 0), 0x9d3ffa02);
    assert_eq!(HashForm::Lookup3.jhash(b"foobar", 0), 0xaeb72b0c);
}

// ---- equivalences (§1.1, §1.2) ----

proptest! {
    #[test]
    fn lookup3_nwords_equal_jhash2(a: u32, b: u32, c: u32, iv: u32) {
        prop_assert_eq!(lookup3::jhash_3words(a, b, c, iv), lookup3::jhash2(&[a, b, c], iv));
        prop_assert_eq!(lookup3::jhash_2words(a, b, iv), lookup3::jhash2(&[a, b], iv));
        prop_assert_eq!(lookup3::jhash_1word(a, iv), lookup3::jhash2(&[a], iv));
    }

    #[test]
    fn lookup2_smaller_nwords_pad_with_zero(a: u32, b: u32, iv: u32) {
        prop_assert_eq!(lookup2::jhash_2words(a, b, iv), lookup2::jhash_3words(a, b, 0, iv));
        prop_assert_eq!(lookup2::jhash_1word(a, iv), lookup2::jhash_3words(a, 0, 0, iv));
    }

    #[test]
    fn jhash2_equals_jhash_of_le_bytes(words in prop::collection::vec(any::<u32>(), 0..40),
                                       iv: u32) {
        let bytes = le_bytes(&words);
        for form in HashForm::ALL {
            prop_assert_eq!(form.jhash2(&words, iv), form.jhash(&bytes, iv), "{}", form);
        }
    }
}
