//! A directory over coherence lines: who owns each line, who shares it,
//! where its memory lives, and what each access costs. Every access is
//! classified in perf c2c's vocabulary and every transfer is attributed to
//! the byte offset it touched, so a report can tell true sharing (the same
//! field written and then read elsewhere) from false sharing (another field
//! of the same line).

mod sharers;
mod stats;

pub use sharers::SharerSet;
pub use stats::{LineStats, OffsetStats, Totals};

use crate::huge_pages;
use crate::machine::{Machine, Ps};
use crate::memory::{LineId, MemoryMap};
use crate::prefetch::{prefetch, prefetch_whole};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    Write,
    /// A locked read-modify-write (atomic inc, xadd, cmpxchg).
    Rmw,
}

/// Where the data came from, as perf c2c names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Class {
    L1Hit,
    /// Clean copy from another cache on the requester's node.
    LclHit,
    /// Clean copy from a cache on another node.
    RmtHit,
    /// Modified in another cache on the requester's node.
    LclHitm,
    /// Modified in a cache on another node.
    RmtHitm,
    DramLcl,
    DramRmt,
}

impl Class {
    pub const ALL: [Class; 7] = [
        Class::L1Hit,
        Class::LclHit,
        Class::RmtHit,
        Class::LclHitm,
        Class::RmtHitm,
        Class::DramLcl,
        Class::DramRmt,
    ];

    /// A line moved from another CPU's cache.
    pub fn is_transfer(self) -> bool {
        matches!(
            self,
            Class::LclHit | Class::RmtHit | Class::LclHitm | Class::RmtHitm
        )
    }
}

/// The result of one access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// When the access completes (queueing behind earlier requests included).
    pub done: Ps,
    pub class: Class,
}

/// The most memory the directory holds for one line: its entry, its
/// statistics index and, once the line has moved between caches, its
/// statistics (three offsets inline).
pub const BYTES_PER_LINE: u64 = (std::mem::size_of::<Line>()
    + std::mem::size_of::<u32>()
    + std::mem::size_of::<LineStats>()) as u64;

const NO_CPU: u16 = u16::MAX;
const NO_OFFSET: u16 = u16::MAX;

#[derive(Clone, Debug)]
struct Line {
    /// Requests on one line are served one after another.
    busy_until: Ps,
    sharers: SharerSet,
    /// The CPU holding the line exclusively (E or M), if any.
    owner: u16,
    /// The last CPU to receive a copy: the source of clean transfers.
    last: u16,
    dirty: bool,
    home: u16,
    /// Offset of the field last written, to tell true from false sharing.
    writer_off: u16,
    /// Opaque to the directory: the engine's list of CPUs spinning on this line.
    pub watch: u32,
    /// Writes served on the line so far: a read served when it was n saw
    /// the value of the n-th write, whenever it completes.
    writes: u32,
}

pub struct Directory {
    lines: Vec<Line>,
    /// Per line, 1 + index into `stats`; 0 until the line first moves between
    /// caches. Apart from `lines` so a prefetch finds a line's statistics
    /// without waiting for the line's state.
    stats_of: Vec<u32>,
    stats: Vec<LineStats>,
    pub totals: Totals,
    cpus: usize,
    nodes: u32,
    line_mask: u64,
}

impl Directory {
    pub fn new(memory: &MemoryMap, machine: &Machine) -> Directory {
        let mut lines: Vec<Line> = huge_pages::vec_with_capacity(memory.lines() as usize);
        lines.extend(memory.line_homes().map(|home| Line {
            busy_until: 0,
            sharers: SharerSet::default(),
            owner: NO_CPU,
            last: NO_CPU,
            dirty: false,
            home: home as u16,
            writer_off: NO_OFFSET,
            watch: 0,
            writes: 0,
        }));
        Directory {
            stats_of: huge_pages::vec_filled(0, lines.len()),
            lines,
            stats: Vec::new(),
            totals: Totals::new(machine.nodes()),
            cpus: machine.cpus() as usize,
            nodes: machine.nodes(),
            line_mask: memory.line_size() - 1,
        }
    }

