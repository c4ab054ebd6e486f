//! The shipped advise questions (configs/advise/), each answered from an
//! empty store as `futexsim advise` answers it: the search, every run it
//! asks for simulated on 2 jobs (this project's build machine has 2
//! cores), and the answer written. Each must answer in under 2 minutes
//! with its intervals (benches/performance.md, "futexsim advise").

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use futexsim::advise::{advise, question::Question};
use futexsim::campaign::Shard;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

const QUESTIONS: [&str; 4] = [
    "private-slots-k",
    "private-refcount-default",
    "numa-buckets-per-cpu",
    "private-slots-k-beside-small",
];

/// An empty store for one answer.
fn fresh_store(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "futexsim-advise-bench-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("advise");
    group.sample_size(10);
    for name in QUESTIONS {
        let path = Path::new("configs/advise").join(format!("{name}.toml"));
        let question = Question::load(&path).unwrap();
        let stop = AtomicBool::new(false);
        group.bench_function(name, |b| {
            b.iter_batched(
                || fresh_store(name),
                |store| {
                    let advice = advise(
                        &question,
                        &store,
                        2,
                        Shard::ALL,
                        &stop,
                        false,
                        String::new(),
                    )
                    .unwrap();
                    assert!(advice.runs_simulated > 0);
                    advice.markdown()
                },
                BatchSize::PerIteration,
            )
        });
        let _ = std::fs::remove_dir_all(fresh_store(name));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
