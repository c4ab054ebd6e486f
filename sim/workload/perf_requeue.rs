//! perf bench futex requeue (tools/perf/bench/futex-requeue.c,
//! docs/kernel-facts.md §6.2): `-t` threads (one per CPU by default), pinned to
//! CPU i mod nCPU, block on `futex1`; after usleep(100000) the main thread
//! calls FUTEX_CMP_REQUEUE(futex1 -> futex2, nr_wake 0, nr_requeue `-q`,
//! cmpval 0) until every thread has moved, and times that loop; then it
//! wakes them all on `futex2`. `-B` requeues all at once. It prints the mean
//! over its rounds: "Requeued N of M threads in X ms".
//!
//! The record's ops are every syscall and sleep of every thread; the
//! benchmark's own figures are the record's `extra`.
//!
//! Left out: `-p` (FUTEX_WAIT_REQUEUE_PI / FUTEX_CMP_REQUEUE_PI), thread
//! creation and joining (the model's threads block again at the next round)
//! and the scheduler: the main thread runs on the CPU after the last
//! worker's, wrapping to CPU 0, whose worker is asleep while it requeues.

use super::perf::{
    key_kind, one_per_call, one_process, one_process_size, perf_threads, shared_flag, threads_flag,
};
use super::rounds::{blocked_threads, default_settle_us, mean, ms, spread, Rounds, Samples};
use super::WorkloadError;
use super::{rounds, user_memory, user_words, Setup, Size, Workload};
use crate::machine::{Machine, Ps};
use crate::memory::MemoryMap;
use crate::record::{Metric, WorkloadKind};
use crate::task::{Done, FutexOp, KeyKind, Mem, Op, Program, TaskSpec};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerfRequeue {
    /// -t: threads that block; the machine's CPU count when absent.
    #[serde(default)]
    pub threads: Option<u32>,
    /// -q: threads requeued per call.
    #[serde(default = "one_per_call")]
    pub nrequeue: u32,
    /// -B: requeue all threads in one call.
    #[serde(default)]
    pub all: bool,
    /// -S: shared futexes instead of private ones.
    #[serde(default)]
    pub shared: bool,
    /// The sleep before each round's requeues, in microseconds.
    #[serde(default = "default_settle_us")]
    pub settle_us: u64,
}

