//! `futexsim calibrate`: fits a machine profile to what measure.rs
//! measured of this machine. Everything not measured comes from a base
//! profile, named in the profile's source.
//!
//! The failed wait sets the kernel's costs: the simulator runs one thread of
//! perf bench futex hash with the base syscall cost, and the syscall cost is
//! moved by the difference to the measured wait; a shared key costs what
//! the shared wait measures above the private one. The contended `lock add`
//! on the most CPUs of one socket sets `coherence.transfer_occupancy`: how
//! long an ownership transfer holds the line, bisected until the
//! directory's increments on as many CPUs come as far apart as the host's;
//! the widest one split over two sockets then sets
//! `coherence.remote_transfer_occupancy` the same way. Where a node holds
//! several last-level caches, the line transfer between two CPUs sharing
//! one sets `coherence.llc_transfer_occupancy`, and where the host has
//! several nodes but no lock add across two sockets, the transfer between
//! its nearest nodes sets `coherence.remote_transfer_occupancy`: half a
//! ping-pong's round trip is, in the model, one occupancy and the RMW, the
//! shipped profiles' fit (docs/machines.md 2.3). The fan-out's slope
//! sets `coherence.read_occupancy` (each further reader of a written line
//! gets a Shared copy, which holds the line's server that long). The
//! owner's burst (`coherence.snoop_delay`) is kept from the base: a lock
//! add's rate does not tell a longer occupancy from a longer burst.

use super::measure::{slope, spread, HostFigures, Transfer};
use super::topology::Distance;
use crate::coherence::probe;
use crate::config::{Config, ConfigError};
use crate::machine::{Level, Machine, MachineError, MachineSpec, RemoteSpec, TopologySpec};
use crate::scenario::RunError;
use toml::{Table, Value};

/// Rounded to 0.1 ns, the precision the figures are printed with.
fn tenth(ns: f64) -> f64 {
    (ns * 10.0).round() / 10.0
}

/// A profile fitted to the host, and what each fit set, from what, with the
/// spread of the figures it used: one line each, as calibrate prints them.
pub struct Calibrated {
    pub spec: MachineSpec,
    pub fits: Vec<String>,
}

/// The host's profile: `base` (named `base_name` in the source) with the
/// measured figures in place.
pub fn profile(
    figures: &HostFigures,
    base: &MachineSpec,
    base_name: &str,
) -> Result<Calibrated, CalibrateError> {
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
    let fitted = fit_coherence(&mut spec, figures).map_err(ModelError::from)?;
    let simulated = simulated_hash(&spec, 1, false, 200)?;
    let modelled = spec.kernel.ns();
    let syscall = tenth(modelled.syscall + figures.failed_wait_private_ns.median - 1e9 / simulated);
    spec.kernel.syscall = Some(syscall);
    if syscall <= 0.0 {
        return Err(CalibrateError::WaitBelowModel {
            measured_ns: figures.failed_wait_private_ns.median,
        });
    }
    spec.kernel.futex_key_shared = Some(tenth(
        modelled.futex_key_private
            + (figures.failed_wait_shared_ns.median - figures.failed_wait_private_ns.median)
                .max(0.0),
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
        figures.failed_wait_private_ns.median,
        figures.failed_wait_shared_ns.median,
        fitted.join("; "),
        if unmeasured.is_empty() {
            "l1_hit, dram, rmw and the other kernel costs".to_string()
        } else {
            format!("{} and l1_hit, dram, rmw and the other kernel costs", unmeasured.join(", "))
        }
    );
    Ok(Calibrated { spec, fits: fitted })
}

/// Why no profile is fitted to the host's figures.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The failed wait measured less than the model's steps besides the
    /// system call: the system call would cost nothing or less.
    #[error(
        "a failed FUTEX_WAIT measured {measured_ns:.0} ns, less than the modelled steps without a \
         syscall; the measurement is not trustworthy"
    )]
    WaitBelowModel { measured_ns: f64 },
}

