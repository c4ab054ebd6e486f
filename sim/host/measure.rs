//! What `futexsim calibrate` measures of this machine, each between
//! pinned threads:
//! - the one-way line transfer per distance (SMT sibling, shared
//!   last-level cache, same node, each pair of nodes): a store-and-wait
//!   ping-pong on one line, the method of nviennot/core-to-core-latency;
//! - the fan-out: one writer stores a line that k readers wait on, each
//!   answering on a line of its own; the round time against k, and its
//!   slope, the price of each further reader of one written line;
//! - contended `lock add` throughput on one line across k CPUs of one
//!   socket, and across two sockets where the machine has two;
//! - a bare system call (getppid), and a failed private and a failed
//!   shared FUTEX_WAIT.
//!
//! The topology is what sysfs says (sockets, nodes, cores, SMT threads,
//! last-level caches), one flat node when it does not say or its parts are
//! unalike.
//!
//! A measurement on a busy machine only ever gains time (a preempted
//! thread), so each takes the least over a few trials, and every trial
//! stops at a time budget, so an oversubscribed machine cannot make a
//! spinning trial run on. Fitting the model to the figures is calibrate.rs'.

use super::sys::{allowed_cpus, bare_syscall, futex_wait, pin_to};
use super::topology::{self, Distance, HostCpu};
use crate::machine::TopologySpec;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long calibrate measures: the full run, or a quick one for tests and
/// small machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effort {
    pub round_trips: u64,
    pub trials: usize,
    /// The most one trial of a spinning measurement may take.
    pub trial_budget: Duration,
    pub syscalls: u32,
    /// The most readers the fan-out and CPUs the lock-add measure.
    pub max_cpus: usize,
}

impl Effort {
    pub const FULL: Effort = Effort {
        round_trips: 20_000,
        trials: 5,
        trial_budget: Duration::from_millis(400),
        syscalls: 100_000,
        max_cpus: 8,
    };
    pub const QUICK: Effort = Effort {
        round_trips: 2_000,
        trials: 3,
        trial_budget: Duration::from_millis(20),
        syscalls: 10_000,
        max_cpus: 4,
    };
}

/// One measured transfer between two CPUs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    pub from: usize,
    pub to: usize,
    pub distance: Distance,
    pub ns: f64,
}

/// Contended `lock add` on one line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LockAdd {
    pub cpus: usize,
    pub sockets: usize,
    pub ops_per_sec: f64,
}

#[derive(Clone, Debug)]
pub struct HostFigures {
    pub cpus: Vec<HostCpu>,
    /// The shape sysfs gives, when every part is alike.
    pub topology: Option<TopologySpec>,
    pub transfers: Vec<Transfer>,
    /// Round time of one write seen by k readers, (k, ns).
    pub fan_out: Vec<(usize, f64)>,
    pub lock_add: Vec<LockAdd>,
    pub syscall_ns: f64,
    pub failed_wait_private_ns: f64,
    pub failed_wait_shared_ns: f64,
}

#[repr(align(128))]
struct Line(AtomicU64);

impl Line {
    fn new() -> Line {
        Line(AtomicU64::new(0))
    }
}

/// Tells a spinning partner to stop: odd, so never a value it waits for.
const STOP: u64 = u64::MAX;

/// The least over `effort.trials` runs of `trial`.
fn least(effort: Effort, mut trial: impl FnMut() -> f64) -> f64 {
    (0..effort.trials)
        .map(|_| trial())
        .fold(f64::INFINITY, f64::min)
}

/// One-way transfer between `a` and `b`: half a round trip.
pub fn transfer_ns(a: usize, b: usize, effort: Effort) -> f64 {
    least(effort, || {
        let line = Line::new();
        std::thread::scope(|s| {
            let line = &line;
            s.spawn(move || {
                pin_to(b);
                let mut expect = 1;
                loop {
                    match line.0.load(Ordering::Acquire) {
                        STOP => break,
                        v if v == expect => {
                            line.0.store(v + 1, Ordering::Release);
                            expect += 2;
                        }
                        _ => std::hint::spin_loop(),
                    }
                }
            });
            pin_to(a);
            let began = Instant::now();
            let mut done = 0;
            for i in 0..effort.round_trips {
                line.0.store(2 * i + 1, Ordering::Release);
                while line.0.load(Ordering::Acquire) != 2 * i + 2 {
                    std::hint::spin_loop();
                }
                done = i + 1;
                if done % 64 == 0 && began.elapsed() > effort.trial_budget {
                    break;
                }
            }
            let ns = began.elapsed().as_nanos() as f64 / (2 * done) as f64;
            line.0.store(STOP, Ordering::Release);
            ns
        })
    })
}

