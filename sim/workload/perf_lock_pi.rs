//! perf bench futex lock-pi (tools/perf/bench/futex-lock-pi.c,
//! docs/kernel-facts.md §6.2): `-t` threads (one per CPU by default), pinned to
//! CPU i mod nCPU, loop FUTEX_LOCK_PI, usleep(1), FUTEX_UNLOCK_PI on one
//! static futex, or each on its own calloc'd word with `-M`; each pair is
//! one op. It prints per-thread ops/s and their mean, "Averaged N
//! operations/sec".
//!
//! The record's ops count the lock, the hold and the unlock apart; perf's
//! op is the pair, the `averaged lock/unlock pairs per thread` figure.
//!
//! Left out: usleep(1) is a sleep of the timer slack (50 us by default) plus
//! a wake-up; the model holds the lock for `hold_ns` of compute instead, so
//! the CPU does not go idle. The kernel side is simplified as pi.rs says.

use super::WorkloadError;
use super::perf::{
    key_kind, one_process, one_process_size, perf_threads, shared_flag, threads_flag,
};
use super::{lines_of, user_memory, user_words, within_a_second, Setup, Size, Workload};
use crate::machine::Machine;
use crate::memory::MemoryMap;
use crate::perf_stat::mean_and_spread;
use crate::record::{Metric, WorkloadKind};
use crate::task::{Done, FutexOp, KeyKind, Mem, Op, Program, TaskSpec};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerfLockPi {
    /// -t: threads; the machine's CPU count when absent.
    #[serde(default)]
    pub threads: Option<u32>,
    /// -M: one futex per thread instead of one for all.
    #[serde(default)]
    pub multi: bool,
    /// -S: shared futexes instead of private ones.
    #[serde(default)]
    pub shared: bool,
    /// How long usleep(1) keeps the lock held, in nanoseconds.
    #[serde(default = "default_hold_ns")]
    pub hold_ns: u64,
}

/// usleep(1) with the default 50 us timer slack, plus the wake-up.
fn default_hold_ns() -> u64 {
    55_000
}

impl Default for PerfLockPi {
    fn default() -> Self {
        PerfLockPi {
            threads: None,
            multi: false,
            shared: false,
            hold_ns: default_hold_ns(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Lock,
    Hold,
    Unlock,
}

struct Worker {
    index: usize,
    futex: Mem,
    kind: KeyKind,
    hold_ps: u64,
    step: Step,
    /// Lock/unlock pairs finished inside the counted window, per thread.
    pairs: Arc<Mutex<Vec<u64>>>,
}

impl Program for Worker {
    fn next_op(&mut self) -> Op {
        match self.step {
            Step::Lock => Op::Futex(FutexOp::LockPi {
                uaddr: self.futex,
                kind: self.kind,
            }),
            Step::Hold => Op::Compute(self.hold_ps),
            Step::Unlock => Op::Futex(FutexOp::UnlockPi {
                uaddr: self.futex,
                kind: self.kind,
            }),
        }
    }

    fn op_returned(&mut self, done: Done) {
        self.step = match self.step {
            // perf retries a failed lock.
            Step::Lock if done.ret != 0 => Step::Lock,
            Step::Lock => Step::Hold,
            Step::Hold => Step::Unlock,
            Step::Unlock => {
                if done.counted {
                    self.pairs.lock().expect("one thread runs programs")[self.index] += 1;
                }
                Step::Lock
            }
        };
    }
}

/// At most the bytes from one thread's -M futex to the next: its chunk and
/// the next thread's DTV (user_memory::perf_hash_arrays).
const MULTI_STRIDE: u64 = 384;

/// What perf bench futex lock-pi prints, in the readout's order.
/// The mean of the threads' lock/unlock pairs per second: what perf prints
/// as "Averaged".
pub const AVERAGED_PAIRS: &str = "averaged lock/unlock pairs per thread";

/// perf's `(+- x%)` after "Averaged": the relative standard error of the
/// threads' rates.
pub const AVERAGED_PAIRS_SPREAD: &str = "lock/unlock pairs spread";

const FIGURES: [&str; 3] = [AVERAGED_PAIRS, "slowest thread", AVERAGED_PAIRS_SPREAD];

impl Workload for PerfLockPi {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::PerfLockPi {
            shared: self.shared,
        }
    }

    fn figures(&self) -> Vec<String> {
        FIGURES.iter().map(|f| f.to_string()).collect()
    }

    fn label(&self) -> String {
        format!(
            "perf bench futex lock-pi{}{}{}",
            threads_flag(self.threads),
            if self.multi { " -M" } else { "" },
            shared_flag(self.shared)
        )
    }

    fn threads(&self, machine: &Machine) -> u32 {
        perf_threads(self.threads, machine)
    }

    fn size(&self, machine: &Machine) -> Size {
        let threads = u64::from(self.threads(machine));
        if !self.multi {
            return one_process_size(threads, 1);
        }
        // -M: a futex each, calloc'd one after another with each thread's
        // DTV between two, all in one region.
        Size {
            lines: lines_of(threads.saturating_mul(MULTI_STRIDE), machine),
            ..one_process_size(threads, threads)
        }
    }

    fn validate(&self, _: &Machine) -> Result<(), WorkloadError> {
        within_a_second("perf-lock-pi: hold_ns", self.hold_ns)
    }

    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let threads = self.threads(machine);
        let mms = user_memory::mm_addresses(1, rng);
        let futexes = if self.multi {
            // calloc(1, 4) each, between the pthread_creates: perf hash's
            // layout with one futex per thread.
            let addrs = user_memory::perf_hash_arrays(threads, 1, rng);
            user_words(memory, "perf lock-pi futexes", &addrs, machine.node_of(0))
        } else {
            let global = user_memory::perf_static_word(rng);
            user_words(memory, "perf .bss", &[global], machine.node_of(0))
        };
        let kind = key_kind(self.shared);
        let pairs = Arc::new(Mutex::new(vec![0u64; threads as usize]));
        let tasks: Vec<TaskSpec> = (0..threads as usize)
            .map(|i| TaskSpec {
                cpu: i as u32 % machine.cpus(),
                program: Box::new(Worker {
                    index: i,
                    futex: futexes[i % futexes.len()],
                    kind,
                    hold_ps: self.hold_ns * 1000,
                    step: Step::Lock,
                    pairs: pairs.clone(),
                }),
            })
            .collect();
        let futexes = futexes.len() as u64;
        one_process(
            tasks,
            mms,
            futexes,
            Box::new(move |window, _| {
                let pairs = pairs.lock().expect("the run is over");
                let secs = window.duration as f64 / 1e12;
                let rates: Vec<f64> = pairs.iter().map(|&n| n as f64 / secs).collect();
                let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
                let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
                vec![
                    Metric::new(FIGURES[0], mean, "ops/s"),
                    Metric::new(FIGURES[1], min, "ops/s"),
                    Metric::new(FIGURES[2], mean_and_spread(rates).1, "%"),
                ]
            }),
        )
    }
}