/// Why the model could not give a figure on a profile.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A profile a fit set does not build a machine.
    #[error(transparent)]
    Machine(#[from] MachineError),
    /// The profile, or the config holding it, does not serialize as TOML.
    #[error(transparent)]
    Toml(#[from] toml::ser::Error),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("the host's config plans no run")]
    NoRun,
    #[error(transparent)]
    Run(#[from] RunError),
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
) -> Result<f64, MachineError> {
    let at = |x: f64| -> Result<f64, MachineError> {
        let mut s = spec.clone();
        set(&mut s, x);
        Ok(model(&Machine::new(s)?))
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

/// The least occupancy a fit gives, in ns: a line's server taking ten
/// requests a nanosecond. The most is the farthest transfer among the lock
/// add's CPUs: one migration an increment (a longer occupancy leaves the
/// line with its holder after its data is in, for increments of its own,
/// which makes increments come closer, not farther apart).
const LEAST_OCCUPANCY_NS: f64 = 0.1;

/// The profile's CPUs of the second socket in the order calibrate splits
/// the host's lock add over two sockets: by number.
fn second_socket(m: &Machine) -> Vec<u32> {
    let socket_of = |c: u32| m.node_of(c) / m.spec.topology.nodes_per_socket.max(1);
    (0..m.cpus())
        .filter(|&c| socket_of(c) != socket_of(0))
        .collect()
}

/// The CPUs of a lock add the host ran on `cpus` CPUs of `sockets`
/// sockets, as the profile numbers them; None where it has too few.
fn lock_add_cpus(order: &[u32], second: &[u32], cpus: usize, sockets: usize) -> Option<Vec<u32>> {
    match sockets {
        1 => order.get(..cpus).map(<[u32]>::to_vec),
        _ => {
            let half = cpus / 2;
            let (near, far) = (order.get(..half)?, second.get(..half)?);
            Some(near.iter().chain(far).copied().collect())
        }
    }
}

/// Bisects one occupancy until the model's lock add on the widest
/// measurement of `sockets` sockets meets the host's; says what it set.
/// None where the host ran no lock add on 2 CPUs of that many sockets.
fn fit_occupancy(
    spec: &mut MachineSpec,
    figures: &HostFigures,
    sockets: usize,
    what: &str,
    set: impl Fn(&mut MachineSpec, f64),
) -> Result<Option<String>, MachineError> {
    let m = Machine::new(spec.clone())?;
    let (order, second) = (nearest_first(&m), second_socket(&m));
    let widest = figures
        .lock_add
        .iter()
        .filter(|l| l.sockets == sockets && l.cpus >= 2)
        .filter_map(|l| Some((l, lock_add_cpus(&order, &second, l.cpus, sockets)?)))
        .max_by_key(|(l, _)| l.cpus);
    let Some((l, cpus)) = widest else {
        return Ok(None);
    };
    let target = 1e9 / l.ops_per_sec;
    let farthest = cpus
        .iter()
        .map(|&c| m.transfer_ps(cpus[0], c))
        .max()
        .unwrap_or(0) as f64
        / 1000.0;
    let range = (LEAST_OCCUPANCY_NS, farthest.max(LEAST_OCCUPANCY_NS));
    let ns = bisect(spec, range, target, &set, |m| {
        probe::contended_rmw_ns(m, &cpus, 100)
    })?;
    // At the range's ends the host did what the model cannot.
    let bound = if ns <= range.0 {
        " (the least the model takes: the host's increments came closer)"
    } else if ns >= range.1 {
        " (one migration an increment: the host's came farther apart)"
    } else {
        ""
    };
    let ns = tenth(ns);
    set(spec, ns);
    Ok(Some(format!(
        "coherence.{what} {ns:.1} ns{bound} fitted to lock add on {} CPUs of {sockets} socket(s) ({target:.1} ns an increment) {}",
        l.cpus,
        spread(l.spread)
    )))
}

/// Sets the occupancy `set` gives from one line transfer the host measured
/// (half a ping-pong's round trip): in the model that is one occupancy and
/// the RMW, so the transfer less the profile's RMW, at least the least
/// occupancy the model takes; says what it set.
fn fit_ping_pong(
    spec: &mut MachineSpec,
    transfer: &Transfer,
    what: &str,
    set: impl Fn(&mut MachineSpec, f64),
) -> String {
    let rmw = spec.latency.rmw;
    let ns = tenth((transfer.ns - rmw).max(LEAST_OCCUPANCY_NS));
    let bound = if ns <= LEAST_OCCUPANCY_NS {
        " (the least the model takes: the host's transfer took no longer than the RMW)"
    } else {
        ""
    };
    set(spec, ns);
    format!(
        "coherence.{what} {ns:.1} ns{bound} fitted to the line transfer between CPUs {} and {} ({}): {:.1} ns less the {rmw:.1} ns RMW {}",
        transfer.from,
        transfer.to,
        transfer.distance,
        transfer.ns,
        spread(transfer.spread)
    )
}

/// Sets the transfer occupancies from the contended lock add and the line
/// transfers, and `coherence.read_occupancy` from the fan-out (see the
/// file's comment); says what it set, from what, for the source.
fn fit_coherence(
    spec: &mut MachineSpec,
    figures: &HostFigures,
) -> Result<Vec<String>, MachineError> {
    let mut said = Vec::new();
    let t = &spec.topology;
    let several_llcs = t.cores_per_llc < t.cores_per_socket / t.nodes_per_socket.max(1);
    let several_nodes = t.sockets * t.nodes_per_socket > 1;
    let two_sockets = t.sockets > 1;
    // Before the lock add's bisection, which then runs with the transfers
    // inside a cache domain priced as the host's.
    let inside_llc = figures
        .transfers
        .iter()
        .find(|t| t.distance == Distance::Llc);
    if let (true, Some(transfer)) = (several_llcs, inside_llc) {
        said.push(fit_ping_pong(
            spec,
            transfer,
            "llc_transfer_occupancy",
            |s, ns| s.coherence.llc_transfer_occupancy = Some(ns),
        ));
    }
    said.push(
        fit_occupancy(spec, figures, 1, "transfer_occupancy", |s, ns| {
            s.coherence.transfer_occupancy = Some(ns)
        })?
        .unwrap_or_else(|| {
            "coherence.transfer_occupancy from the base: no lock add on 2 CPUs of 1 socket".into()
        }),
    );
    let set_remote = |s: &mut MachineSpec, ns| s.coherence.remote_transfer_occupancy = Some(ns);
    let by_lock_add = if two_sockets {
        fit_occupancy(spec, figures, 2, "remote_transfer_occupancy", set_remote)?
    } else {
        None
    };
    // One occupancy serves every pair of nodes and none may hold a line
    // longer than its own transfer takes, so the nearest pair sets it.
    let nearest_nodes = figures
        .transfers
        .iter()
        .filter(|t| t.distance == Distance::Remote)
        .min_by(|a, b| a.ns.total_cmp(&b.ns));
    match (by_lock_add, nearest_nodes) {
        (Some(line), _) => said.push(line),
        (None, Some(transfer)) if several_nodes => said.push(fit_ping_pong(
            spec,
            transfer,
            "remote_transfer_occupancy",
            set_remote,
        )),
        (None, _) if several_nodes => said.push(
            "coherence.remote_transfer_occupancy from the base: no lock add across two sockets and no transfer between nodes".into(),
        ),
        (None, _) => {}
    }
    let order = nearest_first(&Machine::new(spec.clone())?);
    let readers: Vec<(usize, f64)> = figures
        .fan_out_medians()
        .into_iter()
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
    let occupancy = bisect(
        spec,
        (0.05, spec.latency.llc),
        measured,
        |s, ns| s.coherence.read_occupancy = Some(ns),
        |m| model_slope(m).unwrap_or(0.0),
    )?;
    spec.coherence.read_occupancy = Some(tenth(occupancy.max(0.1)));
    let widest = figures
        .fan_out
        .iter()
        .map(|(_, t)| t.spread)
        .fold(0.0, f64::max);
    said.push(format!(
        "coherence.read_occupancy {:.1} ns fitted to the fan-out slope ({measured:.1} ns a reader; the widest middle half of its rounds within {:.1} %)",
        occupancy.max(0.1),
        widest * 100.0
    ));
    Ok(said)
}

/// perf bench futex hash on `spec` as the simulator predicts it: the
/// averaged per-thread ops/s, with the table of the kernel this machine runs
/// (6.17 on: a per-process private hash once a process has a second thread).
pub fn simulated_hash(
    spec: &MachineSpec,
    threads: u32,
    shared: bool,
    duration_us: u64,
) -> Result<f64, ModelError> {
    simulated_on(
        spec,
        run_of(duration_us as i64, 50),
        Table::from_iter([
            ("name".to_string(), Value::from("perf-hash")),
            ("threads".to_string(), Value::from(threads as i64)),
            ("shared".to_string(), Value::from(shared)),
        ]),
        this_kernels_table(),
    )
}

/// A `[run]` of `duration_us` after `warmup_us`, as calibrate and compare
/// simulate them.
pub fn run_of(duration_us: i64, warmup_us: i64) -> Table {
    Table::from_iter([
        ("duration_us".to_string(), Value::from(duration_us)),
        ("warmup_us".to_string(), Value::from(warmup_us)),
    ])
}

/// The table of the kernel this machine runs: 6.17 on, a per-process
/// private hash once a process has a second thread.
pub fn this_kernels_table() -> Table {
    Table::from_iter([("preset".to_string(), Value::from("private-6.17"))])
}

/// The averaged per-thread ops/s the simulator predicts for `workload` on
/// `spec` over `run`, with `table` as the design: how calibrate and compare
/// hold the model to what this machine measured. The config is built as a
/// TOML document, the profile nested whole as its `[machine]`, so that
/// every section a profile has reaches the config.
pub fn simulated_on(
    spec: &MachineSpec,
    mut run: Table,
    workload: Table,
    table: Table,
) -> Result<f64, ModelError> {
    let at_least = long_enough_us(spec)?;
    if let Some(Value::Integer(us)) = run.get_mut("duration_us") {
        *us = (*us).max(at_least);
    }
    let doc = Table::from_iter([
        ("run".to_string(), Value::Table(run)),
        ("machine".to_string(), Value::try_from(spec)?),
        ("workload".to_string(), Value::Table(workload)),
        ("table".to_string(), Value::Array(vec![Value::Table(table)])),
    ]);
    let text = toml::to_string(&doc)?;
    let config = Config::parse("host", "host", &text, &[])?;
    let run = config.runs().into_iter().next().ok_or(ModelError::NoRun)?;
    let (record, _) = run.scenario.simulate()?;
    Ok(record.mean_thread_ops_per_sec)
}

/// Line transfers between the profile's farthest CPUs a simulated run
/// must have time for, so that its figures count many ops, not a few.
const TRANSFERS_A_RUN: i64 = 200;

/// The least run, in us, that holds [`TRANSFERS_A_RUN`] transfers between
/// the profile's CPU 0 and its farthest CPU: a profile calibrated on a
/// busy machine can take tens of microseconds a transfer (a partner
/// preempted mid ping-pong), and a run of the usual hundred microseconds
/// would then count no op at all.
fn long_enough_us(spec: &MachineSpec) -> Result<i64, ModelError> {
    let m = Machine::new(spec.clone())?;
    let farthest_ps = (0..m.cpus())
        .map(|c| m.transfer_ps(0, c))
        .max()
        .unwrap_or(0);
    Ok(i64::try_from(farthest_ps / 1_000_000)
        .unwrap_or(i64::MAX)
        .saturating_add(1)
        .saturating_mul(TRANSFERS_A_RUN))
}

/// The host's ticket-lock hand-off at one count of CPUs beside the fitted
/// profile's: the check calibrate prints of its arbitration, which the
/// fit does not use (the hand-off is set by the transfer and read
/// occupancies the lock add and the fan-out gave, and the owner's burst
/// moves it little).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TicketCheck {
    pub cpus: usize,
    pub host_ns: f64,
    pub model_ns: f64,
}

/// The factor past which calibrate warns that the fitted profile does not
/// hand a ticket lock on as this host does: the tolerance `futexsim
/// validate` gives a closed form.
pub const TICKET_TOLERANCE: f64 = 1.5;

impl TicketCheck {
    /// The model's hand-off over the host's.
    pub fn factor(&self) -> f64 {
        self.model_ns / self.host_ns
    }

    /// Whether the model is further from the host than [`TICKET_TOLERANCE`].
    pub fn off(&self) -> bool {
        let f = self.factor();
        !(1.0 / TICKET_TOLERANCE..=TICKET_TOLERANCE).contains(&f)
    }
}

impl std::fmt::Display for TicketCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ticket lock hand-off, {} CPUs: this machine {:.1} ns, the profile {:.1} ns ({:.2}x)",
            self.cpus,
            self.host_ns,
            self.model_ns,
            self.factor()
        )
    }
}

