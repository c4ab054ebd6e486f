//! `get_futex_key`: what names a futex, and exactly which u32 words of that
//! name reach jhash2 in each kernel era (docs/kernel-facts.md §2).

use crate::address_map::SHARED_FILE_INODE;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Low bits of `offset` that tell key types apart (offset is a multiple of 4).
pub const FUT_OFF_INODE: u32 = 1;
pub const FUT_OFF_MMSHARED: u32 = 2;

/// How the futex word is mapped, which decides what identifies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyKind {
    /// FUTEX_PRIVATE_FLAG: (mm, address, offset), no page lookup.
    Private,
    /// Shared futex on an anonymous page: (mm, address, offset | FUT_OFF_MMSHARED).
    SharedAnon,
    /// Shared futex on a file or shmem page: (inode or i_seq, pgoff, offset | FUT_OFF_INODE).
    SharedFile,
    /// FUTEX2_NUMA | FUTEX2_PRIVATE (6.16+): a private key whose word is
    /// {value, node}; the node picks the global table's node, and the
    /// private hash is never used.
    PrivateNuma(FutexNode),
}

/// The node half of a FUTEX2_NUMA word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FutexNode {
    /// FUTEX_NO_NODE (-1): the kernel writes the current CPU's node into
    /// the word at the first op, and every later op reads it from there.
    NoNode,
    Node(u32),
}

/// The kernel's word size; it decides how many u32 words a key has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum WordSize {
    #[default]
    #[serde(rename = "64")]
    Bits64,
    #[serde(rename = "32")]
    Bits32,
}

/// Which words of the key are hashed, and in which order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyOrder {
    /// <= 5.5: from `&key.both.word`: [word, ptr].
    WordPtr,
    /// 5.6+ (commit 8d67743653dc): from the key's start: [ptr (as u64), word].
    PtrWord,
    /// 6.16+ private hash: the page-aligned address alone; the mm is implied.
    Address,
    /// 8019ad13ef7f to 8d67743653dc (5.6-rc): the pointer moved to the key's
    /// start but jhash2 still read from `&key.both.word`, as many words as
    /// the word and pointer fill: [word, offset, the next 4 bytes]. The
    /// pointer is never read, so keys that differ only in their mm collide.
    /// The next 4 bytes are the union's padding on 64-bit, zero as the
    /// key's initialiser leaves it; on 32-bit they lie past the key, and
    /// are taken as zero too (a waiter's futex_q has a NULL `pi_state` there).
    WordOffset,
}

/// The "both" view of `union futex_key`: the fields that are hashed and matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FutexKey {
    /// mm_struct pointer (private, shared-anon) or inode pointer / i_seq (shared-file).
    pub ptr: u64,
    /// Page-aligned user address (private, shared-anon) or page index (shared-file).
    pub word: u64,
    /// Offset of the futex in its page, plus the FUT_OFF_* type bits.
    pub offset: u32,
}

/// What the caller knows about the mapping behind `uaddr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySource {
    Private { mm: u64 },
    SharedAnon { mm: u64 },
    SharedFile { inode: u64, pgoff: u64 },
}

impl KeySource {
    /// What identifies a word at `uaddr` mapped as `kind` in the process
    /// whose mm is `mm`, with pages of `page_size` bytes.
    pub fn of(kind: KeyKind, mm: u64, uaddr: u64, page_size: u64) -> KeySource {
        match kind {
            KeyKind::Private | KeyKind::PrivateNuma(_) => KeySource::Private { mm },
            KeyKind::SharedAnon => KeySource::SharedAnon { mm },
            KeyKind::SharedFile => KeySource::SharedFile {
                inode: SHARED_FILE_INODE.base,
                pgoff: uaddr / page_size,
            },
        }
    }

