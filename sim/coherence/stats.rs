//! What the directory counts: totals by class, and for every line that ever
//! moved between caches, perf c2c's per-line and per-offset figures.

use super::{AccessKind, Class, SharerSet};
use crate::machine::Ps;
use crate::memory::LineId;
use serde::{Deserialize, Serialize};

/// Counts over all accesses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub loads: u64,
    pub stores: u64,
    /// Accesses by class, in `Class::ALL` order.
    pub by_class: [u64; 7],
    /// Picoseconds spent on accesses of each class, queueing included.
    pub ps_by_class: [u64; 7],
    /// Transfers of a line whose last write was to the same offset.
    pub true_sharing: u64,
    /// Transfers of a line whose last write was to another offset.
    pub false_sharing: u64,
    /// HITMs by (requesting node, node whose cache held the line Modified),
    /// row-major over `nodes` x `nodes`.
    pub hitm_nodes: Vec<u64>,
    pub nodes: u32,
}

impl Totals {
    pub fn new(nodes: u32) -> Totals {
        Totals {
            loads: 0,
            stores: 0,
            by_class: [0; 7],
            ps_by_class: [0; 7],
            true_sharing: 0,
            false_sharing: 0,
            hitm_nodes: vec![0; nodes as usize * nodes as usize],
            nodes,
        }
    }

    #[inline]
    pub(super) fn count(&mut self, kind: AccessKind, class: Class, ps: Ps, falsely: Option<bool>) {
        match kind {
            AccessKind::Read => self.loads += 1,
            AccessKind::Write | AccessKind::Rmw => self.stores += 1,
        }
        self.by_class[class as usize] += 1;
        self.ps_by_class[class as usize] += ps;
        match falsely {
            Some(true) => self.false_sharing += 1,
            Some(false) => self.true_sharing += 1,
            None => {}
        }
    }

    #[inline]
    pub(super) fn count_hitm(&mut self, requester_node: u32, holder_node: u32) {
        self.hitm_nodes[(requester_node * self.nodes + holder_node) as usize] += 1;
    }

    /// HITMs of CPUs on `requester_node` served from a cache on `holder_node`.
    pub fn hitm_between(&self, requester_node: u32, holder_node: u32) -> u64 {
        self.hitm_nodes[(requester_node * self.nodes + holder_node) as usize]
    }

    pub fn class(&self, class: Class) -> u64 {
        self.by_class[class as usize]
    }

    /// Line transfers between caches: HITMs and clean cache-to-cache copies.
    pub fn transfers(&self) -> u64 {
        Class::ALL
            .iter()
            .filter(|c| c.is_transfer())
            .map(|&c| self.class(c))
            .sum()
    }

    pub fn add(&mut self, other: &Totals) {
        self.loads += other.loads;
        self.stores += other.stores;
        for i in 0..7 {
            self.by_class[i] += other.by_class[i];
            self.ps_by_class[i] += other.ps_by_class[i];
        }
        self.true_sharing += other.true_sharing;
        self.false_sharing += other.false_sharing;
        for (a, b) in self.hitm_nodes.iter_mut().zip(&other.hitm_nodes) {
            *a += b;
        }
    }
}

/// One byte offset of a line, as in perf c2c's Pareto table.
#[derive(Clone, Debug, Default)]
pub struct OffsetStats {
    pub offset: u16,
    pub loads: u64,
    pub stores: u64,
    pub lcl_hitm: u64,
    pub rmt_hitm: u64,
    /// Stores that found the line in their own cache, and those that did not.
    pub store_l1_hit: u64,
    pub store_l1_miss: u64,
    /// Picoseconds the HITM loads and stores waited.
    pub hitm_ps: u64,
    /// Distinct CPUs that accessed this offset: a set that stays inline
    /// while few CPUs share the offset, so counting one is no extra miss.
    pub cpus: SharerSet,
}

/// One line, as in perf c2c's Shared Data Cache Line Table.
#[derive(Clone, Debug)]
pub struct LineStats {
    pub line: LineId,
    pub loads: u64,
    pub stores: u64,
    pub lcl_hitm: u64,
    pub rmt_hitm: u64,
    pub lcl_hit: u64,
    pub rmt_hit: u64,
    pub dram_lcl: u64,
    pub dram_rmt: u64,
    offsets: Offsets,
}

/// How many offsets a line's statistics hold inline: a bucket's `waiters`,
/// `lock` and `chain`. With them inline, counting an access touches one
/// object that a prefetch can load whole, not a second allocation.
const INLINE_OFFSETS: usize = 3;

