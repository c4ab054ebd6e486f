//! Task programs: what each simulated thread does, one operation at a time,
//! and the user memory it touches. Each benchmark is one file.

pub mod perf_hash;
pub mod perf_lock_pi;
pub mod perf_requeue;
pub mod perf_wake;
pub mod perf_wake_parallel;
pub mod rounds;
pub mod schbench;
pub mod user_memory;
pub mod will_it_scale;

use crate::engine::{RunWindow, TaskSpec};
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
        }
    };
}

/// A workload laid out in memory, ready to run.
pub struct Setup {
    pub tasks: Vec<TaskSpec>,
    /// The process of each task.
    pub task_process: Vec<u32>,
    /// mm_struct address of each process.
    pub mms: Vec<u64>,
    /// Total futex words, for sizing rules.
    pub futexes: u64,
    /// Reads what the programs measured, once the run is over.
    pub readout: Option<Readout>,
}

/// Turns what a workload's programs measured into its own figures, for the
/// counted window.
pub type Readout = Box<dyn FnOnce(&RunWindow) -> Vec<Metric>>;

impl WorkloadSpec {
    /// Tasks pinned one per CPU. Helpers that only run while these sleep
    /// (a benchmark's main or waking threads) may share their CPUs.
    pub fn threads(&self, machine: &Machine) -> u32 {
        each!(self, w => w.threads(machine))
    }

    /// What the real benchmark would refuse to run.
    pub fn validate(&self, machine: &Machine) -> Result<(), String> {
        match self {
            WorkloadSpec::PerfHash(w) if w.futexes == 0 => {
                Err("perf bench futex hash: -f must be at least 1".into())
            }
            WorkloadSpec::PerfHash(_) => Ok(()),
            WorkloadSpec::PerfWake(w) => rounds::validate_settle("perf-wake", w.settle_us),
            WorkloadSpec::PerfWakeParallel(w) => w.validate(machine),
            WorkloadSpec::PerfRequeue(w) => rounds::validate_settle("perf-requeue", w.settle_us),
            WorkloadSpec::PerfLockPi(w) => within_a_second("perf-lock-pi: hold_ns", w.hold_ns),
            WorkloadSpec::WillItScale(w) => w.validate(),
            WorkloadSpec::Schbench(w) => within_a_second("schbench: work_ns", w.work_ns),
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

    pub fn label(&self) -> String {
        each!(self, w => w.label())
    }
}

/// A time a program spends per op, which a run must be able to repeat.
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
