//! Where an op's time goes (sim/engine/attribution.rs, `futexsim explain`):
//! every op's parts sum to its latency, attributing changes no other
//! result, each mechanism moves its own row, and the command prints the
//! tables and the rows.

use crate::common::{futexsim, perf_hash_sweep, run_sweep, Scratch};
use futexsim::engine::attribution::{Part, TimeSpent};
use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::machine::MachineSpec;
use futexsim::record::RunRecord;
use futexsim::scenario::{RunOptions, Scenario};
use futexsim::symbol::Symbol;
use futexsim::task::RunWindow;
use futexsim::workload::perf_hash::PerfHash;
use futexsim::workload::perf_wake::PerfWake;
use futexsim::workload::WorkloadSpec;

const US: u64 = 1_000_000;

fn perf_hash(spec: MachineSpec, design: &str, threads: u32, futexes: u32) -> Scenario {
    Scenario {
        machine: spec,
        design: table(design).unwrap(),
        workload: WorkloadSpec::PerfHash(PerfHash {
            threads: Some(threads),
            futexes,
            ..PerfHash::default()
        }),
        window: RunWindow {
            warmup: 20 * US,
            duration: 40 * US,
            stop: None,
        },
        seed: 3,
    }
}

/// 32 threads' 256 futexes in a private hash of 16 slots (`-b 16`): every
/// bucket lock is fought over.
fn contended() -> Scenario {
    let mut s = perf_hash(machine("icx-2s").unwrap(), "v6.17", 32, 8);
    if let WorkloadSpec::PerfHash(perf) = &mut s.workload {
        perf.buckets = 16;
    }
    s
}

fn explained(s: &Scenario) -> RunRecord {
    s.simulate_with(RunOptions { explain: true }).unwrap().0
}

fn spent(r: &RunRecord) -> &TimeSpent {
    r.time_spent.as_ref().expect("the run was asked to explain")
}

/// ns per op of the rows `pick` keeps.
fn ns(r: &RunRecord, pick: impl Fn(&futexsim::engine::attribution::TimeRow) -> bool) -> f64 {
    spent(r)
        .rows
        .iter()
        .filter(|row| pick(row))
        .map(|row| row.ns_per_op)
        .sum()
}

fn assert_balanced(r: &RunRecord) {
    let t = spent(r);
    assert!(t.ops > 0, "no op counted");
    assert_eq!(t.unbalanced_ops, 0, "ops whose parts miss their latency");
    assert_eq!(t.rows.iter().map(|row| row.ps).sum::<u64>(), t.latency_ps);
}

#[test]
fn every_op_s_parts_sum_exactly_to_its_latency_under_contention_and_sleep() {
    let fought = explained(&contended());
    assert_balanced(&fought);
    assert_eq!(spent(&fought).ops, fought.ops);
    let sleeping = Scenario {
        workload: WorkloadSpec::PerfWake(PerfWake {
            threads: Some(8),
            nwakes: 1,
            shared: false,
            settle_us: 20,
        }),
        window: RunWindow {
            warmup: 0,
            duration: 90 * US,
            stop: None,
        },
        ..perf_hash(machine("icx-2s").unwrap(), "private-6.17", 8, 1)
    };
    let woken = explained(&sleeping);
    assert_balanced(&woken);
    assert!(
        ns(&woken, |row| row.part == Part::Sleep) > 0.0,
        "nobody slept"
    );
    assert!(
        ns(&woken, |row| row.symbol == Some(Symbol::TryToWakeUp)) > 0.0,
        "no wake-up's accesses"
    );
}

#[test]
fn explaining_a_run_leaves_every_other_result_byte_identical() {
    let s = perf_hash(machine("milan-2s").unwrap(), "private-6.17", 24, 8);
    let plain = serde_json::to_value(s.simulate().unwrap().0).unwrap();
    let mut with = serde_json::to_value(explained(&s)).unwrap();
    let removed = with.as_object_mut().unwrap().remove("time_spent");
    assert!(removed.is_some());
    assert!(
        plain.get("time_spent").is_none(),
        "the field is absent when off"
    );
    assert_eq!(plain, with);
}

