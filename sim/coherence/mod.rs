//! A directory over coherence lines: who owns each line, who shares it,
//! where its memory lives, and what each access costs. Every access is
//! classified in perf c2c's vocabulary and every transfer is attributed to
//! the byte offset it touched, so a report can tell true sharing (the same
//! field written and then read elsewhere) from false sharing (another field
//! of the same line).
//!
//! A request that would hold a busy line's server (a snoop, an ownership
//! transfer) waits at the line, in a small queue the directory keeps for
//! lines with waiters, until the server frees and the line's arbiter
//! grants it: the oldest first, except that the LLC domain holding the
//! line keeps it for up to the profile's `local_batch` grants in a row
//! before the oldest request from elsewhere gets it. Until a waiter's
//! snoop reaches the holder (the profile's `snoop_delay` after the server
//! frees) the holder keeps the line, so its own accesses meanwhile hit:
//! its burst.

mod board_unit;
mod counter;
pub mod probe;
mod sharers;
mod stats;
mod tlb;

use board_unit::BoardUnits;
use counter::Counter;
pub use sharers::SharerSet;
pub use stats::{LineStats, OffsetStats, Totals};
pub use tlb::MappedSpan;
use tlb::{Tlbs, Translated};

use crate::huge_pages;
use crate::machine::{Machine, Ps};
use crate::memory::{LineId, MemoryMap};
use crate::prefetch::prefetch_whole;
use crate::symbol::Symbol;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    Write,
    /// A locked read-modify-write (atomic inc, xadd, cmpxchg).
    Rmw,
}

impl AccessKind {
    /// Every kind, in declaration order: `ALL[k as usize] == k`.
    pub const ALL: [AccessKind; 3] = [AccessKind::Read, AccessKind::Write, AccessKind::Rmw];
}

/// Where the data came from, as perf c2c names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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

/// What became of a request: served now, or waiting at its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    Served(Outcome),
    /// The request waits for its grant. The first waiter on a line names
    /// the line's queue and when its server frees: the caller asks for the
    /// line's turn then (`Directory::turn`).
    Waits(Option<LineTurn>),
}

/// When a line's server frees, and the queue of its waiters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineTurn {
    pub at: Ps,
    pub queue: u32,
}

/// What a line's turn gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// The server is still busy (a request that needed no grant took it):
    /// the turn comes again then.
    Busy(Ps),
    /// The waiter's request is granted: it is made again, as granted, now.
    /// When `more` wait, the next turn comes when the server frees after it.
    Granted {
        waiter: u32,
        line: LineId,
        more: bool,
    },
    /// No request waits (a turn asked for a queue already emptied).
    Idle,
}

/// A request waiting at its line: who asks, from which core and LLC
/// domain, and whether it is a read.
#[derive(Clone, Copy, Debug)]
struct Waiter {
    waiter: u32,
    domain: u16,
    core: u16,
    read: bool,
}

impl Waiter {
    fn new(m: &Machine, cpu: u32, kind: AccessKind, waiter: u32) -> Waiter {
        Waiter {
            waiter,
            domain: m.llc_of(cpu) as u16,
            core: m.core_of(cpu) as u16,
            read: kind == AccessKind::Read,
        }
    }
}

/// The waiters of one line, oldest first, how many grants in a row the
/// line's LLC domain has had, and when the next waiter's snoop reaches the
/// line's holder (0 while none is on its way).
#[derive(Clone, Debug, Default)]
struct LineQueue {
    line: LineId,
    waiters: Vec<Waiter>,
    run: u32,
    snoop_at: Ps,
}

/// A grant that waited for its snoop to reach the holder: its request,
/// made again at `at`, left the line's server `travelled` earlier, when
/// the server freed.
#[derive(Clone, Copy, Debug)]
struct SnoopedGrant {
    line: LineId,
    at: Ps,
    travelled: Ps,
}

/// What a miss did to the other lines of its coherence unit between boards.
#[derive(Clone, Copy, Debug, Default)]
struct UnitMove {
    /// The unit came from another board, which held a line of it
    /// exclusively (or held copies a write took): the request pays the
    /// transfer between boards.
    crossed: bool,
    /// Another board still holds a copy of a line of the unit: the line
    /// read is not the requester's alone (no Exclusive state), so a later
    /// write asks again and takes the unit.
    elsewhere: bool,
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
pub const BYTES_PER_LINE: u64 =
    (std::mem::size_of::<Line>() + std::mem::size_of::<u32>() + stats::RECORD_BYTES) as u64;

const NO_CPU: u16 = u16::MAX;
const NO_OFFSET: u16 = u16::MAX;
const NO_DOMAIN: u16 = u16::MAX;

/// Which line, if any, the adjacent-line prefetcher pairs a line with: the
/// other half of its 128-byte block, when that half lies in the same region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Buddy {
    None,
    Next,
    Previous,
}

/// One directory line's state: one host cache line, aligned to it, so
/// an access loads one line of the host's memory, not two.
#[derive(Clone, Debug)]
#[repr(align(64))]
struct Line {
    /// When the line's server takes its next request: requests are granted
    /// in the order they are made, each holding the server for its
    /// occupancy, not for its whole latency.
    free_at: Ps,
    /// When the data of the latest grant arrived: no later grant completes
    /// before it, so requests complete in the order they were granted.
    ready: Ps,
    sharers: SharerSet,
    /// The CPU holding the line exclusively (E or M), if any.
    owner: u16,
    /// The last CPU to receive a copy: the forwarder of clean transfers (F).
    last: u16,
    /// The first sharer since the last write, and the sharer farthest from
    /// it: with `last`, they stand for the whole set, so that finding an
    /// LLC copy and bounding a write's invalidations take three lookups
    /// whatever the number of sharers.
    first: u16,
    far: u16,
    dirty: bool,
    buddy: Buddy,
    home: u16,
    /// Offset of the field last written, to tell true from false sharing.
    writer_off: u16,
    /// The LLC domain that last touched the line, and that domain's fill
    /// count then: once the domain has filled more lines than it holds
    /// since, the line has left its caches.
    llc: u16,
    llc_stamp: u32,
    /// Opaque to the directory: the engine's list of CPUs spinning on this line.
    pub watch: u32,
    /// 1 + the index of the line's queue of waiting requests; 0 for none.
    queue: u32,
    /// Writes served on the line so far: a read served when it was n saw
    /// the value of the n-th write, whenever it completes.
    writes: u32,
}

const _: () = assert!(std::mem::size_of::<Line>() == 64);

impl Line {
    /// A line no cache holds yet, homed on node `home`, with no buddy.
    fn unused(home: u16) -> Line {
        Line {
            free_at: 0,
            ready: 0,
            sharers: SharerSet::default(),
            owner: NO_CPU,
            last: NO_CPU,
            first: NO_CPU,
            far: NO_CPU,
            dirty: false,
            buddy: Buddy::None,
            home,
            writer_off: NO_OFFSET,
            llc: NO_DOMAIN,
            llc_stamp: 0,
            watch: 0,
            queue: 0,
            writes: 0,
        }
    }

    /// Every cached copy is gone (the data is in memory again).
    fn evict(&mut self) {
        self.owner = NO_CPU;
        self.sharers.clear();
        self.dirty = false;
        self.llc = NO_DOMAIN;
    }

    /// Whether the LLC domain holds a clean copy: one of the three sharers
    /// that stand for the set is in it.
    fn shared_in(&self, m: &Machine, domain: u32) -> bool {
        let in_domain = |s: u16| s != NO_CPU && m.llc_of(s.into()) == domain;
        in_domain(self.first) || in_domain(self.last) || in_domain(self.far)
    }

    /// Whether every copy an ownership transfer takes or invalidates is in
    /// the LLC domain: the holder, or the sharers that stand for the set.
    /// Such a transfer holds the line's server for the domain's own
    /// occupancy. A line no core holds comes from memory, across the node.
    fn held_only_in(&self, m: &Machine, domain: u32) -> bool {
        let in_domain = |s: u16| s == NO_CPU || m.llc_of(s.into()) == domain;
        if self.owner != NO_CPU {
            in_domain(self.owner)
        } else {
            !self.sharers.is_empty()
                && in_domain(self.first)
                && in_domain(self.last)
                && in_domain(self.far)
        }
    }

