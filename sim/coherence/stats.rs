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

/// Every line's record, numbered in the order the lines first moved
/// between caches. Kept in chunks that never grow once full, so a new
/// record never moves the others: a growing vector of 400-byte records
/// copied megabytes at each doubling and had the host fault their pages in
/// twice.
#[derive(Default)]
pub(super) struct Records {
    chunks: Vec<Vec<LineStats>>,
}

/// Records a chunk holds: 1024 of about 400 bytes.
const CHUNK_BITS: u32 = 10;
const CHUNK: usize = 1 << CHUNK_BITS;

impl Records {
    /// Adds a record; its number.
    pub(super) fn push(&mut self, record: LineStats) -> u32 {
        let n = self.len();
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
    fn get_mut(&mut self, index: u32) -> &mut LineStats {
        let i = index as usize;
        &mut self.chunks[i >> CHUNK_BITS][i & (CHUNK - 1)]
    }

    #[inline]
    fn get(&self, index: u32) -> &LineStats {
        let i = index as usize;
        &self.chunks[i >> CHUNK_BITS][i & (CHUNK - 1)]
    }

    /// Every record, in number order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &LineStats> {
        self.chunks.iter().flatten()
    }

    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut LineStats> {
        self.chunks.iter_mut().flatten()
    }
}

/// Accesses waiting to be counted into their lines' records.
///
/// Counting an access touches its line's record, 400-odd bytes rarely in
/// the host's cache when the access happens: in the event loop those
/// misses were a sixth of its time. Kept as 16-byte samples and counted a
/// batch at a time, grouped into 256 runs of neighbouring records, each
/// record is loaded about once a batch, the runs in address order, each
/// run's records small enough together to stay in the host's cache while
/// its samples are counted. A record holds sums and sets, so the order
/// accesses are counted in does not change it.
pub(super) struct Pending {
    samples: Vec<Sample>,
    scratch: Vec<Sample>,
}

/// One access: its latency in ps, its kind and class in the top byte.
#[derive(Clone, Copy, Default)]
struct Sample {
    ps_kind_class: u64,
    /// Index of the line's record.
    stats: u32,
    cpu: u16,
    offset: u16,
}

/// Samples a batch holds: 1 MiB. The more samples a batch, the more
/// accesses each record loaded counts: at 4096 CPUs this is 4% faster than
/// half of it, at 64 CPUs the same; twice it is slower at 64 CPUs.
const BATCH: usize = 1 << 16;
const PS_BITS: u32 = 56;

impl Pending {
    pub(super) fn new() -> Pending {
        Pending {
            samples: Vec::with_capacity(BATCH),
            scratch: Vec::with_capacity(BATCH),
        }
    }

    /// Keeps an access for the record `stats` of `records`, counting the
    /// batch when it is full.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add(
        &mut self,
        records: &mut Records,
        stats: u32,
        offset: u16,
        cpu: u32,
        kind: AccessKind,
        class: Class,
        ps: Ps,
        cpus: usize,
    ) {
        if ps >> PS_BITS != 0 {
            // Twenty hours for one access: no room in a sample; counted now.
            records
                .get_mut(stats)
                .record(offset, cpu as u16, kind, class, ps, cpus);
            return;
        }
        self.samples.push(Sample {
            ps_kind_class: ps | (kind as u64) << (PS_BITS + 3) | (class as u64) << PS_BITS,
            stats,
            cpu: cpu as u16,
            offset,
        });
        if self.samples.len() == BATCH {
            self.count(records, cpus);
        }
    }

    /// Drops what was not counted yet.
    pub(super) fn clear(&mut self) {
        self.samples.clear();
    }

    /// Counts every pending access into `records`, a run of neighbouring
    /// records at a time.
    pub(super) fn count(&mut self, records: &mut Records, cpus: usize) {
        self.group_by_records(records.len());
        const LOOKAHEAD: usize = 16;
        for i in 0..self.samples.len() {
            if let Some(ahead) = self.samples.get(i + LOOKAHEAD) {
                crate::prefetch::prefetch_whole(records.get(ahead.stats));
            }
            let s = self.samples[i];
            let ps = s.ps_kind_class & ((1 << PS_BITS) - 1);
            let kind = AccessKind::ALL[(s.ps_kind_class >> (PS_BITS + 3)) as usize & 3];
            let class = Class::ALL[(s.ps_kind_class >> PS_BITS) as usize & 7];
            records
                .get_mut(s.stats)
                .record(s.offset, s.cpu, kind, class, ps, cpus);
        }
        self.samples.clear();
    }

    /// One pass of a counting sort on the top byte of the record index:
    /// 256 runs of neighbouring records, in order; a full sort would need
    /// a pass a byte and give no more locality than the runs already have.
    fn group_by_records(&mut self, records: usize) {
        let shift = (usize::BITS - records.leading_zeros()).saturating_sub(8);
        let digit = |s: &Sample| (s.stats >> shift) as usize & 0xff;
        let mut starts = [0usize; 256];
        for s in &self.samples {
            starts[digit(s)] += 1;
        }
        let mut at = 0;
        for start in starts.iter_mut() {
            let n = *start;
            *start = at;
            at += n;
        }
        self.scratch.resize(self.samples.len(), Sample::default());
        for s in &self.samples {
            let d = digit(s);
            self.scratch[starts[d]] = *s;
            starts[d] += 1;
        }
        std::mem::swap(&mut self.samples, &mut self.scratch);
    }
}

