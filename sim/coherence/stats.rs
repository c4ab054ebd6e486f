//! What the directory counts: totals by class, and for every line that ever
//! moved between caches, perf c2c's per-line and per-offset figures.
//!
//! perf c2c sorts samples of loads and of stores apart (tools/perf/util/
//! mem-events.c, `c2c_decode_stats`): only a load is ever a HITM, a LclHit, a
//! RmtHit or a DRAM access; a store is an L1 hit or an L1 miss and nothing
//! more. The directory classifies every access by where its data came from,
//! stores included, so this is where the two vocabularies meet: a load keeps
//! its class, a store or RMW becomes an L1 hit or miss, and a store or RMW
//! that took the line from a cache holding it Modified is counted apart, as
//! an RFO from Modified, a name perf does not use.

use super::{AccessKind, Class, SharerSet};
use crate::machine::Ps;
use crate::memory::LineId;
use crate::symbol::Symbol;
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
    /// Loads served from a line another cache held Modified (perf c2c's
    /// HITM), on the requester's node and on another.
    pub lcl_hitm: u64,
    pub rmt_hitm: u64,
    /// Stores and RMWs that took the line from a cache holding it Modified,
    /// on the requester's node and on another: ownership moved, but perf
    /// c2c, which counts HITM on loads only, would not call it a HITM.
    pub lcl_rfo_modified: u64,
    pub rmt_rfo_modified: u64,
    /// HITMs (loads) by (requesting node, node whose cache held the line
    /// Modified), row-major over `nodes` x `nodes`.
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
            lcl_hitm: 0,
            rmt_hitm: 0,
            lcl_rfo_modified: 0,
            rmt_rfo_modified: 0,
            hitm_nodes: vec![0; nodes as usize * nodes as usize],
            nodes,
        }
    }

    #[inline]
    pub(super) fn count(&mut self, kind: AccessKind, class: Class, ps: Ps, falsely: Option<bool>) {
        let load = kind == AccessKind::Read;
        if load {
            self.loads += 1;
        } else {
            self.stores += 1;
        }
        match (class, load) {
            (Class::LclHitm, true) => self.lcl_hitm += 1,
            (Class::RmtHitm, true) => self.rmt_hitm += 1,
            (Class::LclHitm, false) => self.lcl_rfo_modified += 1,
            (Class::RmtHitm, false) => self.rmt_rfo_modified += 1,
            _ => {}
        }
        self.by_class[class as usize] += 1;
        self.ps_by_class[class as usize] += ps;
        match falsely {
            Some(true) => self.false_sharing += 1,
            Some(false) => self.true_sharing += 1,
            None => {}
        }
    }

    /// An access served in its core's own cache: no latency to add, no sharing.
    #[inline]
    pub(super) fn count_hit(&mut self, kind: AccessKind) {
        if kind == AccessKind::Read {
            self.loads += 1;
        } else {
            self.stores += 1;
        }
        self.by_class[Class::L1Hit as usize] += 1;
    }

    /// An access of `kind` found the line Modified in a cache on `holder_node`:
    /// a HITM if it is a load.
    #[inline]
    pub(super) fn count_hitm(&mut self, kind: AccessKind, requester_node: u32, holder_node: u32) {
        if kind == AccessKind::Read {
            self.hitm_nodes[(requester_node * self.nodes + holder_node) as usize] += 1;
        }
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
        self.lcl_hitm += other.lcl_hitm;
        self.rmt_hitm += other.rmt_hitm;
        self.lcl_rfo_modified += other.lcl_rfo_modified;
        self.rmt_rfo_modified += other.rmt_rfo_modified;
        for (a, b) in self.hitm_nodes.iter_mut().zip(&other.hitm_nodes) {
            *a += b;
        }
    }
}

/// A count of accesses. Records count in u32 while every count fits one:
/// at 4096 CPUs a quarter of a million lines hold records, and their size
/// is what the host's memory and caches feel. Since each sample adds at
/// most one to any count, no count can pass u32::MAX before the samples
/// counted do; before they would, the counts are folded into u64 records
/// and counting starts again from zero (`Records::reserve`).
pub trait Count: Copy + Default + std::fmt::Debug + std::ops::AddAssign + Into<u64> {
    const ONE: Self;
}

impl Count for u32 {
    const ONE: u32 = 1;
}

impl Count for u64 {
    const ONE: u64 = 1;
}

