//! The futex keys a layout analysis hashes are the keys a run's tasks use.
//! A workload that has its futex words at set-up gives them twice: in its
//! set-up (`Setup::keys`, which a run's load record analyses) and alone
//! (`Workload::placed_words`, which `futexsim layout` analyses with no run).
//! Both must be the words the tasks' futex ops name, for the same seed: a
//! workload that drew one more random number in its set-up before placing
//! its words, or gave its tasks words other than those it reports, fails.

use futexsim::kernel::key::{get_futex_key, FutexKey, KeySource, WordSize};
use futexsim::machine::{presets::preset, Machine};
use futexsim::memory::MemoryMap;
use futexsim::task::{FutexOp, Op};
use futexsim::workload::futex_words::FutexWords;
use futexsim::workload::{Setup, WorkloadSpec};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeSet;

/// One small instance of every workload, several for those with keys.
fn workloads() -> Vec<WorkloadSpec> {
    let tables = [
        r#"name = "perf-hash"
threads = 4
futexes = 64"#,
        r#"name = "perf-hash"
threads = 3
futexes = 1000
shared = true"#,
        r#"name = "will-it-scale"
test = 1
mode = "thread"
tasks = 6"#,
        r#"name = "will-it-scale"
test = 2
mode = "process"
tasks = 5"#,
        r#"name = "will-it-scale"
test = 3
mode = "process"
tasks = 4"#,
        r#"name = "will-it-scale"
test = 4
mode = "thread""#,
        r#"name = "perf-wake""#,
        r#"name = "perf-wake-parallel""#,
        r#"name = "perf-requeue""#,
        r#"name = "perf-lock-pi""#,
        r#"name = "schbench""#,
        r#"name = "fea-solver""#,
        r#"name = "time-exit""#,
        r#"name = "lru-lock""#,
        r#"name = "program"
threads = 2
tables = [{ name = "bucket", slots = 256 }]
steps = [{ op = "compute", ns = 100 }]"#,
    ];
    tables
        .iter()
        .map(|t| toml::from_str(t).expect("a valid workload table"))
        .collect()
}

fn setup(machine: &Machine, spec: &WorkloadSpec, seed: u64) -> Setup {
    let mut memory = MemoryMap::new(machine.line_size());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    spec.workload().setup(machine, &mut memory, &mut rng)
}

/// Each word's key and process, as the analysis hashes them.
fn analysed(words: &FutexWords) -> BTreeSet<(u32, u64, u64, u32)> {
    let mut keys = BTreeSet::new();
    words
        .for_each_key(WordSize::Bits64, 4096, |k| {
            keys.insert(sorted(k.key, k.process));
        })
        .expect("aligned words");
    keys
}

fn sorted(key: FutexKey, process: u32) -> (u32, u64, u64, u32) {
    (process, key.ptr, key.word, key.offset)
}

/// The keys of the futex words the tasks' programs name, over `ops` ops
/// each (enough for perf bench futex hash to go round its array).
fn used(setup: &mut Setup, ops: u32) -> BTreeSet<(u32, u64, u64, u32)> {
    let mut keys = BTreeSet::new();
    for (task, spec) in setup.tasks.iter_mut().enumerate() {
        let process = setup.task_process[task];
        let mm = setup.mms[process as usize];
        for _ in 0..ops {
            let Op::Futex(FutexOp::Wait { uaddr, kind, .. } | FutexOp::Wake { uaddr, kind, .. }) =
                spec.program.next_op()
            else {
                panic!("task {task} issues an op other than a futex wait or wake");
            };
            let source = KeySource::of(kind, mm, uaddr.addr, 4096);
            let key = get_futex_key(uaddr.addr, source, WordSize::Bits64, 4096).expect("aligned");
            keys.insert(sorted(key, process));
        }
    }
    keys
}

#[test]
fn the_analysed_keys_are_the_keys_the_run_uses() {
    let machine = Machine::new(preset("icx-2s").expect("preset")).expect("machine");
    let mut with_keys = 0;
    for spec in workloads() {
        let workload = spec.workload();
        let label = workload.label();
        workload.validate(&machine).expect("a valid example");
        for seed in [1, 7] {
            let mut setup = setup(&machine, &spec, seed);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let alone = workload.placed_words(workload.threads(&machine), &mut rng);
            assert_eq!(
                setup.keys, alone,
                "{label}, seed {seed}: set-up and placement"
            );
            let Some(words) = setup.keys.clone() else {
                continue;
            };
            with_keys += 1;
            assert_eq!(words.mms, setup.mms, "{label}: the processes' mms");
            let ops = words.arrays.iter().map(|a| a.words).max().unwrap_or(0);
            let analysed = analysed(&words);
            assert_eq!(
                analysed.len() as u64,
                words.count(),
                "{label}: distinct words"
            );
            assert_eq!(analysed, used(&mut setup, ops), "{label}, seed {seed}");
        }
    }
    // Both seeds of two perf-hash and four will-it-scale examples.
    assert_eq!(with_keys, 12);
}

#[test]
fn another_seed_places_other_words() {
    let machine = Machine::new(preset("icx-2s").expect("preset")).expect("machine");
    for spec in workloads() {
        let (a, b) = (
            setup(&machine, &spec, 1).keys,
            setup(&machine, &spec, 2).keys,
        );
        if let (Some(a), Some(b)) = (a, b) {
            assert_ne!(analysed(&a), analysed(&b), "{}", spec.workload().label());
        }
    }
}
