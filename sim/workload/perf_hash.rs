//! perf bench futex hash (tools/perf/bench/futex-hash.c, docs/kernel-facts.md
//! §6.1): each thread, pinned to CPU i mod nCPU, loops FUTEX_WAIT on its own
//! contiguous calloc'd array of futexes with a value that never matches, so
//! every call hashes, takes the bucket lock and returns EAGAIN.
//!
//! Before it creates its threads, perf asks for `-b N` hash slots with
//! prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, N, -I ? FH_FLAG_IMMUTABLE : 0)
//! (60035a3981a7, tools/perf/bench/futex.c); then the main thread creates
//! every worker, which waits until all are created before its loop starts,
//! so each resize of the private hash happens before the first futex op.

use crate::limits::{MAX_PERF_HASH_BUCKETS, MAX_PERF_HASH_WORDS};
use super::futex_words::{FutexWords, WordArray};
use super::perf::{key_kind, shared_flag, threads_flag};
use super::{user_memory, FirstCpu, Setup, Size, Workload, WorkloadError};
use crate::kernel::futex_hash::SetSlots;
use crate::machine::Machine;
use crate::memory::{Home, LineId, MemoryMap, RegionId, PAGE_SHIFT};
use crate::record::{ThreadFutexes, WorkloadKind, PERF_HASH_LABEL};
use crate::task::{FutexOp, KeyKind, Mem, Op, Program, TaskSpec};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerfHash {
    /// -t: threads; the machine's CPU count when absent.
    #[serde(default)]
    pub threads: Option<u32>,
    /// -f: futexes per thread.
    #[serde(default = "default_futexes")]
    pub futexes: u32,
    /// -S: shared futexes instead of private ones.
    #[serde(default)]
    pub shared: bool,
    /// -b: the private hash's slots, set with PR_FUTEX_HASH_SET_SLOTS
    /// before the threads are created; 0 is the global hash. perf's default,
    /// -1, makes no prctl and leaves the kernel to size it at each thread
    /// creation.
    #[serde(default = "no_buckets")]
    pub buckets: i64,
    /// -I: FH_FLAG_IMMUTABLE in the `-b` prctl (the 6.16 release
    /// candidates); without `-b` perf makes no prctl and it does nothing.
    #[serde(default)]
    pub immutable: bool,
    /// Not perf's: the main thread creates a worker every this many ns and
    /// each starts its loop at once, so the private hash grows while the
    /// others run; absent, perf's way, every worker exists before any starts.
    #[serde(default)]
    pub create_every_ns: Option<u64>,
}


fn default_futexes() -> u32 {
    1024
}

fn no_buckets() -> i64 {
    -1
}

impl Default for PerfHash {
    fn default() -> Self {
        PerfHash {
            threads: None,
            futexes: default_futexes(),
            shared: false,
            buckets: no_buckets(),
            immutable: false,
            create_every_ns: None,
        }
    }
}

/// The value perf passes; the words are zero, so every wait fails.
const WAIT_VAL: u32 = 1234;

/// One thread's loop over its array. The words' addresses and lines follow
/// from the array's first word, so they are computed, not stored: at 4096
/// threads a list of them would be 64 MiB, read at one random thread per op.
struct Worker {
    /// The array's first word.
    first: Mem,
    futexes: u32,
    next: u32,
    line_shift: u32,
    kind: KeyKind,
}

impl Worker {
    /// Word `i` of the array; the array lies in one region, whose lines are
    /// numbered consecutively.
    fn word(&self, i: u32) -> Mem {
        let addr = self.first.addr + 4 * u64::from(i);
        let lines_on = (addr >> self.line_shift) - (self.first.addr >> self.line_shift);
        Mem {
            addr,
            line: self.first.line + lines_on as LineId,
        }
    }
}

impl Program for Worker {
    fn next_op(&mut self) -> Op {
        let uaddr = self.word(self.next);
        // The next of its futexes, round-robin (a compare, not a division).
        self.next += 1;
        if self.next == self.futexes {
            self.next = 0;
        }
        Op::Futex(FutexOp::Wait {
            uaddr,
            val: WAIT_VAL,
            kind: self.kind,
        })
    }
}

impl Workload for PerfHash {
    fn label(&self) -> String {
        let mut s = format!(
            "{PERF_HASH_LABEL} -f {}{}{}",
            self.futexes,
            threads_flag(self.threads),
            shared_flag(self.shared)
        );
        if self.buckets >= 0 {
            s += &format!(" -b {}", self.buckets);
        }
        if self.immutable {
            s += " -I";
        }
        if let Some(ns) = self.create_every_ns {
            s += &format!(" (a thread created every {ns} ns)");
        }
        s
    }

    fn kind(&self) -> WorkloadKind {
        WorkloadKind::PerfHash {
            shared: self.shared,
        }
    }