impl Default for PerfRequeue {
    fn default() -> Self {
        PerfRequeue {
            threads: None,
            nrequeue: one_per_call(),
            all: false,
            shared: false,
            settle_us: default_settle_us(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Round {
    counted: bool,
    time: Ps,
    requeued: u64,
    woken: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Sleep,
    Requeue {
        start: Ps,
        counted: bool,
    },
    /// The timed loop is over; wake everyone on futex2.
    WakeAll,
}

struct Main {
    futex1: Mem,
    futex2: Mem,
    kind: KeyKind,
    nrequeue: u32,
    threads: u64,
    rounds: Rounds,
    now: Ps,
    phase: Phase,
    requeued: u64,
    round: Option<Round>,
    log: Samples<Round>,
}

impl Program for Main {
    fn next_op(&mut self) -> Op {
        match self.phase {
            Phase::Sleep => self.rounds.sleep_until_timed(self.now),
            Phase::Requeue { .. } => Op::Futex(FutexOp::CmpRequeue {
                uaddr: self.futex1,
                uaddr2: self.futex2,
                nr_wake: 0,
                nr_requeue: self.nrequeue,
                cmpval: 0,
                kind: self.kind,
            }),
            Phase::WakeAll => Op::Futex(FutexOp::Wake {
                uaddr: self.futex2,
                nr: self.requeued as u32,
                kind: self.kind,
            }),
        }
    }

    fn op_returned(&mut self, done: Done) {
        self.now = done.now;
        self.phase = match self.phase {
            Phase::Sleep => {
                self.requeued = 0;
                Phase::Requeue {
                    start: done.now,
                    counted: done.counted,
                }
            }
            Phase::Requeue { start, counted } => {
                self.requeued += done.ret.max(0) as u64;
                if self.requeued < self.threads {
                    return;
                }
                self.round = Some(Round {
                    counted: counted && done.counted,
                    time: done.now - start,
                    requeued: self.requeued,
                    woken: 0,
                });
                Phase::WakeAll
            }
            Phase::WakeAll => {
                if let Some(mut round) = self.round.take() {
                    round.woken = done.ret.max(0) as u64;
                    self.log.keep(round.counted, round);
                }
                Phase::Sleep
            }
        };
    }
}

/// The threads requeued per call for `-q` (None: `-B`, all of them),
/// capped at the thread count as perf does.
pub fn requeued_per_call(nrequeue: Option<u32>, threads: u32) -> u32 {
    match nrequeue {
        None => threads,
        Some(q) => q.clamp(1, threads.max(1)),
    }
}

impl PerfRequeue {
    fn nrequeue(&self, threads: u32) -> u32 {
        requeued_per_call((!self.all).then_some(self.nrequeue), threads)
    }
}

/// What perf bench futex requeue prints, in the readout's order.
/// The mean time of a round's requeues: what perf prints as "Requeued N
/// of M threads in X ms".
pub const REQUEUE_TIME: &str = "requeue time";

/// perf's `(+-x%)` after the requeue time: the relative standard error
/// of the rounds' times.
pub const REQUEUE_TIME_SPREAD: &str = "requeue time spread";

/// The mean number of threads a round requeued.
pub const REQUEUED_PER_ROUND: &str = "requeued per round";

const FIGURES: [&str; 5] = [
    "rounds",
    REQUEUE_TIME,
    REQUEUED_PER_ROUND,
    "woken on futex2 per round",
    REQUEUE_TIME_SPREAD,
];

impl Workload for PerfRequeue {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::PerfRequeue {
            nrequeue: (!self.all).then_some(self.nrequeue),
            shared: self.shared,
        }
    }

    fn figures(&self) -> Vec<String> {
        FIGURES.iter().map(|f| f.to_string()).collect()
    }

    fn label(&self) -> String {
        let per_call = if self.all {
            " -B".to_string()
        } else {
            format!(" -q {}", self.nrequeue)
        };
        format!(
            "perf bench futex requeue{per_call}{}{}",
            threads_flag(self.threads),
            shared_flag(self.shared)
        )
    }

    fn threads(&self, machine: &Machine) -> u32 {
        perf_threads(self.threads, machine)
    }

    fn size(&self, machine: &Machine) -> Size {
        // The blocked threads and perf's main thread, which requeues them.
        one_process_size(u64::from(self.threads(machine)) + 1, 2)
    }

    fn validate(&self, _: &Machine) -> Result<(), WorkloadError> {
        rounds::validate_settle("perf-requeue", self.settle_us)
    }

    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let threads = self.threads(machine);
        let mms = user_memory::mm_addresses(1, rng);
        let first = user_memory::perf_static_word(rng);
        // futex1 and futex2 are neighbouring statics.
        let words = user_words(memory, "perf .bss", &[first, first + 4], machine.node_of(0));
        let kind = key_kind(self.shared);
        let rounds = Rounds::new(self.settle_us);
        let mut tasks: Vec<TaskSpec> =
            blocked_threads(threads, words[0], kind, rounds, machine).collect();
        let log = Samples::default();
        tasks.push(TaskSpec {
            cpu: threads % machine.cpus(),
            program: Box::new(Main {
                futex1: words[0],
                futex2: words[1],
                kind,
                nrequeue: self.nrequeue(threads),
                threads: threads.into(),
                rounds,
                now: 0,
                phase: Phase::Sleep,
                requeued: 0,
                round: None,
                log: log.clone(),
            }),
        });
        one_process(
            tasks,
            mms,
            2,
            log.readout(|counted: &[Round]| {
                vec![
                    Metric::new(FIGURES[0], counted.len() as f64, "rounds"),
                    Metric::new(FIGURES[1], mean(counted, |r| ms(r.time)), "ms"),
                    Metric::new(
                        FIGURES[2],
                        mean(counted, |r| r.requeued as f64),
                        "threads",
                    ),
                    Metric::new(
                        FIGURES[3],
                        mean(counted, |r| r.woken as f64),
                        "threads",
                    ),
                    Metric::new(FIGURES[4], spread(counted, |r| ms(r.time)), "%"),
                ]
            }),
        )
    }
}
