//! perf bench futex wake-parallel (tools/perf/bench/futex-wake-parallel.c,
//! docs/kernel-facts.md §6.2): `-t` threads (one per CPU by default), pinned to
//! CPU i mod nCPU, block on one futex; after usleep(100000) the main thread
//! creates `-w` waker threads, which wait on a pthread barrier of w + 1, and
//! joins the barrier itself. Each waker, once the barrier lets it go, takes
//! the time, calls FUTEX_WAKE once for t/w threads and takes the time again.
//! perf prints the mean of the wakers' times over its rounds: "Avg
//! per-thread latency (waking n/t threads) in X ms".
//!
//! The barrier decides how the wakers meet the bucket lock: glibc's last
//! arrival (the main thread, which joins after creating every waker) wakes
//! the others with one FUTEX_WAKE, whose wake-ups run one after another,
//! so the wakers leave the barrier one try_to_wake_up apart, not at once.
//! A waker's second timestamp is taken in user space, after the syscall's
//! return, so it counts a preemption there by a thread its CPU woke.
//!
//! The record's ops are every syscall and sleep of every thread; the
//! benchmark's own figures are the record's `extra`.
//!
//! Left out: thread creation, exit and joining (the model's blocked threads
//! block again and its wakers wait at the barrier again at the next round).
//! perf lets the scheduler place the wakers and its main thread; the model
//! spreads the wakers evenly over the CPUs, whose pinned threads are asleep
//! while they run, and runs the main thread on CPU 0. Wakers and blocked
//! threads both queue in creation order, so the n-th waker wakes the n-th
//! blocked thread: the model puts waker n half the machine away from it, so
//! that, as for nearly every waker perf's scheduler places, the thread it
//! wakes is on another CPU (on its own CPU, the wake would need no IPI and
//! the woken thread would preempt the waker before its second timestamp).

use super::perf::{
    key_kind, one_process, one_process_size, perf_threads, shared_flag, threads_flag,
};
use super::primitives::{Barrier, BarrierWait, Primitive};
use super::rounds::{
    blocked_threads, default_settle_us, mean, ms, spread, validate_settle, Rounds, Samples,
};
use super::WorkloadError;
use super::{lines_of, user_memory, user_words, Setup, Size, Workload};
use crate::machine::{Machine, Ps};
use crate::memory::MemoryMap;
use crate::record::{Metric, WorkloadKind};
use crate::task::{Done, FutexOp, KeyKind, Mem, Op, Program, TaskSpec, UserWord};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerfWakeParallel {
    /// -t: threads that block; the machine's CPU count when absent.
    #[serde(default)]
    pub threads: Option<u32>,
    /// -w: waker threads; perf takes all `-t` when absent, zero or too many.
    #[serde(default)]
    pub wakers: Option<u32>,
    /// -S: shared futexes instead of private ones.
    #[serde(default)]
    pub shared: bool,
    /// The sleep before each round's wake-ups, in microseconds.
    #[serde(default = "default_settle_us")]
    pub settle_us: u64,
}

impl Default for PerfWakeParallel {
    fn default() -> Self {
        PerfWakeParallel {
            threads: None,
            wakers: None,
            shared: false,
            settle_us: default_settle_us(),
        }
    }
}

/// One waker's FUTEX_WAKE.
#[derive(Clone, Copy, Debug)]
struct WakerCall {
    time: Ps,
    woken: u64,
}

/// How far apart perf's main thread creates the wakers, which reach the
/// barrier in that order. Only the order matters: the barrier holds them
/// all until the main thread joins it, a settle time later.
const CREATION_PS: Ps = 1_000_000;

/// Bytes from the 8-aligned end of perf's futex word to its barrier: the
/// statics declared between them (see `setup`).
const BARRIER_AFTER_FUTEX: u64 = 8 + 8 + 40 + 2 * 48;
/// The most bytes from the futex word to the end of the barrier's second
/// word: the futex word and its pad to 8, the statics between, and the
/// barrier's two words. One region spans them, on up to four lines.
const STATICS_BYTES: u64 = 8 + BARRIER_AFTER_FUTEX + 8;

/// Where a waker is in its round.
enum WakerPhase {
    /// Not created yet in this round: it comes to the barrier after the
    /// wakers created before it.
    Unborn,
    /// In pthread_barrier_wait.
    AtBarrier(BarrierWait),
    /// Left the barrier at `start` (its first timestamp): FUTEX_WAKE next.
    Leaving { start: Ps, counted: bool },
    /// The wake returned `woken`: the second timestamp next.
    Woke { start: Ps, counted: bool, woken: u64 },
    /// Done for this round: it sleeps until the next one creates it.
    Resting,
}