/// Every line's record, numbered in the order the lines first moved
/// between caches. Kept in chunks that never grow once full, so a new
/// record never moves the others: a growing vector of records copied
/// megabytes at each doubling and had the host fault their pages in twice.
#[derive(Default)]
pub(super) struct Records {
    chunks: Vec<Vec<LineStats<u32>>>,
    /// What the records counted before their last fold, by record number;
    /// empty until a run counts u32::MAX samples.
    folded: Vec<LineStats<u64>>,
    /// Samples counted since the last fold.
    counted: u64,
}

/// The size of one line's record while it counts.
pub(super) const RECORD_BYTES: usize = std::mem::size_of::<LineStats<u32>>();

/// Records a chunk holds: 1024 of under 300 bytes.
const CHUNK_BITS: u32 = 10;
const CHUNK: usize = 1 << CHUNK_BITS;

impl Records {
    /// Adds a record for `line`; its number.
    pub(super) fn push(&mut self, line: LineId) -> u32 {
        let n = self.len();
        let record = LineStats::new(line);
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => chunk.push(record),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(record);
                self.chunks.push(chunk);
            }
        }
        n as u32
    }

    pub(super) fn len(&self) -> usize {
        self.chunks
            .last()
            .map_or(0, |c| (self.chunks.len() - 1) * CHUNK + c.len())
    }

    #[inline]
    pub(super) fn get_mut(&mut self, index: u32) -> &mut LineStats<u32> {
        let i = index as usize;
        &mut self.chunks[i >> CHUNK_BITS][i & (CHUNK - 1)]
    }

    #[inline]
    pub(super) fn get(&self, index: u32) -> &LineStats<u32> {
        let i = index as usize;
        &self.chunks[i >> CHUNK_BITS][i & (CHUNK - 1)]
    }

    /// Makes room for `samples` more: folds the counts first if they could
    /// otherwise pass what a u32 holds.
    pub(super) fn reserve(&mut self, samples: u64) {
        if self.counted + samples > u64::from(u32::MAX) {
            self.fold();
        }
        self.counted += samples;
    }

    /// Adds every record's counts to its folded record and zeroes them;
    /// offsets and CPU sets stay where they are.
    fn fold(&mut self) {
        let mut index = 0;
        for chunk in &mut self.chunks {
            for narrow in chunk.iter_mut() {
                if self.folded.len() == index {
                    self.folded.push(LineStats::new(narrow.line));
                }
                narrow.add_counts_to(&mut self.folded[index]);
                narrow.zero_counts();
                index += 1;
            }
        }
        self.counted = 0;
    }

    /// Record `index` with every count it holds, folded or not, in u64.
    pub(super) fn widened(&self, index: u32) -> LineStats<u64> {
        let narrow = self.get(index);
        let mut wide = self
            .folded
            .get(index as usize)
            .cloned()
            .unwrap_or_else(|| LineStats::new(narrow.line));
        narrow.add_counts_to(&mut wide);
        for (w, n) in wide.offsets.as_mut_slice().iter_mut().zip(narrow.offsets()) {
            w.cpus = n.cpus.clone();
        }
        wide
    }

    /// The `n` records with the most HITM loads (perf c2c's order: most
    /// first, then by line), of those with any, each widened.
    pub(super) fn hottest(&self, n: usize) -> Vec<LineStats<u64>> {
        let folded_hitm = |i: usize| self.folded.get(i).map_or(0, LineStats::hitm);
        let mut ranked: Vec<(u64, LineId, u32)> = (0..self.len() as u32)
            .map(|i| {
                let r = self.get(i);
                (r.hitm() + folded_hitm(i as usize), r.line, i)
            })
            .filter(|&(hitm, _, _)| hitm > 0)
            .collect();
        ranked.sort_unstable_by_key(|&(hitm, line, _)| (std::cmp::Reverse(hitm), line));
        ranked
            .into_iter()
            .take(n)
            .map(|(_, _, i)| self.widened(i))
            .collect()
    }

    /// Forgets every count; the records stay, for the lines they name.
    pub(super) fn reset(&mut self) {
        for chunk in &mut self.chunks {
            for s in chunk.iter_mut() {
                *s = LineStats::new(s.line);
            }
        }
        self.folded.clear();
        self.counted = 0;
    }
}

