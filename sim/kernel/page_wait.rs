//! The page wait table: the hashed wait queues a task sleeps on when it
//! finds a page locked, the same shape of problem as the futex hash. No
//! page has a wait queue of its own; `page_waitqueue(page)` is a slot of a
//! fixed-size table of `wait_queue_head_t`, chosen by `hash_ptr` of the
//! struct page's address, and every page that hashes there shares the
//! slot's spinlock and its list (a waker walks them all and wakes only its
//! page's waiters). A design is plain data, as the futex table designs are
//! (sim/kernel/table.rs): the slots, the bucket's layout, where the table
//! lies, and the hash.
//!
//! The eras (docs/kernel-facts.md §10):
//!
//! - `v3.8`: one table per zone, `zone->wait_table`, allocated on the
//!   zone's node at boot (mm/page_alloc.c `zone_wait_table_init`) and sized
//!   by `wait_table_hash_nr_entries`: the zone's pages / PAGES_PER_WAITQUEUE
//!   (256), rounded up to a power of two and held between 4 and 4096. Any
//!   zone of 4 GiB or more gets the 4096, so every node of the machines
//!   this models does. `hash_ptr` is `hash_64` with GOLDEN_RATIO_PRIME_64.
//!   unlock_page reads the slot's list (`waitqueue_active`) on every
//!   unlock, waiters or not.
//! - `v4.11`: one table for the machine, `page_wait_table`,
//!   PAGE_WAIT_TABLE_BITS = 8 (256 slots), cacheline-aligned in the
//!   kernel image (mm/filemap.c; 9dcb8b685fc3 "mm: remove per-zone hashtable
//!   of bitlock waitqueues", 4.10); `hash_64` multiplies by GOLDEN_RATIO_64
//!   since 4.7 (ef703f49a6c5); and the PG_waiters bit in the page's flags
//!   says whether anyone waits (62906027091f, 4.11), so an unlock with no
//!   waiter never touches the table.

use crate::address_map::{KERNEL_BSS_PAGE_WAIT, ZONE_PAGE_WAIT, ZONE_STRIDE};
use crate::hash::multiplicative::{hash_64_by, GOLDEN_RATIO_64, GOLDEN_RATIO_PRIME_64};
use crate::memory::{Home, Mem, MemoryMap, RegionId};
use serde::{Deserialize, Serialize};

/// `sizeof(wait_queue_head_t)` on x86-64 without lock debugging: the
/// spinlock at 0, the list head (two pointers) at 8.
const WAIT_QUEUE_HEAD_BYTES: u64 = 24;
const LIST_OFFSET: u64 = 8;

/// A page wait table design.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageWaitDesign {
    pub name: &'static str,
    /// log2 of the slots.
    pub bits: u32,
    /// Bytes from one slot to the next.
    pub bucket_bytes: u64,
    pub align: u64,
    /// One table per zone on the zone's node, or one for the machine.
    pub per_zone: bool,
    /// `hash_64`'s multiplier: the slot is the top `bits` of the address
    /// times it.
    pub multiplier: u64,
    /// PG_waiters: an unlock reads the slot only when someone waits.
    pub waiters_bit: bool,
}

/// The kernel states a page wait table design stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PageWaitEra {
    #[default]
    #[serde(rename = "v3.8")]
    V3_8,
    #[serde(rename = "v4.11")]
    V4_11,
}

/// The design of an era.
pub fn preset(era: PageWaitEra) -> PageWaitDesign {
    match era {
        PageWaitEra::V3_8 => PageWaitDesign {
            name: "v3.8",
            bits: 12,
            bucket_bytes: WAIT_QUEUE_HEAD_BYTES,
            align: 64,
            per_zone: true,
            multiplier: GOLDEN_RATIO_PRIME_64,
            waiters_bit: false,
        },
        PageWaitEra::V4_11 => PageWaitDesign {
            name: "v4.11",
            bits: 8,
            bucket_bytes: WAIT_QUEUE_HEAD_BYTES,
            align: 64,
            per_zone: false,
            multiplier: GOLDEN_RATIO_64,
            waiters_bit: true,
        },
    }
}

