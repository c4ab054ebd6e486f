//! A mix of workloads: groups run as processes of one machine, each read
//! apart (sim/workload/mix.rs).

use crate::common::{futexsim, Scratch};
use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::record::RunRecord;
use futexsim::scenario::Scenario;
use futexsim::task::RunWindow;
use futexsim::workload::WorkloadSpec;

const US: u64 = 1_000_000;

fn workload(text: &str) -> WorkloadSpec {
    toml::from_str(text).unwrap()
}

fn run(design: &str, workload: WorkloadSpec) -> RunRecord {
    Scenario {
        machine: machine("icx-2s").unwrap(),
        design: table(design).unwrap(),
        workload,
        window: RunWindow {
            warmup: 10 * US,
            duration: 60 * US,
            stop: None,
        },
        seed: 5,
    }
    .simulate()
    .unwrap()
    .0
}

const PERF_HASH: &str = "name = \"perf-hash\"\nthreads = 8\nfutexes = 64\n";
const FORKED: &str = "name = \"will-it-scale\"\ntest = 4\nmode = \"process\"\ntasks = 12\n";

fn mix_of(groups: &[(&str, &str)]) -> WorkloadSpec {
    let mut text = String::from("name = \"mix\"\n");
    for (label, group) in groups {
        text += &format!("[[group]]\nlabel = \"{label}\"\n{group}");
    }
    workload(&text)
}

/// A mix of one group lays it out as it lays out alone (process 0, address
/// space 0, CPU 0 on), so every figure of the run is the plain workload's:
/// only the record's workload label, its one group and perf's `[thread N]`
/// lines (perf's own output, which a mix does not print) tell them apart.
#[test]
fn a_mix_of_one_group_gives_the_plain_workload_s_figures() {
    for (design, plain) in [("private-6.17", PERF_HASH), ("numa-6.16", FORKED)] {
        let alone = run(design, workload(plain));
        let mut mixed = run(design, mix_of(&[("only", plain)]));
        assert_eq!(mixed.groups.len(), 1);
        assert_eq!(mixed.groups[0].workload, alone.workload);
        assert_eq!(mixed.groups[0].ops, alone.ops);
        assert_eq!(
            mixed.groups[0].mean_thread_ops_per_sec,
            alone.mean_thread_ops_per_sec
        );
        assert!(mixed.workload.label.starts_with("mix: only = "));
        mixed.workload = alone.workload.clone();
        mixed.groups.clear();
        let mut alone = alone;
        alone.perf_threads.clear();
        assert_eq!(mixed, alone, "{plain}");
    }
}

/// Each group's ops are its own threads': together they are the run's, and
/// so are its threads and processes.
#[test]
fn the_groups_ops_threads_and_processes_sum_to_the_run_s() {
    let r = run(
        "private-6.17",
        mix_of(&[("db", PERF_HASH), ("small", FORKED)]),
    );
    assert_eq!(r.groups.len(), 2);
    assert_eq!(r.groups.iter().map(|g| g.ops).sum::<u64>(), r.ops);
    assert_eq!(r.groups.iter().map(|g| g.threads).sum::<u32>(), r.threads);
    assert_eq!(
        r.groups.iter().map(|g| g.processes).sum::<u32>(),
        r.processes
    );
    assert_eq!((r.threads, r.processes), (20, 13));
    let rates: f64 = r.groups.iter().map(|g| g.ops_per_sec).sum();
    assert!((rates - r.ops_per_sec).abs() <= 1e-9 * r.ops_per_sec);
    // Each process sizes its own private hash from its own threads: the
    // database's 8 threads get one; a single-threaded process has none.
    assert_eq!(r.table.private_slots.len(), 1, "{:?}", r.table);
    assert!(r.groups.iter().all(|g| g.ops > 0), "{:?}", r.groups);
}

const MIX_CONFIG: &str = r#"[run]
duration_us = 30
warmup_us = 5
repetitions = 3

[machine]
preset = "icx-2s"
topology.nr_cpus = 16

[workload]
name = "mix"

[[workload.group]]
label = "db"
name = "perf-hash"
threads = 4
futexes = 64

[[workload.group]]
label = "small"
name = "will-it-scale"
test = 4
mode = "process"
tasks = 8

[[table]]
preset = "numa-6.16"

[[table]]
preset = "private-6.17"
"#;

/// The same mix gives the same bytes whatever the simulations run at once,
/// and its CSV has each group's columns.
#[test]
fn a_mix_s_results_are_the_same_bytes_whatever_the_jobs() {
    let s = Scratch::new("mix-jobs");
    let config = s.0.join("mix.toml");
    std::fs::write(&config, MIX_CONFIG).unwrap();
    let results = |jobs: &str| {
        let out = s.0.join(format!("jobs-{jobs}"));
        let ran = futexsim(&[
            "run",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--jobs",
            jobs,
            "--plain",
        ]);
        assert!(
            ran.status.success(),
            "{}",
            String::from_utf8_lossy(&ran.stderr)
        );
        (
            std::fs::read_to_string(out.join("results.json")).unwrap(),
            std::fs::read_to_string(out.join("results.csv")).unwrap(),
        )
    };
    let (one, csv) = results("1");
    let (two, _) = results("2");
    let strip = |json: &str| {
        json.lines()
            .filter(|l| !l.contains("\"git_commit\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&one), strip(&two));
    let header = csv.lines().next().unwrap();
    assert!(
        header.ends_with(
            "group.db.ops_per_sec,group.db.thread_ops_per_sec,\
             group.small.ops_per_sec,group.small.thread_ops_per_sec"
        ),
        "{header}"
    );
}
