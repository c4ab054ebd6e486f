//! perf bench futex wake-parallel (tools/perf/bench/futex-wake-parallel.c,
//! docs/kernel-facts.md §6.2): `-t` threads (one per CPU by default), pinned to
//! CPU i mod nCPU, block on one futex; after usleep(100000), `-w` waker
//! threads leave a barrier together and each calls FUTEX_WAKE once for
//! t/w threads, timing its own call. It prints the mean of the wakers'
//! times over its rounds: "Avg per-thread latency (waking n/t threads) in X ms".
//!
//! The record's ops are every syscall and sleep of every thread; the
//! benchmark's own figures are the record's `extra`.
//!
//! Left out: thread creation and joining (the model's threads block again at
//! the next round) and the barrier's own cost: the wakers start at the same
//! instant. perf lets the scheduler place the wakers; the model spreads them
//! evenly over the CPUs, whose pinned threads are asleep while they run.

use super::WorkloadError;
use super::rounds::{
    default_settle_us, key_kind, mean, ms, perf_threads, validate_settle, Blocked, Rounds,
};
use super::{user_memory, user_words, Setup, Workload};
use crate::machine::{Machine, Ps};
use crate::memory::MemoryMap;
use crate::record::Metric;
use crate::task::{Done, FutexOp, KeyKind, Mem, Op, Program, TaskSpec};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

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
    counted: bool,
    time: Ps,
    woken: u64,
}

/// A waker: wait for the round, then one FUTEX_WAKE of its share.
struct Waker {
    futex: Mem,
    kind: KeyKind,
    share: u32,
    rounds: Rounds,
    now: Ps,
    /// Start of the wake in flight, and whether it was counted.
    waking: Option<(Ps, bool)>,
    log: Arc<Mutex<Vec<WakerCall>>>,
}

impl Program for Waker {
    fn next_op(&mut self) -> Op {
        match self.waking {
            None => Op::Sleep(self.rounds.next_timed(self.now) - self.now),
            Some(_) => Op::Futex(FutexOp::Wake {
                uaddr: self.futex,
                nr: self.share,
                kind: self.kind,
            }),
        }
    }

    fn op_returned(&mut self, done: Done) {
        self.now = done.now;
        self.waking = match self.waking {
            None => Some((done.now, done.counted)),
            Some((start, counted)) => {
                self.log
                    .lock()
                    .expect("one thread runs programs")
                    .push(WakerCall {
                        counted: counted && done.counted,
                        time: done.now - start,
                        woken: done.ret.max(0) as u64,
                    });
                None
            }
        };
    }
}

impl PerfWakeParallel {
    /// perf's sanity rule: none, zero or more wakers than threads means one
    /// waker per thread.
    pub fn wakers(&self, machine: &Machine) -> u32 {
        let threads = self.threads(machine);
        match self.wakers {
            Some(w) if w > 0 && w <= threads => w,
            _ => threads,
        }
    }
}

impl Workload for PerfWakeParallel {
    fn label(&self) -> String {
        let mut s = "perf bench futex wake-parallel".to_string();
        if let Some(w) = self.wakers {
            s += &format!(" -w {w}");
        }
        if let Some(t) = self.threads {
            s += &format!(" -t {t}");
        }
        if self.shared {
            s += " -S";
        }
        s
    }

    fn threads(&self, machine: &Machine) -> u32 {
        perf_threads(self.threads, machine)
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
        let futex = user_words(
            memory,
            "perf .bss",
            &[user_memory::perf_static_word(rng)],
            machine.node_of(0),
        )[0];
        let kind = key_kind(self.shared);
        let rounds = Rounds::new(self.settle_us);
        let log = Arc::new(Mutex::new(Vec::new()));
        let cpus = u64::from(machine.cpus());
        let blocked = (0..threads).map(|i| TaskSpec {
            cpu: i % machine.cpus(),
            program: Box::new(Blocked::new(futex, kind, rounds)),
        });
        let waking = (0..u64::from(wakers)).map(|j| TaskSpec {
            cpu: (j * cpus / u64::from(wakers)) as u32,
            program: Box::new(Waker {
                futex,
                kind,
                share: threads / wakers,
                rounds,
                now: 0,
                waking: None,
                log: log.clone(),
            }),
        });
        let tasks: Vec<TaskSpec> = blocked.chain(waking).collect();
        Setup {
            task_process: vec![0; tasks.len()],
            tasks,
            mms,
            futexes: 1,
            lock_names: Vec::new(),
            readout: Some(Box::new(move |_, _| {
                let log = log.lock().expect("the run is over");
                let counted: Vec<&WakerCall> = log.iter().filter(|c| c.counted).collect();
                vec![
                    Metric::new("waker calls", counted.len() as f64, "calls"),
                    Metric::new("per-waker latency", mean(&counted, |c| ms(c.time)), "ms"),
                    Metric::new(
                        "woken per waker",
                        mean(&counted, |c| c.woken as f64),
                        "threads",
                    ),
                ]
            })),
            keys: None,
        }
    }
}
