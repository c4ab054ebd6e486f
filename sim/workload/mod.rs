//! Task programs: what each simulated thread does, one operation at a time,
//! and the user memory it touches. Each benchmark is one file.

pub mod fea_solver;
pub mod lru_lock;
pub mod objects;
pub mod perf_hash;
pub mod program;
pub mod pthread;
pub mod task_loop;
pub mod time_exit;
pub mod user_memory;

use crate::analysis::population::KeyPopulation;
use crate::engine::{TaskSpec, Timeline};
use crate::machine::Machine;
use crate::memory::MemoryMap;
use crate::record::Metric;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// A workload as a config names it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "kebab-case", deny_unknown_fields)]
pub enum WorkloadSpec {
    /// perf bench futex hash (kernel-facts.md §6.1).
    PerfHash(perf_hash::PerfHash),
    /// The 2009 report's FEA-style solver: mutexes and barriers in several processes.
    FeaSolver(fea_solver::FeaSolver),
    /// time_exit (seed 002): N pinned children released at once; time until all exited.
    TimeExit(time_exit::TimeExit),
    /// will-it-scale tlb_flush1 on per-node LRU locks (seed 003, NUMA emulation).
    LruLock(lru_lock::LruLock),
    /// A task program written in TOML as a list of steps.
    Program(program::ProgramSpec),
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
}

impl WorkloadSpec {
    pub fn threads(&self, machine: &Machine) -> u32 {
        match self {
            WorkloadSpec::PerfHash(p) => p.threads(machine),
            WorkloadSpec::FeaSolver(f) => f.threads(),
            WorkloadSpec::TimeExit(t) => t.threads(machine),
            WorkloadSpec::LruLock(l) => l.threads(machine),
            WorkloadSpec::Program(p) => p.threads(),
        }
    }

    pub fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        match self {
            WorkloadSpec::PerfHash(p) => p.setup(machine, memory, rng),
            WorkloadSpec::FeaSolver(f) => f.setup(machine, memory, rng),
            WorkloadSpec::TimeExit(t) => t.setup(machine, memory, rng),
            WorkloadSpec::LruLock(l) => l.setup(machine, memory, rng),
            WorkloadSpec::Program(p) => p.setup(machine, memory, rng),
        }
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
            WorkloadSpec::FeaSolver(_)
            | WorkloadSpec::TimeExit(_)
            | WorkloadSpec::LruLock(_)
            | WorkloadSpec::Program(_) => None,
        }
    }

    pub fn label(&self) -> String {
        match self {
            WorkloadSpec::PerfHash(p) => p.label(),
            WorkloadSpec::FeaSolver(f) => f.label(),
            WorkloadSpec::TimeExit(t) => t.label(),
            WorkloadSpec::LruLock(l) => l.label(),
            WorkloadSpec::Program(p) => p.label(),
        }
    }

    /// Checks what serde cannot: counts of at least one, expressions that parse.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            WorkloadSpec::PerfHash(p) => p.validate(),
            WorkloadSpec::FeaSolver(f) => f.validate(),
            WorkloadSpec::TimeExit(t) => t.validate(),
            WorkloadSpec::LruLock(l) => l.validate(),
            WorkloadSpec::Program(p) => p.validate(),
        }
    }

    /// The workload's own figures, from when its tasks read the clock and exited.
    pub fn figures(&self, timeline: &Timeline) -> Vec<Metric> {
        match self {
            WorkloadSpec::PerfHash(_) => Vec::new(),
            WorkloadSpec::FeaSolver(f) => f.figures(timeline),
            WorkloadSpec::TimeExit(t) => t.figures(timeline),
            WorkloadSpec::LruLock(l) => l.figures(timeline),
            WorkloadSpec::Program(p) => p.figures(timeline),
        }
    }
}
