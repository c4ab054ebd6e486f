//! Counting accesses into their lines' records, beside the event loop.
//!
//! Counting an access touches its line's record, some 250 bytes rarely in
//! the host's cache when the access happens: in the event loop those misses
//! were a sixth of its time, and counting a batch at a time, grouped, still
//! a tenth. So the event loop only keeps each access as a 16-byte sample;
//! a full batch goes to a thread of its own that holds the records and
//! counts it while the event loop fills the next (two batches in all, so
//! the loop waits only if counting one batch took longer than taking the
//! next). A short run never fills a batch and starts no thread; where none
//! can start, batches are counted in the loop's thread as before.
//!
//! A record holds sums and sets, and batches are counted whole, in the
//! order they were taken, with the warm-up's reset between the samples
//! before it and those after: the records come out as counting each access
//! at once would leave them, whatever the host's threads do.

use super::stats::Records;
use super::{AccessKind, Class};
use crate::machine::Ps;
use crate::memory::LineId;
use crate::symbol::Symbol;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

/// Accesses waiting to be counted into their lines' records, and the
/// records (here, or with the thread that counts them).
pub(super) struct Counter {
    batch: Batch,
    /// Records named so far: the number the next line's record gets.
    named: u32,
    cpus: usize,
    counting: Counting,
}

/// Where batches are counted.
enum Counting {
    /// In the event loop's thread: until the first batch fills, and for good
    /// where no thread could start.
    Here {
        records: Records,
        scratch: Vec<Sample>,
    },
    /// By a thread of its own, which hands each batch back once counted.
    Beside {
        batches: Sender<Batch>,
        counted: Receiver<Batch>,
        thread: JoinHandle<Records>,
    },
    /// Only while the records move between the two.
    Moving,
}

/// The samples taken between two hand-overs, and what the counter must do
/// before it counts them.
struct Batch {
    /// Lines whose records were named since the last batch, in order.
    new_lines: Vec<LineId>,
    /// The warm-up ended since the last batch: every count so far is dropped
    /// before this batch's samples are counted.
    reset: bool,
    samples: Vec<Sample>,
    /// Accesses too slow for a sample's 56 bits of latency, and theirs.
    slow: Vec<(Sample, Ps)>,
    /// Samples of each run, counted as they are taken, so that grouping
    /// them reads the batch once.
    runs: [u32; RUNS],
    /// The record number's bits below those that choose its run: the top
    /// eight of the records there were when the batch began (a record
    /// named since goes to the last run).
    shift: u32,
}

/// One access: its latency in ps, the function that made it in the byte
/// above, its kind and class in the top byte.
#[derive(Clone, Copy, Default)]
struct Sample {
    ps_kind_class: u64,
    /// Number of the line's record.
    stats: u32,
    cpu: u16,
    offset: u16,
}

/// Samples a batch holds: 1 MiB. The more samples a batch, the more
/// accesses each record loaded counts: at 4096 CPUs this is 4% faster than
/// half of it, at 64 CPUs the same; twice it is slower at 64 CPUs.
const BATCH: usize = 1 << 16;
/// Grouped into 256 runs of neighbouring records, each record is loaded
/// about once a batch, the runs in address order, each run's records small
/// enough together to stay in the host's cache while its samples count.
const RUNS: usize = 256;
/// 48 bits of picoseconds: any access under 281 seconds.
const PS_BITS: u32 = 48;
/// The symbol's byte, above the latency.
const SYMBOL_SHIFT: u32 = PS_BITS;
/// The class's three bits and the kind's two, above the symbol.
const CLASS_SHIFT: u32 = PS_BITS + 8;

impl Counter {
    pub(super) fn new(cpus: usize) -> Counter {
        Counter {
            batch: Batch::new(0),
            named: 0,
            cpus,
            counting: Counting::Here {
                records: Records::default(),
                scratch: Vec::new(),
            },
        }
    }

    /// Names a record for `line`, which first moved between caches: its number.
    pub(super) fn name(&mut self, line: LineId) -> u32 {
        self.batch.new_lines.push(line);
        self.named += 1;
        self.named - 1
    }

