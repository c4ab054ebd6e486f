//! will-it-scale futex1-4 (antonblanchard/will-it-scale tests/futex{1,2,3,4}.c,
//! docs/kernel-facts.md §7): each task loops on one futex syscall against its
//! stack-local `unsigned int` (value 0), counting iterations:
//!
//! | test | call | path |
//! |---|---|---|
//! | futex1 | FUTEX_WAKE of 1, shared | page lookup, anonymous page: (mm, address) key; nobody waits |
//! | futex2 | FUTEX_WAIT for 1, shared | the same key, then lock, compare, EAGAIN |
//! | futex3 | FUTEX_WAKE_PRIVATE of 1 | hash and the `waiters` check |
//! | futex4 | FUTEX_WAIT_PRIVATE for 1 | waiters++, lock, compare, unlock, waiters-- |
//!
//! In thread mode the tasks are threads of one process, each word on its own
//! thread stack. In process mode they are forks of one parent: each has its
//! own mm, and the word sits at the same virtual address in each, on a
//! different physical page. It reports per_thread_ops (per_process_ops) and
//! their total, as the record's per-thread mean and total.
//!
//! Left out: the per-task iteration counter the parent samples every second,
//! and the warm-up and sampling of its harness (the run window stands in).
//! will-it-scale binds task i to the i-th processing unit in hwloc's order;
//! the model uses CPU i.

use super::WorkloadError;
use super::futex_words::{FutexWords, WordArray};
use super::{user_memory, FirstCpu, Setup, Size, Workload};
use crate::memory::PAGE_SIZE;
use crate::machine::Machine;
use crate::memory::{Home, MemoryMap};
use crate::task::{FutexOp, KeyKind, Mem, Op, Program, TaskSpec};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Thread,
    Process,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WillItScale {
    /// Which of futex1 to futex4.
    pub test: u8,
    pub mode: Mode,
    /// nr_task; one per CPU when absent.
    #[serde(default)]
    pub tasks: Option<u32>,
}

/// Direct-map addresses standing for the processes' stack pages in process
/// mode: the words share a virtual address, not a physical line.
const STACK_PAGES_DIRECT_MAP: u64 = crate::address_map::STACK_PAGES.base;

/// The op a test issues on every iteration, on a word mapped as `kind`.
fn iteration(test: u8, uaddr: Mem, kind: KeyKind) -> FutexOp {
    match test {
        1 | 3 => FutexOp::Wake { uaddr, nr: 1, kind },
        _ => FutexOp::Wait {
            uaddr,
            val: 1,
            kind,
        },
    }
}

struct Task(FutexOp);

impl Program for Task {
    fn next_op(&mut self) -> Op {
        Op::Futex(self.0)
    }
}

impl Workload for WillItScale {
    fn label(&self) -> String {
        let mode = match self.mode {
            Mode::Thread => "thread",
            Mode::Process => "process",
        };
        let mut s = format!("will-it-scale futex{} mode={mode}", self.test);
        if let Some(t) = self.tasks {
            s += &format!(" nr_task={t}");
        }
        s
    }

    fn threads(&self, machine: &Machine) -> u32 {
        self.tasks.filter(|&t| t > 0).unwrap_or(machine.cpus())
    }

    fn size(&self, machine: &Machine) -> Size {
        let tasks = u64::from(self.threads(machine));
        Size {
            tasks,
            processes: if self.mode == Mode::Process { tasks } else { 1 },
            futexes: tasks,
            // Each task's word, on its stack's line.
            lines: tasks,
            held_bytes: 0,
        }
    }

    fn validate(&self, _: &Machine) -> Result<(), WorkloadError> {
        if !(1..=4).contains(&self.test) {
            return Err(format!(
                "will-it-scale: test {} is not one of futex1 to futex4",
                self.test
            ).into());
        }
        Ok(())
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
}

impl WillItScale {
    /// Lays the tasks out pinned from `first_cpu` on, each stack on its
    /// CPU's node.
    pub fn setup_from(
        &self,
        first_cpu: FirstCpu,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let tasks = self.threads(machine);
        let process_mode = self.mode == Mode::Process;
        let words = self.place(tasks, rng);
        let specs = words
            .arrays
            .iter()
            .enumerate()
            .map(|(i, &WordArray { base: word, .. })| {
                let cpu = first_cpu.cpu_of(i as u32, machine);
                // Each task's own copy of the line: its thread stack, or its
                // process's stack page.
                let line_of = if process_mode {
                    STACK_PAGES_DIRECT_MAP + i as u64 * PAGE_SIZE + word % PAGE_SIZE
                } else {
                    word
                };
                let region = memory.add(
                    format!("task {i} stack"),
                    line_of & !(memory.line_size() - 1),
                    memory.line_size(),
                    Home::Node(machine.node_of(cpu)),
                );
                let uaddr = Mem {
                    addr: word,
                    line: memory.line_in(region, line_of),
                };
                TaskSpec {
                    cpu,
                    program: Box::new(Task(iteration(self.test, uaddr, words.kind))),
                }
            })
            .collect();
        Setup {
            tasks: specs,
            task_process: words.arrays.iter().map(|a| a.process).collect(),
            mms: words.mms.clone(),
            futexes: tasks.into(),
            lock_names: Vec::new(),
            readout: None,
            keys: Some(words),
            thread_futexes: Vec::new(),
        }
    }

    /// Every random choice the tasks' futexes depend on, in the order the
    /// kernel makes them: each process's mm_struct, then each task's stack
    /// word. In process mode task i is process i.
    pub fn place(&self, tasks: u32, rng: &mut Xoshiro256PlusPlus) -> FutexWords {
        let process_mode = self.mode == Mode::Process;
        let processes = if process_mode { tasks } else { 1 };
        let mms = user_memory::mm_addresses(processes, rng);
        let arrays = user_memory::stack_words(tasks, process_mode, rng)
            .into_iter()
            .zip(0..)
            .map(|(base, task)| WordArray {
                base,
                words: 1,
                process: if process_mode { task } else { 0 },
            })
            .collect();
        FutexWords {
            mms,
            threads: vec![u64::from(tasks / processes); processes as usize],
            arrays,
            // futex1 and futex2 are the shared tests.
            kind: if self.test <= 2 {
                KeyKind::SharedAnon
            } else {
                KeyKind::Private
            },
        }
    }
}
