//! Simulator speed: events and simulated futex ops per wall second for perf
//! bench futex hash with aligned-3.14 buckets, at 64, 512 and 4096 CPUs.
//! Each sample is a whole `simulate`: set-up, the bucket-load analysis of
//! every key (on a thread beside the event loop), the event loop and the
//! record. The 4096-CPU run simulates
//! 200 us, long enough that the event loop's steady state dominates its
//! set-up (4M keys analysed, 80 MB of directory and locks laid out); the
//! line printed before each group gives the engine's own rate (directory
//! set-up and event loop).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::scenario::Scenario;
use futexsim::task::RunWindow;
use futexsim::workload::{perf_hash::PerfHash, WorkloadSpec};

/// `duration_us` simulated microseconds counted after a warm-up of a fifth of that.
fn scenario(machine_name: &str, threads: u32, duration_us: u64) -> Scenario {
    Scenario {
        machine: machine(machine_name).unwrap(),
        design: table("aligned-3.14").unwrap(),
        workload: WorkloadSpec::PerfHash(PerfHash {
            threads: Some(threads),
            ..Default::default()
        }),
        window: RunWindow {
            warmup: duration_us * 200_000,
            duration: duration_us * 1_000_000,
        },
        seed: 1,
    }
}

fn engine(c: &mut Criterion) {
    let mut group = c.benchmark_group("perf_hash_aligned_3_14");
    group.sample_size(10);
    for (name, threads, duration_us) in [
        ("icx-2s", 64, 1000),
        ("uv-512", 512, 200),
        ("uv-4096", 4096, 200),
    ] {
        let s = scenario(name, threads, duration_us);
        let (record, speed) = s.simulate().unwrap();
        eprintln!(
            "{threads} CPUs: {} events, {} ops per run; the engine alone (directory set-up and event loop): {:.1} M events/s, {:.2} M simulated ops/s",
            record.events,
            record.ops,
            speed.events_per_sec / 1e6,
            speed.sim_ops_per_sec / 1e6
        );
        group.throughput(Throughput::Elements(record.events));
        group.bench_function(format!("{threads}_cpus_events"), |b| {
            b.iter(|| s.simulate().unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