    /// perf refuses neither, but a thread without futexes has nothing to
    /// wait on and no thread runs nothing. Every futex word of every thread
    /// is laid out, so their number is bounded (see [`MAX_PERF_HASH_WORDS`]).
    fn validate(&self, machine: &Machine) -> Result<(), WorkloadError> {
        if self.futexes == 0 {
            return Err(WorkloadError::at(
                "futexes",
                "futexes = 0: each thread needs at least 1",
            ));
        }
        if self.threads == Some(0) {
            return Err(WorkloadError::at(
                "threads",
                "threads = 0: it must be at least 1",
            ));
        }
        // futex_hash_allocate: 0, or a power of two of at least 2 (EINVAL).
        let b = self.buckets;
        if b < -1 || b == 1 || (b > 1 && (b as u64 > MAX_PERF_HASH_BUCKETS || !(b as u64).is_power_of_two())) {
            return Err(WorkloadError::at(
                "buckets",
                format!(
                    "buckets = {b}: -1 makes no prctl; PR_FUTEX_HASH_SET_SLOTS takes 0 or a power of two from 2 to {MAX_PERF_HASH_BUCKETS}"
                ),
            ));
        }
        super::creation::check_create_every(self.create_every_ns)?;
        let words = u64::from(self.threads(machine)) * u64::from(self.futexes);
        if words > MAX_PERF_HASH_WORDS {
            return Err(WorkloadError::at("futexes", format!(
                "futexes = {} on {} threads is {words} futex words, more than the {MAX_PERF_HASH_WORDS} futexsim lays out",
                self.futexes,
                self.threads(machine)
            )));
        }
        Ok(())
    }

    /// -t, or one thread per CPU as perf does by default.
    fn threads(&self, machine: &Machine) -> u32 {
        super::one_per_cpu_unless(self.threads, machine)
    }

    fn size(&self, machine: &Machine) -> Size {
        let threads = u64::from(self.threads(machine));
        // Each thread's array, and the chunk glibc puts between two (its
        // DTV) where they follow one another on the heap.
        let array = u64::from(self.futexes) * 4 + ARRAY_GAP;
        Size {
            tasks: threads,
            processes: 1,
            futexes: threads * u64::from(self.futexes),
            lines: threads.saturating_mul(super::lines_of(array, machine)),
            held_bytes: 0,
        }
    }

    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        self.setup_from(FirstCpu::default(), machine, memory, rng)
    }

    fn placed_words(&self, threads: u32, rng: &mut Xoshiro256PlusPlus) -> Option<FutexWords> {
        Some(self.place(threads, rng))
    }

    fn set_slots(&self) -> Option<SetSlots> {
        u64::try_from(self.buckets).ok().map(|slots| SetSlots {
            slots,
            immutable: self.immutable,
        })
    }

    fn create_every_ns(&self) -> Option<u64> {
        self.create_every_ns
    }
}


/// At most what lies between two threads' arrays on the heap beside their
/// chunk headers: the next thread's DTV (user_memory::perf_hash_arrays).
const ARRAY_GAP: u64 = 512;

impl PerfHash {
    /// Lays perf out with its threads pinned from `first_cpu` on: its
    /// main thread, which callocs every array, runs on that CPU's node.
    pub fn setup_from(
        &self,
        first_cpu: FirstCpu,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let threads = self.threads(machine);
        let words = self.place(threads, rng);
        let arrays: Vec<u64> = words.arrays.iter().map(|a| a.base).collect();
        let bytes = u64::from(self.futexes) * 4;
        let main_node = machine.node_of(first_cpu.cpu_of(0, machine));
        let regions = array_regions(&arrays, bytes, Home::Node(main_node), memory);
        let tasks = arrays
            .iter()
            .enumerate()
            .zip(regions)
            .map(|((i, &base), region)| TaskSpec {
                cpu: first_cpu.cpu_of(i as u32, machine),
                program: Box::new(Worker {
                    first: Mem {
                        addr: base,
                        line: memory.line_in(region, base),
                    },
                    futexes: self.futexes,
                    next: 0,
                    line_shift: memory.line_size().trailing_zeros(),
                    kind: words.kind,
                }),
            })
            .collect();
        let thread_futexes = words
            .arrays
            .iter()
            .map(|array| ThreadFutexes {
                first: array.base,
                last: array.base + 4 * u64::from(array.words.saturating_sub(1)),
            })
            .collect();
        Setup {
            tasks,
            task_process: vec![0; threads as usize],
            mms: words.mms.clone(),
            futexes: u64::from(threads) * u64::from(self.futexes),
            lock_names: Vec::new(),
            readout: None,
            keys: Some(words),
            thread_futexes,
        }
    }

