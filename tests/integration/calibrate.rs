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
    let run = futexsim(&["calibrate", "--quick", "--out", profile.to_str().unwrap()]);
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