    /// `cpu` accesses the byte at `addr`, which lies in `line`, at time `now`.
    #[inline]
    pub fn access(
        &mut self,
        m: &Machine,
        cpu: u32,
        now: Ps,
        line: LineId,
        addr: u64,
        kind: AccessKind,
    ) -> Outcome {
        let off = (addr & self.line_mask) as u16;
        // Line states name caches: a core's, shared by its SMT siblings.
        let c = m.core_of(cpu) as u16;
        let l = &mut self.lines[line as usize];
        let stats = &mut self.stats_of[line as usize];
        let rmw = if kind == AccessKind::Rmw { m.rmw_ps } else { 0 };
        let hit = match kind {
            AccessKind::Read => l.owner == c || l.sharers.contains(c),
            AccessKind::Write | AccessKind::Rmw => l.owner == c,
        };
        if hit {
            if kind != AccessKind::Read {
                l.dirty = true;
                l.writer_off = off;
                l.writes = l.writes.wrapping_add(1);
            }
            let outcome = Outcome {
                done: now + m.l1_ps + rmw,
                class: Class::L1Hit,
            };
            if *stats != 0 {
                self.stats[*stats as usize - 1].record(
                    off,
                    cpu as u16,
                    kind,
                    Class::L1Hit,
                    0,
                    self.cpus,
                );
            }
            self.totals.count(kind, Class::L1Hit, 0, None);
            return outcome;
        }
        // Where the data comes from, and what it costs to get it.
        let (class, mut latency) = if l.owner != NO_CPU {
            let remote = m.is_remote(l.owner.into(), cpu);
            let class = match (l.dirty, remote) {
                (true, false) => Class::LclHitm,
                (true, true) => Class::RmtHitm,
                (false, false) => Class::LclHit,
                (false, true) => Class::RmtHit,
            };
            if l.dirty {
                self.totals
                    .count_hitm(kind, m.node_of(cpu), m.node_of(l.owner.into()));
            }
            (class, m.transfer_ps(l.owner.into(), cpu))
        } else if !l.sharers.is_empty() && l.last != c {
            let class = if m.is_remote(l.last.into(), cpu) {
                Class::RmtHit
            } else {
                Class::LclHit
            };
            (class, m.transfer_ps(l.last.into(), cpu))
        } else if l.sharers.contains(c) {
            // An upgrade: the data is here, only the other copies must go.
            (Class::L1Hit, m.l1_ps)
        } else {
            let class = if m.is_remote_memory(cpu, l.home.into()) {
                Class::DramRmt
            } else {
                Class::DramLcl
            };
            (class, m.dram_ps(cpu, l.home.into()))
        };
        if kind != AccessKind::Read {
            // Invalidations go out in parallel; the farthest acknowledgement bounds the write.
            l.sharers.for_each(|s| {
                if s != c {
                    latency = latency.max(m.transfer_ps(s.into(), cpu));
                }
            });
        }
        let start = now.max(l.busy_until);
        let done = start + latency + rmw;
        l.busy_until = done;
        let sharing = (class.is_transfer() || class == Class::L1Hit) && l.writer_off != NO_OFFSET;
        let falsely = sharing.then_some(l.writer_off != off);
        match kind {
            AccessKind::Read => {
                if l.owner != NO_CPU {
                    let owner = l.owner;
                    l.sharers.insert(owner, self.cpus);
                    l.owner = NO_CPU;
                    l.sharers.insert(c, self.cpus);
                } else if l.sharers.is_empty() {
                    l.owner = c;
                } else {
                    l.sharers.insert(c, self.cpus);
                }
                l.dirty = l.dirty && l.owner != NO_CPU;
            }
            AccessKind::Write | AccessKind::Rmw => {
                l.sharers.clear();
                l.owner = c;
                l.dirty = true;
                l.writer_off = off;
                l.writes = l.writes.wrapping_add(1);
            }
        }
        l.last = c;
        if *stats == 0 && (class.is_transfer() || sharing) {
            self.stats.push(LineStats::new(line));
            *stats = self.stats.len() as u32;
        }
        if *stats != 0 {
            self.stats[*stats as usize - 1].record(
                off,
                cpu as u16,
                kind,
                class,
                done - now,
                self.cpus,
            );
        }
        self.totals.count(kind, class, done - now, falsely);
        Outcome { done, class }
    }

    /// Starts loading a line's state and statistics into the host's cache:
    /// an op knows its lines when it begins, events before it touches them.
    #[inline]
    pub fn prefetch(&self, line: LineId) {
        prefetch(&self.lines[line as usize]);
        let stats = self.stats_of[line as usize];
        if stats != 0 {
            prefetch_whole(&self.stats[stats as usize - 1]);
        }
    }

    /// How many writes the line has served. Requests on a line are served
    /// in the order they are made, so a read made now is served after
    /// exactly these writes: what it returns is their result.
    #[inline]
    pub fn writes(&self, line: LineId) -> u32 {
        self.lines[line as usize].writes
    }

    /// The engine's spin-list handle for a line.
    #[inline]
    pub fn watch(&mut self, line: LineId) -> &mut u32 {
        &mut self.lines[line as usize].watch
    }