#[test]
fn a_dearer_syscall_raises_only_the_syscall_row_by_the_difference_per_op() {
    let cheap = machine("icx-2s").unwrap();
    let mut dear = cheap.clone();
    let syscall = |spec: &MachineSpec| {
        futexsim::machine::Machine::new(spec.clone())
            .unwrap()
            .costs
            .syscall as f64
            / 1000.0
    };
    dear.kernel.syscall = Some(syscall(&cheap) + 20.0);
    let one = |spec| explained(&perf_hash(spec, "aligned-3.14", 1, 8));
    let (a, b) = (one(cheap), one(dear));
    let entry = |r: &RunRecord| ns(r, |row| row.part == Part::Syscall);
    assert!(
        (entry(&b) - entry(&a) - 20.0).abs() < 0.01,
        "{} -> {}",
        entry(&a),
        entry(&b)
    );
    let rest = |r: &RunRecord| ns(r, |row| row.part != Part::Syscall);
    assert!(
        (rest(&b) - rest(&a)).abs() < 0.01,
        "{} -> {}",
        rest(&a),
        rest(&b)
    );
}

#[test]
fn a_contended_bucket_shows_a_lock_wait_an_uncontended_one_lacks() {
    let spec = machine("icx-2s").unwrap();
    let lock_wait = |r: &RunRecord| ns(r, |row| row.part == Part::LockWait);
    let fought = explained(&contended());
    let alone = explained(&perf_hash(spec, "v6.17", 1, 8));
    assert!(lock_wait(&fought) > 1.0, "{}", lock_wait(&fought));
    assert_eq!(lock_wait(&alone), 0.0);
}

#[test]
fn the_private_hash_s_reference_has_rows_on_6_17_and_none_on_6_16() {
    let spec = machine("icx-2s").unwrap();
    let reference = |r: &RunRecord| {
        ns(r, |row| {
            matches!(
                row.symbol,
                Some(Symbol::FutexPrivateHashGet | Symbol::FutexPrivateHashPut)
            )
        })
    };
    let new = explained(&perf_hash(spec.clone(), "v6.17", 8, 8));
    let old = explained(&perf_hash(spec, "v6.16", 8, 8));
    assert!(reference(&new) > 0.0);
    assert_eq!(reference(&old), 0.0);
}

#[test]
fn explain_prints_each_design_s_table_and_its_rows_as_json() {
    let config = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/perf-hash-private-sizing.toml"
    );
    let out = futexsim(&["explain", config, "--point", "0", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tables: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tables = tables.as_array().unwrap();
    assert_eq!(tables.len(), 1, "the config has one design");
    let rows = tables[0]["rows"].as_array().unwrap();
    let sum: f64 = rows.iter().map(|r| r["ns_per_op"].as_f64().unwrap()).sum();
    let mean = tables[0]["mean_latency_ns"].as_f64().unwrap();
    assert!((sum - mean).abs() < 1e-6 * mean, "{sum} vs {mean}");

    let text = futexsim(&["explain", config]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("| share | ns/op | count/op | part |"),
        "{text}"
    );
    assert!(text.contains("total: the mean latency"));

    let wrong = futexsim(&["explain", config, "--design", "nope"]);
    assert_eq!(wrong.status.code(), Some(2));
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        said.contains("perf-hash-private-sizing.toml: no design 'nope'"),
        "{said}"
    );
    let far = futexsim(&["explain", config, "--point", "99"]);
    assert_eq!(far.status.code(), Some(2));
}

#[test]
fn a_campaign_whose_config_asks_to_explain_reports_where_the_time_goes() {
    let report = |run: &str, name: &str| {
        let config = perf_hash_sweep(run, &["v6.16", "v6.17"], "[4]");
        let (scratch, path) = Scratch::holding(name, "explained.toml", &config);
        let out = scratch.0.join("out");
        let done = run_sweep(&path, &out, &["--plain"]);
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        let json = std::fs::read_to_string(out.join("results.json")).unwrap();
        (md, json)
    };
    let window = "duration_us = 20\nwarmup_us = 5\nrepetitions = 2";
    let (md, json) = report(&format!("{window}\nexplain = true"), "explain-on");
    assert!(md.contains("## Where the time goes"), "{md}");
    assert!(json.contains("\"time_spent\""));
    let (md, json) = report(window, "explain-off");
    assert!(!md.contains("## Where the time goes"));
    assert!(!json.contains("\"time_spent\""));
}
