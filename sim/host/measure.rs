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
//! - the ticket lock's hand-off against its spinners: k CPUs of one socket
//!   each taking and releasing one ticket lock, as the kernel's generic
//!   ticket spinlock does (one fetch-and-add for a ticket, loads of the
//!   owner until it is theirs, a release store of the next owner);
//! - a bare system call (getppid), and a failed private and a failed
//!   shared FUTEX_WAIT.
//!
//! The topology is what sysfs says (sockets, nodes, cores, SMT threads,
//! last-level caches), one flat node when it does not say or its parts are
//! unalike.
//!
//! Each figure is sampled many times and given as the median with the
//! spread of the middle half: on a shared machine one trial can be 19
//! times another (a preempted partner spins for a whole time slice), and
//! the least of a few trials hides that as well as it hides a real figure.
//! [`HostFigures::implausible`] names a spread or an ordering no quiet
//! machine shows, for calibrate to refuse. Every trial stops at a time
//! budget, so an oversubscribed machine cannot make a spinning trial run
//! on. Fitting the model to the figures is calibrate.rs'.

use super::sys::{allowed_cpus, bare_syscall, futex_wait, pin_to};
use super::topology::{self, Distance, HostCpu};
use crate::machine::TopologySpec;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long calibrate measures: the full run, or a quick one for tests and
/// small machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effort {
    pub round_trips: u64,
    /// Samples of each figure.
    pub samples: usize,
    /// The most one trial of a spinning measurement may take.
    pub trial_budget: Duration,
    pub syscalls: u32,
    /// The most readers the fan-out and CPUs the lock-add measure.
    pub max_cpus: usize,
}

impl Effort {
    pub const FULL: Effort = Effort {
        round_trips: 7_000,
        samples: 15,
        trial_budget: Duration::from_millis(150),
        syscalls: 30_000,
        max_cpus: 8,
    };
    pub const QUICK: Effort = Effort {
        round_trips: 1_000,
        samples: 5,
        trial_budget: Duration::from_millis(10),
        syscalls: 5_000,
        max_cpus: 4,
    };
}

/// One measured transfer between two CPUs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    pub from: usize,
    pub to: usize,
    pub distance: Distance,
    /// The median.
    pub ns: f64,
    pub spread: f64,
}

/// Contended `lock add` on one line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LockAdd {
    pub cpus: usize,
    pub sockets: usize,
    /// The median.
    pub ops_per_sec: f64,
    pub spread: f64,
}

/// A figure sampled `Effort::samples` times: the median, which a few
/// disturbed samples cannot move, and the spread, the middle half's width
/// over the median.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampled {
    pub median: f64,
    pub spread: f64,
}

impl Sampled {
    /// The median and spread of `samples` (quartiles by nearest rank).
    pub fn of(mut samples: Vec<f64>) -> Sampled {
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| {
            let rank = (samples.len().saturating_sub(1) as f64 * q).round() as usize;
            samples.get(rank).copied().unwrap_or(f64::NAN)
        };
        let median = at(0.5);
        Sampled {
            median,
            spread: (at(0.75) - at(0.25)) / median,
        }
    }
}

/// The widest spread a figure may have: on a quiet machine the middle half
/// of a ping-pong's or a syscall loop's samples lies within a few percent
/// of its median; a quarter means preemption or frequency changes moved
/// most samples, and a profile fitted to them is off by more than the
/// design differences it is used to compare.
pub const MAX_SPREAD: f64 = 0.25;

/// How much a figure may beat one that must be at least as good before the
/// ordering is implausible: the noise between the medians of a quiet
/// machine's back-to-back runs.
pub const ORDER_TOLERANCE: f64 = 0.10;

/// A figure no quiet machine measures.
#[derive(Clone, Debug, PartialEq)]
pub enum Implausible {
    /// The figure (as [`HostFigures::lines`] names it) spreads too widely.
    Spread { figure: String, spread: f64 },
    /// A farther pair of CPUs moved a line faster than a nearer one.
    FartherFaster {
        near: Distance,
        near_ns: f64,
        far: Distance,
        far_ns: f64,
    },
    /// Contended `lock add` on several CPUs of one socket outran one CPU
    /// alone, which keeps the line in its own L1.
    ContendedFaster {
        cpus: usize,
        ops_per_sec: f64,
        alone: f64,
    },
}