    /// Whether a request that misses holds the line's server for a snoop
    /// or an ownership transfer: every write and RMW, and a read the holder
    /// of an Exclusive or Modified copy serves. A read from memory, or of a
    /// Shared copy (the LLC, the CHA's snoop filter or the probe filter
    /// forwards it, taking it from no one), only takes the read occupancy:
    /// such reads pipeline.
    fn holds_server(&self, kind: AccessKind) -> bool {
        kind != AccessKind::Read || self.owner != NO_CPU
    }

    /// Whether a waiting read would now hit: its core holds the line.
    fn holds_for(&self, w: &Waiter) -> bool {
        w.read && (self.owner == w.core || self.sharers.contains(w.core))
    }

    /// The copies left the LLC domain that last held them, if it has filled
    /// more lines than it holds since.
    fn age(&mut self, h: &crate::machine::Hierarchy, fills: &[u32]) {
        if h.llc_lines != u32::MAX
            && self.llc != NO_DOMAIN
            && fills[self.llc as usize].wrapping_sub(self.llc_stamp) > h.llc_lines
        {
            self.evict();
        }
    }

    /// Drops the copies held off `board`, as the unit leaves the other
    /// boards, and names again the three sharers that stand for the rest.
    fn keep_sharers_on(&mut self, m: &Machine, board: u32) {
        let on_board = |core: u16| m.board_of(core.into()) == board;
        self.sharers.retain(on_board);
        let (mut first, mut far) = (NO_CPU, NO_CPU);
        self.sharers.for_each(|s| {
            if first == NO_CPU {
                (first, far) = (s, s);
            } else if m.level(first.into(), s.into()) > m.level(first.into(), far.into()) {
                far = s;
            }
        });
        (self.first, self.far) = (first, far);
        if self.last != NO_CPU && !on_board(self.last) {
            self.last = first;
        }
    }

    /// Where a request its core's caches cannot serve gets its data, and
    /// when it is in: the class and the completion. The line's server is
    /// taken for the request's occupancy; the line's state is the caller's
    /// to change. `crossed`: the request takes the line's coherence unit
    /// from another board (`Directory::move_unit`). `travelled`: how long
    /// before `now` the request left the line's server (a grant that waited
    /// for its snoop to reach the holder), 0 for one made now.
    #[inline(always)]
    fn serve(
        &mut self,
        m: &Machine,
        cpu: u32,
        now: Ps,
        kind: AccessKind,
        crossed: bool,
        travelled: Ps,
    ) -> (Class, Ps) {
        let h = &m.hierarchy;
        let c = m.core_of(cpu) as u16;
        let domain = m.llc_of(cpu);
        let rmw = if kind == AccessKind::Rmw { m.rmw_ps } else { 0 };
        let home = u32::from(self.home);
        // Where the data comes from, what it costs, and whether the line
        // changes hands Modified (an ownership transfer holds its server).
        let (class, mut latency, mut migrates) = if self.owner != NO_CPU {
            let remote = m.is_remote(self.owner.into(), cpu);
            let class = match (self.dirty, remote) {
                (true, false) => Class::LclHitm,
                (true, true) => Class::RmtHitm,
                (false, false) => Class::LclHit,
                (false, true) => Class::RmtHit,
            };
            // The holder is snooped, clean or not: a transaction at the home.
            let latency = m.routed_transfer_ps(self.owner.into(), cpu, home);
            (class, latency, true)
        } else if self.sharers.contains(c) {
            // An upgrade: the data is here, only the other copies must go.
            (Class::L1Hit, m.l1_ps, true)
        } else if !self.sharers.is_empty() {
            let local = self.shared_in(m, domain);
            let (class, latency) = if local {
                // The LLC domain has the line: an L3 hit, or a clean forward
                // from a neighbour through the snoop filter.
                (Class::LclHit, h.clean_hit_ps)
            } else {
                // The nearest of the sharers that stand for the set forwards it.
                let source = [self.last, self.first, self.far]
                    .into_iter()
                    .min_by_key(|&s| m.transfer_ps(s.into(), cpu))
                    .unwrap_or(self.last);
                let class = if m.is_remote(source.into(), cpu) {
                    Class::RmtHit
                } else {
                    Class::LclHit
                };
                (class, m.routed_transfer_ps(source.into(), cpu, home))
            };
            // A Shared copy is forwarded without taking it from anyone: a
            // read pipelines, inclusive LLC or not.
            (class, latency, kind != AccessKind::Read)
        } else {
            let class = if m.is_remote_memory(cpu, home) {
                Class::DramRmt
            } else {
                Class::DramLcl
            };
            (class, m.dram_ps(cpu, home), kind != AccessKind::Read)
        };
        if crossed {
            // The unit comes from another board: the transfer between
            // boards, and it holds the line as an ownership transfer does.
            latency = latency.max(m.board_ps);
            migrates = true;
        }
        if kind != AccessKind::Read && !self.sharers.is_empty() {
            // Invalidations go out in parallel; the farthest acknowledgement
            // bounds the write. The three sharers that stand for the set
            // include the one farthest from the first.
            for s in [self.first, self.last, self.far] {
                if s != c && s != NO_CPU {
                    latency = latency.max(m.transfer_ps(s.into(), cpu));
                }
            }
        }
        let start = now.saturating_sub(travelled).max(self.free_at);
        let occupancy = if migrates {
            // The transaction's own occupancy at its level: between nodes
            // (or boards) or within one.
            let remote =
                crossed || matches!(class, Class::RmtHit | Class::RmtHitm | Class::DramRmt);
            let own = if remote {
                h.remote_transfer_occupancy_ps
            } else {
                match h.llc_transfer_occupancy_ps {
                    Some(inside) if self.held_only_in(m, domain) => Some(inside),
                    _ => h.transfer_occupancy_ps,
                }
            };
            own.unwrap_or(latency) + rmw
        } else {
            h.read_occupancy_ps
        };
        let done = (start + latency).max(self.ready) + rmw;
        self.free_at = start + occupancy;
        self.ready = done;
        (class, done)
    }

    /// Adds a core to the sharers, keeping the three that stand for them.
    fn share(&mut self, m: &Machine, core: u16, cpus: usize) {
        if self.sharers.is_empty() {
            self.first = core;
            self.far = core;
        } else if m.level(self.first.into(), core.into())
            > m.level(self.first.into(), self.far.into())
        {
            self.far = core;
        }
        self.sharers.insert(core, cpus);
    }
}

pub struct Directory {
    lines: Vec<Line>,
    /// Per line, 1 + index into `stats`; 0 until the line first moves between
    /// caches. Apart from `lines` so a prefetch finds a line's statistics
    /// without waiting for the line's state.
    stats_of: Vec<u32>,
    /// The records, and the accesses not yet counted into them.
    counter: Counter,
    pub totals: Totals,
    /// Lines each LLC domain has filled so far.
    fills: Vec<u32>,
    /// The queues of lines with waiting requests, and the free ones.
    queues: Vec<LineQueue>,
    free_queues: Vec<u32>,
    cpus: usize,
    nodes: u32,
    line_mask: u64,
    /// Which lines share a coherence unit between boards, where it is
    /// larger than a line (vSMP's page); None elsewhere.
    units: Option<BoardUnits>,
    /// The other lines of the unit a miss moves (kept, so no miss allocates).
    unit_lines: Vec<LineId>,
    /// The latest grant that waited for its snoop, until its request is served.
    snooped: Option<SnoopedGrant>,
    /// Each core's TLBs over the mapped tables, where the machine prices
    /// translation; their page tables' leaf lines follow the memory's lines.
    tlbs: Option<Tlbs>,
}

