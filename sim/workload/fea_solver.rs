//! The FEA-style solver of the 2009 private-futex-hash report (seed 000,
//! docs/kernel-facts.md §5.1): several multi-threaded processes, each thread
//! alternating compute phases with pthread mutexes (the assembly of shared
//! rows) and a barrier per step, all private futexes. On a shared global
//! table the mutexes and barriers of unrelated processes hash onto the
//! same or neighbouring buckets; with per-process tables they cannot.
//!
//! What the real solver does that the model leaves out: its memory traffic
//! on matrices (only the lock words, the barrier words and the kernel's
//! futex lines are simulated), uneven work between threads and steps,
//! adaptive spinning in glibc's mutex, and I/O. The solver in the report is
//! not public; its shape here (lock counts, phase lengths) is a parameter
//! set, not a measurement.

use super::WorkloadError;
use super::primitives::Barrier;
use super::task_loop::{Action, Body, TaskLoop};
use super::{lines_of, user_memory, Setup, Size, Workload};
use crate::machine::Machine;
use crate::memory::{Home, MemoryMap};
use crate::record::{Metric, WorkloadKind};
use crate::task::{KeyKind, Mem, Op, RunWindow, TaskSpec, Timeline, UserWord};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeaSolver {
    #[serde(default = "default_processes")]
    pub processes: u32,
    #[serde(default = "default_threads")]
    pub threads_per_process: u32,
    /// pthread mutexes per process, one 40-byte pthread_mutex_t after another.
    #[serde(default = "default_mutexes")]
    pub mutexes: u32,
    /// Mutex sections per step, spread over the step's compute.
    #[serde(default = "default_sections")]
    pub sections_per_step: u32,
    /// Compute per step and thread, outside any lock.
    #[serde(default = "default_step_ns")]
    pub step_ns: u64,
    /// Work inside one mutex section.
    #[serde(default = "default_section_ns")]
    pub section_ns: u64,
    /// Steps to solve; every thread exits after them.
    #[serde(default = "default_steps")]
    pub steps: u64,
}

fn default_processes() -> u32 {
    4
}
fn default_threads() -> u32 {
    8
}
fn default_mutexes() -> u32 {
    16
}
fn default_sections() -> u32 {
    8
}
fn default_step_ns() -> u64 {
    20_000
}
fn default_section_ns() -> u64 {
    300
}
fn default_steps() -> u64 {
    100
}

/// sizeof(pthread_mutex_t) and sizeof(pthread_barrier_t) on x86-64.
const MUTEX_BYTES: u64 = 40;
const BARRIER_BYTES: u64 = 32;

struct Thread {
    thread: u64,
    mutexes: Vec<UserWord>,
    barrier: Barrier,
    sections: u64,
    compute_ps: u64,
    section_ps: u64,
}

impl Body for Thread {
    fn pass(&mut self, step: u64, actions: &mut VecDeque<Action>) {
        let n = self.mutexes.len() as u64;
        for k in 0..self.sections {
            // Threads visit the mutexes in different orders, as different rows are assembled.
            let m = self.mutexes[((self.thread * 7 + step * 3 + k * 5) % n) as usize];
            actions.extend([
                Action::Op(Op::Compute(self.compute_ps)),
                Action::MutexLock(m),
                Action::Op(Op::Compute(self.section_ps)),
                Action::MutexUnlock(m),
            ]);
        }
        actions.push_back(Action::BarrierWait(self.barrier));
    }
}

impl FeaSolver {
    /// A process's heap: its mutexes, then its barrier.
    fn heap_bytes(&self) -> u64 {
        u64::from(self.mutexes) * MUTEX_BYTES + BARRIER_BYTES
    }
}

/// The solver's one figure: the time its slowest process took.
/// The time until the last process finished its steps.
pub const SOLVE_TIME: &str = "solve time";

