//! `futexsim calibrate`: measures this machine and writes its profile.
//!
//! Measured: the one-way cache-line transfer between cores (CAS-free
//! ping-pong on one line between two pinned threads, the method of
//! nviennot/core-to-core-latency), and the cost of a failed private and a
//! failed shared FUTEX_WAIT. The topology is the online CPU count on one
//! node, one thread per core, one shared last-level cache. Everything not
//! measured comes from a base profile, named in the profile's source.
//!
//! The failed wait sets the kernel's costs: the simulator runs one thread of
//! perf bench futex hash with the base syscall cost, and the syscall cost is
//! moved by the difference to the measured wait; a shared key costs what
//! the shared wait measures above the private one.

use super::sys::{futex_wait, online_cpus, pin_to};
use crate::config::Config;
use crate::machine::{presets, MachineSpec};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;
use toml::{Table, Value};

#[derive(Clone, Debug)]
pub struct HostFigures {
    pub cpus: usize,
    /// One-way line transfer from CPU 0 to each other CPU, ns.
    pub transfer_ns: Vec<f64>,
    pub failed_wait_private_ns: f64,
    pub failed_wait_shared_ns: f64,
}

#[repr(align(128))]
struct Line(AtomicU64);

const ROUND_TRIPS: u64 = 20_000;
const TRIALS: usize = 5;

/// One-way transfer between `a` and `b`: the least over a few trials of
/// half a round trip, since a preempted trial only ever adds time.
pub fn transfer_ns(a: usize, b: usize) -> f64 {
    (0..TRIALS)
        .map(|_| {
            let line = Line(AtomicU64::new(0));
            std::thread::scope(|s| {
                let line = &line;
                s.spawn(move || {
                    pin_to(b);
                    for i in 0..ROUND_TRIPS {
                        while line.0.load(Ordering::Acquire) != 2 * i + 1 {
                            std::hint::spin_loop();
                        }
                        line.0.store(2 * i + 2, Ordering::Release);
                    }
                });
                pin_to(a);
                let began = Instant::now();
                for i in 0..ROUND_TRIPS {
                    line.0.store(2 * i + 1, Ordering::Release);
                    while line.0.load(Ordering::Acquire) != 2 * i + 2 {
                        std::hint::spin_loop();
                    }
                }
                began.elapsed().as_nanos() as f64 / (2 * ROUND_TRIPS) as f64
            })
        })
        .fold(f64::INFINITY, f64::min)
}

/// The least mean cost of a failed FUTEX_WAIT over a few trials.
pub fn failed_wait_ns(private: bool) -> f64 {
    const CALLS: u32 = 100_000;
    let word = AtomicU32::new(0);
    pin_to(0);
    (0..TRIALS)
        .map(|_| {
            let began = Instant::now();
            for _ in 0..CALLS {
                futex_wait(&word, 1, private);
            }
            began.elapsed().as_nanos() as f64 / CALLS as f64
        })
        .fold(f64::INFINITY, f64::min)
}

pub fn measure() -> HostFigures {
    let cpus = online_cpus();
    HostFigures {
        cpus,
        transfer_ns: (1..cpus).map(|b| transfer_ns(0, b)).collect(),
        failed_wait_private_ns: failed_wait_ns(true),
        failed_wait_shared_ns: failed_wait_ns(false),
    }
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The host's profile: `base` with the measured figures in place.
pub fn profile(figures: &HostFigures, base: &str) -> Result<MachineSpec, String> {
    let base_spec = presets::preset(base).ok_or_else(|| {
        let names: Vec<&str> = presets::names().collect();
        format!(
            "no machine profile '{base}' (there are {})",
            names.join(", ")
        )
    })?;
    let transfer = if figures.transfer_ns.is_empty() {
        base_spec.latency.llc
    } else {
        median(&figures.transfer_ns)
    };
    let mut spec = base_spec.clone();
    spec.name = "host".into();
    spec.topology = toml::from_str(&format!(
        "sockets = 1\ncores_per_socket = {0}\nthreads_per_core = 1\ncores_per_llc = {0}",
        figures.cpus
    ))
    .expect("a one-node topology parses");
    spec.latency.llc = transfer;
    spec.latency.node = transfer;
    spec.latency.remote = toml::from_str::<Table>("r = [[0.0]]").expect("parses")["r"]
        .clone()
        .try_into()
        .map_err(|e| format!("a one-node latency matrix: {e}"))?;
    spec.latency.dram_remote = None;
    let simulated = simulated_hash(&spec, 1, false, 200)?;
    let modelled = spec.kernel.ns();
    let syscall = modelled.syscall + figures.failed_wait_private_ns - 1e9 / simulated;
    spec.kernel.syscall = Some(syscall);
    if syscall <= 0.0 {
        return Err(format!(
            "a failed FUTEX_WAIT measured {:.0} ns, less than the modelled steps without a syscall; \
             the measurement is not trustworthy",
            figures.failed_wait_private_ns
        ));
    }
    spec.kernel.futex_key_shared = Some(
        modelled.futex_key_private
            + (figures.failed_wait_shared_ns - figures.failed_wait_private_ns).max(0.0),
    );
    spec.source = format!(
        "futexsim calibrate on this machine: {} CPUs; line transfer {:.1} ns (median over CPU 0 \
         to each other CPU); failed FUTEX_WAIT {:.1} ns private, {:.1} ns shared, which set \
         kernel.syscall and kernel.futex_key_shared; everything else from {base}",
        figures.cpus, transfer, figures.failed_wait_private_ns, figures.failed_wait_shared_ns
    );
    Ok(spec)
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
    let config = Config::parse("host", "host", &text, &[]).map_err(|e| e.to_string())?;
    let run = config
        .runs()
        .into_iter()
        .next()
        .expect("one point, one design");
    let (record, _) = run.scenario.simulate()?;
    Ok(record.mean_thread_ops_per_sec)
}