impl std::fmt::Display for Implausible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Implausible::Spread { figure, spread } => write!(
                f,
                "{figure}: its samples' middle half spreads {:.0} % of the median (at most {:.0} % on a quiet machine)",
                spread * 100.0,
                MAX_SPREAD * 100.0
            ),
            Implausible::FartherFaster { near, near_ns, far, far_ns } => write!(
                f,
                "a line transfer between CPUs {far} ({far_ns:.1} ns) is faster than between CPUs {near} ({near_ns:.1} ns)"
            ),
            Implausible::ContendedFaster { cpus, ops_per_sec, alone } => write!(
                f,
                "lock add on one line from {cpus} CPUs ({:.1} M/s) is faster than from 1 CPU alone ({:.1} M/s)",
                ops_per_sec / 1e6,
                alone / 1e6
            ),
        }
    }
}

#[derive(Clone, Debug)]
pub struct HostFigures {
    pub cpus: Vec<HostCpu>,
    /// The shape sysfs gives, when every part is alike.
    pub topology: Option<TopologySpec>,
    pub transfers: Vec<Transfer>,
    /// Round time of one write seen by k readers, (k, ns).
    pub fan_out: Vec<(usize, Sampled)>,
    pub lock_add: Vec<LockAdd>,
    /// The ticket lock's time per hand-off with k CPUs of one socket
    /// taking it in turn, (k, ns).
    pub ticket: Vec<(usize, Sampled)>,
    pub syscall_ns: Sampled,
    pub failed_wait_private_ns: Sampled,
    pub failed_wait_shared_ns: Sampled,
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

/// `effort.samples` runs of `trial`.
fn sampled(effort: Effort, mut trial: impl FnMut() -> f64) -> Sampled {
    Sampled::of((0..effort.samples).map(|_| trial()).collect())
}

/// One-way transfer between `a` and `b`: half a round trip.
pub fn transfer_ns(a: usize, b: usize, effort: Effort) -> Sampled {
    sampled(effort, || {
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
pub fn fan_out_ns(writer: usize, readers: &[usize], effort: Effort) -> Sampled {
    sampled(effort, || {
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

/// Runs `work` on a thread pinned to each CPU of `cpus`, all released
/// together and told to stop (the flag `work` polls) after one trial
/// budget: the trial's seconds and the sum of what the threads counted.
fn for_one_trial(
    cpus: &[usize],
    effort: Effort,
    work: impl Fn(&AtomicBool) -> u64 + Sync,
) -> (f64, u64) {
    let go = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let workers: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let (go, stop, work) = (&go, &stop, &work);
                s.spawn(move || {
                    pin_to(cpu);
                    while !go.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                    work(stop)
                })
            })
            .collect();
        let began = Instant::now();
        go.store(true, Ordering::Release);
        std::thread::sleep(effort.trial_budget);
        stop.store(true, Ordering::Relaxed);
        let elapsed = began.elapsed().as_secs_f64();
        let counted = workers.into_iter().map(|w| w.join().unwrap_or(0)).sum();
        (elapsed, counted)
    })
}

/// `lock add` on one line from every CPU of `cpus` at once, for one trial
/// budget: additions per second, all CPUs together.
pub fn lock_add_ops_per_sec(cpus: &[usize], effort: Effort) -> Sampled {
    sampled(effort, || {
        let counter = Line::new();
        let (secs, ops) = for_one_trial(cpus, effort, |stop| {
            let mut ops = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..64 {
                    // The result unused, this is one `lock add`.
                    counter.0.fetch_add(1, Ordering::Relaxed);
                }
                ops += 64;
            }
            ops
        });
        ops as f64 / secs
    })
}

/// A ticket lock laid out as the kernel's generic one (asm-generic
/// ticket_spinlock.h): the owner's half and the next ticket's half of one
/// 32-bit word, so that taking a ticket, spinning and handing over all
/// move one line.
#[repr(C, align(128))]
struct TicketLock {
    owner: AtomicU16,
    next: AtomicU16,
}

/// Every CPU of `cpus` (two or more) taking and releasing one ticket lock
/// with nothing held, for one trial budget: ns per hand-off, the trial's
/// time over the acquisitions of all CPUs together.
pub fn ticket_handoff_ns(cpus: &[usize], effort: Effort) -> Sampled {
    sampled(effort, || {
        let lock = TicketLock {
            owner: AtomicU16::new(0),
            next: AtomicU16::new(0),
        };
        let (secs, held) = for_one_trial(cpus, effort, |stop| {
            let mut held = 0u64;
            // Every thread takes a ticket until the stop is seen by its
            // holder: one that stopped without its turn would leave the
            // others spinning for ever.
            loop {
                let ticket = lock.next.fetch_add(1, Ordering::Relaxed);
                while lock.owner.load(Ordering::Acquire) != ticket {
                    std::hint::spin_loop();
                }
                let done = stop.load(Ordering::Relaxed);
                lock.owner.store(ticket.wrapping_add(1), Ordering::Release);
                if done {
                    return held;
                }
                held += 1;
            }
        });
        secs * 1e9 / held.max(1) as f64
    })
}

/// The mean cost of `call` over `effort.syscalls` calls, sampled.
fn per_call_ns(effort: Effort, mut call: impl FnMut()) -> Sampled {
    sampled(effort, || {
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
                let ns = transfer_ns(first.id, to.id, effort);
                transfers.push(Transfer {
                    from: first.id,
                    to: to.id,
                    distance,
                    ns: ns.median,
                    spread: ns.spread,
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
            let ns = transfer_ns(a.id, b.id, effort);
            transfers.push(Transfer {
                from: a.id,
                to: b.id,
                distance: Distance::Remote,
                ns: ns.median,
                spread: ns.spread,
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
    let mut ticket = Vec::new();
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
            let rate = lock_add_ops_per_sec(&ids, effort);
            lock_add.push(LockAdd {
                cpus: k,
                sockets: 1,
                ops_per_sec: rate.median,
                spread: rate.spread,
            });
        }
        for k in 2..=socket.len().min(effort.max_cpus) {
            let ids: Vec<usize> = socket[..k].iter().map(|c| c.id).collect();
            ticket.push((k, ticket_handoff_ns(&ids, effort)));
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
            let rate = lock_add_ops_per_sec(&ids, effort);
            lock_add.push(LockAdd {
                cpus: 2 * half,
                sockets: 2,
                ops_per_sec: rate.median,
                spread: rate.spread,
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
        ticket,
        syscall_ns: per_call_ns(effort, || {
            bare_syscall();
        }),
        failed_wait_private_ns: per_call_ns(effort, || {
            let _ = futex_wait(&word, 1, true);
        }),
        failed_wait_shared_ns: per_call_ns(effort, || {
            let _ = futex_wait(&word, 1, false);
        }),
    }
}

impl HostFigures {
    /// The least-squares slope of the fan-out's round time against its
    /// readers; None with fewer than two reader counts.
    pub fn fan_out_slope_ns(&self) -> Option<f64> {
        slope(&self.fan_out_medians())
    }

    /// The fan-out's median round time against its readers.
    pub(super) fn fan_out_medians(&self) -> Vec<(usize, f64)> {
        self.fan_out.iter().map(|&(k, t)| (k, t.median)).collect()
    }

    /// Every figure that spreads too widely, and every ordering no machine
    /// shows; empty when the figures are fit to calibrate from.
    pub fn implausible(&self) -> Vec<Implausible> {
        let lines = self.lines();
        let mut found: Vec<Implausible> = lines
            .iter()
            .zip(self.spreads())
            .filter(|(_, spread)| spread.is_nan() || *spread > MAX_SPREAD)
            .map(|(figure, spread)| Implausible::Spread {
                figure: figure.split(':').next().unwrap_or(figure).to_string(),
                spread,
            })
            .collect();
        for (i, near) in self.transfers.iter().enumerate() {
            for far in &self.transfers[i + 1..] {
                let (near, far) = if near.distance <= far.distance {
                    (near, far)
                } else {
                    (far, near)
                };
                if near.distance < far.distance && far.ns * (1.0 + ORDER_TOLERANCE) < near.ns {
                    found.push(Implausible::FartherFaster {
                        near: near.distance,
                        near_ns: near.ns,
                        far: far.distance,
                        far_ns: far.ns,
                    });
                }
            }
        }
        let one_socket = self.lock_add.iter().filter(|l| l.sockets == 1);
        if let Some(alone) = one_socket.clone().find(|l| l.cpus == 1) {
            found.extend(
                one_socket
                    .filter(|l| {
                        l.cpus > 1 && l.ops_per_sec > alone.ops_per_sec * (1.0 + ORDER_TOLERANCE)
                    })
                    .map(|l| Implausible::ContendedFaster {
                        cpus: l.cpus,
                        ops_per_sec: l.ops_per_sec,
                        alone: alone.ops_per_sec,
                    }),
            );
        }
        found
    }

    /// Each sampled figure's spread, in the order of [`HostFigures::lines`]
    /// (the fan-out's slope, computed, has none).
    fn spreads(&self) -> Vec<f64> {
        let mut spreads: Vec<f64> = self.transfers.iter().map(|t| t.spread).collect();
        spreads.extend(self.fan_out.iter().map(|(_, t)| t.spread));
        if self.fan_out_slope_ns().is_some() {
            spreads.push(0.0);
        }
        spreads.extend(self.lock_add.iter().map(|l| l.spread));
        spreads.extend(self.ticket.iter().map(|(_, t)| t.spread));
        spreads.push(self.syscall_ns.spread);
        spreads.push(
            self.failed_wait_private_ns
                .spread
                .max(self.failed_wait_shared_ns.spread),
        );
        spreads
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
                    "line transfer, CPUs {} and {} ({}): {:.1} ns {}",
                    t.from,
                    t.to,
                    t.distance,
                    t.ns,
                    spread(t.spread)
                )
            })
            .collect();
        out.extend(self.fan_out.iter().map(|(k, t)| {
            format!(
                "fan-out, 1 writer and {k} readers: {:.1} ns a round {}",
                t.median,
                spread(t.spread)
            )
        }));
        if let Some(slope) = self.fan_out_slope_ns() {
            out.push(format!("fan-out slope: {slope:.1} ns per reader"));
        }
        out.extend(self.lock_add.iter().map(|l| {
            format!(
                "lock add on one line, {} CPUs on {} socket(s): {:.1} M/s ({:.1} ns each) {}",
                l.cpus,
                l.sockets,
                l.ops_per_sec / 1e6,
                1e9 / l.ops_per_sec,
                spread(l.spread)
            )
        }));
        out.extend(self.ticket.iter().map(|(k, t)| {
            format!(
                "ticket lock hand-off, {k} CPUs of one socket: {:.1} ns {}",
                t.median,
                spread(t.spread)
            )
        }));
        out.push(format!(
            "bare syscall (getppid): {:.1} ns {}",
            self.syscall_ns.median,
            spread(self.syscall_ns.spread)
        ));
        out.push(format!(
            "failed FUTEX_WAIT: {:.1} ns private {}, {:.1} ns shared {}",
            self.failed_wait_private_ns.median,
            spread(self.failed_wait_private_ns.spread),
            self.failed_wait_shared_ns.median,
            spread(self.failed_wait_shared_ns.spread)
        ));
        out
    }
}

/// How a figure's spread is printed beside its median (and a fit's beside
/// the figure it was fitted to).
pub(super) fn spread(spread: f64) -> String {
    format!("(median; middle half within {:.1} %)", spread * 100.0)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(median: f64) -> Sampled {
        Sampled {
            median,
            spread: 0.0,
        }
    }

    /// Figures of a quiet two-distance machine, every spread 2 %.
    fn quiet() -> HostFigures {
        let transfer = |distance, ns| Transfer {
            from: 0,
            to: 1,
            distance,
            ns,
            spread: 0.02,
        };
        let lock_add = |cpus, ops_per_sec| LockAdd {
            cpus,
            sockets: 1,
            ops_per_sec,
            spread: 0.02,
        };
        HostFigures {
            cpus: Vec::new(),
            topology: None,
            transfers: vec![transfer(Distance::Smt, 15.0), transfer(Distance::Llc, 60.0)],
            fan_out: vec![(1, exact(120.0)), (2, exact(150.0))],
            lock_add: vec![lock_add(1, 180e6), lock_add(2, 25e6), lock_add(4, 20e6)],
            ticket: vec![(2, exact(120.0)), (4, exact(160.0))],
            syscall_ns: exact(50.0),
            failed_wait_private_ns: exact(120.0),
            failed_wait_shared_ns: exact(180.0),
        }
    }

    /// Two threads taking one ticket lock in turn stop at the trial's
    /// budget (each one's last ticket served) and count their hand-offs,
    /// even on one CPU, where a waiter spins until the holder runs again.
    #[test]
    fn the_ticket_lock_measurement_ends_and_times_its_hand_offs() {
        let allowed = allowed_cpus();
        let first = allowed[0];
        let second = allowed.get(1).copied().unwrap_or(first);
        let t = ticket_handoff_ns(&[first, second], Effort::QUICK);
        assert!(t.median.is_finite() && t.median > 0.0, "{t:?}");
        // A trial of the budget's length holds at least one hand-off.
        let budget_ns = Effort::QUICK.trial_budget.as_nanos() as f64;
        assert!(t.median <= 2.0 * budget_ns, "{t:?}");
    }

    #[test]
    fn the_median_and_spread_of_samples_ignore_a_few_preempted_ones() {
        // The shared-host run of the issue: two preempted samples of six.
        let s = Sampled::of(vec![1219.9, 591.2, 63.7, 68.0, 60.0, 57.8]);
        assert_eq!(s.median, 68.0);
        let quiet = Sampled::of(vec![60.0, 61.0, 59.0, 60.5, 60.2, 59.8, 60.1]);
        assert_eq!(quiet.median, 60.1);
        assert!(quiet.spread < 0.02, "{quiet:?}");
    }

    #[test]
    fn a_quiet_machines_figures_are_plausible() {
        assert_eq!(quiet().implausible(), Vec::new());
    }

    #[test]
    fn a_figure_whose_samples_spread_widely_is_implausible() {
        let mut figures = quiet();
        figures.transfers[1].spread =
            Sampled::of(vec![1219.9, 591.2, 63.7, 68.0, 60.0, 57.8]).spread;
        let found = figures.implausible();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            matches!(&found[0], Implausible::Spread { figure, .. }
                if figure.contains("sharing a last-level cache")),
            "{found:?}"
        );
        figures.transfers[1].spread = MAX_SPREAD;
        assert_eq!(figures.implausible(), Vec::new());
    }

    #[test]
    fn contended_lock_add_faster_than_one_cpu_alone_is_implausible() {
        let mut figures = quiet();
        figures.lock_add[1].ops_per_sec = 200e6;
        assert_eq!(
            figures.implausible(),
            vec![Implausible::ContendedFaster {
                cpus: 2,
                ops_per_sec: 200e6,
                alone: 180e6
            }]
        );
        // Within the tolerance, noise.
        figures.lock_add[1].ops_per_sec = 180e6 * (1.0 + ORDER_TOLERANCE);
        assert_eq!(figures.implausible(), Vec::new());
    }

    #[test]
    fn a_farther_transfer_faster_than_a_nearer_one_is_implausible() {
        let mut figures = quiet();
        figures.transfers[0].ns = 20.5;
        figures.transfers[1].ns = 12.9;
        assert!(matches!(
            figures.implausible()[..],
            [Implausible::FartherFaster {
                near: Distance::Smt,
                far: Distance::Llc,
                ..
            }]
        ));
    }
}
