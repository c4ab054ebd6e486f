//! `futexsim calibrate --quick` writes a profile that a config beside it
//! names by path and runs as written.

use futexsim::config::Config;
use std::fs;

use crate::common;

use common::{futexsim, Scratch};

#[test]
fn the_calibrated_profile_runs_as_written() {
    let scratch = Scratch::new("calibrate");
    let profile = scratch.0.join("host.toml");
    // The machine running tests is shared: its figures may well be
    // implausible, which --force writes anyway (the refusal is unit-tested).
    let run = futexsim(&[
        "calibrate",
        "--quick",
        "--force",
        "--out",
        profile.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for figure in ["lock add on one line", "bare syscall", "failed FUTEX_WAIT"] {
        assert!(stdout.contains(figure), "{stdout}");
    }
    let config = "[run]\nduration_us = 20\nwarmup_us = 5\n\n[machine]\npreset = \"host.toml\"\n\n\
                  [workload]\nname = \"perf-hash\"\nthreads = 1\nfutexes = 16\n\n[[table]]\npreset = \"private-6.17\"\n";
    let path = scratch.0.join("study.toml");
    fs::write(&path, config).unwrap();
    let loaded = Config::load(&path, &[]).unwrap();
    let machine = &loaded.points[0].machine;
    assert_eq!(machine.name, "host");
    let t = &machine.topology;
    let cpus = t.sockets * t.cores_per_socket * t.threads_per_core;
    assert!(cpus as usize >= std::thread::available_parallelism().map_or(1, |n| n.get()));
    let (record, _) = loaded.runs()[0].scenario.simulate().unwrap();
    assert!(record.mean_thread_ops_per_sec > 0.0);
}

/// `validate --host` measures this machine, writes its profile, and sets
/// the model on that profile beside the native runs: every row of its
/// table has a simulated figure, the false-sharing ratio's included.
#[test]
fn validate_host_compares_the_model_on_this_machines_profile_with_native_runs() {
    let scratch = Scratch::new("validate-host");
    let out = scratch.0.join("v");
    let run = futexsim(&["validate", "--host", "--out", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(out.join("host.toml").is_file());
    let table = fs::read_to_string(out.join("host.md")).unwrap();
    for row in [
        "perf hash -t 1, averaged ops/s",
        "perf hash -t 2 -S, averaged ops/s",
        "2 threads adding to words in one line / in two lines",
    ] {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("| {row} |")))
            .unwrap_or_else(|| panic!("no row {row} in {table}"));
        let simulated: f64 = line.split('|').nth(2).unwrap().trim().parse().unwrap();
        assert!(simulated.is_finite() && simulated > 0.0, "{line}");
    }
}
