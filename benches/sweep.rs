//! Sweep scaling: the 32 points of benches/configs/sweep-32.toml (perf bench
//! futex hash at 8 thread counts x 4 table designs on icx-2s, 100 us
//! simulated each), simulated as `futexsim run --jobs N` simulates them: a
//! campaign in a scratch directory, costliest runs first, each run's file
//! written. On 1 job, then 2; both must give the same records.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use futexsim::campaign::{shard::Shard, Campaign, Run};
use futexsim::config::Config;
use futexsim::record::RunRecord;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Simulates every run of the campaign afresh on `jobs` threads.
fn sweep(campaign: &Campaign, todo: &[&Run], jobs: usize) {
    let runs = campaign.dir.join("runs");
    for entry in std::fs::read_dir(&runs).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let stop = AtomicBool::new(false);
    campaign.simulate(todo, jobs, &stop, &|_, _| {}).unwrap();
}

fn records(campaign: &Campaign) -> Vec<RunRecord> {
    let (set, _) = campaign.results().unwrap().expect("every run is there");
    set.runs.into_iter().map(|r| r.record).collect()
}

fn bench(c: &mut Criterion) {
    let config = Config::load(Path::new("benches/configs/sweep-32.toml"), &[]).unwrap();
    let dir = std::env::temp_dir().join(format!("futexsim-sweep-bench-{}", std::process::id()));
    let (campaign, _lock) = Campaign::open(&dir, config, true).unwrap();
    let todo = campaign.missing(Shard::ALL, false).unwrap();
    assert_eq!(todo.len(), 32);

    let mut seconds = Vec::new();
    let mut first: Option<Vec<RunRecord>> = None;
    for jobs in [1, 2] {
        let started = Instant::now();
        sweep(&campaign, &todo, jobs);
        seconds.push(started.elapsed().as_secs_f64());
        let got = records(&campaign);
        match &first {
            None => first = Some(got),
            Some(f) => assert!(f == &got, "{jobs} jobs changed the records"),
        }
    }
    eprintln!(
        "32 points: {:.2} s on 1 job, {:.2} s on 2 ({:.2}x)",
        seconds[0],
        seconds[1],
        seconds[0] / seconds[1]
    );

    let mut group = c.benchmark_group("sweep_32_points");
    group.sample_size(10);
    group.throughput(Throughput::Elements(todo.len() as u64));
    for jobs in [1, 2] {
        group.bench_function(format!("{jobs}_jobs"), |b| {
            b.iter_batched(
                || (),
                |()| sweep(&campaign, &todo, jobs),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
    std::fs::remove_dir_all(&dir).unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