impl Workload for FeaSolver {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::FeaSolver
    }

    fn figures(&self) -> Vec<String> {
        vec![SOLVE_TIME.to_string()]
    }

    fn label(&self) -> String {
        format!(
            "FEA-style solver: {} processes x {} threads, {} mutexes, {} steps",
            self.processes, self.threads_per_process, self.mutexes, self.steps
        )
    }

    fn threads(&self, _: &Machine) -> u32 {
        self.processes.saturating_mul(self.threads_per_process)
    }

    fn size(&self, machine: &Machine) -> Size {
        let processes = u64::from(self.processes);
        let tasks = u64::from(self.threads(machine));
        let mutexes = u64::from(self.mutexes);
        Size {
            tasks,
            processes,
            futexes: processes.saturating_mul(mutexes + 1),
            lines: processes.saturating_mul(lines_of(self.heap_bytes(), machine)),
            // Every thread holds its process's mutexes' words.
            held_bytes: tasks
                .saturating_mul(mutexes)
                .saturating_mul(size_of::<UserWord>() as u64),
        }
    }

    fn validate(&self, _: &Machine) -> Result<(), WorkloadError> {
        for (what, v) in [
            ("processes", u64::from(self.processes)),
            ("threads_per_process", u64::from(self.threads_per_process)),
            ("mutexes", u64::from(self.mutexes)),
            ("steps", self.steps),
        ] {
            if v == 0 {
                return Err(format!("fea-solver: {what} must be at least 1").into());
            }
        }
        super::at_most_objects("fea-solver: mutexes", self.mutexes.into())?;
        super::at_most_objects(
            "fea-solver: sections_per_step",
            self.sections_per_step.into(),
        )?;
        user_memory::check_heaps("fea-solver", self.processes.into(), self.heap_bytes())?;
        super::within_a_second("fea-solver: step_ns", self.step_ns)?;
        super::within_a_second("fea-solver: section_ns", self.section_ns)
    }

    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let mms = user_memory::mm_addresses(self.processes, rng);
        let mut tasks = Vec::new();
        let mut task_process = Vec::new();
        for p in 0..self.processes {
            let first_cpu = p * self.threads_per_process;
            let bytes = self.heap_bytes();
            let heap = user_memory::heap_start(memory, bytes, rng);
            let region = memory.add(
                format!("process {p} solver locks"),
                heap,
                bytes,
                Home::Node(machine.node_of(first_cpu % machine.cpus())),
            );
            let word = |addr: u64| UserWord {
                mem: Mem {
                    addr,
                    line: memory.line_in(region, addr),
                },
                kind: KeyKind::Private,
            };
            // The lock word is the mutex's first int.
            let mutexes: Vec<UserWord> = (0..u64::from(self.mutexes))
                .map(|m| word(heap + m * MUTEX_BYTES))
                .collect();
            let barrier_at = heap + u64::from(self.mutexes) * MUTEX_BYTES;
            let barrier = Barrier {
                arrived: word(barrier_at),
                round: word(barrier_at + 8),
                count: self.threads_per_process,
            };
            for t in 0..self.threads_per_process {
                let sections = u64::from(self.sections_per_step.max(1));
                tasks.push(TaskSpec {
                    cpu: (first_cpu + t) % machine.cpus(),
                    program: Box::new(TaskLoop::new(
                        Thread {
                            thread: u64::from(t),
                            mutexes: mutexes.clone(),
                            barrier,
                            sections,
                            compute_ps: self.step_ns * 1000 / sections,
                            section_ps: self.section_ns * 1000,
                        },
                        Some(self.steps),
                    )),
                });
                task_process.push(p);
            }
        }
        Setup {
            tasks,
            task_process,
            mms,
            futexes: u64::from(self.processes) * (u64::from(self.mutexes) + 1),
            lock_names: Vec::new(),
            readout: Some(Box::new(solve_time)),
            keys: None,
            thread_futexes: Vec::new(),
        }
    }
}

/// The solve time: from the start until the last thread exits.
fn solve_time(_: &RunWindow, timeline: &Timeline) -> Vec<Metric> {
    timeline
        .all_exited()
        .map(|t| vec![Metric::new(SOLVE_TIME, t as f64 / 1e9, "ms")])
        .unwrap_or_default()
}