    pub fn kind(&self) -> KeyKind {
        match self {
            KeySource::Private { .. } => KeyKind::Private,
            KeySource::SharedAnon { .. } => KeyKind::SharedAnon,
            KeySource::SharedFile { .. } => KeyKind::SharedFile,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeyError {
    #[error("futex address {0:#x} is not 4-byte aligned (the kernel returns EINVAL)")]
    Misaligned(u64),
    #[error("{what} {value:#x} does not fit a 32-bit kernel")]
    TooWide { what: &'static str, value: u64 },
}

/// The words jhash2 reads and the initval it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashInput {
    words: [u32; 4],
    len: u8,
    pub initval: u32,
}

impl HashInput {
    pub fn words(&self) -> &[u32] {
        &self.words[..self.len as usize]
    }
}

/// Builds the key as get_futex_key does: offset within the page of
/// `page_size` bytes (a power of two, as every platform's is), the
/// page-aligned address, and the type bits.
pub fn get_futex_key(
    uaddr: u64,
    source: KeySource,
    bits: WordSize,
    page_size: u64,
) -> Result<FutexKey, KeyError> {
    if !uaddr.is_multiple_of(4) {
        return Err(KeyError::Misaligned(uaddr));
    }
    if bits == WordSize::Bits32 {
        let (what, value) = match source {
            KeySource::Private { mm } | KeySource::SharedAnon { mm } => ("mm", mm),
            KeySource::SharedFile { inode, .. } => ("inode", inode),
        };
        for (what, value) in [("uaddr", uaddr), (what, value)] {
            if value > u64::from(u32::MAX) {
                return Err(KeyError::TooWide { what, value });
            }
        }
    }
    debug_assert!(page_size.is_power_of_two());
    // offset_in_page: a mask, as the kernel's PAGE_MASK, not a division.
    let offset = (uaddr & (page_size - 1)) as u32;
    let address = uaddr - u64::from(offset);
    Ok(match source {
        KeySource::Private { mm } => FutexKey {
            ptr: mm,
            word: address,
            offset,
        },
        KeySource::SharedAnon { mm } => FutexKey {
            ptr: mm,
            word: address,
            offset: offset | FUT_OFF_MMSHARED,
        },
        KeySource::SharedFile { inode, pgoff } => FutexKey {
            ptr: inode,
            word: pgoff,
            offset: offset | FUT_OFF_INODE,
        },
    })
}

impl FutexKey {
    /// A private key carries no FUT_OFF bits (`futex_key_is_private`).
    pub fn is_private(&self) -> bool {
        self.offset & (FUT_OFF_INODE | FUT_OFF_MMSHARED) == 0
    }

    /// The exact words and initval that reach jhash2 (docs/kernel-facts.md §2.4).
    /// Pointers are split low word first, as a little-endian kernel lays them out.
    pub fn hash_input(&self, order: KeyOrder, bits: WordSize) -> HashInput {
        let mut words = [0u32; 4];
        let lo = |v: u64| v as u32;
        let hi = |v: u64| (v >> 32) as u32;
        let len = match (order, bits) {
            (KeyOrder::WordPtr, WordSize::Bits64) => {
                words = [lo(self.word), hi(self.word), lo(self.ptr), hi(self.ptr)];
                4
            }
            (KeyOrder::WordPtr, WordSize::Bits32) => {
                words[..2].copy_from_slice(&[lo(self.word), lo(self.ptr)]);
                2
            }
            (KeyOrder::PtrWord, WordSize::Bits64) => {
                words = [lo(self.ptr), hi(self.ptr), lo(self.word), hi(self.word)];
                4
            }
            // `ptr` is a u64 in every layout since 5.6; FUTEX_KEY_INIT zeroes its high half.
            (KeyOrder::PtrWord, WordSize::Bits32) => {
                words[..3].copy_from_slice(&[lo(self.ptr), hi(self.ptr), lo(self.word)]);
                3
            }
            (KeyOrder::Address, WordSize::Bits64) => {
                words[..2].copy_from_slice(&[lo(self.word), hi(self.word)]);
                2
            }
            (KeyOrder::Address, WordSize::Bits32) => {
                words[0] = lo(self.word);
                1
            }
            (KeyOrder::WordOffset, WordSize::Bits64) => {
                words = [lo(self.word), hi(self.word), self.offset, 0];
                4
            }
            (KeyOrder::WordOffset, WordSize::Bits32) => {
                words[..3].copy_from_slice(&[lo(self.word), self.offset, 0]);
                3
            }
        };
        HashInput {
            words,
            len,
            initval: self.offset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::PAGE_SIZE;

    const MM: u64 = 0xffff_8881_00ab_c000;

    #[test]
    fn private_key_splits_page_and_offset() {
        let k = get_futex_key(
            0x7f12_3456_7abc,
            KeySource::Private { mm: MM },
            WordSize::Bits64,
            PAGE_SIZE,
        )
        .unwrap();
        assert_eq!(
            k,
            FutexKey {
                ptr: MM,
                word: 0x7f12_3456_7000,
                offset: 0xabc
            }
        );
        assert!(k.is_private());
    }

    #[test]
    fn shared_keys_carry_type_bits() {
        let anon = get_futex_key(
            0x1000_0008,
            KeySource::SharedAnon { mm: MM },
            WordSize::Bits64,
            PAGE_SIZE,
        )
        .unwrap();
        assert_eq!(anon.offset, 8 | FUT_OFF_MMSHARED);
        let file = get_futex_key(
            0x1000_0008,
            KeySource::SharedFile { inode: 7, pgoff: 3 },
            WordSize::Bits64,
            PAGE_SIZE,
        )
        .unwrap();
        assert_eq!(
            file,
            FutexKey {
                ptr: 7,
                word: 3,
                offset: 8 | FUT_OFF_INODE
            }
        );
        assert!(!anon.is_private() && !file.is_private());
    }

    #[test]
    fn misaligned_and_too_wide_addresses_are_rejected() {
        let src = KeySource::Private { mm: 0x1000 };
        assert_eq!(
            get_futex_key(0x1002, src, WordSize::Bits64, PAGE_SIZE),
            Err(KeyError::Misaligned(0x1002))
        );
        assert!(matches!(
            get_futex_key(0x1_0000_0000, src, WordSize::Bits32, PAGE_SIZE),
            Err(KeyError::TooWide { what: "uaddr", .. })
        ));
    }

    /// A 64 KiB page (ppc64le) keeps 16 more bits in the offset, which is
    /// jhash2's initval, and 16 fewer in the address word.
    #[test]
    fn the_page_size_splits_address_and_offset() {
        let src = KeySource::Private { mm: MM };
        let k4 = get_futex_key(0x7f12_3456_7abc, src, WordSize::Bits64, 4096).unwrap();
        let k64 = get_futex_key(0x7f12_3456_7abc, src, WordSize::Bits64, 65536).unwrap();
        assert_eq!((k4.word, k4.offset), (0x7f12_3456_7000, 0xabc));
        assert_eq!((k64.word, k64.offset), (0x7f12_3456_0000, 0x7abc));
        let file = |page| KeySource::of(KeyKind::SharedFile, MM, 0x7f12_3456_7abc, page);
        assert!(matches!(
            file(4096),
            KeySource::SharedFile {
                pgoff: 0x7_f123_4567,
                ..
            }
        ));
        assert!(matches!(
            file(65536),
            KeySource::SharedFile {
                pgoff: 0x7f12_3456,
                ..
            }
        ));
    }

    /// 5.6-rc's hash never reads the pointer: two processes' words at one
    /// address hash alike, which every other global order tells apart.
    #[test]
    fn the_5_6_rc_order_leaves_the_mm_out() {
        let child = |mm: u64| FutexKey {
            ptr: mm,
            word: 0x7f12_3456_7000,
            offset: 0x40 | FUT_OFF_MMSHARED,
        };
        let (a, b) = (child(MM), child(MM + 0x1000));
        let input = |k: FutexKey, order| k.hash_input(order, WordSize::Bits64);
        assert_eq!(
            input(a, KeyOrder::WordOffset),
            input(b, KeyOrder::WordOffset)
        );
        for order in [KeyOrder::WordPtr, KeyOrder::PtrWord] {
            assert_ne!(input(a, order), input(b, order));
        }
    }

    #[test]
    fn word_order_per_era() {
        let k = FutexKey {
            ptr: MM,
            word: 0x7f12_3456_7000,
            offset: 0xabc,
        };
        let old = k.hash_input(KeyOrder::WordPtr, WordSize::Bits64);
        assert_eq!(
            old.words(),
            &[0x3456_7000, 0x7f12, 0x00ab_c000, 0xffff_8881]
        );
        let new = k.hash_input(KeyOrder::PtrWord, WordSize::Bits64);
        assert_eq!(
            new.words(),
            &[0x00ab_c000, 0xffff_8881, 0x3456_7000, 0x7f12]
        );
        let private = k.hash_input(KeyOrder::Address, WordSize::Bits64);
        assert_eq!(private.words(), &[0x3456_7000, 0x7f12]);
        assert_eq!(private.initval, 0xabc);
        let broken = k.hash_input(KeyOrder::WordOffset, WordSize::Bits64);
        assert_eq!(broken.words(), &[0x3456_7000, 0x7f12, 0xabc, 0]);
        assert_eq!(broken.initval, 0xabc);
        let k32 = FutexKey {
            ptr: 0xc000_1000,
            word: 0x0804_a000,
            offset: 4,
        };
        assert_eq!(
            k32.hash_input(KeyOrder::WordPtr, WordSize::Bits32).words(),
            &[0x0804_a000, 0xc000_1000]
        );
        assert_eq!(
            k32.hash_input(KeyOrder::PtrWord, WordSize::Bits32).words(),
            &[0xc000_1000, 0, 0x0804_a000]
        );
        assert_eq!(
            k32.hash_input(KeyOrder::Address, WordSize::Bits32).words(),
            &[0x0804_a000]
        );
        assert_eq!(
            k32.hash_input(KeyOrder::WordOffset, WordSize::Bits32)
                .words(),
            &[0x0804_a000, 4, 0]
        );
    }
}