/// A waker: the barrier, one FUTEX_WAKE of its share between two
/// timestamps, then rest until the next round's barrier.
struct Waker {
    futex: Mem,
    kind: KeyKind,
    share: u32,
    barrier: Barrier,
    rounds: Rounds,
    now: Ps,
    phase: WakerPhase,
    /// The last op's return, which the barrier's next step branches on,
    /// and whether it ended in the counted window.
    last: u32,
    left_counted: bool,
    /// How long after a round starts perf has created this waker.
    created: Ps,
    log: Samples<WakerCall>,
}

impl Program for Waker {
    fn next_op(&mut self) -> Op {
        loop {
            match &mut self.phase {
                WakerPhase::AtBarrier(wait) => match wait.next(Some(self.last)) {
                    Some(op) => return op,
                    // The barrier returned with the last op: gettimeofday(&start).
                    None => {
                        self.phase = WakerPhase::Leaving {
                            start: self.now,
                            counted: self.left_counted,
                        }
                    }
                },
                WakerPhase::Leaving { .. } => {
                    return Op::Futex(FutexOp::Wake {
                        uaddr: self.futex,
                        nr: self.share,
                        kind: self.kind,
                    })
                }
                // gettimeofday(&end), back in user space.
                WakerPhase::Woke { .. } => return Op::Compute(0),
                WakerPhase::Unborn => return Op::Sleep(self.created),
                WakerPhase::Resting => {
                    return self.rounds.sleep_until_next(self.now)
                }
            }
        }
    }

    fn op_returned(&mut self, done: Done) {
        self.now = done.now;
        self.last = done.ret as u32;
        self.left_counted = done.counted;
        self.phase = match std::mem::replace(&mut self.phase, WakerPhase::Resting) {
            at @ WakerPhase::AtBarrier(_) => at,
            WakerPhase::Leaving { start, counted } => WakerPhase::Woke {
                start,
                counted,
                woken: done.ret.max(0) as u64,
            },
            WakerPhase::Woke {
                start,
                counted,
                woken,
            } => {
                self.log.keep(
                    counted && done.counted,
                    WakerCall {
                        time: done.now - start,
                        woken,
                    },
                );
                WakerPhase::Resting
            }
            WakerPhase::Resting => WakerPhase::Unborn,
            WakerPhase::Unborn => WakerPhase::AtBarrier(BarrierWait::new(self.barrier)),
        };
    }
}

/// perf's main thread: at each round's timed part, the barrier's last
/// arrival, which wakes the wakers; then it sleeps until the next round.
struct MainThread {
    barrier: Barrier,
    rounds: Rounds,
    now: Ps,
    wait: Option<BarrierWait>,
    last: u32,
}

impl Program for MainThread {
    fn next_op(&mut self) -> Op {
        if let Some(wait) = &mut self.wait {
            if let Some(op) = wait.next(Some(self.last)) {
                return op;
            }
            self.wait = None;
        }
        self.rounds.sleep_until_timed(self.now)
    }

    fn op_returned(&mut self, done: Done) {
        self.now = done.now;
        self.last = done.ret as u32;
        if self.wait.is_none() {
            // The sleep is over: the round's timed part begins.
            self.wait = Some(BarrierWait::new(self.barrier));
        }
    }
}

/// The wakers of `threads` blocked threads for `-w`: none, or more than
/// the threads, is one per thread, as perf takes it.
pub fn wakers_of(wakers: Option<u32>, threads: u32) -> u32 {
    match wakers {
        Some(w) if w > 0 && w <= threads => w,
        _ => threads,
    }
}

impl PerfWakeParallel {
    /// perf's sanity rule: none, zero or more wakers than threads means one
    /// waker per thread.
    pub fn wakers(&self, machine: &Machine) -> u32 {
        wakers_of(self.wakers, self.threads(machine))
    }
}

/// What perf bench futex wake-parallel prints, in the readout's order.
/// A waker's mean time to wake its share: what perf prints as "Avg
/// per-thread latency".
pub const WAKER_LATENCY: &str = "per-waker latency";

/// perf's `(+-x%)` after the latency: the relative standard error of the
/// wakers' times.
pub const WAKER_LATENCY_SPREAD: &str = "per-waker latency spread";

