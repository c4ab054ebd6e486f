//! Every workload is selectable from a config's [workload] table, with the
//! real benchmark's defaults, and `futexsim run --workload` runs it.

use futexsim::workload::perf_lock_pi::PerfLockPi;
use futexsim::workload::perf_requeue::PerfRequeue;
use futexsim::workload::perf_wake::PerfWake;
use futexsim::workload::schbench::Schbench;
use futexsim::workload::will_it_scale::{Mode, WillItScale};
use futexsim::workload::WorkloadSpec;
use std::process::Command;

fn parse(table: &str) -> Result<WorkloadSpec, String> {
    toml::from_str(table).map_err(|e| e.to_string())
}

#[test]
fn each_workload_takes_its_benchmarks_defaults() {
    assert_eq!(
        parse(r#"name = "perf-wake""#).unwrap(),
        WorkloadSpec::PerfWake(PerfWake {
            threads: None,
            nwakes: 1,
            shared: false,
            settle_us: 100_000,
        })
    );
    assert_eq!(
        parse("name = \"perf-requeue\"\nall = true\nshared = true").unwrap(),
        WorkloadSpec::PerfRequeue(PerfRequeue {
            all: true,
            shared: true,
            ..Default::default()
        })
    );
    let WorkloadSpec::PerfLockPi(PerfLockPi { hold_ns, multi, .. }) =
        parse("name = \"perf-lock-pi\"\nmulti = true").unwrap()
    else {
        panic!("perf-lock-pi")
    };
    assert_eq!((hold_ns, multi), (55_000, true));
    assert_eq!(
        parse("name = \"will-it-scale\"\ntest = 4\nmode = \"process\"\ntasks = 16").unwrap(),
        WorkloadSpec::WillItScale(WillItScale {
            test: 4,
            mode: Mode::Process,
            tasks: Some(16),
        })
    );
    assert_eq!(
        parse("name = \"schbench\"\nmessage_threads = 4\nworkers = 256").unwrap(),
        WorkloadSpec::Schbench(Schbench {
            message_threads: 4,
            workers: Some(256),
            work_ns: 0,
        })
    );
}

#[test]
fn unknown_fields_and_missing_choices_are_refused() {
    assert!(parse("name = \"perf-wake\"\nwakes = 2")
        .unwrap_err()
        .contains("unknown field"));
    assert!(parse("name = \"will-it-scale\"\ntest = 1")
        .unwrap_err()
        .contains("mode"));
}

#[test]
fn run_takes_a_workload_and_prints_its_figures() {
    let run = |table: &str| {
        Command::new(env!("CARGO_BIN_EXE_futexsim"))
            .args(["run", "--table", "aligned-3.14", "--workload", table])
            .args(["--warmup-us", "0", "--duration-us", "250"])
            .output()
            .unwrap()
    };
    let ok = run("name = \"perf-requeue\"\nthreads = 8\nall = true\nsettle_us = 50");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let text = String::from_utf8(ok.stdout).unwrap();
    assert!(text.contains("perf bench futex requeue -B -t 8"), "{text}");
    assert!(text.contains("requeued per round 8.0000 threads"), "{text}");
    let bad = run("name = \"perf-wake\"\nthreads = \"many\"");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--workload"));
}

#[test]
fn out_of_range_times_are_input_errors() {
    for table in [
        "name = \"perf-wake\"\nsettle_us = 0",
        "name = \"perf-requeue\"\nsettle_us = 100000000000",
        "name = \"perf-lock-pi\"\nhold_ns = 5000000000",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_futexsim"))
            .args(["run", "--workload", table, "--duration-us", "10"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{table}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("must be"));
    }
}