    /// Lines that moved between caches at least once, with their counts.
    pub fn line_stats(&self) -> &[LineStats] {
        &self.stats
    }

    /// Forgets everything counted so far (end of warm-up); line states stay.
    pub fn reset_stats(&mut self) {
        self.totals = Totals::new(self.nodes);
        for s in &mut self.stats {
            *s = LineStats::new(s.line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets::preset;
    use crate::memory::Home;

    fn setup() -> (Machine, MemoryMap, Directory) {
        let m = Machine::new(preset("icx-2s").unwrap()).unwrap();
        let mut mem = MemoryMap::new(64);
        mem.add("x", 0x1000, 4096, Home::Node(0));
        let d = Directory::new(&mem, &m);
        (m, mem, d)
    }

    #[test]
    fn classes_follow_the_line_state() {
        let (m, _, mut d) = setup();
        // CPU 0 and 1 on socket 0, CPU 32 on socket 1 (one thread per core first).
        let a = d.access(&m, 0, 0, 0, 0x1000, AccessKind::Write);
        assert_eq!(a.class, Class::DramLcl);
        assert_eq!(
            d.access(&m, 0, a.done, 0, 0x1000, AccessKind::Read).class,
            Class::L1Hit
        );
        let b = d.access(&m, 1, a.done, 0, 0x1008, AccessKind::Read);
        assert_eq!(b.class, Class::LclHitm);
        assert_eq!(b.done - a.done, m.node_ps);
        let c = d.access(&m, 32, b.done, 0, 0x1008, AccessKind::Rmw);
        assert_eq!(c.class, Class::RmtHit);
        assert_eq!(c.done - b.done, m.remote_latency_ps(0, 1) + m.rmw_ps);
        let e = d.access(&m, 0, c.done, 0, 0x1000, AccessKind::Read);
        assert_eq!(e.class, Class::RmtHitm);
        assert_eq!(
            d.access(&m, 33, 0, 1, 0x1040, AccessKind::Read).class,
            Class::DramRmt
        );
        // CPU 1 (node 0) took the line Modified from CPU 0 (node 0); CPU 0
        // took it back from CPU 32 (node 1).
        assert_eq!(d.totals.hitm_between(0, 0), 1);
        assert_eq!(d.totals.hitm_between(0, 1), 1);
        assert_eq!(d.totals.hitm_between(1, 0), 0);
        assert_eq!(d.totals.hitm_nodes.iter().sum::<u64>(), 2);
    }

    #[test]
    fn smt_siblings_share_the_cores_cache() {
        let (m, _, mut d) = setup();
        let sibling = (1..m.cpus()).find(|&c| m.core_of(c) == 0).unwrap();
        d.access(&m, 0, 0, 0, 0x1000, AccessKind::Write);
        let read = d.access(&m, sibling, 1_000_000, 0, 0x1000, AccessKind::Read);
        let write = d.access(&m, sibling, 2_000_000, 0, 0x1000, AccessKind::Rmw);
        assert_eq!((read.class, write.class), (Class::L1Hit, Class::L1Hit));
        assert_eq!(d.totals.transfers(), 0);
        // Another core still takes the line Modified from the core.
        let other = d.access(&m, 1, 3_000_000, 0, 0x1000, AccessKind::Read);
        assert_eq!(other.class, Class::LclHitm);
    }

    #[test]
    fn requests_on_one_line_queue() {
        let (m, _, mut d) = setup();
        d.access(&m, 0, 0, 0, 0x1000, AccessKind::Write);
        let first = d.access(&m, 1, 1_000_000, 0, 0x1000, AccessKind::Write);
        let second = d.access(&m, 2, 1_000_000, 0, 0x1000, AccessKind::Write);
        assert_eq!(first.done, 1_000_000 + m.node_ps);
        assert_eq!(second.done, first.done + m.node_ps);
    }

    #[test]
    fn true_and_false_sharing_are_told_apart() {
        let (m, _, mut d) = setup();
        d.access(&m, 0, 0, 0, 0x1000, AccessKind::Write);
        d.access(&m, 1, 1_000_000, 0, 0x1000, AccessKind::Write); // same field
        d.access(&m, 2, 2_000_000, 0, 0x1004, AccessKind::Write); // neighbour field
        assert_eq!((d.totals.true_sharing, d.totals.false_sharing), (1, 1));
        let s = &d.line_stats()[0];
        assert_eq!(s.lcl_rfo_modified(), 2);
        assert_eq!(s.offsets().len(), 2);
    }
}
