//! perf bench futex wake (tools/perf/bench/futex-wake.c, docs/kernel-facts.md
//! §6.2): `-t` threads (one per CPU by default), pinned to CPU i mod nCPU,
//! block on one futex, a static word of perf's `.bss`; once all are blocked
//! and after usleep(100000), the main thread calls FUTEX_WAKE for `-w` at a
//! time until every thread is woken, and times that loop. It prints the mean
//! over its rounds (10 by default): "Wokeup N of M threads in X ms".
//!
//! The record's ops are every syscall and sleep of every thread; the
//! benchmark's own figures are the record's `extra`.
//!
//! Left out: thread creation and joining (the model's threads block again at
//! the next round), the pthread mutex and condition variables around the
//! start. The main thread runs on the CPU after the last worker's (wrapping
//! to CPU 0, where it time-shares with worker 0); each wake runs
//! try_to_wake_up's accesses and the IPI to the woken thread's idle CPU
//! (sim/engine/sched.rs). The wake time per thread is the loop's time over
//! the threads it woke.

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
pub struct PerfWake {
    /// -t: threads that block; the machine's CPU count when absent.
    #[serde(default)]
    pub threads: Option<u32>,
    /// -w: threads woken per FUTEX_WAKE.
    #[serde(default = "one_per_call")]
    pub nwakes: u32,
    /// -S: shared futexes instead of private ones.
    #[serde(default)]
    pub shared: bool,
    /// The sleep before each round's wake-ups, in microseconds.
    #[serde(default = "default_settle_us")]
    pub settle_us: u64,
}

impl Default for PerfWake {
    fn default() -> Self {
        PerfWake {
            threads: None,
            nwakes: one_per_call(),
            shared: false,
            settle_us: default_settle_us(),
        }
    }
}

/// One round's timed loop, as the main thread saw it.
#[derive(Clone, Copy, Debug)]
struct Round {
    time: Ps,
    woken: u64,
}

/// The main thread: sleep, then FUTEX_WAKE until all are woken.
struct Main {
    futex: Mem,
    kind: KeyKind,
    nwakes: u32,
    threads: u64,
    rounds: Rounds,
    now: Ps,
    /// Start of the wake loop in progress, and whether it was counted.
    waking: Option<(Ps, bool)>,
    woken: u64,
    log: Samples<Round>,
}

impl Program for Main {
    fn next_op(&mut self) -> Op {
        match self.waking {
            None => self.rounds.sleep_until_timed(self.now),
            Some(_) => Op::Futex(FutexOp::Wake {
                uaddr: self.futex,
                nr: self.nwakes,
                kind: self.kind,
            }),
        }
    }

    fn op_returned(&mut self, done: Done) {
        self.now = done.now;
        let Some((start, counted)) = self.waking else {
            self.waking = Some((done.now, done.counted));
            self.woken = 0;
            return;
        };
        self.woken += done.ret.max(0) as u64;
        if self.woken >= self.threads {
            self.log.keep(
                counted && done.counted,
                Round {
                    time: done.now - start,
                    woken: self.woken,
                },
            );
            self.waking = None;
        }
    }
}

/// What perf bench futex wake prints, in the readout's order.
/// The mean time of a round's wake-ups: what perf prints as "Wokeup N of
/// M threads in X ms".
pub const WAKE_TIME: &str = "wake time";

/// perf's `(+-x%)` after the wake time: the relative standard error of
/// the rounds' times.
pub const WAKE_TIME_SPREAD: &str = "wake time spread";

/// The mean number of threads a round woke.
pub const WOKEN_PER_ROUND: &str = "woken per round";

const FIGURES: [&str; 5] = [
    "rounds",
    WAKE_TIME,
    "wake time per thread",
    WOKEN_PER_ROUND,
    WAKE_TIME_SPREAD,
];

impl Workload for PerfWake {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::PerfWake {
            nwakes: self.nwakes,
            shared: self.shared,
        }
    }

    fn figures(&self) -> Vec<String> {
        FIGURES.iter().map(|f| f.to_string()).collect()
    }

    fn label(&self) -> String {
        format!(
            "perf bench futex wake -w {}{}{}",
            self.nwakes,
            threads_flag(self.threads),
            shared_flag(self.shared)
        )
    }

    fn threads(&self, machine: &Machine) -> u32 {
        perf_threads(self.threads, machine)
    }

    fn size(&self, machine: &Machine) -> Size {
        // The blocked threads and perf's main thread, which wakes them.
        one_process_size(u64::from(self.threads(machine)) + 1, 1)
    }

    fn validate(&self, _: &Machine) -> Result<(), WorkloadError> {
        rounds::validate_settle("perf-wake", self.settle_us)
    }

    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let threads = self.threads(machine);
        let mms = user_memory::mm_addresses(1, rng);
        let futex = user_words(
            memory,
            "perf .bss",
            &[user_memory::perf_static_word(rng)],
            machine.node_of(0),
        )[0];
        let kind = key_kind(self.shared);
        let rounds = Rounds::new(self.settle_us);
        let mut tasks: Vec<TaskSpec> =
            blocked_threads(threads, futex, kind, rounds, machine).collect();
        let log = Samples::default();
        tasks.push(TaskSpec {
            cpu: threads % machine.cpus(),
            program: Box::new(Main {
                futex,
                kind,
                nwakes: self.nwakes.max(1),
                threads: threads.into(),
                rounds,
                now: 0,
                waking: None,
                woken: 0,
                log: log.clone(),
            }),
        });
        one_process(
            tasks,
            mms,
            1,
            log.readout(|counted: &[Round]| {
                vec![
                    Metric::new(FIGURES[0], counted.len() as f64, "rounds"),
                    Metric::new(FIGURES[1], mean(counted, |r| ms(r.time)), "ms"),
                    Metric::new(
                        FIGURES[2],
                        mean(counted, |r| ms(r.time) * 1000.0 / r.woken.max(1) as f64),
                        "us",
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