/// The mean number of threads a waker woke.
pub const WOKEN_PER_WAKER: &str = "woken per waker";

const FIGURES: [&str; 4] = [
    "waker calls",
    WAKER_LATENCY,
    WOKEN_PER_WAKER,
    WAKER_LATENCY_SPREAD,
];

impl Workload for PerfWakeParallel {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::PerfWakeParallel {
            wakers: self.wakers,
            shared: self.shared,
        }
    }

    fn figures(&self) -> Vec<String> {
        FIGURES.iter().map(|f| f.to_string()).collect()
    }

    fn label(&self) -> String {
        let wakers = self.wakers.map(|w| format!(" -w {w}")).unwrap_or_default();
        format!(
            "perf bench futex wake-parallel{wakers}{}{}",
            threads_flag(self.threads),
            shared_flag(self.shared)
        )
    }

    fn threads(&self, machine: &Machine) -> u32 {
        perf_threads(self.threads, machine)
    }

    fn size(&self, machine: &Machine) -> Size {
        // The blocked threads, the wakers and perf's main thread.
        let tasks = u64::from(self.threads(machine)) + u64::from(self.wakers(machine)) + 1;
        Size {
            lines: lines_of(STATICS_BYTES, machine),
            ..one_process_size(tasks, 2)
        }
    }

    /// perf refuses threads that the wakers cannot share evenly.
    fn validate(&self, machine: &Machine) -> Result<(), WorkloadError> {
        validate_settle("perf-wake-parallel", self.settle_us)?;
        let (threads, wakers) = (self.threads(machine), self.wakers(machine));
        if threads % wakers != 0 {
            return Err(format!(
                "wake-parallel: {threads} threads cannot be shared evenly by {wakers} wakers (perf: \"Must be perfectly divisible\")"
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
        let threads = self.threads(machine);
        let wakers = self.wakers(machine);
        let mms = user_memory::mm_addresses(1, rng);
        // perf's statics in declaration order: the futex word, then a
        // pointer, a bool, a pthread_mutex_t and two pthread_cond_t (8 + 8
        // + 40 + 2 x 48 bytes on LP64), then the pthread_barrier_t, whose
        // `in` and `current_round` words come first (glibc 2.23+).
        let futex_at = user_memory::perf_static_word(rng);
        let barrier_at = (futex_at + 4).next_multiple_of(8) + BARRIER_AFTER_FUTEX;
        let words = user_words(
            memory,
            "perf .bss",
            &[futex_at, barrier_at, barrier_at + 4],
            machine.node_of(0),
        );
        let futex = words[0];
        let kind = key_kind(self.shared);
        let barrier = Barrier {
            arrived: UserWord {
                mem: words[1],
                kind,
            },
            round: UserWord {
                mem: words[2],
                kind,
            },
            count: wakers + 1,
        };
        let rounds = Rounds::new(self.settle_us);
        let log = Samples::default();
        let cpus = u64::from(machine.cpus());
        let blocked = blocked_threads(threads, futex, kind, rounds, machine);
        let waking = (0..u64::from(wakers)).map(|j| TaskSpec {
            cpu: ((j * cpus / u64::from(wakers) + cpus / 2) % cpus) as u32,
            program: Box::new(Waker {
                futex,
                kind,
                share: threads / wakers,
                barrier,
                rounds,
                now: 0,
                phase: WakerPhase::Unborn,
                last: 0,
                left_counted: false,
                created: j * CREATION_PS,
                log: log.clone(),
            }),
        });
        let main = TaskSpec {
            cpu: 0,
            program: Box::new(MainThread {
                barrier,
                rounds,
                now: 0,
                wait: None,
                last: 0,
            }),
        };
        let tasks: Vec<TaskSpec> = blocked.chain(waking).chain([main]).collect();
        one_process(
            tasks,
            mms,
            2,
            log.readout(|counted: &[WakerCall]| {
                vec![
                    Metric::new(FIGURES[0], counted.len() as f64, "calls"),
                    Metric::new(FIGURES[1], mean(counted, |c| ms(c.time)), "ms"),
                    Metric::new(
                        FIGURES[2],
                        mean(counted, |c| c.woken as f64),
                        "threads",
                    ),
                    Metric::new(FIGURES[3], spread(counted, |c| ms(c.time)), "%"),
                ]
            }),
        )
    }
}
