//! Task programs: what each simulated thread does, one operation at a time,
//! and the user memory it touches. Each benchmark is one file.

pub mod fea_solver;
pub mod lru_lock;
pub mod objects;
pub mod perf_hash;
pub mod perf_lock_pi;
pub mod perf_requeue;
pub mod perf_wake;
pub mod perf_wake_parallel;
pub mod program;
pub mod pthread;
pub mod rounds;
pub mod schbench;
pub mod task_loop;
pub mod time_exit;
pub mod user_memory;
pub mod will_it_scale;

use crate::analysis::population::KeyPopulation;
use crate::engine::{RunWindow, TaskSpec, Timeline};
use crate::kernel::script::Mem;
use crate::machine::Machine;
use crate::memory::{Home, MemoryMap};
use crate::record::Metric;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// A workload as a config names it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "kebab-case", deny_unknown_fields)]
pub enum WorkloadSpec {
    /// perf bench futex hash (kernel-facts.md §6.1).
    PerfHash(perf_hash::PerfHash),
    /// perf bench futex wake (§6.2).
    PerfWake(perf_wake::PerfWake),
    /// perf bench futex wake-parallel (§6.2).
    PerfWakeParallel(perf_wake_parallel::PerfWakeParallel),
    /// perf bench futex requeue (§6.2).
    PerfRequeue(perf_requeue::PerfRequeue),
    /// perf bench futex lock-pi (§6.2).
    PerfLockPi(perf_lock_pi::PerfLockPi),
    /// will-it-scale futex1-4 (§7).
    WillItScale(will_it_scale::WillItScale),
    /// schbench's message and worker threads (§5.4).
    Schbench(schbench::Schbench),
    /// The 2009 report's FEA-style solver: mutexes and barriers in several processes.
    FeaSolver(fea_solver::FeaSolver),
    /// time_exit (seed 002): N pinned children released at once; time until all exited.
    TimeExit(time_exit::TimeExit),
    /// will-it-scale tlb_flush1 on per-node LRU locks (seed 003, NUMA emulation).
    LruLock(lru_lock::LruLock),
    /// A task program written in TOML as a list of steps.
    Program(program::ProgramSpec),
}

/// Calls the same method on whichever workload `$spec` is.
macro_rules! each {
    ($spec:expr, $w:ident => $call:expr) => {
        match $spec {
            WorkloadSpec::PerfHash($w) => $call,
            WorkloadSpec::PerfWake($w) => $call,
            WorkloadSpec::PerfWakeParallel($w) => $call,
            WorkloadSpec::PerfRequeue($w) => $call,
            WorkloadSpec::PerfLockPi($w) => $call,
            WorkloadSpec::WillItScale($w) => $call,
            WorkloadSpec::Schbench($w) => $call,
            WorkloadSpec::FeaSolver($w) => $call,
            WorkloadSpec::TimeExit($w) => $call,
            WorkloadSpec::LruLock($w) => $call,
            WorkloadSpec::Program($w) => $call,
        }
    };
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
}

/// Turns what a run noted (its window; when tasks read the clock and exited)
/// and what the workload's programs measured themselves into the figures the
/// real benchmark prints.
pub type Readout = Box<dyn FnOnce(&RunWindow, &Timeline) -> Vec<Metric>>;

impl WorkloadSpec {
    /// Tasks pinned one per CPU. Helpers that only run while these sleep
    /// (a benchmark's main or waking threads) may share their CPUs.
    pub fn threads(&self, machine: &Machine) -> u32 {
        match self {
            // A fixed count: the solver's config and a TOML program say how many.
            WorkloadSpec::FeaSolver(w) => w.threads(),
            WorkloadSpec::Program(w) => w.threads(),
            WorkloadSpec::PerfHash(w) => w.threads(machine),
            WorkloadSpec::PerfWake(w) => w.threads(machine),
            WorkloadSpec::PerfWakeParallel(w) => w.threads(machine),
            WorkloadSpec::PerfRequeue(w) => w.threads(machine),
            WorkloadSpec::PerfLockPi(w) => w.threads(machine),
            WorkloadSpec::WillItScale(w) => w.threads(machine),
            WorkloadSpec::Schbench(w) => w.threads(machine),
            WorkloadSpec::TimeExit(w) => w.threads(machine),
            WorkloadSpec::LruLock(w) => w.threads(machine),
        }
    }

    /// What the real benchmark would refuse to run, and what serde cannot
    /// check: counts of at least one, expressions that parse.
    pub fn validate(&self, machine: &Machine) -> Result<(), String> {
        match self {
            WorkloadSpec::PerfHash(w) => w.validate(),
            WorkloadSpec::PerfWake(w) => rounds::validate_settle("perf-wake", w.settle_us),
            WorkloadSpec::PerfWakeParallel(w) => w.validate(machine),
            WorkloadSpec::PerfRequeue(w) => rounds::validate_settle("perf-requeue", w.settle_us),
            WorkloadSpec::PerfLockPi(w) => within_a_second("perf-lock-pi: hold_ns", w.hold_ns),
            WorkloadSpec::WillItScale(w) => w.validate(),
            WorkloadSpec::Schbench(w) => within_a_second("schbench: work_ns", w.work_ns),
            WorkloadSpec::FeaSolver(w) => w.validate(),
            WorkloadSpec::TimeExit(w) => w.validate(),
            WorkloadSpec::LruLock(w) => w.validate(),
            WorkloadSpec::Program(w) => w.validate(machine),
        }
    }

    pub fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        each!(self, w => w.setup(machine, memory, rng))
    }

    /// The futex keys the workload makes the kernel hash, as the layout
    /// analysis places them: the same addresses as `setup` for one seed.
    /// None for workloads whose keys are only made as they run.
    pub fn key_population(&self, machine: &Machine) -> Option<KeyPopulation> {
        match self {
            WorkloadSpec::PerfHash(p) => Some(KeyPopulation::PerfHash {
                threads: p.threads(machine),
                futexes: p.futexes,
                shared: p.shared,
            }),
            _ => None,
        }
    }

    pub fn label(&self) -> String {
        each!(self, w => w.label())
    }
}

/// A time a program spends per op, which a run must be able to repeat.
/// Counts of objects a workload lays out (mutexes, vmas, sections of a
/// step): bounded, so a hostile config cannot exhaust memory before it runs.
pub const MAX_OBJECTS: u64 = 1 << 20;

fn at_most_objects(what: &str, count: u64) -> Result<(), String> {
    if count > MAX_OBJECTS {
        return Err(format!(
            "{what} = {count} is more than the {MAX_OBJECTS} futexsim lays out"
        ));
    }
    Ok(())
}

fn within_a_second(what: &str, ns: u64) -> Result<(), String> {
    if ns > 1_000_000_000 {
        return Err(format!(
            "{what} must be at most 1 s (1000000000 ns), not {ns}"
        ));
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
