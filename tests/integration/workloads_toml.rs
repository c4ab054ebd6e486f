//! Every workload is selectable from a config's [workload] table, with the
//! real benchmark's defaults, and `futexsim run` runs it from a config file.

use futexsim::workload::perf_lock_pi::PerfLockPi;
use futexsim::workload::perf_requeue::PerfRequeue;
use futexsim::workload::perf_wake::PerfWake;
use futexsim::workload::schbench::Schbench;
use futexsim::workload::will_it_scale::{Mode, WillItScale};
use futexsim::workload::WorkloadSpec;
use std::fs;
use std::process::{Command, Output};

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

/// Runs `futexsim run` on a config holding `workload` as its [workload]
/// table, in a scratch directory; returns the output and the results.json.
fn run(name: &str, workload: &str) -> (Output, Option<serde_json::Value>) {
    let dir = std::env::temp_dir().join(format!("futexsim-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let config = dir.join("run.toml");
    fs::write(
        &config,
        format!(
            "[run]\nwarmup_us = 0\nduration_us = 250\n\n[machine]\npreset = \"icx-2s\"\n\n\
             [workload]\n{workload}\n\n[[table]]\npreset = \"aligned-3.14\"\n"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .arg("run")
        .arg(&config)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let results = fs::read_to_string(dir.join("out/results.json"))
        .ok()
        .map(|text| serde_json::from_str(&text).unwrap());
    let _ = fs::remove_dir_all(&dir);
    (out, results)
}

#[test]
fn a_config_runs_any_workload_and_records_its_figures() {
    let (ok, results) = run(
        "requeue",
        "name = \"perf-requeue\"\nthreads = 8\nall = true\nsettle_us = 50",
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let record = &results.expect("results.json")["runs"][0]["record"];
    assert_eq!(record["workload"], "perf bench futex requeue -B -t 8");
    let requeued = record["extra"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "requeued per round")
        .expect("the requeue figures");
    assert_eq!(requeued["value"], 8.0);
    let (bad, _) = run("bad-threads", "name = \"perf-wake\"\nthreads = \"many\"");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("threads"));
}

#[test]
fn out_of_range_times_are_input_errors() {
    for (i, table) in [
        "name = \"perf-wake\"\nsettle_us = 0",
        "name = \"perf-requeue\"\nsettle_us = 100000000000",
        "name = \"perf-lock-pi\"\nhold_ns = 5000000000",
    ]
    .iter()
    .enumerate()
    {
        let (out, _) = run(&format!("range-{i}"), table);
        assert_eq!(out.status.code(), Some(2), "{table}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("must be"));
    }
}
