//! Task programs: what each simulated thread does, one operation at a time,
//! and the user memory it touches. Each benchmark is one file.

pub mod perf_hash;
pub mod user_memory;

use crate::engine::{RunWindow, TaskSpec};
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
    pub fn threads(&self, machine: &Machine) -> u32 {
        match self {
            WorkloadSpec::PerfHash(p) => p.threads(machine),
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
        }
    }

    pub fn label(&self) -> String {
        match self {
            WorkloadSpec::PerfHash(p) => p.label(),
        }
    }
}
