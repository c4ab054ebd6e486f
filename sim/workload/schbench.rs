//! schbench (github.com/masoncl/schbench), the run the 2025 private-hash
//! regression reports used (docs/kernel-facts.md §5.4: `schbench -L -m 4 -M auto
//! -t 256 -n 0 -r 60 -s 0`). Each of `-m` message threads owns `-t` workers.
//! A worker sets its futex word to BLOCKED, stamps the time, pushes itself on
//! its message thread's list with a cmpxchg, posts the message thread (a
//! cmpxchg BLOCKED -> RUNNING on its word, and FUTEX_WAKE_PRIVATE if that
//! succeeded), then waits: a cmpxchg RUNNING -> BLOCKED on its own word, or
//! FUTEX_WAIT_PRIVATE until it succeeds. The message thread, once posted,
//! splices its list, stamps the time once and posts every worker on it the
//! same way. A woken worker records its wake-up latency (now minus the
//! message thread's stamp), does its request's work and goes round again.
//! schbench prints requests per second and wake-up latency percentiles.
//!
//! Left out: the request work itself (`-n` matrix multiplies, `-s` usleep)
//! is a compute of `work_ns` that touches no shared line (0 for the reports'
//! `-n 0 -s 0`); the per-CPU pthread mutexes `-L` turns off; a failed
//! cmpxchg retry on the list head; the RPS mode. `-M auto` placement: with
//! the profile's `scheduler.placement = "placed"`, as schbench's
//! thread_auto_pin does it: message thread m bound to CPU m, the workers
//! free on every CPU after those, placed at fork and at each wake-up by the
//! scheduler (docs/scheduler.md). Pinned (the default), thread i (message
//! thread m is thread m(t+1), its workers the threads after it) stays on
//! CPU i mod the CPUs, so with more threads than CPUs each CPU time-shares
//! its threads where the kernel would balance them. Each
//! thread_data is schbench's layout (`next` at byte 24, `wake_time` at 56,
//! `futex` at 72, 1087640 bytes apart in one mmapped calloc).

use crate::address_map::{MMAP_BASE, RANDOMIZED_PAGES};
use super::WorkloadError;
use super::{user_memory, within_a_second, Setup, Size, Workload};
use crate::engine::metrics::Histogram;
use crate::machine::{Machine, Ps, TaskPlacement};
use crate::memory::{Home, MemoryMap};
use crate::record::{Metric, WorkloadKind};
use crate::task::{
    AccessKind, Affinity, AtomicOp, Done, FutexOp, KeyKind, Mem, Op, Program, TaskSpec, UserWord,
};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schbench {
    /// -m: message threads.
    #[serde(default = "one")]
    pub message_threads: u32,
    /// -t: workers per message thread; as many as fit the CPUs when absent.
    #[serde(default)]
    pub workers: Option<u32>,
    /// A request's work after the wake-up, in nanoseconds.
    #[serde(default)]
    pub work_ns: u64,
}

fn one() -> u32 {
    1
}

impl Default for Schbench {
    fn default() -> Self {
        Schbench {
            message_threads: one(),
            workers: None,
            work_ns: 0,
        }
    }
}

const FUTEX_BLOCKED: u32 = 0;
const FUTEX_RUNNING: u32 = 1;
/// `sizeof(struct thread_data)` on x86-64, and its fields the model touches.
const THREAD_DATA_BYTES: u64 = 1_087_640;
const NEXT_OFFSET: u64 = 24;
const WAKE_TIME_OFFSET: u64 = 56;
const FUTEX_OFFSET: u64 = 72;

/// One thread_data's hot fields.
#[derive(Clone, Copy, Debug)]
struct ThreadData {
    next: Mem,
    wake_time: Mem,
    futex: Mem,
}

/// What the threads share: each message thread's list, each worker's
/// wake_time, and what the workers measured.
struct Shared {
    lists: Vec<Vec<u32>>,
    wake_time: Vec<Ps>,
    wakeup_ns: Histogram,
    requests: u64,
}

/// One step of a thread's loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// `td->futex = FUTEX_BLOCKED`.
    SetBlocked,
    /// A worker's gettimeofday(&td->wake_time).
    StampSelf,
    /// xlist_add: push the worker on its message thread's list.
    ListAdd,
    /// fpost's cmpxchg BLOCKED -> RUNNING on another thread's word.
    PostCas(u32),
    /// fpost's FUTEX_WAKE_PRIVATE of 1, when the cmpxchg succeeded.
    Wake(u32),
    /// fwait's cmpxchg RUNNING -> BLOCKED on the thread's own word.
    Claim,
    /// fwait's FUTEX_WAIT_PRIVATE while the word is BLOCKED.
    Sleep,
    /// xlist_splice: take the whole list.
    Splice,
    /// xlist_wake_all for one worker: unlink, stamp its wake_time.
    Unlink(u32),
    Stamp(u32),
    Work,
}