    /// Every random choice perf's futexes depend on, in the order it makes
    /// them: the process's mm_struct, then each thread's array.
    pub fn place(&self, threads: u32, rng: &mut Xoshiro256PlusPlus) -> FutexWords {
        let mms = user_memory::mm_addresses(1, rng);
        let arrays = user_memory::perf_hash_arrays(threads, self.futexes, rng)
            .into_iter()
            .map(|base| WordArray {
                base,
                words: self.futexes,
                process: 0,
            })
            .collect();
        FutexWords {
            mms,
            threads: vec![threads.into()],
            arrays,
            kind: key_kind(self.shared),
        }
    }
}

/// Adds the threads' arrays to the memory map and returns each array's
/// region. The main thread allocates every array, so all are on its node.
/// Arrays less than a page apart (calloc'd on the heap) share a region, as
/// their edges may share a line; arrays mmap'd with thread stacks between
/// them get a region each, so the directory holds no lines of the stacks.
fn array_regions(arrays: &[u64], bytes: u64, home: Home, memory: &mut MemoryMap) -> Vec<RegionId> {
    let mut by_address: Vec<usize> = (0..arrays.len()).collect();
    by_address.sort_by_key(|&i| arrays[i]);
    // Runs of arrays, each run a (first, end) byte range and its arrays.
    let mut runs: Vec<(u64, u64, Vec<usize>)> = Vec::new();
    for i in by_address {
        match runs.last_mut() {
            Some((_, end, members)) if arrays[i] < *end + (1 << PAGE_SHIFT) => {
                *end = arrays[i] + bytes;
                members.push(i);
            }
            _ => runs.push((arrays[i], arrays[i] + bytes, vec![i])),
        }
    }
    let mut region_of = vec![0; arrays.len()];
    for (first, end, members) in runs {
        let region = memory.add("perf bench futex arrays", first, end - first, home);
        for i in members {
            region_of[i] = region;
        }
    }
    region_of
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets::preset;
    use crate::record::WorkloadName;
    use rand::SeedableRng;

    /// Small arrays sit side by side on the heap; large ones are mmap'd with
    /// a thread's stack between each two. Either way the memory map holds
    /// the arrays' lines and little else.
    #[test]
    fn the_memory_map_holds_the_arrays_not_the_stacks_between_them() {
        let machine = Machine::new(preset("uv-512").unwrap()).unwrap();
        for futexes in [1024, 32768] {
            let workload = PerfHash {
                threads: Some(64),
                futexes,
                ..PerfHash::default()
            };
            let mut memory = MemoryMap::new(machine.line_size());
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
            let setup = workload.setup(&machine, &mut memory, &mut rng);
            assert_eq!(setup.tasks.len(), 64);
            let array_lines = u64::from(futexes) * 4 / machine.line_size();
            let lines = u64::from(memory.lines());
            assert!(
                (64 * array_lines..64 * (array_lines + 16)).contains(&lines),
                "{futexes} futexes: {lines} lines for 64 arrays of {array_lines}"
            );
        }
    }

    /// `-b` takes what PR_FUTEX_HASH_SET_SLOTS takes (0 or a power of two
    /// of at least 2) or perf's -1 for no prctl; `-I` rides on the `-b` prctl.
    #[test]
    fn buckets_are_checked_as_the_prctl_checks_them() {
        let machine = Machine::new(preset("uv-512").unwrap()).unwrap();
        let with = |buckets, immutable| PerfHash {
            threads: Some(8),
            buckets,
            immutable,
            ..PerfHash::default()
        };
        for ok in [-1, 0, 2, 1024] {
            assert_eq!(with(ok, false).validate(&machine), Ok(()), "{ok}");
        }
        for bad in [-2, 1, 3, 48] {
            let err = with(bad, false).validate(&machine).unwrap_err();
            assert_eq!(err.key, Some("buckets"), "{bad}");
        }
        assert_eq!(with(-1, true).set_slots(), None);
        assert_eq!(
            with(0, true).set_slots(),
            Some(SetSlots {
                slots: 0,
                immutable: true
            })
        );
        assert_eq!(with(64, true).label(), "perf bench futex hash -f 1024 -t 8 -b 64 -I");
    }

    /// A record read back knows perf bench futex hash, shared or not,
    /// from its label alone, whatever other options the label carries.
    #[test]
    fn its_kind_is_read_back_from_its_label_with_every_option() {
        for shared in [false, true] {
            for (buckets, immutable, create_every_ns) in
                [(-1, false, None), (64, true, None), (0, false, Some(2000))]
            {
                let workload = PerfHash {
                    threads: Some(8),
                    shared,
                    buckets,
                    immutable,
                    create_every_ns,
                    ..PerfHash::default()
                };
                let read = WorkloadName::parse(&workload.label());
                assert_eq!(read, workload.name(), "{}", workload.label());
                assert_eq!(read.kind, WorkloadKind::PerfHash { shared });
            }
        }
    }
}