/// The round time of one store by `writer` that every one of `readers`
/// sees and answers.
pub fn fan_out_ns(writer: usize, readers: &[usize], effort: Effort) -> f64 {
    least(effort, || {
        let line = Line::new();
        let acks: Vec<Line> = readers.iter().map(|_| Line::new()).collect();
        std::thread::scope(|s| {
            for (&cpu, ack) in readers.iter().zip(&acks) {
                let line = &line;
                s.spawn(move || {
                    pin_to(cpu);
                    let mut expect = 1;
                    loop {
                        match line.0.load(Ordering::Acquire) {
                            STOP => break,
                            v if v == expect => {
                                ack.0.store(v, Ordering::Release);
                                expect += 1;
                            }
                            _ => std::hint::spin_loop(),
                        }
                    }
                });
            }
            pin_to(writer);
            let began = Instant::now();
            let mut done = 0;
            for round in 1..=effort.round_trips {
                line.0.store(round, Ordering::Release);
                for ack in &acks {
                    while ack.0.load(Ordering::Acquire) != round {
                        std::hint::spin_loop();
                    }
                }
                done = round;
                if done % 64 == 0 && began.elapsed() > effort.trial_budget {
                    break;
                }
            }
            let ns = began.elapsed().as_nanos() as f64 / done as f64;
            line.0.store(STOP, Ordering::Release);
            ns
        })
    })
}

/// `lock add` on one line from every CPU of `cpus` at once, for one trial
/// budget: additions per second, all CPUs together.
pub fn lock_add_ops_per_sec(cpus: &[usize], effort: Effort) -> f64 {
    let run = || {
        let counter = Line::new();
        let go = AtomicBool::new(false);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let workers: Vec<_> = cpus
                .iter()
                .map(|&cpu| {
                    let (counter, go, stop) = (&counter, &go, &stop);
                    s.spawn(move || {
                        pin_to(cpu);
                        while !go.load(Ordering::Acquire) {
                            std::hint::spin_loop();
                        }
                        let mut ops = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            for _ in 0..64 {
                                // The result unused, this is one `lock add`.
                                counter.0.fetch_add(1, Ordering::Relaxed);
                            }
                            ops += 64;
                        }
                        ops
                    })
                })
                .collect();
            let began = Instant::now();
            go.store(true, Ordering::Release);
            std::thread::sleep(effort.trial_budget);
            stop.store(true, Ordering::Relaxed);
            let elapsed = began.elapsed().as_secs_f64();
            let ops: u64 = workers.into_iter().map(|w| w.join().unwrap_or(0)).sum();
            ops as f64 / elapsed
        })
    };
    // Throughput: the best trial is the least disturbed.
    (0..effort.trials).map(|_| run()).fold(0.0, f64::max)
}

/// The least mean cost of `call` over `effort.syscalls` calls.
fn per_call_ns(effort: Effort, mut call: impl FnMut()) -> f64 {
    least(effort, || {
        let began = Instant::now();
        for _ in 0..effort.syscalls {
            call();
        }
        began.elapsed().as_nanos() as f64 / f64::from(effort.syscalls)
    })
}

/// The CPUs to measure: what sysfs says of those this process may use, or
/// each its own core of one node where sysfs says nothing.
fn host_cpus() -> Vec<HostCpu> {
    let allowed = allowed_cpus();
    let described = topology::read_host().unwrap_or_default();
    if allowed
        .iter()
        .all(|id| described.iter().any(|c| c.id == *id))
        && !described.is_empty()
    {
        return described;
    }
    allowed
        .iter()
        .map(|&id| HostCpu {
            id,
            socket: 0,
            core: (0, id as u32),
            llc: allowed[0],
            node: 0,
        })
        .collect()
}