impl Directory {
    /// The directory over `memory`'s lines; the accesses to `mapped`'s
    /// lines are translated where the machine has TLBs.
    pub fn new(memory: &MemoryMap, machine: &Machine, mapped: &[MappedSpan]) -> Directory {
        let cores = (0..machine.cpus())
            .map(|cpu| machine.core_of(cpu) as usize + 1)
            .max()
            .unwrap_or(1);
        let tlbs = machine.translation.as_ref().map(|t| {
            Tlbs::new(
                t,
                mapped,
                cores,
                memory.lines(),
                memory.line_size().trailing_zeros(),
            )
        });
        let entry_lines = tlbs.as_ref().map_or(0, Tlbs::entry_lines);
        let mut lines: Vec<Line> =
            huge_pages::vec_with_capacity((memory.lines() + entry_lines) as usize);
        let paired = machine.hierarchy.adjacent_line_prefetch && memory.line_size() == 64;
        let mut homes = memory.line_homes();
        for r in memory.regions() {
            let first = r.base >> memory.line_size().trailing_zeros();
            let count = u64::from(r.line_count());
            for i in 0..count {
                let number = first + i;
                let buddy = match (paired, number.is_multiple_of(2)) {
                    (false, _) => Buddy::None,
                    (true, true) if i + 1 < count => Buddy::Next,
                    (true, false) if i > 0 => Buddy::Previous,
                    _ => Buddy::None,
                };
                lines.push(Line {
                    buddy,
                    ..Line::unused(homes.next().unwrap_or(0) as u16)
                });
            }
        }
        // The page tables were allocated at boot, on the boot node.
        lines.extend((0..entry_lines).map(|_| Line::unused(0)));
        Directory {
            stats_of: huge_pages::vec_filled(0, lines.len()),
            lines,
            counter: Counter::new(machine.cpus() as usize),
            totals: Totals::new(machine.nodes()),
            fills: vec![0; machine.hierarchy.llc_domains as usize],
            queues: Vec::new(),
            free_queues: Vec::new(),
            cpus: machine.cpus() as usize,
            nodes: machine.nodes(),
            line_mask: memory.line_size() - 1,
            units: machine
                .board_unit_lines_shift()
                .map(|lines| BoardUnits::new(memory, lines)),
            unit_lines: Vec::new(),
            snooped: None,
            tlbs,
        }
    }
    /// `cpu` asks for the byte at `addr` in `line` at `now`, as `waiter`
    /// (the caller's name for who waits). A miss that would hold the line's
    /// server while it is busy waits for its grant; so does any request,
    /// the holder's own included, once the server is free and waiters wait
    /// for it: the turn is theirs. Until then the holder's accesses hit. A
    /// `granted` request is the one a turn just granted: it is served now.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn request(
        &mut self,
        m: &Machine,
        cpu: u32,
        now: Ps,
        line: LineId,
        addr: u64,
        kind: AccessKind,
        by: Symbol,
        waiter: u32,
        granted: bool,
    ) -> Request {
        if !granted {
            if let Some(turn) = self.wait_if_busy(m, cpu, now, line, kind, waiter) {
                return Request::Waits(turn);
            }
        }
        Request::Served(self.access(m, cpu, now, line, addr, kind, by))
    }

    /// The waiting half of `request`: whether a request not yet granted
    /// waits at its line (it is queued, and the first waiter names the
    /// turn to ask for), without serving one that need not. A caller whose
    /// request's effect depends on the line's value (a lock's atomic) asks
    /// this first, decides once it is served, then makes the request.
    #[inline]
    pub fn wait_if_busy(
        &mut self,
        m: &Machine,
        cpu: u32,
        now: Ps,
        line: LineId,
        kind: AccessKind,
        waiter: u32,
    ) -> Option<Option<LineTurn>> {
        let l = &self.lines[line as usize];
        if l.queue != 0 || now < l.free_at {
            self.contended(m, cpu, now, line, kind, waiter)
        } else {
            None
        }
    }

    /// A request on a line whose server is busy or has waiters: whether it
    /// waits (and then the turn to ask for, for the first waiter). Apart
    /// from `request` so an uncontended access's path stays short.
    #[cold]
    #[inline(never)]
    fn contended(
        &mut self,
        m: &Machine,
        cpu: u32,
        now: Ps,
        line: LineId,
        kind: AccessKind,
        waiter: u32,
    ) -> Option<Option<LineTurn>> {
        let l = &mut self.lines[line as usize];
        l.age(&m.hierarchy, &self.fills);
        let c = m.core_of(cpu) as u16;
        let hit = match kind {
            AccessKind::Read => l.owner == c || l.sharers.contains(c),
            AccessKind::Write | AccessKind::Rmw => l.owner == c,
        };
        // The holder's burst: until the next waiter's snoop reaches it, its
        // own accesses hit.
        let bursts =
            l.owner == c && l.queue != 0 && now < self.queues[l.queue as usize - 1].snoop_at;
        let waits = !bursts && (now >= l.free_at || (!hit && l.holds_server(kind)));
        let waiter = Waiter::new(m, cpu, kind, waiter);
        waits.then(|| self.wait_at(line, now, waiter))
    }

    /// A request from the line's holder that must not pass the requests
    /// already waiting at the line (an atomic issued after their snoops
    /// reached the holder): it waits behind them, its turn known only
    /// then. False where none waits.
    pub fn wait_behind_waiters(
        &mut self,
        m: &Machine,
        cpu: u32,
        line: LineId,
        kind: AccessKind,
        waiter: u32,
    ) -> bool {
        if self.lines[line as usize].queue == 0 {
            return false;
        }
        // The queue is open: no new turn to ask for.
        let turn = self.wait_at(line, 0, Waiter::new(m, cpu, kind, waiter));
        debug_assert!(turn.is_none());
        true
    }

    /// Queues a request at its line; the first waiter opens the line's queue.
    fn wait_at(&mut self, line: LineId, now: Ps, waiter: Waiter) -> Option<LineTurn> {
        let l = &mut self.lines[line as usize];
        if l.queue != 0 {
            self.queues[l.queue as usize - 1].waiters.push(waiter);
            return None;
        }
        let index = self.free_queues.pop().unwrap_or_else(|| {
            self.queues.push(LineQueue::default());
            self.queues.len() as u32 - 1
        });
        let q = &mut self.queues[index as usize];
        q.line = line;
        // The line came into its domain with a grant: that one counts.
        q.run = 1;
        q.snoop_at = 0;
        q.waiters.push(waiter);
        l.queue = index + 1;
        Some(LineTurn {
            at: l.free_at.max(now),
            queue: index,
        })
    }

    /// The line's server may be free at `now`: its arbiter grants the next
    /// waiter. The oldest goes first, except that while the LLC domain
    /// holding the line has had fewer than `local_batch` grants in a row
    /// (the one that brought the line in counts), the oldest request from
    /// that domain does; past the batch the oldest request from elsewhere
    /// does. A batch of 0 prefers no domain. A waiter that takes the
    /// line from its holder is granted once its snoop has reached the
    /// holder, the profile's `snoop_delay` after the server freed (the
    /// holder's burst meanwhile); its request left the server when it freed.
    ///
    /// While the server is busy, a waiting read whose core came to hold
    /// the line meanwhile (its SMT sibling's request brought the copy in)
    /// is granted at once: it is a hit in the core's cache, as a second
    /// load to a line with a miss outstanding merges with it.
    pub fn turn(&mut self, m: &Machine, queue: u32, now: Ps) -> Turn {
        let q = &mut self.queues[queue as usize];
        let l = &mut self.lines[q.line as usize];
        if q.waiters.is_empty() {
            l.queue = 0;
            self.free_queues.push(queue);
            return Turn::Idle;
        }
        if now < l.free_at {
            let Some(pick) = q.waiters.iter().position(|w| l.holds_for(w)) else {
                return Turn::Busy(l.free_at);
            };
            let granted = q.waiters.remove(pick);
            return self.granted(queue, granted);
        }
        let batch = m.hierarchy.local_batch;
        let holder = l.llc;
        let pick = if batch == 0 {
            0
        } else {
            let local = q.waiters.iter().position(|w| w.domain == holder);
            let remote = q.waiters.iter().position(|w| w.domain != holder);
            match (local, remote) {
                (Some(local), Some(remote)) => {
                    if q.run < batch {
                        local
                    } else {
                        remote
                    }
                }
                (Some(only), None) | (None, Some(only)) => only,
                (None, None) => 0,
            }
        };
        let delay = m.hierarchy.snoop_delay_ps;
        if q.snoop_at == 0 && delay > 0 && l.owner != NO_CPU && l.owner != q.waiters[pick].core {
            q.snoop_at = now + delay;
            return Turn::Busy(q.snoop_at);
        }
        if q.snoop_at != 0 {
            self.snooped = Some(SnoopedGrant {
                line: q.line,
                at: now,
                travelled: delay.min(now - l.free_at),
            });
            q.snoop_at = 0;
        }
        let granted = q.waiters.remove(pick);
        q.run = if granted.domain == holder {
            q.run + 1
        } else {
            1
        };
        self.granted(queue, granted)
    }

    /// The queue's waiter `granted` has its grant: the queue closes if it
    /// was the last.
    fn granted(&mut self, queue: u32, granted: Waiter) -> Turn {
        let q = &self.queues[queue as usize];
        let more = !q.waiters.is_empty();
        let line = q.line;
        if !more {
            self.lines[line as usize].queue = 0;
            self.free_queues.push(queue);
        }
        Turn::Granted {
            waiter: granted.waiter,
            line,
            more,
        }
    }

    /// When the queue's next turn comes after a grant at `now`: at once if
    /// a waiting read's core holds the line now, else when the server frees.
    pub fn next_turn(&self, queue: u32, now: Ps) -> Ps {
        let q = &self.queues[queue as usize];
        let l = &self.lines[q.line as usize];
        if now < l.free_at && q.waiters.iter().any(|w| l.holds_for(w)) {
            now
        } else {
            l.free_at.max(now)
        }
    }

    /// `cpu` accesses the byte at `addr`, which lies in `line`, at time
    /// `now`, in the function `by` (what the line's record counts it under).
    ///
    /// The request is resolved at the lowest level of the hierarchy that can
    /// serve it: the core's own caches (SMT siblings share them); the LLC
    /// domain, which holds a copy its cores read; the holder of the line,
    /// wherever it is, through the home where the machine routes so; the
    /// line's memory. Each level's answer costs its latency; the line's
    /// server is held for the request's occupancy: a clean read for the
    /// read occupancy, an ownership transfer for its own occupancy.
    // Forced: the request's hit path stays inline; the ten forced (see `record`) save 8%.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        m: &Machine,
        cpu: u32,
        now: Ps,
        line: LineId,
        addr: u64,
        kind: AccessKind,
        by: Symbol,
    ) -> Outcome {
        let now = self.translated(m, cpu, now, line, addr);
        let off = (addr & self.line_mask) as u16;
        let h = &m.hierarchy;
        // Line states name caches: a core's, shared by its SMT siblings.
        let c = m.core_of(cpu) as u16;
        let domain = m.llc_of(cpu);
        let l = &mut self.lines[line as usize];
        l.age(h, &self.fills);
        let stats = &mut self.stats_of[line as usize];
        let rmw = if kind == AccessKind::Rmw { m.rmw_ps } else { 0 };
        let hit = match kind {
            AccessKind::Read => l.owner == c || l.sharers.contains(c),
            AccessKind::Write | AccessKind::Rmw => l.owner == c,
        };
        if hit {
            // A hit in the core the line's latest grant went to completes
            // no earlier than that grant's data arrives there (a load to a
            // line whose miss is outstanding merges with the miss).
            let arrived = if l.last == c { l.ready } else { 0 };
            let done = (now + m.l1_ps).max(arrived) + rmw;
            if kind != AccessKind::Read {
                l.dirty = true;
                l.writer_off = off;
                l.writes = l.writes.wrapping_add(1);
                // The next transfer carries this write: it completes no
                // earlier (a holder's burst ends before its line leaves).
                l.ready = l.ready.max(done);
            }
            l.llc = domain as u16;
            l.llc_stamp = self.fills[domain as usize];
            let outcome = Outcome {
                done,
                class: Class::L1Hit,
            };
            if *stats != 0 {
                let index = *stats - 1;
                self.counter.add(index, off, by, cpu, kind, Class::L1Hit, 0);
            }
            self.totals.count_hit(kind);
            return outcome;
        }
        self.miss(m, cpu, now, line, off, kind, by)
    }

    /// When the access to `addr` in `line` can go to the caches: at `now`,
    /// unless the line lies in a mapped table whose page the core's
    /// first-level TLB does not hold. Every other line pays one range check.
    #[inline(always)]
    fn translated(&mut self, m: &Machine, cpu: u32, now: Ps, line: LineId, addr: u64) -> Ps {
        match &self.tlbs {
            Some(tlbs) if tlbs.maps(line) => self.translate(m, cpu, now, line, addr),
            _ => now,
        }
    }

    /// The TLB lookups of an access to a mapped table's line: nothing more
    /// on a first-level hit; the second level's latency on a hit there;
    /// else the walk: the walker's own steps, then its read of the page's
    /// leaf entry through the caches. Out of line: most accesses are to no
    /// table.
    #[inline(never)]
    fn translate(&mut self, m: &Machine, cpu: u32, now: Ps, line: LineId, addr: u64) -> Ps {
        let (Some(tlbs), Some(t)) = (self.tlbs.as_mut(), m.translation.as_ref()) else {
            return now;
        };
        match tlbs.translate(m.core_of(cpu) as usize, line, addr) {
            None | Some(Translated::L1) => now,
            Some(Translated::Stlb) => now + t.stlb_hit_ps,
            Some(Translated::Walk(entry)) => {
                self.read_page_entry(m, cpu, now + t.stlb_hit_ps + t.walk_ps, entry)
            }
        }
    }

    /// The walker's read of a page table line by `cpu` at `now`, and when
    /// its data is in. Page tables are only read here, so every copy is
    /// Shared: a read of one the LLC domain holds is a clean hit, pipelined;
    /// one no cache holds comes from memory, and fills the domain's LLC as
    /// any line does. No demand access: not counted (perf c2c samples loads
    /// and stores, not the walker's reads).
    fn read_page_entry(&mut self, m: &Machine, cpu: u32, now: Ps, line: LineId) -> Ps {
        let c = m.core_of(cpu) as u16;
        let domain = m.llc_of(cpu);
        let l = &mut self.lines[line as usize];
        l.age(&m.hierarchy, &self.fills);
        if l.sharers.contains(c) {
            return now + m.l1_ps;
        }
        let (_, done) = l.serve(m, cpu, now, AccessKind::Read, false, 0);
        l.share(m, c, self.cpus);
        l.last = c;
        l.llc = domain as u16;
        l.llc_stamp = self.fills[domain as usize];
        self.fills[domain as usize] = self.fills[domain as usize].wrapping_add(1);
        done
    }

    /// The rest of `access` for a request its core's caches cannot serve:
    /// out of line, so that a hit's path stays short.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn miss(
        &mut self,
        m: &Machine,
        cpu: u32,
        now: Ps,
        line: LineId,
        off: u16,
        kind: AccessKind,
        by: Symbol,
    ) -> Outcome {
        let unit = if self.units.is_some() {
            self.move_unit(m, cpu, line, kind)
        } else {
            UnitMove::default()
        };
        let c = m.core_of(cpu) as u16;
        let domain = m.llc_of(cpu);
        let travelled = match self.snooped {
            Some(g) if g.line == line && g.at == now => {
                self.snooped = None;
                g.travelled
            }
            _ => 0,
        };
        let l = &mut self.lines[line as usize];
        let stats = &mut self.stats_of[line as usize];
        let (class, done) = l.serve(m, cpu, now, kind, unit.crossed, travelled);
        if matches!(class, Class::LclHitm | Class::RmtHitm) {
            self.totals
                .count_hitm(kind, m.node_of(cpu), m.node_of(l.owner.into()));
        }
        let sharing = (class.is_transfer() || class == Class::L1Hit) && l.writer_off != NO_OFFSET;
        let falsely = sharing.then_some(l.writer_off != off);
        match kind {
            AccessKind::Read => {
                if l.owner != NO_CPU {
                    let owner = l.owner;
                    l.owner = NO_CPU;
                    l.share(m, owner, self.cpus);
                    l.share(m, c, self.cpus);
                } else if l.sharers.is_empty() && !unit.elsewhere {
                    l.owner = c;
                } else {
                    l.share(m, c, self.cpus);
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
        l.llc = domain as u16;
        l.llc_stamp = self.fills[domain as usize];
        if class != Class::L1Hit {
            // The data came into the domain (an upgrade brings none).
            self.fills[domain as usize] = self.fills[domain as usize].wrapping_add(1);
        }
        let buddy = l.buddy;
        if *stats == 0 && (class.is_transfer() || sharing) {
            *stats = self.counter.name(line) + 1;
        }
        if *stats != 0 {
            let index = *stats - 1;
            self.counter
                .add(index, off, by, cpu, kind, class, done - now);
        }
        self.totals.count(kind, class, done - now, falsely);
        if kind == AccessKind::Read && class != Class::L1Hit {
            match buddy {
                Buddy::Next => self.fetch_buddy(m, c, domain, now, line + 1, unit.elsewhere),
                Buddy::Previous => self.fetch_buddy(m, c, domain, now, line - 1, unit.elsewhere),
                Buddy::None => {}
            }
        }
        Outcome { done, class }
    }

    /// A prefetch for write (x86's PREFETCHW; the qspinlock head's
    /// prefetchw of its successor's node) by `cpu` at `now`: a request for
    /// ownership that writes nothing. It takes the line exclusive into the
    /// core (a Modified copy moves as it is, dirty), invalidating the other
    /// copies, and holds the line's server as an ownership transfer does;
    /// it counts no write (a spinner on the line reads the same value, so
    /// none wakes), no demand access and no HITM (perf c2c samples loads
    /// and stores, not prefetches). The caller does not wait for it; a hit
    /// of the core in the line completes no earlier than its data arrives.
    pub fn prefetch_for_write(&mut self, m: &Machine, cpu: u32, now: Ps, line: LineId) {
        let c = m.core_of(cpu) as u16;
        let domain = m.llc_of(cpu);
        self.lines[line as usize].age(&m.hierarchy, &self.fills);
        if self.lines[line as usize].owner == c {
            return;
        }
        let unit = if self.units.is_some() {
            self.move_unit(m, cpu, line, AccessKind::Write)
        } else {
            UnitMove::default()
        };
        let l = &mut self.lines[line as usize];
        let (class, _) = l.serve(m, cpu, now, AccessKind::Write, unit.crossed, 0);
        // Exclusive, clean unless a Modified copy moved.
        l.dirty = l.owner != NO_CPU && l.dirty;
        l.sharers.clear();
        l.owner = c;
        l.last = c;
        l.llc = domain as u16;
        l.llc_stamp = self.fills[domain as usize];
        if class != Class::L1Hit {
            self.fills[domain as usize] = self.fills[domain as usize].wrapping_add(1);
        }
    }

    /// The adjacent-line prefetcher brings the other line of a missed line's
    /// 128-byte pair into core `c`, shared. It is no demand access (perf c2c
    /// samples none), so it is not counted; it takes a read's turn on the
    /// pair line's server, and a copy Modified elsewhere is downgraded as a
    /// read would downgrade it, so the next write there misses again. Where
    /// another board holds a copy of the pair's unit (`shared_elsewhere`),
    /// the buddy comes in shared even when no other cache holds it.
    fn fetch_buddy(
        &mut self,
        m: &Machine,
        c: u16,
        domain: u32,
        now: Ps,
        line: LineId,
        shared_elsewhere: bool,
    ) {
        let h = &m.hierarchy;
        let l = &mut self.lines[line as usize];
        l.age(h, &self.fills);
        if l.owner == c || l.sharers.contains(c) {
            return;
        }
        if l.owner != NO_CPU {
            let owner = l.owner;
            l.owner = NO_CPU;
            l.dirty = false;
            l.share(m, owner, self.cpus);
        }
        if l.sharers.is_empty() && !shared_elsewhere {
            l.owner = c;
        } else {
            l.share(m, c, self.cpus);
        }
        let start = now.max(l.free_at);
        l.free_at = start + h.read_occupancy_ps;
        l.last = c;
        l.llc = domain as u16;
        l.llc_stamp = self.fills[domain as usize];
        self.fills[domain as usize] = self.fills[domain as usize].wrapping_add(1);
    }

    /// A miss on a machine whose boards keep coherence by a unit of several
    /// lines (vSMP's page) takes the unit as the software does: a write
    /// invalidates every line of the unit another board holds, a read
    /// downgrades the lines another board holds exclusively (their data
    /// moves with the unit, written back). Either way the request crossed
    /// boards when another board held the unit so, and it pays the
    /// transfer between boards for it.
    #[cold]
    #[inline(never)]
    fn move_unit(&mut self, m: &Machine, cpu: u32, line: LineId, kind: AccessKind) -> UnitMove {
        let Some(units) = &self.units else {
            return UnitMove::default();
        };
        units.others(line, &mut self.unit_lines);
        let board = m.board_of(cpu);
        let off_board = |core: u16| core != NO_CPU && m.board_of(core.into()) != board;
        let mut moved = UnitMove::default();
        for &other in &self.unit_lines {
            let l = &mut self.lines[other as usize];
            l.age(&m.hierarchy, &self.fills);
            if off_board(l.owner) {
                moved.crossed = true;
                let owner = l.owner;
                l.owner = NO_CPU;
                l.dirty = false;
                if kind == AccessKind::Read {
                    l.share(m, owner, self.cpus);
                    moved.elsewhere = true;
                }
            } else if !l.sharers.is_empty() && (off_board(l.first) || off_board(l.far)) {
                // `far` is the sharer farthest from `first`: with a copy
                // on another board than `first`'s, it is on one.
                if kind == AccessKind::Read {
                    moved.elsewhere = true;
                } else {
                    moved.crossed = true;
                    l.keep_sharers_on(m, board);
                }
            }
        }
        moved
    }

    /// Starts loading a line's state into the host's cache: an op knows
    /// its lines when it begins, events before it touches them.
    #[inline]
    pub fn prefetch(&self, line: LineId) {
        prefetch_whole(&self.lines[line as usize]);
    }

    /// How many writes the line has served. Requests on a line are served
    /// in the order they are made, so a read made now is served after
    /// exactly these writes: what it returns is their result.
    #[inline]
    pub fn writes(&self, line: LineId) -> u32 {
        self.lines[line as usize].writes
    }

    /// Whether the CPU's core holds the line as its owner now: a store it
    /// served earlier can still commit there, without asking again.
    #[inline]
    pub fn owned_by(&self, m: &Machine, cpu: u32, line: LineId) -> bool {
        u32::from(self.lines[line as usize].owner) == m.core_of(cpu)
    }

    /// A store the line served earlier became visible only now (it
    /// committed behind older stores of its CPU): its write counts again,
    /// so a read served in between, which did not show what the store
    /// carries, is known to be stale.
    #[inline]
    pub fn visible(&mut self, line: LineId) {
        let l = &mut self.lines[line as usize];
        l.writes = l.writes.wrapping_add(1);
    }

    /// The line's holder keeps it until `until` (a run of atomics it
    /// performs there): no other request is served before then.
    pub fn hold_until(&mut self, line: LineId, until: Ps) {
        let l = &mut self.lines[line as usize];
        l.free_at = l.free_at.max(until);
    }

    /// The engine's spin-list handle for a line.
    #[inline]
    pub fn watch(&mut self, line: LineId) -> &mut u32 {
        &mut self.lines[line as usize].watch
    }

    /// The `n` lines with the most HITM loads, of those with any (perf c2c's
    /// Shared Data Cache Line Table, in its order), with their counts.
    pub fn hottest_lines(&mut self, n: usize) -> Vec<LineStats> {
        self.counter.records().hottest(n)
    }

    /// Forgets everything counted so far (end of warm-up); line states stay.
    pub fn reset_stats(&mut self) {
        self.totals = Totals::new(self.nodes);
        self.counter.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The function the tests' accesses are counted under.
    const BY: Symbol = Symbol::Workload;
    use crate::machine::presets::preset;
    use crate::machine::tlb::PageSize;
    use crate::machine::Ps;
    use crate::memory::Home;

    fn waiting_setup() -> (Machine, Directory) {
        let m = Machine::new(preset("icx-2s").unwrap()).unwrap();
        let mut mem = MemoryMap::new(64);
        mem.add("x", 0x1000, 4096, Home::Node(0));
        let d = Directory::new(&mem, &m, &[]);
        (m, d)
    }

    fn setup() -> (Machine, MemoryMap, Directory) {
        let m = Machine::new(preset("icx-2s").unwrap()).unwrap();
        let mut mem = MemoryMap::new(64);
        mem.add("x", 0x1000, 4096, Home::Node(0));
        let d = Directory::new(&mem, &m, &[]);
        (m, mem, d)
    }

    #[test]
    fn classes_follow_the_line_state() {
        let (m, _, mut d) = setup();
        // CPU 0 and 1 on socket 0, CPU 32 on socket 1 (one thread per core first).
        let a = d.access(&m, 0, 0, 0, 0x1000, AccessKind::Write, BY);
        assert_eq!(a.class, Class::DramLcl);
        assert_eq!(
            d.access(&m, 0, a.done, 0, 0x1000, AccessKind::Read, BY)
                .class,
            Class::L1Hit
        );
        let b = d.access(&m, 1, a.done, 0, 0x1008, AccessKind::Read, BY);
        assert_eq!(b.class, Class::LclHitm);
        assert_eq!(b.done - a.done, m.node_ps);
        let c = d.access(&m, 32, b.done, 0, 0x1008, AccessKind::Rmw, BY);
        assert_eq!(c.class, Class::RmtHit);
        assert_eq!(c.done - b.done, m.remote_latency_ps(0, 1) + m.rmw_ps);
        let e = d.access(&m, 0, c.done, 0, 0x1000, AccessKind::Read, BY);
        assert_eq!(e.class, Class::RmtHitm);
        // Line 1 came into CPU 0's core with line 0 (the adjacent-line
        // prefetcher); line 2 is in no cache.
        assert_eq!(
            d.access(&m, 33, 0, 1, 0x1040, AccessKind::Read, BY).class,
            Class::RmtHit
        );
        assert_eq!(
            d.access(&m, 33, 0, 2, 0x1080, AccessKind::Read, BY).class,
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
        d.access(&m, 0, 0, 0, 0x1000, AccessKind::Write, BY);
        let read = d.access(&m, sibling, 1_000_000, 0, 0x1000, AccessKind::Read, BY);
        let write = d.access(&m, sibling, 2_000_000, 0, 0x1000, AccessKind::Rmw, BY);
        assert_eq!((read.class, write.class), (Class::L1Hit, Class::L1Hit));
        assert_eq!(d.totals.transfers(), 0);
        // Another core still takes the line Modified from the core.
        let other = d.access(&m, 1, 3_000_000, 0, 0x1000, AccessKind::Read, BY);
        assert_eq!(other.class, Class::LclHitm);
    }

    #[test]
    fn ownership_transfers_queue_at_their_own_occupancy_not_their_latency() {
        // Absent, an occupancy is the transfer's own latency (one migration).
        for occupancy in [Some(10.0), Some(30.0), None] {
            let m = machine_with("icx-2s", |s| s.coherence.transfer_occupancy = occupancy);
            let mut d = directory(&m, 4096, 0);
            d.access(&m, 0, 0, 0, 0x10_0000, AccessKind::Write, BY);
            let first = d.access(&m, 1, 1_000_000, 0, 0x10_0000, AccessKind::Write, BY);
            let second = d.access(&m, 2, 1_000_000, 0, 0x10_0000, AccessKind::Write, BY);
            assert_eq!(first.done, 1_000_000 + m.node_ps);
            // The second request waits for the first's occupancy, whatever
            // the hop's latency.
            let held = occupancy.map_or(m.node_ps, crate::machine::ns_to_ps);
            assert_eq!(second.done, 1_000_000 + held + m.node_ps, "{occupancy:?}");
        }
    }

    #[test]
    fn an_ownership_transfer_between_nodes_holds_its_line_for_the_remote_occupancy() {
        let m = machine_with("icx-2s", |s| {
            s.coherence.transfer_occupancy = Some(10.0);
            s.coherence.remote_transfer_occupancy = Some(50.0);
        });
        let mut d = directory(&m, 4096, 0);
        d.access(&m, 0, 0, 0, 0x10_0000, AccessKind::Write, BY);
        // CPU 32 is on the other socket: its write takes the line across.
        let across = d.access(&m, 32, 1_000_000, 0, 0x10_0000, AccessKind::Write, BY);
        assert_eq!(across.class, Class::RmtHitm);
        assert_eq!(d.lines[0].free_at, 1_000_000 + 50_000);
        // CPU 33, beside it, takes it within the node after that occupancy.
        let beside = d.access(&m, 33, across.done, 0, 0x10_0000, AccessKind::Write, BY);
        assert_eq!(beside.class, Class::LclHitm);
        assert_eq!(d.lines[0].free_at, across.done + 10_000);
    }

    fn machine_with(name: &str, edit: impl FnOnce(&mut crate::machine::MachineSpec)) -> Machine {
        let mut spec = preset(name).unwrap();
        edit(&mut spec);
        Machine::new(spec).unwrap()
    }

    fn directory(m: &Machine, bytes: u64, home: u32) -> Directory {
        let mut mem = MemoryMap::new(64);
        mem.add("x", 0x10_0000, bytes, Home::Node(home));
        Directory::new(&mem, m, &[])
    }

    /// A table of `pages` base pages at 0x1000_0000 on icx-2s (a 2048-entry
    /// STLB), mapped with `page` pages, its STLB shrunk by `edit`; and the
    /// time CPU 0 takes to read the first line of every page `rounds`
    /// times over, each read after the last completes.
    fn walk_pages(
        pages: u64,
        page: PageSize,
        rounds: u32,
        edit: impl FnOnce(&mut crate::machine::MachineSpec),
    ) -> Ps {
        let m = machine_with("icx-2s", edit);
        let mut mem = MemoryMap::new(64);
        let base = 0x1000_0000;
        let len = pages * 4096;
        let r = mem.add("table", base, len, Home::Node(0));
        let lines =
            mem.region(r).first_line()..mem.region(r).first_line() + mem.region(r).line_count();
        let spans = [MappedSpan {
            lines,
            addrs: base..base + len,
            page,
        }];
        let mut d = Directory::new(&mem, &m, &spans);
        let mut now = 0;
        for _ in 0..rounds {
            for p in 0..pages {
                let addr = base + p * 4096;
                now = d
                    .access(&m, 0, now, mem.line_in(r, addr), addr, AccessKind::Read, BY)
                    .done;
            }
        }
        now
    }

    #[test]
    fn a_table_over_more_pages_than_the_stlb_holds_pays_a_walk_on_every_return() {
        // Reads again of lines the core holds: only translation costs more than a hit.
        let fits = walk_pages(1024, PageSize::Base, 3, |_| {})
            - walk_pages(1024, PageSize::Base, 1, |_| {});
        let wide = walk_pages(4096, PageSize::Base, 3, |_| {})
            - walk_pages(4096, PageSize::Base, 1, |_| {});
        let m = Machine::new(preset("icx-2s").unwrap()).unwrap();
        let t = m.translation.unwrap();
        // 2048 reads that fit: each an STLB hit (64 DTLB entries hold none of them again).
        assert_eq!(fits, 2 * 1024 * (m.l1_ps + t.stlb_hit_ps));
        // 8192 that do not: each walks too, and reads its leaf entry.
        assert!(
            wide > 2 * 4096 * (m.l1_ps + t.stlb_hit_ps + t.walk_ps),
            "{wide}"
        );
    }

    #[test]
    fn the_same_table_on_huge_pages_pays_no_walk() {
        let huge = walk_pages(4096, PageSize::Huge2M, 3, |_| {})
            - walk_pages(4096, PageSize::Huge2M, 1, |_| {});
        let m = Machine::new(preset("icx-2s").unwrap()).unwrap();
        // 16 MiB is eight 2 MiB pages: every read again is a DTLB hit.
        assert_eq!(huge, 2 * 4096 * m.l1_ps);
    }

    #[test]
    fn fewer_stlb_entries_make_a_table_that_fitted_walk() {
        let shrink = |s: &mut crate::machine::MachineSpec| {
            if let Some(t) = s.tlb.as_mut() {
                t.stlb_base = 512;
            }
        };
        let fits = walk_pages(1024, PageSize::Base, 3, |_| {});
        let walks = walk_pages(1024, PageSize::Base, 3, shrink);
        assert!(walks > fits, "{walks} against {fits}");
        // The same machine and the same reads: the same time.
        assert_eq!(walk_pages(1024, PageSize::Base, 3, shrink), walks);
    }

    #[test]
    fn lines_outside_every_span_are_not_translated() {
        let m = Machine::new(preset("icx-2s").unwrap()).unwrap();
        let (_, mem, mut d) = setup();
        let hit = d.access(&m, 0, 0, 0, 0x1000, AccessKind::Write, BY);
        let again = d.access(&m, 0, hit.done, 0, 0x1000, AccessKind::Write, BY);
        assert_eq!(again.done, hit.done + m.l1_ps);
        assert_eq!(d.lines.len(), mem.lines() as usize);
    }

    #[test]
    fn the_holder_keeps_the_line_until_a_waiting_request_is_granted() {
        let (m, mut d) = waiting_setup();
        let rmw = |d: &mut Directory, cpu: u32, now: Ps, granted: bool| {
            d.request(&m, cpu, now, 0, 0x1000, AccessKind::Rmw, BY, cpu, granted)
        };
        let Request::Served(_) = rmw(&mut d, 0, 0, false) else {
            panic!("an idle line serves at once")
        };
        // CPU 1 asks while the server is busy with CPU 0's fill: it waits,
        // and names the turn it waits for.
        let Request::Waits(Some(turn)) = rmw(&mut d, 1, 1, false) else {
            panic!("a busy line makes the request wait")
        };
        assert_eq!(turn.at, d.lines[0].free_at);
        // CPU 0 still holds the line: its own increment before the grant hits.
        let Request::Served(hit) = rmw(&mut d, 0, 2, false) else {
            panic!("the holder's access before the grant is served")
        };
        assert_eq!(hit.class, Class::L1Hit);
        // Once the server is free, the turn is the waiter's, even against the holder.
        let free = d.lines[0].free_at;
        assert_eq!(rmw(&mut d, 0, free, false), Request::Waits(None));
        assert_eq!(
            d.turn(&m, turn.queue, free),
            Turn::Granted {
                waiter: 1,
                line: 0,
                more: true
            }
        );
        let Request::Served(granted) = rmw(&mut d, 1, free, true) else {
            panic!("a granted request is served")
        };
        assert_eq!(granted.class, Class::LclHitm);
        // The line leaves with the holder's increment in it.
        assert_eq!(granted.done, (free + m.node_ps).max(hit.done) + m.rmw_ps);
        // The next turn, when the transfer frees the server, is CPU 0's.
        assert_eq!(d.turn(&m, turn.queue, free), Turn::Busy(d.lines[0].free_at));
        let later = d.lines[0].free_at;
        let Turn::Granted {
            waiter: 0,
            more: false,
            ..
        } = d.turn(&m, turn.queue, later)
        else {
            panic!("the holder's waiting request is next")
        };
    }

    #[test]
    fn a_read_waiting_on_a_line_its_core_came_to_hold_is_granted_at_once() {
        let (m, mut d) = waiting_setup();
        let sibling = m.sibling_of(1).unwrap();
        assert_ne!(sibling, 1);
        let read = |d: &mut Directory, cpu: u32, now: Ps, granted: bool| {
            d.request(&m, cpu, now, 0, 0x1000, AccessKind::Read, BY, cpu, granted)
        };
        d.request(&m, 0, 0, 0, 0x1000, AccessKind::Write, BY, 0, false);
        // CPU 1 and its SMT sibling both miss while the server is busy.
        let Request::Waits(Some(turn)) = read(&mut d, 1, 1, false) else {
            panic!("a busy line makes the read wait")
        };
        assert_eq!(read(&mut d, sibling, 1, false), Request::Waits(None));
        let free = d.lines[0].free_at;
        assert!(matches!(
            d.turn(&m, turn.queue, free),
            Turn::Granted { waiter: 1, .. }
        ));
        let Request::Served(first) = read(&mut d, 1, free, true) else {
            panic!("a granted request is served")
        };
        assert_eq!(first.class, Class::LclHitm);
        // The transfer holds the server, but the sibling's read is a hit in
        // the core the line came to: its turn is now, not when the server frees.
        assert!(d.lines[0].free_at > free);
        assert_eq!(d.next_turn(turn.queue, free), free);
        assert_eq!(
            d.turn(&m, turn.queue, free),
            Turn::Granted {
                waiter: sibling,
                line: 0,
                more: false
            }
        );
        let Request::Served(second) = read(&mut d, sibling, free, true) else {
            panic!("a granted request is served")
        };
        assert_eq!(second.class, Class::L1Hit);
        // It merges with the sibling's miss: done when that data is in.
        assert_eq!(second.done, first.done);
    }

    #[test]
    fn clean_readers_of_a_shared_line_pipeline_inclusive_llc_or_not() {
        // e5-2650's L3 is inclusive; icx-2s's is not (a snoop filter).
        const READERS: u32 = 6;
        for name in ["e5-2650-2s-32", "icx-2s"] {
            let m = machine_with(name, |s| s.coherence.read_occupancy = Some(7.0));
            // The first thread of each other core of CPU 0's LLC domain.
            let cores: Vec<u32> = (1..m.cpus())
                .filter(|&c| m.llc_of(c) == m.llc_of(0))
                .filter(|&c| m.sibling_of(c).is_none_or(|s| s > c))
                .take(READERS as usize + 1)
                .collect();
            let mut d = directory(&m, 4096, 0);
            d.access(&m, 0, 0, 0, 0x10_0000, AccessKind::Write, BY);
            d.access(&m, cores[0], 1_000_000, 0, 0x10_0000, AccessKind::Read, BY);
            let now = 2_000_000;
            let last = cores[1..]
                .iter()
                .map(|&cpu| d.access(&m, cpu, now, 0, 0x10_0000, AccessKind::Read, BY))
                .inspect(|r| assert_eq!(r.class, Class::LclHit, "{name}"))
                .map(|r| r.done)
                .max()
                .unwrap();
            // The latency once and a read occupancy a reader after the
            // first, not a clean hit's latency each.
            let pipelined = now + m.hierarchy.clean_hit_ps + u64::from(READERS - 1) * 7_000;
            assert_eq!(last, pipelined, "{name}");
            // Serialised, each would have waited for a clean hit's latency.
            assert!(
                last - now < u64::from(READERS) * m.hierarchy.clean_hit_ps,
                "{name}"
            );
        }
    }

    /// The owner of a line that another core waits for, and the waiter:
    /// CPU 2 owns the line, CPU 1's RMW waits at it; the line's turn and
    /// when its server frees.
    fn owner_with_a_waiter(m: &Machine, d: &mut Directory) -> (LineTurn, Ps, Outcome) {
        let rmw = |d: &mut Directory, cpu: u32, now: Ps| {
            d.request(m, cpu, now, 0, 0x10_0000, AccessKind::Rmw, BY, cpu, false)
        };
        d.access(m, 0, 0, 0, 0x10_0000, AccessKind::Write, BY);
        let Request::Served(owned) = rmw(d, 2, 1_000_000) else {
            panic!("an idle line serves at once")
        };
        let Request::Waits(Some(turn)) = rmw(d, 1, 1_001_000) else {
            panic!("a busy line queues the request")
        };
        (turn, d.lines[0].free_at, owned)
    }

    #[test]
    fn the_owner_finishes_its_burst_before_a_queued_snoop_takes_the_line() {
        let delay = 30_000;
        let m = machine_with("icx-2s", |s| {
            s.coherence.transfer_occupancy = Some(80.0);
            s.coherence.snoop_delay = Some(30.0);
        });
        let mut d = directory(&m, 4096, 0);
        let (turn, free, owned) = owner_with_a_waiter(&m, &mut d);
        // The server frees; the waiter's snoop is on its way to the owner.
        assert_eq!(d.turn(&m, turn.queue, free), Turn::Busy(free + delay));
        // Meanwhile the owner's own increments hit, one after another.
        let mut at = owned.done;
        let mut burst = 0;
        while at < free + delay {
            let Request::Served(hit) =
                d.request(&m, 2, at, 0, 0x10_0000, AccessKind::Rmw, BY, 2, false)
            else {
                panic!("the owner's access during its burst is served")
            };
            assert_eq!(hit.class, Class::L1Hit);
            at = hit.done;
            burst += 1;
        }
        assert!(burst >= 2, "{burst} increments in the burst");
        // Then the snoop takes the line: the waiter's request left the
        // server when it freed, and its data carries the whole burst.
        assert!(matches!(
            d.turn(&m, turn.queue, free + delay),
            Turn::Granted { waiter: 1, .. }
        ));
        let Request::Served(taken) = d.request(
            &m,
            1,
            free + delay,
            0,
            0x10_0000,
            AccessKind::Rmw,
            BY,
            1,
            true,
        ) else {
            panic!("a granted request is served")
        };
        assert_eq!(taken.class, Class::LclHitm);
        assert_eq!(taken.done, (free + m.node_ps).max(at) + m.rmw_ps);
        assert!(taken.done > at);
        assert_eq!(d.lines[0].free_at, free + 80_000 + m.rmw_ps);
    }

    #[test]
    fn with_no_snoop_delay_the_owner_yields_its_line_when_the_server_frees() {
        let m = machine_with("icx-2s", |s| s.coherence.transfer_occupancy = Some(80.0));
        let mut d = directory(&m, 4096, 0);
        let (turn, free, _) = owner_with_a_waiter(&m, &mut d);
        assert!(matches!(
            d.turn(&m, turn.queue, free),
            Turn::Granted { waiter: 1, .. }
        ));
        let Request::Served(taken) =
            d.request(&m, 1, free, 0, 0x10_0000, AccessKind::Rmw, BY, 1, true)
        else {
            panic!("a granted request is served")
        };
        assert_eq!(taken.done, free + m.node_ps + m.rmw_ps);
        // The former owner's next increment waits for the line.
        assert!(matches!(
            d.request(
                &m,
                2,
                free + 1_000,
                0,
                0x10_0000,
                AccessKind::Rmw,
                BY,
                2,
                false
            ),
            Request::Waits(_)
        ));
    }

    #[test]
    fn lines_beyond_the_llc_come_from_memory_when_cold() {
        // 1 MiB of LLC holds 16384 lines; a table of twice that is walked twice.
        let m = machine_with("e5-2650-2s-32", |s| {
            s.coherence.llc_mib = Some(1.0);
            // Every line a demand miss of its own.
            s.coherence.adjacent_line_prefetch = false;
        });
        let lines = 2 * 16384;
        let mut d = directory(&m, lines * 64, 0);
        let read = |d: &mut Directory, line: u32, now: Ps| {
            d.access(
                &m,
                0,
                now,
                line,
                0x10_0000 + u64::from(line) * 64,
                AccessKind::Read,
                BY,
            )
            .class
        };
        for line in 0..lines as u32 {
            assert_eq!(read(&mut d, line, u64::from(line) * 1000), Class::DramLcl);
        }
        let now = lines * 1000;
        assert_eq!(
            read(&mut d, 0, now),
            Class::DramLcl,
            "the coldest line left"
        );
        assert_eq!(read(&mut d, lines as u32 - 1, now), Class::L1Hit);
    }

    #[test]
    fn the_adjacent_line_prefetcher_fetches_the_buddy_without_pairing_the_lines() {
        let with = Machine::new(preset("icx-2s").unwrap()).unwrap();
        let without = machine_with("icx-2s", |s| s.coherence.adjacent_line_prefetch = false);
        for (m, prefetches) in [(&with, true), (&without, false)] {
            let mut d = directory(m, 4096, 0);
            d.access(m, 0, 0, 0, 0x10_0000, AccessKind::Read, BY);
            let buddy = d.access(m, 0, 1_000_000, 1, 0x10_0040, AccessKind::Read, BY);
            let expected = if prefetches {
                Class::L1Hit
            } else {
                Class::DramLcl
            };
            assert_eq!(buddy.class, expected);
            // A write to the buddy takes it from CPU 0's core, and only it.
            d.access(m, 1, 2_000_000, 1, 0x10_0040, AccessKind::Write, BY);
            let again = d.access(m, 0, 3_000_000, 0, 0x10_0000, AccessKind::Read, BY);
            assert_eq!(again.class, Class::L1Hit);
        }
    }

    #[test]
    fn amd_goes_through_the_home_between_core_complexes() {
        let m = Machine::new(preset("milan-2s").unwrap()).unwrap();
        let other_ccx = (1..m.cpus())
            .find(|&c| m.level(0, c) == crate::machine::Level::Node)
            .unwrap();
        let cost = |home: u32| {
            let mut d = directory(&m, 4096, home);
            d.access(&m, 0, 0, 0, 0x10_0000, AccessKind::Write, BY);
            let out = d.access(&m, other_ccx, 1_000_000, 0, 0x10_0000, AccessKind::Read, BY);
            out.done - 1_000_000
        };
        // Home on the CPUs' own node: the measured cross-CCX transfer.
        assert_eq!(cost(0), m.node_ps);
        // Home on the other socket: to it, back to the holder, then the data.
        let far = m.remote_latency_ps(0, 1);
        assert_eq!(cost(1), (far + far + m.node_ps) / 2);
    }

    #[test]
    fn a_write_across_boards_takes_every_line_of_its_unit_from_the_other_board() {
        for board_line in [4096, 64] {
            let m = machine_with("vsmp-32", |s| s.coherence.board_line = Some(board_line));
            let far = (1..m.cpus())
                .find(|&c| m.board_of(c) != m.board_of(0))
                .unwrap();
            let mut d = directory(&m, 4096, 0);
            // CPU 0 writes line 0 of a page; a CPU of another board writes
            // line 5 of the same page, then CPU 0 reads its line again.
            d.access(&m, 0, 0, 0, 0x10_0000, AccessKind::Write, BY);
            d.access(&m, far, 1_000_000, 5, 0x10_0140, AccessKind::Write, BY);
            let again = d.access(&m, 0, 2_000_000, 0, 0x10_0000, AccessKind::Read, BY);
            if board_line == 4096 {
                assert_ne!(again.class, Class::L1Hit, "the unit left board 0");
                assert!(again.done - 2_000_000 >= m.board_ps, "{again:?}");
            } else {
                assert_eq!(again.class, Class::L1Hit, "lines move alone");
            }
        }
    }

    #[test]
    fn a_read_across_boards_shares_the_unit_so_the_next_write_takes_it_back() {
        let m = Machine::new(preset("vsmp-32").unwrap()).unwrap();
        let far = (1..m.cpus())
            .find(|&c| m.board_of(c) != m.board_of(0))
            .unwrap();
        let mut d = directory(&m, 4096, 0);
        d.access(&m, 0, 0, 0, 0x10_0000, AccessKind::Write, BY);
        // The other board reads another line of the page: CPU 0's copy of
        // line 0 is downgraded, still readable, but no longer its own.
        let read = d.access(&m, far, 1_000_000, 8, 0x10_0200, AccessKind::Read, BY);
        assert!(read.done - 1_000_000 >= m.board_ps, "{read:?}");
        let hit = d.access(&m, 0, 2_000_000, 0, 0x10_0000, AccessKind::Read, BY);
        assert_eq!(hit.class, Class::L1Hit);
        let write = d.access(&m, 0, 3_000_000, 0, 0x10_0000, AccessKind::Write, BY);
        assert!(write.done - 3_000_000 >= m.board_ps, "{write:?}");
        // The write took the page: the other board's line 8 is gone.
        let again = d.access(&m, far, 4_000_000, 8, 0x10_0200, AccessKind::Read, BY);
        assert_ne!(again.class, Class::L1Hit);
    }

    #[test]
    fn a_prefetch_for_write_takes_the_line_exclusive_and_writes_nothing() {
        let (m, mut d) = waiting_setup();
        // CPU 1 dirties the line, CPU 2 reads it: both hold copies.
        d.access(&m, 1, 0, 0, 0x1000, AccessKind::Write, BY);
        d.access(&m, 2, 1_000_000, 0, 0x1000, AccessKind::Read, BY);
        let (writes, totals) = (d.writes(0), d.totals.clone());
        d.prefetch_for_write(&m, 0, 2_000_000, 0);
        // Nothing written: no write counted (so no spinner wakes), no access.
        assert_eq!(d.writes(0), writes);
        assert_eq!(d.totals, totals);
        // The line is CPU 0's alone: its store hits, the others' reads miss.
        assert!(d.owned_by(&m, 0, 0));
        let store = d.access(&m, 0, 3_000_000, 0, 0x1000, AccessKind::Write, BY);
        assert_eq!(store.class, Class::L1Hit);
        let read = d.access(&m, 2, 4_000_000, 0, 0x1000, AccessKind::Read, BY);
        assert_eq!(read.class, Class::LclHitm);
    }

    #[test]
    fn a_hit_after_a_prefetch_for_write_waits_for_its_data() {
        let (m, mut d) = waiting_setup();
        d.access(&m, 32, 0, 0, 0x1000, AccessKind::Write, BY);
        d.prefetch_for_write(&m, 0, 1_000_000, 0);
        let store = d.access(&m, 0, 1_000_000, 0, 0x1000, AccessKind::Write, BY);
        assert_eq!(store.class, Class::L1Hit);
        assert!(store.done >= 1_000_000 + m.transfer_ps(32, 0), "{store:?}");
    }

    #[test]
    fn true_and_false_sharing_are_told_apart() {
        let (m, _, mut d) = setup();
        d.access(&m, 0, 0, 0, 0x1000, AccessKind::Write, BY);
        d.access(&m, 1, 1_000_000, 0, 0x1000, AccessKind::Write, BY); // same field
        d.access(&m, 2, 2_000_000, 0, 0x1004, AccessKind::Write, BY); // neighbour field
        assert_eq!((d.totals.true_sharing, d.totals.false_sharing), (1, 1));
        d.access(&m, 3, 3_000_000, 0, 0x1004, AccessKind::Read, BY); // a HITM
        let s = &d.hottest_lines(1)[0];
        assert_eq!((s.lcl_rfo_modified(), s.hitm()), (2, 1));
        assert_eq!(s.offsets().len(), 2);
    }
}