    /// Keeps an access for the record `stats`, made at `offset` by the
    /// function `by`, handing the batch over to be counted when it is full.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add(
        &mut self,
        stats: u32,
        offset: u16,
        by: Symbol,
        cpu: u32,
        kind: AccessKind,
        class: Class,
        ps: Ps,
    ) {
        let b = &mut self.batch;
        let sample = Sample {
            ps_kind_class: ps & ((1 << PS_BITS) - 1)
                | (by as u64) << SYMBOL_SHIFT
                | (kind as u64) << (CLASS_SHIFT + 3)
                | (class as u64) << CLASS_SHIFT,
            stats,
            cpu: cpu as u16,
            offset,
        };
        if ps >> PS_BITS != 0 {
            // Minutes for one access: no room in a sample.
            b.slow.push((sample, ps));
            return;
        }
        b.runs[run_of(stats, b.shift)] += 1;
        b.samples.push(sample);
        if b.samples.len() == BATCH {
            self.hand_over();
        }
    }

    /// Forgets every count taken so far (the warm-up's end); the records
    /// stay, for the lines they name.
    pub(super) fn reset(&mut self) {
        let b = &mut self.batch;
        b.samples.clear();
        b.slow.clear();
        b.runs = [0; RUNS];
        b.reset = true;
    }

    /// The records, with every access kept so far counted (the thread, if
    /// one counts, has ended: its records are here again).
    pub(super) fn records(&mut self) -> &Records {
        if let Counting::Beside { .. } = self.counting {
            let last = std::mem::replace(&mut self.batch, Batch::new(self.named));
            match std::mem::replace(&mut self.counting, Counting::Moving) {
                Counting::Beside {
                    batches, thread, ..
                } => {
                    // A send fails only if the thread is gone; its join says why.
                    let _ = batches.send(last);
                    drop(batches);
                    self.counting = Counting::Here {
                        records: join(thread),
                        scratch: Vec::new(),
                    };
                }
                _ => unreachable!("a thread counts"),
            }
        }
        let Counting::Here { records, scratch } = &mut self.counting else {
            unreachable!("the records are here once no thread counts")
        };
        self.batch.count_into(records, scratch, self.cpus);
        self.batch.begin(self.named);
        records
    }

    /// The full batch goes to be counted; the loop fills the other.
    fn hand_over(&mut self) {
        match std::mem::replace(&mut self.counting, Counting::Moving) {
            Counting::Here {
                mut records,
                mut scratch,
            } => match start_thread(self.cpus) {
                Some((hand, batches, counted, thread)) => {
                    let full = std::mem::replace(&mut self.batch, Batch::new(self.named));
                    // The thread has just started, waiting for these.
                    let _ = hand.send(records);
                    let _ = batches.send(full);
                    self.counting = Counting::Beside {
                        batches,
                        counted,
                        thread,
                    };
                }
                None => {
                    // No thread to be had: this batch and every later one count here.
                    self.batch.count_into(&mut records, &mut scratch, self.cpus);
                    self.batch.begin(self.named);
                    self.counting = Counting::Here { records, scratch };
                }
            },
            Counting::Beside {
                batches,
                counted,
                thread,
            } => {
                // The batch handed over before this one comes back counted.
                if let Ok(mut empty) = counted.recv() {
                    empty.begin(self.named);
                    let full = std::mem::replace(&mut self.batch, empty);
                    if batches.send(full).is_ok() {
                        self.counting = Counting::Beside {
                            batches,
                            counted,
                            thread,
                        };
                        return;
                    }
                }
                // The thread is gone, which only a panic there does: it is the run's.
                drop(batches);
                join(thread);
                unreachable!("a counting thread ends only when told to");
            }
            Counting::Moving => unreachable!("the records move only within one call"),
        }
    }
}

/// The channels to a new counting thread and the thread; None where the
/// host would not start one.
#[allow(clippy::type_complexity)]
fn start_thread(
    cpus: usize,
) -> Option<(
    Sender<Records>,
    Sender<Batch>,
    Receiver<Batch>,
    JoinHandle<Records>,
)> {
    let (hand, records) = channel::<Records>();
    let (batches, to_count) = channel::<Batch>();
    let (give_back, counted) = channel::<Batch>();
    let thread = std::thread::Builder::new()
        .name("futexsim-count".into())
        .spawn(move || {
            // The sender of the records lives until they are sent.
            let Ok(mut records) = records.recv() else {
                return Records::default();
            };
            let mut scratch = Vec::with_capacity(BATCH);
            for mut batch in to_count {
                batch.count_into(&mut records, &mut scratch, cpus);
                // The loop may have stopped taking batches back: it is ending.
                let _ = give_back.send(batch);
            }
            records
        })
        .ok()?;
    Some((hand, batches, counted, thread))
}