/// A line's offsets, sorted: inline while few, on the heap beyond.
// Boxing the inline variant would bring back the miss it exists to avoid.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum Offsets {
    Inline {
        len: u8,
        items: [OffsetStats; INLINE_OFFSETS],
    },
    Spilled(Vec<OffsetStats>),
}

impl Default for Offsets {
    fn default() -> Self {
        Offsets::Inline {
            len: 0,
            items: Default::default(),
        }
    }
}

impl Offsets {
    fn as_slice(&self) -> &[OffsetStats] {
        match self {
            Offsets::Inline { len, items } => &items[..*len as usize],
            Offsets::Spilled(v) => v,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [OffsetStats] {
        match self {
            Offsets::Inline { len, items } => &mut items[..*len as usize],
            Offsets::Spilled(v) => v,
        }
    }

    fn insert(&mut self, at: usize, o: OffsetStats) {
        match self {
            Offsets::Inline { len, items } if (*len as usize) < INLINE_OFFSETS => {
                items[at..=*len as usize].rotate_right(1);
                items[at] = o;
                *len += 1;
            }
            Offsets::Inline { items, .. } => {
                let mut v = std::mem::take(items).to_vec();
                v.insert(at, o);
                *self = Offsets::Spilled(v);
            }
            Offsets::Spilled(v) => v.insert(at, o),
        }
    }
}

impl LineStats {
    pub(super) fn new(line: LineId) -> LineStats {
        LineStats {
            line,
            loads: 0,
            stores: 0,
            lcl_hitm: 0,
            rmt_hitm: 0,
            lcl_hit: 0,
            rmt_hit: 0,
            dram_lcl: 0,
            dram_rmt: 0,
            offsets: Offsets::default(),
        }
    }

    /// Every offset accessed, sorted.
    pub fn offsets(&self) -> &[OffsetStats] {
        self.offsets.as_slice()
    }

    pub fn hitm(&self) -> u64 {
        self.lcl_hitm + self.rmt_hitm
    }

    /// Counts one access; `cpus` is the machine's CPU count.
    pub(super) fn record(
        &mut self,
        offset: u16,
        cpu: u16,
        kind: AccessKind,
        class: Class,
        ps: Ps,
        cpus: usize,
    ) {
        let store = kind != AccessKind::Read;
        if store {
            self.stores += 1;
        } else {
            self.loads += 1;
        }
        match class {
            Class::LclHitm => self.lcl_hitm += 1,
            Class::RmtHitm => self.rmt_hitm += 1,
            Class::LclHit => self.lcl_hit += 1,
            Class::RmtHit => self.rmt_hit += 1,
            Class::DramLcl => self.dram_lcl += 1,
            Class::DramRmt => self.dram_rmt += 1,
            Class::L1Hit => {}
        }
        // A line has a handful of offsets: a scan beats a binary search.
        let known = self.offsets.as_slice();
        let at = match known.iter().position(|o| o.offset >= offset) {
            Some(i) if known[i].offset == offset => i,
            found => {
                let i = found.unwrap_or(known.len());
                self.offsets.insert(
                    i,
                    OffsetStats {
                        offset,
                        ..OffsetStats::default()
                    },
                );
                i
            }
        };
        let o = &mut self.offsets.as_mut_slice()[at];
        if store {
            o.stores += 1;
            if class == Class::L1Hit {
                o.store_l1_hit += 1;
            } else {
                o.store_l1_miss += 1;
            }
        } else {
            o.loads += 1;
        }
        match class {
            Class::LclHitm => {
                o.lcl_hitm += 1;
                o.hitm_ps += ps;
            }
            Class::RmtHitm => {
                o.rmt_hitm += 1;
                o.hitm_ps += ps;
            }
            _ => {}
        }
        o.cpus.insert(cpu, cpus);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets stay sorted and keep their counts when they outgrow the inline slots.
    #[test]
    fn offsets_spill_past_the_inline_slots_in_order() {
        let mut s = LineStats::new(0);
        for (i, off) in [8u16, 0, 40, 4, 24, 4].into_iter().enumerate() {
            s.record(off, i as u16, AccessKind::Write, Class::LclHitm, 100, 64);
        }
        let offsets: Vec<u16> = s.offsets().iter().map(|o| o.offset).collect();
        assert_eq!(offsets, [0, 4, 8, 24, 40]);
        let four = &s.offsets()[1];
        assert_eq!((four.stores, four.lcl_hitm, four.hitm_ps), (2, 2, 200));
        assert_eq!((four.cpus.len(), s.stores, s.lcl_hitm), (2, 6, 6));
    }
}
