//! `futexsim calibrate`: measures this machine and writes its profile.
//!
//! Measured, each between pinned threads:
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
//! unalike. Everything not measured comes from a base profile, named in the
//! profile's source.
//!
//! The failed wait sets the kernel's costs: the simulator runs one thread of
//! perf bench futex hash with the base syscall cost, and the syscall cost is
//! moved by the difference to the measured wait; a shared key costs what
//! the shared wait measures above the private one. The contended `lock add`
//! on the most CPUs of one socket sets `coherence.handoff`: the share of a
//! transfer for which a hand-off holds the line, bisected until the
//! directory's increments on as many CPUs come as far apart as the host's.
//! Where the LLC is inclusive, the fan-out's slope sets
//! `coherence.read_occupancy` the same way (each further reader of a
//! written line is an L3 hit that holds the line's server that long);
//! elsewhere a later reader's copy is a snoop, priced by the hand-off, and
//! the fan-out is reported beside what the fitted profile predicts.
//!
//! A measurement on a busy machine only ever gains time (a preempted
//! thread), so each takes the least over a few trials, and every trial
//! stops at a time budget, so an oversubscribed machine cannot make a
//! spinning trial run on.

use super::sys::{allowed_cpus, bare_syscall, futex_wait, pin_to};
use super::topology::{self, Distance, HostCpu};
use crate::coherence::probe;
use crate::config::Config;
use crate::machine::{Level, Machine, MachineSpec, RemoteSpec, TopologySpec};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use toml::{Table, Value};

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

    fn transfer(&self, distance: Distance) -> Option<f64> {
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

/// Rounded to 0.1 ns, the precision the figures are printed with.
fn tenth(ns: f64) -> f64 {
    (ns * 10.0).round() / 10.0
}

/// The host's profile: `base` (named `base_name` in the source) with the
/// measured figures in place.
pub fn profile(
    figures: &HostFigures,
    base: &MachineSpec,
    base_name: &str,
) -> Result<MachineSpec, String> {
    let mut spec = base.clone();
    spec.name = "host".into();
    let flat = TopologySpec {
        sockets: 1,
        nodes_per_socket: 1,
        cores_per_socket: figures.cpus.len().max(1) as u32,
        threads_per_core: 1,
        cores_per_llc: figures.cpus.len().max(1) as u32,
        sockets_per_board: None,
        numa_fake: 1,
        possible_cpus: None,
        nr_cpus: None,
        page_size: super::sys::page_size(),
    };
    let described = figures.topology.is_some();
    spec.topology = figures.topology.clone().unwrap_or(flat);
    // A distance the machine has but no usable pair of CPUs spans keeps the
    // base's figure, and the source says so; one it does not have (no SMT,
    // one cache per node) prices no pair, and takes the next nearer one.
    let t = &spec.topology;
    let (has_smt, has_llc, has_node) = (
        t.threads_per_core > 1,
        t.cores_per_socket > 1,
        t.cores_per_llc < t.cores_per_socket / t.nodes_per_socket,
    );
    let mut unmeasured = Vec::new();
    let mut pick = |what: &'static str, distance: Distance, has: bool, fallback: f64| {
        let measured = figures.transfer(distance);
        if measured.is_none() && has {
            unmeasured.push(what);
        }
        measured.map_or(fallback, tenth)
    };
    let llc = pick("llc", Distance::Llc, has_llc, base.latency.llc);
    spec.latency.smt = pick("smt", Distance::Smt, has_smt, base.latency.smt);
    spec.latency.llc = llc;
    spec.latency.node = pick("node", Distance::Node, has_node, llc);
    // Nodes in sysfs order; a pair not measured takes the mean of those measured.
    let mut nodes: Vec<u32> = figures.cpus.iter().map(|c| c.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let node_count = (spec.topology.sockets * spec.topology.nodes_per_socket) as usize;
    if nodes.len() != node_count {
        nodes = vec![0; node_count];
    }
    let node_of = |cpu: usize| figures.cpus.iter().find(|c| c.id == cpu).map(|c| c.node);
    let remote: Vec<(u32, u32, f64)> = figures
        .transfers
        .iter()
        .filter(|t| t.distance == Distance::Remote)
        .filter_map(|t| Some((node_of(t.from)?, node_of(t.to)?, t.ns)))
        .collect();
    let mean_remote = if remote.is_empty() {
        2.0 * spec.latency.node
    } else {
        remote.iter().map(|r| r.2).sum::<f64>() / remote.len() as f64
    };
    if node_count > 1 && remote.len() < node_count * (node_count - 1) / 2 {
        unmeasured.push("some node pairs (the mean of the others, or twice node)");
    }
    spec.latency.remote = RemoteSpec::Matrix(
        nodes
            .iter()
            .enumerate()
            .map(|(i, a)| {
                nodes
                    .iter()
                    .enumerate()
                    .map(|(j, b)| {
                        if i == j {
                            0.0
                        } else {
                            tenth(
                                remote
                                    .iter()
                                    .find(|r| (r.0, r.1) == (*a, *b) || (r.0, r.1) == (*b, *a))
                                    .map_or(mean_remote, |r| r.2),
                            )
                        }
                    })
                    .collect()
            })
            .collect(),
    );
    spec.latency.dram_remote = None;
    spec.latency.board = None;
    let fitted = fit_coherence(&mut spec, figures)?;
    let simulated = simulated_hash(&spec, 1, false, 200)?;
    let modelled = spec.kernel.ns();
    let syscall = tenth(modelled.syscall + figures.failed_wait_private_ns - 1e9 / simulated);
    spec.kernel.syscall = Some(syscall);
    if syscall <= 0.0 {
        return Err(format!(
            "a failed FUTEX_WAIT measured {:.0} ns, less than the modelled steps without a syscall; \
             the measurement is not trustworthy",
            figures.failed_wait_private_ns
        ));
    }
    spec.kernel.futex_key_shared = Some(tenth(
        modelled.futex_key_private
            + (figures.failed_wait_shared_ns - figures.failed_wait_private_ns).max(0.0),
    ));
    let t = &spec.topology;
    spec.source = format!(
        "futexsim calibrate on this machine: {} CPUs, {} ({} sockets x {} nodes x {} cores x {} \
         threads, {} cores per last-level cache); {}; failed FUTEX_WAIT {:.1} ns private and \
         {:.1} ns shared set kernel.syscall and kernel.futex_key_shared; {}; not measured, from {base_name}: {}",
        figures.cpus.len(),
        if described { "topology from sysfs" } else { "one flat node (sysfs does not describe it evenly)" },
        t.sockets,
        t.nodes_per_socket,
        t.cores_per_socket,
        t.threads_per_core,
        t.cores_per_llc,
        figures.lines().join("; "),
        figures.failed_wait_private_ns,
        figures.failed_wait_shared_ns,
        fitted.join("; "),
        if unmeasured.is_empty() {
            "l1_hit, dram, rmw and the other kernel costs".to_string()
        } else {
            format!("{} and l1_hit, dram, rmw and the other kernel costs", unmeasured.join(", "))
        }
    );
    Ok(spec)
}

/// The profile's CPUs as calibrate orders the host's for the fan-out and
/// the lock add: CPU 0, then the others of its socket nearest first, SMT
/// siblings last.
fn nearest_first(m: &Machine) -> Vec<u32> {
    let socket_of = |c: u32| m.node_of(c) / m.spec.topology.nodes_per_socket.max(1);
    let mut near: Vec<u32> = (1..m.cpus())
        .filter(|&c| socket_of(c) == socket_of(0))
        .collect();
    near.sort_by_key(|&c| (m.level(0, c) == Level::Core, m.level(0, c), c));
    std::iter::once(0).chain(near).collect()
}

/// Bisects `set` over [lo, hi] until `model` of the profile it gives meets
/// `target` (model rising with the parameter); the end of the range when
/// the target lies beyond it.
fn bisect(
    spec: &MachineSpec,
    (lo, hi): (f64, f64),
    target: f64,
    set: impl Fn(&mut MachineSpec, f64),
    model: impl Fn(&Machine) -> f64,
) -> Result<f64, String> {
    let at = |x: f64| -> Result<f64, String> {
        let mut s = spec.clone();
        set(&mut s, x);
        Ok(model(&Machine::new(s).map_err(|e| e.to_string())?))
    };
    if at(hi)? <= target {
        return Ok(hi);
    }
    if at(lo)? >= target {
        return Ok(lo);
    }
    let (mut lo, mut hi) = (lo, hi);
    for _ in 0..30 {
        let mid = (lo + hi) / 2.0;
        if at(mid)? < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok((lo + hi) / 2.0)
}

/// The shares of a transfer a fitted hand-off may take: one migration an
/// increment at most, a sixty-fourth at least.
const HANDOFF_RANGE: (f64, f64) = (1.0 / 64.0, 1.0);

/// Sets `coherence.handoff` from the contended lock add and, on an
/// inclusive LLC, `coherence.read_occupancy` from the fan-out (see the
/// file's comment); says what it set, from what, for the source.
fn fit_coherence(spec: &mut MachineSpec, figures: &HostFigures) -> Result<Vec<String>, String> {
    let mut said = Vec::new();
    let order = nearest_first(&Machine::new(spec.clone()).map_err(|e| e.to_string())?);
    let widest = figures
        .lock_add
        .iter()
        .filter(|l| l.sockets == 1 && l.cpus >= 2 && l.cpus <= order.len())
        .max_by_key(|l| l.cpus);
    match widest {
        Some(l) => {
            let cpus = &order[..l.cpus];
            let target = 1e9 / l.ops_per_sec;
            let handoff = bisect(
                spec,
                HANDOFF_RANGE,
                target,
                |s, h| s.coherence.handoff = Some(h),
                |m| probe::contended_rmw_ns(m, cpus, 100),
            )?;
            spec.coherence.handoff = Some((handoff * 1000.0).round() / 1000.0);
            // At the range's ends the host did what the model cannot: keep
            // the line for several increments, or take more than one
            // migration for each.
            let bound = if handoff <= HANDOFF_RANGE.0 {
                " (the least the model takes: the host's increments came closer)"
            } else if handoff >= HANDOFF_RANGE.1 {
                " (one migration an increment: the host's came farther apart)"
            } else {
                ""
            };
            said.push(format!(
                "coherence.handoff {:.3}{bound} fitted to lock add on {} CPUs of one socket ({target:.1} ns an increment)",
                handoff, l.cpus
            ));
        }
        None => {
            said.push("coherence.handoff from the base: no lock add on 2 CPUs of one socket".into())
        }
    }
    let readers: Vec<(usize, f64)> = figures
        .fan_out
        .iter()
        .copied()
        .filter(|&(k, _)| k < order.len())
        .collect();
    let model_slope = |m: &Machine| {
        slope(
            &readers
                .iter()
                .map(|&(k, _)| (k, probe::fan_out_ns(m, &order[1..=k])))
                .collect::<Vec<_>>(),
        )
    };
    let (Some(measured), true) = (slope(&readers), readers.len() >= 2) else {
        return Ok(said);
    };
    if spec.coherence.llc_inclusive {
        let occupancy = bisect(
            spec,
            (0.05, spec.latency.llc),
            measured,
            |s, ns| s.coherence.read_occupancy = Some(ns),
            |m| model_slope(m).unwrap_or(0.0),
        )?;
        spec.coherence.read_occupancy = Some(tenth(occupancy.max(0.1)));
        said.push(format!(
            "coherence.read_occupancy {:.1} ns fitted to the fan-out slope ({measured:.1} ns a reader)",
            occupancy.max(0.1)
        ));
    } else {
        let predicted = model_slope(&Machine::new(spec.clone()).map_err(|e| e.to_string())?);
        said.push(format!(
            "fan-out slope {measured:.1} ns a reader, {:.1} predicted (a snoop a reader: not fitted)",
            predicted.unwrap_or(0.0)
        ));
    }
    Ok(said)
}

/// The least-squares slope of ns against k; None with fewer than two ks.
fn slope(points: &[(usize, f64)]) -> Option<f64> {
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

/// perf bench futex hash on `spec` as the simulator predicts it: the
/// averaged per-thread ops/s, with the table of the kernel this machine runs
/// (6.17 on: a per-process private hash once a process has a second thread).
pub fn simulated_hash(
    spec: &MachineSpec,
    threads: u32,
    shared: bool,
    duration_us: u64,
) -> Result<f64, String> {
    let mut doc = Table::new();
    doc.insert(
        "run".into(),
        Value::Table(Table::from_iter([
            ("duration_us".to_string(), Value::from(duration_us as i64)),
            ("warmup_us".to_string(), Value::from(50)),
        ])),
    );
    doc.insert(
        "machine".into(),
        Value::try_from(spec).map_err(|e| e.to_string())?,
    );
    doc.insert(
        "workload".into(),
        Value::Table(Table::from_iter([
            ("name".to_string(), Value::from("perf-hash")),
            ("threads".to_string(), Value::from(threads as i64)),
            ("shared".to_string(), Value::from(shared)),
        ])),
    );
    doc.insert(
        "table".into(),
        Value::Array(vec![Value::Table(Table::from_iter([(
            "preset".to_string(),
            Value::from("private-6.17"),
        )]))]),
    );
    let text = toml::to_string(&doc).map_err(|e| e.to_string())?;
    simulated_ops_per_thread(&text)
}

/// The averaged per-thread ops/s the simulator predicts for `config`, a
/// config of one point and one table: how calibrate and compare hold the
/// model to what this machine measured.
pub fn simulated_ops_per_thread(config: &str) -> Result<f64, String> {
    let config = Config::parse("host", "host", config, &[]).map_err(|e| e.to_string())?;
    let run = config
        .runs()
        .into_iter()
        .next()
        .expect("one point, one design");
    let (record, _) = run.scenario.simulate().map_err(|e| e.to_string())?;
    Ok(record.mean_thread_ops_per_sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(fan_out: Vec<(usize, f64)>) -> HostFigures {
        HostFigures {
            cpus: Vec::new(),
            topology: None,
            transfers: Vec::new(),
            fan_out,
            lock_add: Vec::new(),
            syscall_ns: 50.0,
            failed_wait_private_ns: 120.0,
            failed_wait_shared_ns: 180.0,
        }
    }

    /// The figures a profile with `handoff` predicts for lock add on 4 CPUs.
    fn lock_add_of(spec: &MachineSpec, handoff: f64) -> HostFigures {
        let mut s = spec.clone();
        s.coherence.handoff = Some(handoff);
        let m = Machine::new(s).unwrap();
        let ns = probe::contended_rmw_ns(&m, &nearest_first(&m)[..4], 100);
        HostFigures {
            lock_add: vec![LockAdd {
                cpus: 4,
                sockets: 1,
                ops_per_sec: 1e9 / ns,
            }],
            ..figures(Vec::new())
        }
    }

    /// A host whose increments come as a known hand-off share makes them
    /// is given back that share; one slower than a migration each is held
    /// at one migration, and the source says so.
    #[test]
    fn the_hand_off_is_fitted_to_the_lock_add_the_model_would_make() {
        let base = crate::machine::presets::preset("icx-2s").unwrap();
        for want in [0.3, 0.6, 0.9] {
            let mut spec = base.clone();
            let said = fit_coherence(&mut spec, &lock_add_of(&base, want)).unwrap();
            let got = spec.coherence.handoff.unwrap();
            assert!((got - want).abs() < 0.02, "fitted {got}, made with {want}");
            assert!(said[0].contains("fitted to lock add on 4 CPUs"), "{said:?}");
        }
        let mut slow = lock_add_of(&base, 1.0);
        slow.lock_add[0].ops_per_sec /= 3.0;
        let mut spec = base.clone();
        let said = fit_coherence(&mut spec, &slow).unwrap();
        assert_eq!(spec.coherence.handoff, Some(1.0));
        assert!(said[0].contains("one migration an increment"), "{said:?}");
    }

    /// On an inclusive LLC a fan-out made with a known read occupancy is
    /// given back that occupancy.
    #[test]
    fn the_read_occupancy_is_fitted_to_the_fan_out_on_an_inclusive_llc() {
        let base = crate::machine::presets::preset("e5-2650-2s-32").unwrap();
        assert!(base.coherence.llc_inclusive);
        let want = 3.0;
        let mut made = base.clone();
        made.coherence.read_occupancy = Some(want);
        let m = Machine::new(made).unwrap();
        let order = nearest_first(&m);
        let fan_out = (1..=6)
            .map(|k| (k, probe::fan_out_ns(&m, &order[1..=k])))
            .collect();
        let mut spec = base.clone();
        let said = fit_coherence(&mut spec, &figures(fan_out)).unwrap();
        let got = spec.coherence.read_occupancy.unwrap();
        assert!(
            (got - want).abs() <= 0.1,
            "fitted {got} ns, made with {want}"
        );
        assert!(
            said.iter().any(|l| l.contains("read_occupancy")),
            "{said:?}"
        );
    }

    #[test]
    fn the_fan_out_slope_is_the_least_squares_line() {
        assert_eq!(figures(vec![(1, 100.0)]).fan_out_slope_ns(), None);
        let slope = figures(vec![(1, 100.0), (2, 130.0), (3, 160.0)])
            .fan_out_slope_ns()
            .unwrap();
        assert!((slope - 30.0).abs() < 1e-9, "{slope}");
    }
}