/// A message thread or one of its workers.
struct Thread {
    /// This thread's index among all threads: message thread first, then
    /// its workers.
    me: u32,
    msg: u32,
    is_worker: bool,
    tds: Arc<Vec<ThreadData>>,
    /// Each thread's list index: its message thread's number.
    group: usize,
    work_ps: Ps,
    plan: VecDeque<Action>,
    last: Action,
    now: Ps,
    stamp: Ps,
    shared: Arc<Mutex<Shared>>,
    /// -M auto -W auto: each message thread bound to its own CPU, the
    /// workers to the CPUs after the message threads'.
    affinity: Affinity,
}

impl Thread {
    /// One turn of the thread's loop; a decision may add steps as it goes.
    fn loop_plan(&self) -> Vec<Action> {
        if self.is_worker {
            vec![
                Action::SetBlocked,
                Action::StampSelf,
                Action::ListAdd,
                Action::PostCas(self.msg),
                Action::Claim,
            ]
        } else {
            vec![Action::SetBlocked, Action::Splice]
        }
    }

    fn word(&self, thread: u32, op: AtomicOp) -> Op {
        let word = UserWord {
            mem: self.tds[thread as usize].futex,
            kind: KeyKind::Private,
        };
        Op::Atomic(word, op)
    }
}

impl Program for Thread {
    fn next_op(&mut self) -> Op {
        if self.plan.is_empty() {
            self.plan = self.loop_plan().into();
        }
        let action = self.plan.pop_front().expect("the plan was refilled");
        self.last = action;
        let td = self.tds[self.me as usize];
        let mut shared = self.shared.lock().expect("one thread runs programs");
        match action {
            Action::SetBlocked => self.word(self.me, AtomicOp::Store(FUTEX_BLOCKED)),
            Action::StampSelf => Op::Access(td.wake_time, AccessKind::Write),
            Action::ListAdd => {
                shared.lists[self.group].push(self.me);
                Op::Access(self.tds[self.msg as usize].next, AccessKind::Rmw)
            }
            Action::PostCas(t) => self.word(
                t,
                AtomicOp::CompareExchange {
                    expected: FUTEX_BLOCKED,
                    new: FUTEX_RUNNING,
                },
            ),
            Action::Wake(t) => Op::Futex(FutexOp::Wake {
                uaddr: self.tds[t as usize].futex,
                nr: 1,
                kind: KeyKind::Private,
            }),
            Action::Claim => self.word(
                self.me,
                AtomicOp::CompareExchange {
                    expected: FUTEX_RUNNING,
                    new: FUTEX_BLOCKED,
                },
            ),
            Action::Sleep => Op::Futex(FutexOp::Wait {
                uaddr: td.futex,
                val: FUTEX_BLOCKED,
                kind: KeyKind::Private,
            }),
            Action::Splice => {
                // The list is a stack: the last worker pushed is woken first.
                let list = std::mem::take(&mut shared.lists[self.group]);
                self.stamp = self.now;
                for &w in list.iter().rev() {
                    self.plan
                        .extend([Action::Unlink(w), Action::Stamp(w), Action::PostCas(w)]);
                }
                self.plan.push_back(Action::Claim);
                Op::Access(td.next, AccessKind::Rmw)
            }
            Action::Unlink(w) => Op::Access(self.tds[w as usize].next, AccessKind::Write),
            Action::Stamp(w) => {
                shared.wake_time[w as usize] = self.stamp;
                Op::Access(self.tds[w as usize].wake_time, AccessKind::Write)
            }
            Action::Work => Op::Compute(self.work_ps),
        }
    }

    fn affinity(&self) -> Affinity {
        self.affinity
    }

    fn op_returned(&mut self, done: Done) {
        self.now = done.now;
        match self.last {
            Action::PostCas(t) if done.ret == i64::from(FUTEX_BLOCKED) => {
                self.plan.push_front(Action::Wake(t));
            }
            // A message thread that claims its word just goes round again.
            Action::Claim if done.ret == i64::from(FUTEX_RUNNING) && self.is_worker => {
                let mut shared = self.shared.lock().expect("one thread runs programs");
                if done.counted {
                    let latency = done.now - shared.wake_time[self.me as usize];
                    shared.wakeup_ns.record(latency / 1000);
                    shared.requests += 1;
                }
                if self.work_ps > 0 {
                    self.plan.push_front(Action::Work);
                }
            }
            Action::Claim if done.ret == i64::from(FUTEX_RUNNING) => {}
            Action::Claim => self.plan.push_front(Action::Sleep),
            Action::Sleep => self.plan.push_front(Action::Claim),
            _ => {}
        }
    }
}

impl Schbench {
    fn workers(&self, machine: &Machine) -> u32 {
        self.workers.filter(|&w| w > 0).unwrap_or(
            (machine.cpus() / self.message_threads.max(1))
                .saturating_sub(1)
                .max(1),
        )
    }
}

/// What schbench prints, in the readout's order.
/// What schbench exists for: requests served per second...
pub const REQUESTS_PER_SEC: &str = "requests per second";
/// ...and how late its workers wake (the 99th percentile it prints).
pub const WAKEUP_P99: &str = "wakeup latency p99";

