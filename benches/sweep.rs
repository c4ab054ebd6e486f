//! Sweep scaling: 32 small scenario points (perf bench futex hash at 8 thread
//! counts x 4 table designs on icx-2s, 100 us simulated each) simulated
//! through rayon in a pool of 1 thread, then 2. Each point runs on one core,
//! so the speedup shows how well points spread over cores; every pool must
//! give the same records.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futexsim::engine::RunWindow;
use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::record::RunRecord;
use futexsim::scenario::Scenario;
use futexsim::workload::{perf_hash::PerfHash, WorkloadSpec};
use rayon::prelude::*;
use std::time::Instant;

const DESIGNS: [&str; 4] = ["fixed-256", "aligned-3.14", "numa-6.16", "private-6.17"];

fn points() -> Vec<Scenario> {
    let icx = machine("icx-2s").unwrap();
    (1..=8u32)
        .flat_map(|step| {
            let icx = icx.clone();
            DESIGNS.iter().map(move |&design| Scenario {
                machine: icx.clone(),
                design: table(design).unwrap(),
                workload: WorkloadSpec::PerfHash(PerfHash {
                    threads: Some(16 * step),
                    ..Default::default()
                }),
                window: RunWindow {
                    warmup: 20_000_000,
                    duration: 100_000_000,
                },
                seed: 1,
            })
        })
        .collect()
}

fn sweep(pool: &rayon::ThreadPool, points: &[Scenario]) -> Vec<RunRecord> {
    pool.install(|| points.par_iter().map(|s| s.simulate().unwrap().0).collect())
}

fn bench(c: &mut Criterion) {
    let points = points();
    let pools: Vec<(usize, rayon::ThreadPool)> = [1, 2]
        .into_iter()
        .map(|n| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap();
            (n, pool)
        })
        .collect();
    let mut seconds = Vec::new();
    let mut first: Option<Vec<RunRecord>> = None;
    for (n, pool) in &pools {
        let started = Instant::now();
        let records = sweep(pool, &points);
        seconds.push(started.elapsed().as_secs_f64());
        match &first {
            None => first = Some(records),
            Some(f) => assert!(f == &records, "{n} threads changed the records"),
        }
    }
    eprintln!(
        "32 points: {:.2} s on 1 thread, {:.2} s on 2 ({:.2}x)",
        seconds[0],
        seconds[1],
        seconds[0] / seconds[1]
    );
    let mut group = c.benchmark_group("sweep_32_points");
    group.sample_size(10);
    group.throughput(Throughput::Elements(points.len() as u64));
    for (n, pool) in &pools {
        group.bench_function(format!("{n}_threads"), |b| b.iter(|| sweep(pool, &points)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
