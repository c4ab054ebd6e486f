//! Task programs: what each simulated thread does, one operation at a time,
//! and the user memory it touches. Each benchmark is one file whose type
//! implements [`Workload`]; the `workloads!` list below registers it (its
//! config name, file and type), the one line a new benchmark adds here.
//! Everything a program is made of comes from crate::task.

pub mod creation;
mod error;
pub mod futex_words;
pub mod lead;
pub mod objects;
pub mod perf;
pub mod primitives;
pub mod rounds;
pub mod task_loop;
pub mod user_memory;

pub use error::WorkloadError;

use crate::kernel::futex_hash::SetSlots;
use crate::limits::MAX_OBJECTS;
use crate::machine::Machine;
use crate::memory::{Home, MemoryMap};
use crate::record::{Metric, TaskGroup, ThreadFutexes, WorkloadKind, WorkloadName};
use crate::task::{Mem, RunWindow, TaskSpec, Timeline};
use futex_words::FutexWords;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// What every benchmark is: the tasks it pins, what it refuses to run, how
/// it lays itself out for a run, and how a record names it.
pub trait Workload {
    /// How a record names it: the benchmark and its options.
    fn label(&self) -> String;

    /// What a report tells it apart as (a record read back has it from
    /// its label, `WorkloadName::parse`).
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Other
    }

    /// Its label and its kind, as its record names it.
    fn name(&self) -> WorkloadName {
        WorkloadName {
            label: self.label(),
            kind: self.kind(),
        }
    }

    /// Tasks pinned one per CPU. Helpers that only run while these sleep
    /// (a benchmark's main or waking threads) may share their CPUs.
    fn threads(&self, machine: &Machine) -> u32;

    /// What the real benchmark would refuse to run, and what serde cannot
    /// check: counts of at least one, expressions that parse, no more
    /// futex words than futexsim lays out.
    fn validate(&self, machine: &Machine) -> Result<(), WorkloadError>;

    /// Lays the workload out for one run: its tasks and processes, its user
    /// memory and kernel objects, each random choice (ASLR bases, slab
    /// pages) drawn from `rng`.
    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup;

    /// What `setup` lays out, counted from the workload's numbers without
    /// laying anything out: what a run's memory is estimated from before
    /// it is laid out (crate::footprint), so that one too large for the
    /// host is refused instead of aborting as it is laid out.
    fn size(&self, machine: &Machine) -> Size;

    /// The futex words `setup` places for `threads` threads, drawn from
    /// `rng` as `setup` draws them, for a layout analysis with no run; None
    /// for a workload whose keys the analysis does not describe. A run's
    /// own are in `Setup::keys`.
    fn placed_words(&self, _threads: u32, _rng: &mut Xoshiro256PlusPlus) -> Option<FutexWords> {
        None
    }

    /// What each process asks with prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS)
    /// before it creates its threads (perf bench's `-b N`, `-I`); None: nothing.
    fn set_slots(&self) -> Option<SetSlots> {
        None
    }

    /// Whether any of its futex words are FUTEX2_NUMA ones.
    fn numa_futexes(&self) -> bool {
        false
    }

    /// The time between one thread's creation and the next one's in each
    /// process (creation.rs), in ns; None: every thread exists before any
    /// starts, as the benchmarks do.
    fn create_every_ns(&self) -> Option<u64> {
        None
    }

    /// The names of the figures its readout reports beyond the record's own
    /// fields (`Metric`), as a validation case reads them (`extra.<name>`):
    /// known before any run. None for a workload without a readout.
    fn figures(&self) -> Vec<String> {
        Vec::new()
    }

    /// Its processes in parts whose processes have alike threads, each
    /// counted as `size` counts the whole: what the estimate sizes each
    /// process's private hash from. One part but for a mix (mix.rs),
    /// whose groups' processes size their tables each from its own threads.
    fn parts(&self, machine: &Machine) -> Vec<Size> {
        vec![self.size(machine)]
    }

    /// Its groups of tasks, each read apart in the record (`GroupRecord`):
    /// none but for a mix.
    fn task_groups(&self, _machine: &Machine) -> Vec<TaskGroup> {
        Vec::new()
    }
}