/// One byte offset of a line and one function that accessed it, as a row
/// of perf c2c's Pareto table.
#[derive(Clone, Debug)]
pub struct OffsetStats<C = u64> {
    pub offset: u16,
    pub by: Symbol,
    /// Loads, HITM loads among them.
    pub loads: C,
    pub lcl_hitm: C,
    pub rmt_hitm: C,
    /// Stores and RMWs that found the line in their own cache (Modified or
    /// Exclusive, or Shared and upgraded in place), and those that did not.
    pub store_l1_hit: C,
    pub store_l1_miss: C,
    /// Stores and RMWs among the misses that took the line from a cache
    /// holding it Modified.
    pub lcl_rfo_modified: C,
    pub rmt_rfo_modified: C,
    /// Picoseconds the local and remote HITM loads waited, and the other loads.
    pub lcl_hitm_ps: u64,
    pub rmt_hitm_ps: u64,
    pub other_load_ps: u64,
    /// Distinct CPUs that accessed this offset: a set that stays inline
    /// while few CPUs share the offset, so counting one is no extra miss.
    pub cpus: SharerSet,
}

impl<C: Count> OffsetStats<C> {
    fn new(offset: u16, by: Symbol) -> OffsetStats<C> {
        OffsetStats {
            offset,
            by,
            loads: C::default(),
            lcl_hitm: C::default(),
            rmt_hitm: C::default(),
            store_l1_hit: C::default(),
            store_l1_miss: C::default(),
            lcl_rfo_modified: C::default(),
            rmt_rfo_modified: C::default(),
            lcl_hitm_ps: 0,
            rmt_hitm_ps: 0,
            other_load_ps: 0,
            cpus: SharerSet::default(),
        }
    }

    /// Where the row sorts: by offset, then by function.
    fn key(&self) -> (u16, Symbol) {
        (self.offset, self.by)
    }

    pub fn stores(&self) -> u64 {
        self.store_l1_hit.into() + self.store_l1_miss.into()
    }

    pub fn hitm(&self) -> u64 {
        self.lcl_hitm.into() + self.rmt_hitm.into()
    }

    /// Adds this offset's counts (not its CPUs) to `to`.
    fn add_counts_to(&self, to: &mut OffsetStats<u64>) {
        to.loads += self.loads.into();
        to.lcl_hitm += self.lcl_hitm.into();
        to.rmt_hitm += self.rmt_hitm.into();
        to.store_l1_hit += self.store_l1_hit.into();
        to.store_l1_miss += self.store_l1_miss.into();
        to.lcl_rfo_modified += self.lcl_rfo_modified.into();
        to.rmt_rfo_modified += self.rmt_rfo_modified.into();
        to.lcl_hitm_ps += self.lcl_hitm_ps;
        to.rmt_hitm_ps += self.rmt_hitm_ps;
        to.other_load_ps += self.other_load_ps;
    }
}

/// One line, as in perf c2c's Shared Data Cache Line Table. Its loads,
/// stores and HITMs are its offsets' (perf's classes are of loads only);
/// the line keeps the other load classes, which perf shows by line alone.
#[derive(Clone, Debug)]
pub struct LineStats<C = u64> {
    pub line: LineId,
    pub lcl_hit: C,
    pub rmt_hit: C,
    pub dram_lcl: C,
    pub dram_rmt: C,
    offsets: Offsets<C>,
}

/// How many offsets a line's statistics hold inline: a bucket's `waiters`,
/// `lock` and `chain`. With them inline, counting an access touches one
/// object that a prefetch can load whole, not a second allocation.
const INLINE_OFFSETS: usize = 3;

/// A line's (offset, function) rows, sorted: inline while few, on the heap beyond.
// Boxing the inline variant would bring back the miss it exists to avoid.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum Offsets<C> {
    Inline {
        len: u8,
        items: [OffsetStats<C>; INLINE_OFFSETS],
    },
    Spilled(Vec<OffsetStats<C>>),
}

impl<C: Count> Default for Offsets<C> {
    fn default() -> Self {
        Offsets::Inline {
            len: 0,
            items: std::array::from_fn(|_| OffsetStats::new(0, Symbol::Workload)),
        }
    }
}