/// One byte offset of a line, as in perf c2c's Pareto table.
#[derive(Clone, Debug, Default)]
pub struct OffsetStats {
    pub offset: u16,
    /// Loads, HITM loads among them.
    pub loads: u64,
    pub lcl_hitm: u64,
    pub rmt_hitm: u64,
    /// Stores and RMWs that found the line in their own cache (Modified or
    /// Exclusive, or Shared and upgraded in place), and those that did not.
    pub store_l1_hit: u64,
    pub store_l1_miss: u64,
    /// Stores and RMWs among the misses that took the line from a cache
    /// holding it Modified.
    pub lcl_rfo_modified: u64,
    pub rmt_rfo_modified: u64,
    /// Picoseconds the local and remote HITM loads waited, and the other loads.
    pub lcl_hitm_ps: u64,
    pub rmt_hitm_ps: u64,
    pub other_load_ps: u64,
    /// Distinct CPUs that accessed this offset: a set that stays inline
    /// while few CPUs share the offset, so counting one is no extra miss.
    pub cpus: SharerSet,
}

impl OffsetStats {
    pub fn stores(&self) -> u64 {
        self.store_l1_hit + self.store_l1_miss
    }
}

/// One line, as in perf c2c's Shared Data Cache Line Table. The classes
/// are of loads only, as perf's are; stores are counted by offset.
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

    /// HITM loads, local and remote: what perf c2c sorts lines by.
    pub fn hitm(&self) -> u64 {
        self.lcl_hitm + self.rmt_hitm
    }

    fn sum(&self, field: impl Fn(&OffsetStats) -> u64) -> u64 {
        self.offsets().iter().map(field).sum()
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
        let load = kind == AccessKind::Read;
        if load {
            self.loads += 1;
            match class {
                Class::LclHitm => self.lcl_hitm += 1,
                Class::RmtHitm => self.rmt_hitm += 1,
                Class::LclHit => self.lcl_hit += 1,
                Class::RmtHit => self.rmt_hit += 1,
                Class::DramLcl => self.dram_lcl += 1,
                Class::DramRmt => self.dram_rmt += 1,
                Class::L1Hit => {}
            }
        } else {
            self.stores += 1;
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
        match (load, class) {
            (true, Class::LclHitm) => {
                o.lcl_hitm += 1;
                o.lcl_hitm_ps += ps;
            }
            (true, Class::RmtHitm) => {
                o.rmt_hitm += 1;
                o.rmt_hitm_ps += ps;
            }
            (true, _) => o.other_load_ps += ps,
            (false, Class::L1Hit) => o.store_l1_hit += 1,
            (false, Class::LclHitm) => {
                o.store_l1_miss += 1;
                o.lcl_rfo_modified += 1;
            }
            (false, Class::RmtHitm) => {
                o.store_l1_miss += 1;
                o.rmt_rfo_modified += 1;
            }
            (false, _) => o.store_l1_miss += 1,
        }
        if load {
            o.loads += 1;
        }
        o.cpus.insert(cpu, cpus);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest<'a>(records: impl Iterator<Item = &'a LineStats>) -> Vec<String> {
        records
            .map(|r| {
                let offsets: Vec<_> = r
                    .offsets()
                    .iter()
                    .map(|o| {
                        let mut cpus = Vec::new();
                        o.cpus.for_each(|c| cpus.push(c));
                        cpus.sort_unstable();
                        (
                            o.offset,
                            o.loads,
                            o.lcl_hitm,
                            o.rmt_hitm,
                            o.store_l1_hit,
                            o.store_l1_miss,
                            o.lcl_rfo_modified,
                            o.rmt_rfo_modified,
                            o.lcl_hitm_ps,
                            o.rmt_hitm_ps,
                            o.other_load_ps,
                            cpus,
                        )
                    })
                    .collect();
                format!(
                    "{} {} {} {} {} {} {} {} {} {:?}",
                    r.line,
                    r.loads,
                    r.stores,
                    r.lcl_hitm,
                    r.rmt_hitm,
                    r.lcl_hit,
                    r.rmt_hit,
                    r.dram_lcl,
                    r.dram_rmt,
                    offsets
                )
            })
            .collect()
    }

    /// Accesses counted in sorted batches (several batches, one access
    /// too slow for a sample among them, records in three chunks) leave
    /// every record as counting each at once does.
    #[test]
    fn batches_count_as_accesses_one_by_one() {
        let lines = 2 * CHUNK as u32 + 300;
        let mut direct: Vec<LineStats> = (0..lines).map(LineStats::new).collect();
        let mut batched = Records::default();
        for (i, r) in direct.iter().enumerate() {
            assert_eq!(batched.push(r.clone()), i as u32);
        }
        assert_eq!(batched.len(), lines as usize);
        let mut pending = Pending::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..(2 * BATCH + 123) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let stats = (x % lines as u64) as u32;
            let offset = (x >> 20) as u16 % 64;
            let cpu = (x >> 30) as u32 % 96;
            let kind = AccessKind::ALL[(x >> 40) as usize % 3];
            let class = Class::ALL[(x >> 44) as usize % 7];
            let ps = if i == 777 {
                1 << PS_BITS
            } else {
                (x >> 50) % 100_000
            };
            direct[stats as usize].record(offset, cpu as u16, kind, class, ps, 96);
            pending.add(&mut batched, stats, offset, cpu, kind, class, ps, 96);
        }
        pending.count(&mut batched, 96);
        assert_eq!(digest(direct.iter()), digest(batched.iter()));
    }

    /// Offsets stay sorted and keep their counts when they outgrow the inline slots.
    #[test]
    fn offsets_spill_past_the_inline_slots_in_order() {
        let mut s = LineStats::new(0);
        for (i, off) in [8u16, 0, 40, 4, 24, 4].into_iter().enumerate() {
            s.record(off, i as u16, AccessKind::Read, Class::LclHitm, 100, 64);
        }
        let offsets: Vec<u16> = s.offsets().iter().map(|o| o.offset).collect();
        assert_eq!(offsets, [0, 4, 8, 24, 40]);
        let four = &s.offsets()[1];
        assert_eq!((four.loads, four.lcl_hitm, four.lcl_hitm_ps), (2, 2, 200));
        assert_eq!((four.cpus.len(), s.loads, s.lcl_hitm), (2, 6, 6));
    }

    /// A store that takes a Modified line is an L1 miss and an RFO from
    /// Modified, never a HITM; a load that does is a HITM.
    #[test]
    fn only_loads_are_hitm() {
        let mut s = LineStats::new(0);
        s.record(0, 1, AccessKind::Rmw, Class::RmtHitm, 100, 64);
        s.record(0, 2, AccessKind::Write, Class::L1Hit, 1, 64);
        s.record(0, 3, AccessKind::Read, Class::RmtHitm, 100, 64);
        let o = &s.offsets()[0];
        assert_eq!((s.rmt_hitm, o.rmt_hitm, o.loads), (1, 1, 1));
        assert_eq!(
            (o.store_l1_hit, o.store_l1_miss, o.rmt_rfo_modified),
            (1, 1, 1)
        );
        assert_eq!((s.loads, s.stores, o.stores()), (1, 2, 2));
    }
}