/// The CPU a workload pins its first task to; the next ones follow it,
/// round the machine's CPUs. A workload alone starts at CPU 0; each group of
/// a mix starts where the one before it ended (mix.rs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FirstCpu(pub u32);

impl FirstCpu {
    /// The CPU of the workload's `task`th task.
    pub fn cpu_of(self, task: u32, machine: &Machine) -> u32 {
        ((u64::from(self.0) + u64::from(task)) % u64::from(machine.cpus())) as u32
    }
}

/// Declares each workload's module and its variant of [`WorkloadSpec`] from
/// one entry: `Variant => module::Type`, the variant's kebab-case name being
/// the config's `name`.
macro_rules! workloads {
    ($($(#[$doc:meta])* $variant:ident => $module:ident::$ty:ident,)*) => {
        $(pub mod $module;)*

        /// A workload as a config names it.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "name", rename_all = "kebab-case", deny_unknown_fields)]
        pub enum WorkloadSpec {
            $($(#[$doc])* $variant($module::$ty),)*
        }

        impl WorkloadSpec {
            /// The workload the config describes.
            pub fn workload(&self) -> &dyn Workload {
                match self {
                    $(WorkloadSpec::$variant(w) => w,)*
                }
            }
        }
    };
}

workloads! {
    /// perf bench futex hash (docs/kernel-facts.md §6.1).
    PerfHash => perf_hash::PerfHash,
    /// perf bench futex wake (§6.2).
    PerfWake => perf_wake::PerfWake,
    /// perf bench futex wake-parallel (§6.2).
    PerfWakeParallel => perf_wake_parallel::PerfWakeParallel,
    /// perf bench futex requeue (§6.2).
    PerfRequeue => perf_requeue::PerfRequeue,
    /// perf bench futex lock-pi (§6.2).
    PerfLockPi => perf_lock_pi::PerfLockPi,
    /// will-it-scale futex1-4 (§7).
    WillItScale => will_it_scale::WillItScale,
    /// schbench's message and worker threads (§5.4).
    Schbench => schbench::Schbench,
    /// The 2009 report's FEA-style solver: mutexes and barriers in several processes.
    FeaSolver => fea_solver::FeaSolver,
    /// time_exit (seed 002): N pinned children released at once; time until all exited.
    TimeExit => time_exit::TimeExit,
    /// will-it-scale tlb_flush1 on per-node LRU locks (seed 003, NUMA emulation).
    LruLock => lru_lock::LruLock,
    /// A task program written in TOML as a list of steps.
    Program => program::ProgramSpec,
    /// Groups of workloads as processes of one machine, sharing its tables.
    Mix => mix::Mix,
}

/// What a workload lays out, counted from its numbers (`Workload::size`):
/// about what `setup` gives, never laid out. Counts saturate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    /// Tasks, helpers included (`Setup::tasks`).
    pub tasks: u64,
    /// Processes (`Setup::mms`).
    pub processes: u64,
    /// Futex words, for sizing rules (`Setup::futexes`).
    pub futexes: u64,
    /// Coherence lines of the regions it adds to the memory map.
    pub lines: u64,
    /// Bytes its programs and the state they share hold as laid out,
    /// beyond what every task costs (`Program::held_bytes` and more).
    pub held_bytes: u64,
}

/// Lines a region of `bytes` spans at most, wherever it starts.
pub fn lines_of(bytes: u64, machine: &Machine) -> u64 {
    bytes.div_ceil(machine.line_size()).saturating_add(1)
}

/// A workload laid out in memory, ready to run.
#[derive(Default)]
pub struct Setup {
    pub tasks: Vec<TaskSpec>,
    /// The process of each task.
    pub task_process: Vec<u32>,
    /// mm_struct address of each process.
    pub mms: Vec<u64>,
    /// Total futex words, for sizing rules.
    pub futexes: u64,
    /// The names of the workload's own kernel locks, by id (`Op::SpinLock`).
    pub lock_names: Vec<String>,
    /// The workload's own figures, read once the run is over; none without it.
    pub readout: Option<Readout>,
    /// The futex words the tasks use, as `Workload::placed_words` gives
    /// them: what the run's load record analyses. None where that is None.
    pub keys: Option<FutexWords>,
    /// Each thread's futexes, in thread order, where the benchmark prints
    /// them (perf bench futex hash); empty elsewhere.
    pub thread_futexes: Vec<ThreadFutexes>,
}

impl Setup {
    /// Appends `group`, laid out on its own after this one: its processes
    /// numbered after this one's, each mm_struct one of its own (two
    /// groups draw theirs alike, so one taken already is drawn again from
    /// `rng`), its futex words joined to these where both are mapped
    /// alike (else the analysis has no one population to take, and the
    /// run none). The groups a mix takes have no locks of their own and no
    /// readout; the threads' futexes perf prints are perf's own output,
    /// which a mix does not print.
    pub fn append(&mut self, group: Setup, rng: &mut Xoshiro256PlusPlus) {
        let first_process = self.mms.len() as u32;
        let mut mms = group.mms;
        for i in 0..mms.len() {
            while self.mms.contains(&mms[i]) || mms[..i].contains(&mms[i]) {
                mms[i] = user_memory::mm_addresses(1, rng)[0];
            }
        }
        let appended_first = self.tasks.is_empty();
        self.tasks.extend(group.tasks);
        self.task_process
            .extend(group.task_process.iter().map(|p| p + first_process));
        self.futexes = self.futexes.saturating_add(group.futexes);
        self.keys = match (appended_first, self.keys.take(), group.keys) {
            (true, _, Some(words)) => Some(FutexWords {
                mms: mms.clone(),
                ..words
            }),
            (false, Some(mut words), Some(more)) if words.kind == more.kind => {
                words.mms.extend(&mms);
                words.threads.extend(more.threads);
                words
                    .arrays
                    .extend(more.arrays.into_iter().map(|a| futex_words::WordArray {
                        process: a.process + first_process,
                        ..a
                    }));
                Some(words)
            }
            _ => None,
        };
        self.mms.extend(mms);
    }
}

/// Turns what a run noted (its window; when tasks read the clock and exited)
/// and what the workload's programs measured themselves into the figures the
/// real benchmark prints.
pub type Readout = Box<dyn FnOnce(&RunWindow, &Timeline) -> Vec<Metric>>;

fn at_most_objects(what: &str, count: u64) -> Result<(), WorkloadError> {
    if count > MAX_OBJECTS {
        return Err(
            format!("{what} = {count} is more than the {MAX_OBJECTS} futexsim lays out").into(),
        );
    }
    Ok(())
}

/// A count of tasks a config may leave out for one per CPU, as the
/// benchmarks that pin one task to each CPU default; a zero the config
/// gives is refused when the workload is checked.
fn one_per_cpu_unless(count: Option<u32>, machine: &Machine) -> u32 {
    count.unwrap_or(machine.cpus())
}

/// A count the config gives (`what`, named as its error says) must be at
/// least 1: a run of no tasks measures nothing.
fn at_least_one(what: &str, count: Option<u32>) -> Result<(), WorkloadError> {
    if count == Some(0) {
        return Err(format!("{what} must be at least 1").into());
    }
    Ok(())
}

/// A time a program spends per op, which a run must be able to repeat.
fn within_a_second(what: &str, ns: u64) -> Result<(), WorkloadError> {
    if ns > 1_000_000_000 {
        return Err(format!("{what} must be at most 1 s (1000000000 ns), not {ns}").into());
    }
    Ok(())
}

/// User words at `addrs` (4 bytes each), in one region of `node`'s memory
/// that spans them all.
pub fn user_words(memory: &mut MemoryMap, name: &str, addrs: &[u64], node: u32) -> Vec<Mem> {
    let lo = addrs.iter().copied().min().unwrap_or(0);
    let hi = addrs.iter().copied().max().unwrap_or(0) + 4;
    let region = memory.add(name, lo, hi - lo, Home::Node(node));
    addrs
        .iter()
        .map(|&addr| Mem {
            addr,
            line: memory.line_in(region, addr),
        })
        .collect()
}