/// One slot of a laid-out table: its spinlock and its list head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitSlot {
    pub index: u64,
    pub lock: Mem,
    pub list: Mem,
}

impl PageWaitDesign {
    pub fn slots(&self) -> u64 {
        1 << self.bits
    }

    /// `hash_ptr(page, bits)`: the slot of the struct page at `page`.
    pub fn slot_of(&self, page: u64) -> u64 {
        hash_64_by(self.multiplier, page, self.bits)
    }

    /// Lays out the table the pages homed on `node` wait on: their zone's,
    /// or the machine's on the boot node.
    pub fn lay_out(&self, memory: &mut MemoryMap, node: u32) -> WaitTable {
        let (base, home) = if self.per_zone {
            (ZONE_PAGE_WAIT.base + u64::from(node) * ZONE_STRIDE, node)
        } else {
            (KERNEL_BSS_PAGE_WAIT.base, 0)
        };
        let base = base.next_multiple_of(self.align);
        let region = memory.add(
            format!("page wait table ({})", self.name),
            base,
            self.slots() * self.bucket_bytes,
            Home::Node(home),
        );
        WaitTable {
            design: self.clone(),
            base,
            region,
        }
    }
}

/// A page wait table in memory.
pub struct WaitTable {
    pub design: PageWaitDesign,
    base: u64,
    region: RegionId,
}

impl WaitTable {
    /// `page_waitqueue(page)`: the slot the struct page at `page` sleeps on.
    pub fn slot(&self, memory: &MemoryMap, page: u64) -> WaitSlot {
        let d = &self.design;
        let index = d.slot_of(page);
        let at = |offset: u64| {
            let addr = self.base + index * d.bucket_bytes + offset;
            Mem {
                addr,
                line: memory.line_in(self.region, addr),
            }
        };
        WaitSlot {
            index,
            lock: at(0),
            list: at(LIST_OFFSET),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// x86-64's vmemmap: the struct page of frame `pfn` is at this base
    /// plus 64 x pfn.
    fn struct_page(pfn: u64) -> u64 {
        crate::address_map::VMEMMAP.base + pfn * 64
    }

    /// How many slots `d` spreads a slot's worth of neighbouring struct pages over.
    fn slots_reached(d: &PageWaitDesign) -> usize {
        let slots: std::collections::HashSet<u64> = (0..d.slots())
            .map(|pfn| d.slot_of(struct_page(pfn)))
            .collect();
        assert!(slots.iter().all(|&s| s < d.slots()));
        slots.len()
    }

    #[test]
    fn the_old_multiplier_crowds_neighbouring_struct_pages_into_few_slots() {
        // hash_64's multiplier before 4.7 (GOLDEN_RATIO_PRIME_64) is sparse:
        // 64-byte-strided addresses reach a few of the 4096 slots. The 4.7
        // multiplier on the same table reaches most of them.
        let old = preset(PageWaitEra::V3_8);
        let mended = PageWaitDesign {
            multiplier: GOLDEN_RATIO_64,
            ..old.clone()
        };
        let (crowded, spread) = (slots_reached(&old), slots_reached(&mended));
        assert!(crowded * 4 < spread, "{crowded} vs {spread} slots");
        assert!(spread as u64 > old.slots() / 3, "{spread}");
        assert!(slots_reached(&preset(PageWaitEra::V4_11)) as u64 > 256 / 2);
    }

    #[test]
    fn the_eras_hash_with_different_multipliers() {
        let (old, new) = (preset(PageWaitEra::V3_8), preset(PageWaitEra::V4_11));
        assert_eq!((old.slots(), new.slots()), (4096, 256));
        // With one multiplier the 256-slot hash would be the 4096-slot
        // one's top 8 bits for every page.
        let same = (0..1000u64)
            .map(|pfn| struct_page(0x10_0000 + pfn * 7))
            .filter(|&page| old.slot_of(page) >> 4 == new.slot_of(page))
            .count();
        assert!(same < 50, "{same} of 1000 pages agree");
    }
}