impl<C: Count> Offsets<C> {
    fn as_slice(&self) -> &[OffsetStats<C>] {
        match self {
            Offsets::Inline { len, items } => &items[..*len as usize],
            Offsets::Spilled(v) => v,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [OffsetStats<C>] {
        match self {
            Offsets::Inline { len, items } => &mut items[..*len as usize],
            Offsets::Spilled(v) => v,
        }
    }

    fn insert(&mut self, at: usize, o: OffsetStats<C>) {
        match self {
            Offsets::Inline { len, items } if (*len as usize) < INLINE_OFFSETS => {
                items[at..=*len as usize].rotate_right(1);
                items[at] = o;
                *len += 1;
            }
            Offsets::Inline { items, .. } => {
                let mut v = items.to_vec();
                v.insert(at, o);
                *self = Offsets::Spilled(v);
            }
            Offsets::Spilled(v) => v.insert(at, o),
        }
    }

    /// The row of the offset and function, added (with nothing counted) if new.
    // Forced, as `record` is: counting an access stays inline in the count loop.
    #[inline(always)]
    fn at(&mut self, offset: u16, by: Symbol) -> &mut OffsetStats<C> {
        // A line has a handful of rows: a scan beats a binary search.
        let key = (offset, by);
        let known = self.as_slice();
        let at = match known.iter().position(|o| o.key() >= key) {
            Some(i) if known[i].key() == key => i,
            found => self.add(found.unwrap_or(known.len()), offset, by),
        };
        &mut self.as_mut_slice()[at]
    }

    /// A new row, at `at` in order: out of line, as most accesses find
    /// their row counted before.
    #[inline(never)]
    fn add(&mut self, at: usize, offset: u16, by: Symbol) -> usize {
        self.insert(at, OffsetStats::new(offset, by));
        at
    }
}

impl<C: Count> LineStats<C> {
    pub(super) fn new(line: LineId) -> LineStats<C> {
        LineStats {
            line,
            lcl_hit: C::default(),
            rmt_hit: C::default(),
            dram_lcl: C::default(),
            dram_rmt: C::default(),
            offsets: Offsets::default(),
        }
    }

    /// Every (offset, function) accessed, sorted by offset then function.
    pub fn offsets(&self) -> &[OffsetStats<C>] {
        self.offsets.as_slice()
    }

    fn sum(&self, field: impl Fn(&OffsetStats<C>) -> C) -> u64 {
        self.offsets().iter().map(|o| field(o).into()).sum()
    }

    pub fn loads(&self) -> u64 {
        self.sum(|o| o.loads)
    }

    pub fn stores(&self) -> u64 {
        self.offsets().iter().map(OffsetStats::stores).sum()
    }

    pub fn lcl_hitm(&self) -> u64 {
        self.sum(|o| o.lcl_hitm)
    }

    pub fn rmt_hitm(&self) -> u64 {
        self.sum(|o| o.rmt_hitm)
    }

    /// HITM loads, local and remote: what perf c2c sorts lines by.
    pub fn hitm(&self) -> u64 {
        self.offsets().iter().map(OffsetStats::hitm).sum()
    }

    pub fn store_l1_hit(&self) -> u64 {
        self.sum(|o| o.store_l1_hit)
    }

    pub fn store_l1_miss(&self) -> u64 {
        self.sum(|o| o.store_l1_miss)
    }

    pub fn lcl_rfo_modified(&self) -> u64 {
        self.sum(|o| o.lcl_rfo_modified)
    }

    pub fn rmt_rfo_modified(&self) -> u64 {
        self.sum(|o| o.rmt_rfo_modified)
    }

    /// Adds every count (not the CPU sets) to `to`, a record of the same
    /// line: its offsets become a superset of these.
    fn add_counts_to(&self, to: &mut LineStats<u64>) {
        to.lcl_hit += self.lcl_hit.into();
        to.rmt_hit += self.rmt_hit.into();
        to.dram_lcl += self.dram_lcl.into();
        to.dram_rmt += self.dram_rmt.into();
        for o in self.offsets() {
            o.add_counts_to(to.offsets.at(o.offset, o.by));
        }
    }

    /// Zeroes every count; the offsets and their CPU sets stay.
    fn zero_counts(&mut self) {
        let (line, offsets) = (self.line, std::mem::take(&mut self.offsets));
        *self = LineStats::new(line);
        for o in offsets.as_slice() {
            self.offsets.at(o.offset, o.by).cpus = o.cpus.clone();
        }
    }

    /// Counts one access, made at `offset` by `by`; `cpus` is the
    /// machine's CPU count.
    // Forced: inline in the count loop; without the hot path's ten, 8% more instructions.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record(
        &mut self,
        offset: u16,
        by: Symbol,
        cpu: u16,
        kind: AccessKind,
        class: Class,
        ps: Ps,
        cpus: usize,
    ) {
        let load = kind == AccessKind::Read;
        if load {
            match class {
                Class::LclHit => self.lcl_hit += C::ONE,
                Class::RmtHit => self.rmt_hit += C::ONE,
                Class::DramLcl => self.dram_lcl += C::ONE,
                Class::DramRmt => self.dram_rmt += C::ONE,
                Class::LclHitm | Class::RmtHitm | Class::L1Hit => {}
            }
        }
        let o = self.offsets.at(offset, by);
        match (load, class) {
            (true, Class::LclHitm) => {
                o.lcl_hitm += C::ONE;
                o.lcl_hitm_ps += ps;
            }
            (true, Class::RmtHitm) => {
                o.rmt_hitm += C::ONE;
                o.rmt_hitm_ps += ps;
            }
            (true, _) => o.other_load_ps += ps,
            (false, Class::L1Hit) => o.store_l1_hit += C::ONE,
            (false, Class::LclHitm) => {
                o.store_l1_miss += C::ONE;
                o.lcl_rfo_modified += C::ONE;
            }
            (false, Class::RmtHitm) => {
                o.store_l1_miss += C::ONE;
                o.rmt_rfo_modified += C::ONE;
            }
            (false, _) => o.store_l1_miss += C::ONE,
        }
        if load {
            o.loads += C::ONE;
        }
        o.cpus.insert(cpu, cpus);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts that would pass what a u32 holds are folded before they do.
    #[test]
    fn counting_past_u32_folds_first() {
        let mut records = Records::default();
        records.push(0);
        records.reserve(u64::from(u32::MAX) - 1);
        records.get_mut(0).record(
            8,
            Symbol::FutexWake,
            1,
            AccessKind::Read,
            Class::LclHitm,
            5,
            64,
        );
        records.reserve(1);
        assert!(records.folded.is_empty());
        records.reserve(1);
        assert_eq!((records.folded.len(), records.counted), (1, 1));
        assert_eq!(records.get(0).hitm(), 0);
        records.get_mut(0).record(
            8,
            Symbol::FutexWake,
            2,
            AccessKind::Read,
            Class::LclHitm,
            5,
            64,
        );
        let wide = records.widened(0);
        let o = &wide.offsets()[0];
        assert_eq!((o.lcl_hitm, o.lcl_hitm_ps, o.cpus.len()), (2, 10, 2));
    }

    /// The hottest lines come most HITMs first, then by line, only those
    /// with any.
    #[test]
    fn hottest_lines_in_perf_c2c_order() {
        let mut records = Records::default();
        for (line, hitms) in [(5u32, 1u32), (3, 0), (9, 2), (4, 1)] {
            let i = records.push(line);
            for _ in 0..hitms {
                records.get_mut(i).record(
                    0,
                    Symbol::FutexWake,
                    1,
                    AccessKind::Read,
                    Class::RmtHitm,
                    1,
                    64,
                );
            }
        }
        let order: Vec<LineId> = records.hottest(10).iter().map(|s| s.line).collect();
        assert_eq!(order, [9, 4, 5]);
        assert_eq!(records.hottest(1).len(), 1);
    }

    /// Offsets stay sorted and keep their counts when they outgrow the inline slots.
    #[test]
    fn offsets_spill_past_the_inline_slots_in_order() {
        let mut s = LineStats::<u32>::new(0);
        for (i, off) in [8u16, 0, 40, 4, 24, 4].into_iter().enumerate() {
            s.record(
                off,
                Symbol::FutexWake,
                i as u16,
                AccessKind::Read,
                Class::LclHitm,
                100,
                64,
            );
        }
        let offsets: Vec<u16> = s.offsets().iter().map(|o| o.offset).collect();
        assert_eq!(offsets, [0, 4, 8, 24, 40]);
        let four = &s.offsets()[1];
        assert_eq!((four.loads, four.lcl_hitm, four.lcl_hitm_ps), (2, 2, 200));
        assert_eq!((four.cpus.len(), s.loads(), s.lcl_hitm()), (2, 6, 6));
    }

    /// A store that takes a Modified line is an L1 miss and an RFO from
    /// Modified, never a HITM; a load that does is a HITM.
    #[test]
    fn only_loads_are_hitm() {
        let mut s = LineStats::<u32>::new(0);
        s.record(
            0,
            Symbol::FutexWake,
            1,
            AccessKind::Rmw,
            Class::RmtHitm,
            100,
            64,
        );
        s.record(
            0,
            Symbol::FutexWake,
            2,
            AccessKind::Write,
            Class::L1Hit,
            1,
            64,
        );
        s.record(
            0,
            Symbol::FutexWake,
            3,
            AccessKind::Read,
            Class::RmtHitm,
            100,
            64,
        );
        let o = &s.offsets()[0];
        assert_eq!((s.rmt_hitm(), o.rmt_hitm, o.loads), (1, 1, 1));
        assert_eq!(
            (o.store_l1_hit, o.store_l1_miss, o.rmt_rfo_modified),
            (1, 1, 1)
        );
        assert_eq!((s.loads(), s.stores(), o.stores()), (1, 2, 2));
    }
}
