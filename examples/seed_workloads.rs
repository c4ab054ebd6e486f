//! Runs the program-style workloads on the seed reports' machines and
//! prints their figures, until the config layer runs them from configs/:
//!
//!     cargo run --release --example seed_workloads -- time-exit uv-512 512
//!     cargo run --release --example seed_workloads -- lru 1|2 (numa_fake)
//!     cargo run --release --example seed_workloads -- fea fixed-256|private-2009

use futexsim::engine::RunWindow;
use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::machine::MachineSpec;
use futexsim::record::RunRecord;
use futexsim::scenario::Scenario;
use futexsim::workload::fea_solver::FeaSolver;
use futexsim::workload::lru_lock::LruLock;
use futexsim::workload::time_exit::TimeExit;
use futexsim::workload::WorkloadSpec;

const MS: u64 = 1_000_000_000;

fn run(machine: MachineSpec, design: &str, workload: WorkloadSpec, window: RunWindow) -> RunRecord {
    Scenario {
        machine,
        design: table(design).expect("a table preset"),
        workload,
        window,
        seed: 1,
    }
    .simulate()
    .unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    })
    .0
}

fn locks(r: &RunRecord) {
    let mut l = r.workload_locks.clone();
    l.sort_by(|a, b| b.total_wait_ns.total_cmp(&a.total_wait_ns));
    for l in l.iter().take(6) {
        println!(
            "  {:<28} taken {:>6}  wait {:>10.3} ms  hold {:>8.3} ms",
            l.name,
            l.lock.acquisitions,
            l.total_wait_ns / 1e6,
            l.total_hold_ns / 1e6
        );
    }
    for line in r.top_lines.iter().take(4) {
        println!(
            "  hot line: {:<32} hitm {}",
            line.region,
            line.lcl_hitm + line.rmt_hitm
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let until_exit = RunWindow {
        warmup: 0,
        duration: 100_000 * MS,
    };
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["time-exit", m, n] => {
            let n: u32 = n.parse().expect("children");
            let w = WorkloadSpec::TimeExit(TimeExit {
                children: Some(n),
                ..TimeExit::default()
            });
            let r = run(
                machine(m).expect("a machine preset"),
                "fixed-256",
                w,
                until_exit,
            );
            for e in &r.extra {
                println!("{}: {} {}", e.name, e.value, e.unit);
            }
            locks(&r);
        }
        ["lru", fake] => {
            let mut m = machine("arm64-8").unwrap();
            m.topology.cores_per_socket = 96;
            m.topology.cores_per_llc = 96;
            m.topology.numa_fake = fake.parse().expect("numa_fake");
            let window = RunWindow {
                warmup: MS,
                duration: 5 * MS,
            };
            for p in [1, 12, 24, 48, 96] {
                let w = WorkloadSpec::LruLock(LruLock { processes: Some(p) });
                let r = run(m.clone(), "numa-6.16", w, window);
                println!(
                    "numa_fake={fake} processes={p:>2}: {:>9.0} pages/s",
                    r.ops_per_sec
                );
            }
        }
        ["fea", design] => {
            let w = WorkloadSpec::FeaSolver(serde_json::from_str("{}").unwrap());
            let r = run(machine("vsmp-32").unwrap(), design, w, until_exit);
            let solver: FeaSolver = serde_json::from_str("{}").unwrap();
            println!("{}", solver.label());
            for e in &r.extra {
                println!("{design}: {}: {:.3} {}", e.name, e.value, e.unit);
            }
            println!(
                "hitm per op {:.2}, lock wait {:.0} ns",
                r.coherence.hitm_per_op, r.locks.mean_wait_ns
            );
        }
        _ => {
            eprintln!("usage: seed_workloads time-exit MACHINE N | lru NUMA_FAKE | fea DESIGN");
            std::process::exit(2);
        }
    }
}