pub fn measure(effort: Effort) -> HostFigures {
    let cpus = host_cpus();
    let allowed = allowed_cpus();
    let usable: Vec<HostCpu> = cpus
        .iter()
        .copied()
        .filter(|c| allowed.contains(&c.id))
        .collect();
    let mut transfers = Vec::new();
    if let Some(first) = usable.first() {
        for distance in [Distance::Smt, Distance::Llc, Distance::Node] {
            if let Some(to) = usable
                .iter()
                .find(|c| c.id != first.id && first.distance(c) == distance)
            {
                transfers.push(Transfer {
                    from: first.id,
                    to: to.id,
                    distance,
                    ns: transfer_ns(first.id, to.id, effort),
                });
            }
        }
    }
    // One pair per pair of nodes: the first usable CPU of each.
    let mut firsts: Vec<&HostCpu> = Vec::new();
    for c in &usable {
        if !firsts.iter().any(|f| f.node == c.node) {
            firsts.push(c);
        }
    }
    for (i, a) in firsts.iter().enumerate() {
        for b in &firsts[i + 1..] {
            transfers.push(Transfer {
                from: a.id,
                to: b.id,
                distance: Distance::Remote,
                ns: transfer_ns(a.id, b.id, effort),
            });
        }
    }
    // Readers nearest the writer first, siblings last (they share its core).
    let writer = usable.first().copied();
    let mut near: Vec<HostCpu> = usable.iter().skip(1).copied().collect();
    if let Some(w) = writer {
        near.retain(|c| c.node == w.node);
        near.sort_by_key(|c| (c.distance(&w) == Distance::Smt, c.distance(&w), c.id));
    }
    let fan_out = match writer {
        Some(w) => (1..=near.len().min(effort.max_cpus))
            .map(|k| {
                let readers: Vec<usize> = near[..k].iter().map(|c| c.id).collect();
                (k, fan_out_ns(w.id, &readers, effort))
            })
            .collect(),
        None => Vec::new(),
    };
    let mut lock_add = Vec::new();
    if let Some(w) = writer {
        let mut socket: Vec<HostCpu> = usable
            .iter()
            .copied()
            .filter(|c| c.socket == w.socket)
            .collect();
        socket.sort_by_key(|c| {
            (
                c.distance(&w) == Distance::Smt && c.id != w.id,
                c.distance(&w),
                c.id,
            )
        });
        for k in 1..=socket.len().min(effort.max_cpus) {
            let ids: Vec<usize> = socket[..k].iter().map(|c| c.id).collect();
            lock_add.push(LockAdd {
                cpus: k,
                sockets: 1,
                ops_per_sec: lock_add_ops_per_sec(&ids, effort),
            });
        }
        let other: Vec<usize> = usable
            .iter()
            .filter(|c| c.socket != w.socket)
            .map(|c| c.id)
            .collect();
        for half in 1..=socket.len().min(other.len()).min(effort.max_cpus / 2) {
            let ids: Vec<usize> = socket[..half]
                .iter()
                .map(|c| c.id)
                .chain(other[..half].iter().copied())
                .collect();
            lock_add.push(LockAdd {
                cpus: 2 * half,
                sockets: 2,
                ops_per_sec: lock_add_ops_per_sec(&ids, effort),
            });
        }
    }
    if let Some(w) = writer {
        pin_to(w.id);
    }
    let word = AtomicU32::new(0);
    HostFigures {
        topology: topology::topology(&cpus),
        cpus,
        transfers,
        fan_out,
        lock_add,
        syscall_ns: per_call_ns(effort, || {
            bare_syscall();
        }),
        failed_wait_private_ns: per_call_ns(effort, || {
            futex_wait(&word, 1, true);
        }),
        failed_wait_shared_ns: per_call_ns(effort, || {
            futex_wait(&word, 1, false);
        }),
    }
}

impl HostFigures {
    /// The least-squares slope of the fan-out's round time against its
    /// readers; None with fewer than two reader counts.
    pub fn fan_out_slope_ns(&self) -> Option<f64> {
        slope(&self.fan_out)
    }

    pub(super) fn transfer(&self, distance: Distance) -> Option<f64> {
        self.transfers
            .iter()
            .find(|t| t.distance == distance)
            .map(|t| t.ns)
    }

    /// Every figure, one line each, as calibrate prints them.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .transfers
            .iter()
            .map(|t| {
                format!(
                    "line transfer, CPUs {} and {} ({}): {:.1} ns",
                    t.from, t.to, t.distance, t.ns
                )
            })
            .collect();
        out.extend(
            self.fan_out
                .iter()
                .map(|(k, ns)| format!("fan-out, 1 writer and {k} readers: {ns:.1} ns a round")),
        );
        if let Some(slope) = self.fan_out_slope_ns() {
            out.push(format!("fan-out slope: {slope:.1} ns per reader"));
        }
        out.extend(self.lock_add.iter().map(|l| {
            format!(
                "lock add on one line, {} CPUs on {} socket(s): {:.1} M/s ({:.1} ns each)",
                l.cpus,
                l.sockets,
                l.ops_per_sec / 1e6,
                1e9 / l.ops_per_sec
            )
        }));
        out.push(format!("bare syscall (getppid): {:.1} ns", self.syscall_ns));
        out.push(format!(
            "failed FUTEX_WAIT: {:.1} ns private, {:.1} ns shared",
            self.failed_wait_private_ns, self.failed_wait_shared_ns
        ));
        out
    }
}

/// The least-squares slope of ns against k; None with fewer than two ks.
pub(super) fn slope(points: &[(usize, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mean_k = points.iter().map(|&(k, _)| k as f64).sum::<f64>() / n;
    let mean_t = points.iter().map(|&(_, t)| t).sum::<f64>() / n;
    let (num, den) = points.iter().fold((0.0, 0.0), |(num, den), &(k, t)| {
        let dk = k as f64 - mean_k;
        (num + dk * (t - mean_t), den + dk * dk)
    });
    Some(num / den)
}