const FIGURES: [&str; 6] = [
    REQUESTS_PER_SEC,
    "wakeup latency p50",
    "wakeup latency p90",
    WAKEUP_P99,
    "wakeup latency p99.9",
    "wakeup latency max",
];

impl Workload for Schbench {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Schbench
    }

    fn figures(&self) -> Vec<String> {
        FIGURES.iter().map(|f| f.to_string()).collect()
    }

    fn label(&self) -> String {
        format!(
            "schbench -m {} -t {} (work {} ns)",
            self.message_threads,
            self.workers
                .map_or_else(|| "auto".to_string(), |w| w.to_string()),
            self.work_ns
        )
    }

    fn threads(&self, machine: &Machine) -> u32 {
        // Saturating: a huge worker count is refused as more threads than the engine names.
        self.message_threads
            .max(1)
            .saturating_mul(self.workers(machine).saturating_add(1))
    }

    fn validate(&self, _: &Machine) -> Result<(), WorkloadError> {
        within_a_second("schbench: work_ns", self.work_ns)
    }

    fn size(&self, machine: &Machine) -> Size {
        let threads = u64::from(self.threads(machine));
        Size {
            tasks: threads,
            processes: 1,
            futexes: threads,
            // A thread_data's hot fields span two lines at most.
            lines: threads.saturating_mul(2),
            // Each thread's wake time, and its thread_data's words.
            held_bytes: threads.saturating_mul(size_of::<(u64, ThreadData)>() as u64),
        }
    }

    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let groups = self.message_threads.max(1);
        let per_group = 1 + self.workers(machine);
        let threads = groups * per_group;
        let mms = user_memory::mm_addresses(1, rng);
        // One calloc of every thread_data: an mmap, the pointer 16 bytes in.
        let base = MMAP_BASE + rng.gen_range(0..RANDOMIZED_PAGES) * 4096 + 16;
        let line = memory.line_size();
        let tds: Vec<ThreadData> = (0..u64::from(threads))
            .map(|i| {
                let td = base + i * THREAD_DATA_BYTES;
                let cpu = i as u32 % machine.cpus();
                let (lo, hi) = (td + NEXT_OFFSET, td + FUTEX_OFFSET + 4);
                let region = memory.add(
                    format!("schbench thread_data {i}"),
                    lo & !(line - 1),
                    hi - (lo & !(line - 1)),
                    Home::Node(machine.node_of(cpu)),
                );
                let mem = |off: u64| Mem {
                    addr: td + off,
                    line: memory.line_in(region, td + off),
                };
                ThreadData {
                    next: mem(NEXT_OFFSET),
                    wake_time: mem(WAKE_TIME_OFFSET),
                    futex: mem(FUTEX_OFFSET),
                }
            })
            .collect();
        let tds = Arc::new(tds);
        let shared = Arc::new(Mutex::new(Shared {
            lists: vec![Vec::new(); groups as usize],
            wake_time: vec![0; threads as usize],
            wakeup_ns: Histogram::default(),
            requests: 0,
        }));
        let placed = machine.sched.placement == TaskPlacement::Placed;
        let tasks = (0..threads)
            .map(|i| {
                let group = i / per_group;
                let is_worker = i % per_group != 0;
                // Placed, the message threads sit where -M auto pins them.
                let cpu = if placed && !is_worker { group } else { i };
                TaskSpec {
                    cpu: cpu % machine.cpus(),
                    program: Box::new(Thread {
                        me: i,
                        msg: group * per_group,
                        is_worker,
                        tds: tds.clone(),
                        group: group as usize,
                        work_ps: self.work_ns * 1000,
                        plan: VecDeque::new(),
                        last: Action::SetBlocked,
                        now: 0,
                        stamp: 0,
                        shared: shared.clone(),
                        affinity: if is_worker {
                            Affinity::CpusFrom(groups)
                        } else {
                            Affinity::Pinned
                        },
                    }) as Box<dyn Program>,
                }
            })
            .collect();
        Setup {
            tasks,
            task_process: vec![0; threads as usize],
            mms,
            futexes: threads.into(),
            lock_names: Vec::new(),
            readout: Some(Box::new(move |window, _| {
                let shared = shared.lock().expect("the run is over");
                let h = &shared.wakeup_ns;
                let us = |ns: u64| ns as f64 / 1000.0;
                vec![
                    Metric::new(
                        FIGURES[0],
                        shared.requests as f64 / (window.duration as f64 / 1e12),
                        "rps",
                    ),
                    Metric::new(FIGURES[1], us(h.quantile(0.50)), "us"),
                    Metric::new(FIGURES[2], us(h.quantile(0.90)), "us"),
                    Metric::new(FIGURES[3], us(h.quantile(0.99)), "us"),
                    Metric::new(FIGURES[4], us(h.quantile(0.999)), "us"),
                    Metric::new(FIGURES[5], us(h.max()), "us"),
                ]
            })),
            keys: None,
            thread_futexes: Vec::new(),
        }
    }
}