/// The counting thread's records once it ends; a panic there is the run's.
fn join(thread: JoinHandle<Records>) -> Records {
    match thread.join() {
        Ok(records) => records,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

impl Batch {
    fn new(named: u32) -> Batch {
        let mut b = Batch {
            new_lines: Vec::new(),
            reset: false,
            samples: Vec::with_capacity(BATCH),
            slow: Vec::new(),
            runs: [0; RUNS],
            shift: 0,
        };
        b.begin(named);
        b
    }

    /// Empty, to be filled from now, when `named` records exist.
    fn begin(&mut self, named: u32) {
        self.new_lines.clear();
        self.reset = false;
        self.samples.clear();
        self.slow.clear();
        self.runs = [0; RUNS];
        self.shift = (u32::BITS - named.leading_zeros()).saturating_sub(8);
    }

    /// Counts the batch into `records`: the records it names first, then
    /// the reset it carries, then its samples, a run of neighbouring
    /// records at a time.
    fn count_into(&mut self, records: &mut Records, scratch: &mut Vec<Sample>, cpus: usize) {
        for &line in &self.new_lines {
            records.push(line);
        }
        if self.reset {
            records.reset();
        }
        records.reserve((self.samples.len() + self.slow.len()) as u64);
        for &(s, ps) in &self.slow {
            records
                .get_mut(s.stats)
                .record(s.offset, s.by(), s.cpu, s.kind(), s.class(), ps, cpus);
        }
        self.group_by_records(scratch);
        const LOOKAHEAD: usize = 16;
        for i in 0..self.samples.len() {
            if let Some(ahead) = self.samples.get(i + LOOKAHEAD) {
                crate::prefetch::prefetch_whole(records.get(ahead.stats));
            }
            let s = self.samples[i];
            records.get_mut(s.stats).record(
                s.offset,
                s.by(),
                s.cpu,
                s.kind(),
                s.class(),
                s.ps(),
                cpus,
            );
        }
    }

    /// The scatter of a counting sort on the top byte of the record number
    /// (the counts taken with the samples): 256 runs of neighbouring
    /// records, in order; a full sort would need a pass a byte and give no
    /// more locality than the runs already have.
    fn group_by_records(&mut self, scratch: &mut Vec<Sample>) {
        let mut starts = [0usize; RUNS];
        let mut at = 0;
        for (start, &n) in starts.iter_mut().zip(&self.runs) {
            *start = at;
            at += n as usize;
        }
        scratch.clear();
        scratch.resize(self.samples.len(), Sample::default());
        for s in &self.samples {
            let run = run_of(s.stats, self.shift);
            scratch[starts[run]] = *s;
            starts[run] += 1;
        }
        std::mem::swap(&mut self.samples, scratch);
    }
}

impl Sample {
    fn kind(self) -> AccessKind {
        AccessKind::ALL[(self.ps_kind_class >> (CLASS_SHIFT + 3)) as usize & 3]
    }

    fn class(self) -> Class {
        Class::ALL[(self.ps_kind_class >> CLASS_SHIFT) as usize & 7]
    }

    fn by(self) -> Symbol {
        Symbol::ALL[(self.ps_kind_class >> SYMBOL_SHIFT) as usize & 0xff]
    }

    fn ps(self) -> Ps {
        self.ps_kind_class & ((1 << PS_BITS) - 1)
    }
}

/// The run a sample of record `stats` is counted in, its number's bits
/// below `shift` dropped.
#[inline]
fn run_of(stats: u32, shift: u32) -> usize {
    ((stats >> shift) as usize).min(RUNS - 1)
}

#[cfg(test)]
mod tests {
    use super::super::stats::LineStats;
    use super::*;

    fn digest(r: &LineStats<u64>) -> String {
        let offsets: Vec<_> = r
            .offsets()
            .iter()
            .map(|o| {
                let mut cpus = Vec::new();
                o.cpus.for_each(|c| cpus.push(c));
                cpus.sort_unstable();
                (
                    (o.offset, o.by),
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
            "{} {} {} {} {} {:?}",
            r.line, r.lcl_hit, r.rmt_hit, r.dram_lcl, r.dram_rmt, offsets
        )
    }

    /// Accesses counted in batches beside the loop into u32 records (several
    /// batches, one access too slow for a sample among them, records in
    /// three chunks named as accesses come, the warm-up's reset between two
    /// hand-overs) leave every record as counting each access at once in
    /// u64 does.
    #[test]
    fn batches_counted_beside_count_as_accesses_one_by_one() {
        let lines = 2 * 1024 + 300;
        let mut direct: Vec<LineStats<u64>> = Vec::new();
        let mut counter = Counter::new(96);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let accesses = 3 * BATCH + 123;
        for i in 0..accesses {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let line = (x % lines) as u32;
            // Records are named in the order lines first move.
            while direct.len() <= line as usize {
                let n = direct.len() as u32;
                assert_eq!(counter.name(n), n);
                direct.push(LineStats::new(n));
            }
            let offset = (x >> 20) as u16 % 64;
            let cpu = (x >> 30) as u32 % 96;
            let kind = AccessKind::ALL[(x >> 40) as usize % 3];
            let class = Class::ALL[(x >> 44) as usize % 7];
            let by = Symbol::ALL[(x >> 47) as usize % Symbol::ALL.len()];
            let ps = if i == 777 || i == 2 * BATCH + 9 {
                1 << PS_BITS
            } else {
                (x >> 50) % 100_000
            };
            if i == BATCH + BATCH / 2 {
                counter.reset();
                for d in &mut direct {
                    *d = LineStats::new(d.line);
                }
            }
            direct[line as usize].record(offset, by, cpu as u16, kind, class, ps, 96);
            counter.add(line, offset, by, cpu, kind, class, ps);
        }
        assert!(matches!(counter.counting, Counting::Beside { .. }));
        let records = counter.records();
        for (i, d) in direct.iter().enumerate() {
            assert_eq!(digest(&records.widened(i as u32)), digest(d), "record {i}");
        }
    }
}