/// The model's ticket-lock hand-off on `spec` with `cpus` threads, each on
/// its CPU (0 up) taking and releasing one ticket lock with nothing held:
/// ns per hand-off, all threads together.
pub fn simulated_ticket_handoff_ns(spec: &MachineSpec, cpus: usize) -> Result<f64, ModelError> {
    let step = |op: &str| {
        Value::Table(Table::from_iter([
            ("op".to_string(), Value::from(op)),
            ("lock".to_string(), Value::from("lock")),
        ]))
    };
    let per_thread = simulated_on(
        spec,
        run_of(100, 20),
        Table::from_iter([
            ("name".to_string(), Value::from("program")),
            ("threads".to_string(), Value::from(cpus as i64)),
            ("locks".to_string(), Value::Array(vec![Value::from("lock")])),
            (
                "steps".to_string(),
                Value::Array(vec![step("lock"), step("unlock")]),
            ),
        ]),
        Table::from_iter([
            ("preset".to_string(), Value::from("aligned-3.14")),
            ("lock".to_string(), Value::from("ticket")),
        ]),
    )?;
    Ok(1e9 / (per_thread * cpus as f64))
}

/// The fitted profile's ticket-lock hand-off at each count of CPUs the
/// host measured, beside the host's.
pub fn ticket_check(
    spec: &MachineSpec,
    figures: &HostFigures,
) -> Result<Vec<TicketCheck>, ModelError> {
    let cpus = Machine::new(spec.clone())?.cpus() as usize;
    figures
        .ticket
        .iter()
        .filter(|&&(k, _)| k <= cpus)
        .map(|&(k, host)| {
            Ok(TicketCheck {
                cpus: k,
                host_ns: host.median,
                model_ns: simulated_ticket_handoff_ns(spec, k)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::measure::{LockAdd, Sampled};

    fn figures(fan_out: Vec<(usize, f64)>) -> HostFigures {
        let exact = |median| Sampled {
            median,
            spread: 0.0,
        };
        HostFigures {
            cpus: Vec::new(),
            topology: None,
            transfers: Vec::new(),
            fan_out: fan_out.into_iter().map(|(k, ns)| (k, exact(ns))).collect(),
            lock_add: Vec::new(),
            ticket: Vec::new(),
            syscall_ns: exact(50.0),
            failed_wait_private_ns: exact(120.0),
            failed_wait_shared_ns: exact(180.0),
        }
    }

    /// The figures a profile with `transfer_occupancy` and
    /// `remote_transfer_occupancy` (ns) predicts for lock add on 4 CPUs of
    /// one socket and 8 split over two (enough that the hand-offs, not
    /// each CPU's own round trip, set the pace).
    fn lock_add_of(spec: &MachineSpec, local: f64, remote: f64) -> HostFigures {
        let mut s = spec.clone();
        s.coherence.transfer_occupancy = Some(local);
        s.coherence.remote_transfer_occupancy = Some(remote);
        let m = Machine::new(s).unwrap();
        let (order, second) = (nearest_first(&m), second_socket(&m));
        let rate = |sockets| {
            let count = 4 * sockets;
            let cpus = lock_add_cpus(&order, &second, count, sockets).unwrap();
            LockAdd {
                cpus: count,
                sockets,
                ops_per_sec: 1e9 / probe::contended_rmw_ns(&m, &cpus, 100),
                spread: 0.0,
            }
        };
        HostFigures {
            lock_add: vec![rate(1), rate(2)],
            ..figures(Vec::new())
        }
    }

    /// A host whose increments come as known occupancies make them is
    /// given back those occupancies, within a socket and across two; one
    /// slower than the range allows is held at its end, and the source
    /// says so. The occupancies are ones a lock add can tell apart: on
    /// icx-2s's four nearest CPUs each CPU's turn comes a round of four
    /// hand-offs apart, about 17.5 ns an increment in steady state, whatever
    /// occupancy below about 11.5 ns the line has, so no lock add on them
    /// measures one below that.
    #[test]
    fn the_transfer_occupancies_are_fitted_to_the_lock_add_the_model_would_make() {
        let base = crate::machine::presets::preset("icx-2s").unwrap();
        for (local, remote) in [(15.0, 40.0), (20.0, 90.0), (45.0, 110.0)] {
            let mut spec = base.clone();
            let said = fit_coherence(&mut spec, &lock_add_of(&base, local, remote)).unwrap();
            let got = spec.coherence.transfer_occupancy.unwrap();
            assert!(
                (got - local).abs() <= 0.2,
                "fitted {got}, made with {local}"
            );
            let got = spec.coherence.remote_transfer_occupancy.unwrap();
            assert!(
                (got - remote).abs() <= 0.5,
                "fitted {got}, made with {remote}"
            );
            assert!(
                said[0].contains("fitted to lock add on 4 CPUs of 1"),
                "{said:?}"
            );
            assert!(
                said[1].contains("fitted to lock add on 8 CPUs of 2"),
                "{said:?}"
            );
        }
        let mut slow = lock_add_of(&base, 45.0, 110.0);
        slow.lock_add[0].ops_per_sec /= 3.0;
        let mut spec = base.clone();
        let said = fit_coherence(&mut spec, &slow).unwrap();
        assert_eq!(spec.coherence.transfer_occupancy, Some(base.latency.llc));
        assert!(said[0].contains("one migration an increment"), "{said:?}");
    }

    /// The line transfers a host measured, each with a known median.
    fn transfers(measured: &[(Distance, usize, usize, f64)]) -> HostFigures {
        HostFigures {
            transfers: measured
                .iter()
                .map(|&(distance, from, to, ns)| Transfer {
                    from,
                    to,
                    distance,
                    ns,
                    spread: 0.02,
                })
                .collect(),
            ..figures(Vec::new())
        }
    }

    /// On a host whose nodes hold several last-level caches and which has
    /// several nodes but ran no lock add across sockets, the occupancy
    /// inside a cache domain and the one between nodes are the ping-pong's
    /// half round trips less the RMW: 23 ns inside a CCX and 197 ns to the
    /// nearer of two other nodes on Milan's shape give 17 and 191 ns back,
    /// each said with the transfer and its spread.
    #[test]
    fn the_occupancies_inside_a_cache_domain_and_between_nodes_are_fitted_to_the_ping_pong() {
        let base = crate::machine::presets::preset("milan-2s").unwrap();
        let host = transfers(&[
            (Distance::Llc, 0, 1, 23.0),
            (Distance::Remote, 0, 96, 197.0),
            (Distance::Remote, 96, 150, 240.0),
        ]);
        let mut spec = base.clone();
        let said = fit_coherence(&mut spec, &host).unwrap();
        assert_eq!(spec.coherence.llc_transfer_occupancy, Some(23.0 - 6.0));
        assert_eq!(spec.coherence.remote_transfer_occupancy, Some(197.0 - 6.0));
        assert_eq!(
            spec.coherence.transfer_occupancy, base.coherence.transfer_occupancy,
            "no lock add: the base's within-node occupancy stays"
        );
        let line = |what: &str| {
            said.iter()
                .find(|l| l.starts_with(&format!("coherence.{what} ")))
                .unwrap_or_else(|| panic!("{what} not said: {said:?}"))
                .clone()
        };
        let inside = line("llc_transfer_occupancy");
        assert!(
            inside.contains("CPUs 0 and 1") && inside.contains("23.0 ns less the 6.0 ns RMW"),
            "{inside}"
        );
        assert!(inside.contains("middle half within 2.0 %"), "{inside}");
        assert!(
            line("remote_transfer_occupancy").contains("CPUs 0 and 96"),
            "{said:?}"
        );
    }

    /// Where a node holds one last-level cache, a transfer inside it is the
    /// node's own and sets no occupancy of its own; on one node no remote
    /// occupancy is set; and a transfer no longer than the RMW gives the
    /// least occupancy the model takes, and says so.
    #[test]
    fn a_ping_pong_occupancy_is_fitted_only_where_the_host_has_that_level() {
        let one_llc = crate::machine::presets::preset("icx-2s").unwrap();
        let mut spec = one_llc.clone();
        fit_coherence(&mut spec, &transfers(&[(Distance::Llc, 0, 1, 60.0)])).unwrap();
        assert_eq!(spec.coherence.llc_transfer_occupancy, None);
        let mut one_node = crate::machine::presets::preset("milan-2s").unwrap();
        one_node.topology.sockets = 1;
        one_node.latency.remote = RemoteSpec::Matrix(vec![vec![0.0]]);
        one_node.latency.dram_remote = None;
        one_node.coherence.remote_transfer_occupancy = None;
        let mut spec = one_node.clone();
        let said = fit_coherence(&mut spec, &transfers(&[(Distance::Llc, 0, 1, 4.0)])).unwrap();
        assert_eq!(spec.coherence.remote_transfer_occupancy, None);
        assert_eq!(
            spec.coherence.llc_transfer_occupancy,
            Some(LEAST_OCCUPANCY_NS)
        );
        assert!(said[0].contains("the least the model takes"), "{said:?}");
    }

    /// A lock add across two sockets, a contended curve, sets the remote
    /// occupancy where the host ran one, whatever its transfers between
    /// nodes say.
    #[test]
    fn the_lock_add_across_sockets_sets_the_remote_occupancy_before_the_ping_pong() {
        let base = crate::machine::presets::preset("icx-2s").unwrap();
        let mut host = lock_add_of(&base, 20.0, 90.0);
        host.transfers = vec![Transfer {
            from: 0,
            to: 64,
            distance: Distance::Remote,
            ns: 300.0,
            spread: 0.0,
        }];
        let mut spec = base.clone();
        let said = fit_coherence(&mut spec, &host).unwrap();
        let got = spec.coherence.remote_transfer_occupancy.unwrap();
        assert!((got - 90.0).abs() <= 0.5, "fitted {got}, made with 90");
        assert!(
            said.iter()
                .any(|l| l.contains("fitted to lock add on 8 CPUs of 2")),
            "{said:?}"
        );
    }

    /// A fan-out made with a known read occupancy is given back that
    /// occupancy, on an inclusive LLC and on a snoop filter's alike.
    #[test]
    fn the_read_occupancy_is_fitted_to_the_fan_out_inclusive_llc_or_not() {
        for name in ["e5-2650-2s-32", "icx-2s"] {
            let base = crate::machine::presets::preset(name).unwrap();
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
                "{name}: fitted {got} ns, made with {want}"
            );
            assert!(
                said.iter().any(|l| l.contains("read_occupancy")),
                "{said:?}"
            );
        }
    }

    /// The check sets the model's hand-off beside the host's: a host that
    /// hands on as the profile does is met, one three times slower is
    /// flagged; and the model's hand-off moves the lock's line at least
    /// once, so it is never under a transfer between the two CPUs.
    #[test]
    fn the_ticket_check_flags_a_host_whose_hand_off_the_profile_does_not_reproduce() {
        let spec = crate::machine::presets::preset("icx-2s").unwrap();
        let at = |k| simulated_ticket_handoff_ns(&spec, k).unwrap();
        let (two, four) = (at(2), at(4));
        assert!(two >= spec.latency.llc, "{two} ns a hand-off");
        let exact = |median| Sampled {
            median,
            spread: 0.0,
        };
        let host = HostFigures {
            ticket: vec![(2, exact(two)), (4, exact(3.0 * four))],
            ..figures(Vec::new())
        };
        let checks = ticket_check(&spec, &host).unwrap();
        assert_eq!(checks.len(), 2);
        assert!((checks[0].factor() - 1.0).abs() < 1e-9 && !checks[0].off());
        assert!(checks[1].off(), "{}", checks[1]);
        assert!(checks[1].to_string().contains("4 CPUs"), "{}", checks[1]);
    }

    /// A profile whose transfers take 80-90 us (a busy machine's
    /// calibration) is simulated for at least 200 of its farthest
    /// transfers, not the usual 100 us that would hold one, and its figures
    /// count ops.
    #[test]
    fn a_profile_with_very_slow_transfers_is_simulated_for_many_of_them() {
        let mut spec = crate::machine::presets::preset("icx-2s").unwrap();
        for ns in [
            &mut spec.latency.smt,
            &mut spec.latency.llc,
            &mut spec.latency.node,
        ] {
            *ns = 80_000.0;
        }
        spec.latency.remote = RemoteSpec::Matrix(vec![vec![0.0, 90_000.0], vec![90_000.0, 0.0]]);
        spec.latency.dram_remote = None;
        spec.coherence.transfer_occupancy = Some(80_000.0);
        assert!(long_enough_us(&spec).unwrap() >= 200 * 90);
        let handoff = simulated_ticket_handoff_ns(&spec, 2).unwrap();
        assert!(
            handoff.is_finite() && handoff > 0.0,
            "{handoff} ns a hand-off"
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
