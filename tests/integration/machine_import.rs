//! `futexsim machine import`: each tool's output (tests/machine_import/, in
//! the formats the tools write) read into a profile that a config names by
//! path and runs; a file that does not read is refused at its line and
//! column with exit 2.

use futexsim::config::Config;
use futexsim::machine::{MachineSpec, RemoteSpec};
use std::fs;
use std::path::{Path, PathBuf};

use crate::common;

use common::{futexsim, Scratch};

fn input(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/machine_import")
        .join(name)
        .display()
        .to_string()
}

/// Imports `args` into `scratch`/box.toml and reads the profile back.
fn import(scratch: &Scratch, args: &[&str]) -> (MachineSpec, PathBuf) {
    let out = scratch.0.join("box.toml");
    let mut all = vec!["machine", "import"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let run = futexsim(&all);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let spec = toml::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
    (spec, out)
}

fn matrix(spec: &RemoteSpec) -> Vec<Vec<f64>> {
    match spec {
        RemoteSpec::Matrix(rows) => rows.clone(),
        RemoteSpec::Groups(_) => panic!("an imported profile writes a matrix"),
    }
}

/// A config beside the profile that names it by a relative path runs.
fn runs_as_named(scratch: &Scratch) {
    let config = "[run]\nduration_us = 20\nwarmup_us = 5\n\n[machine]\npreset = \"box.toml\"\n\n\
                  [workload]\nname = \"perf-hash\"\nthreads = 4\nfutexes = 16\n\n[[table]]\npreset = \"fixed-256\"\n";
    let path = scratch.0.join("study.toml");
    fs::write(&path, config).unwrap();
    let loaded = Config::load(&path, &[]).unwrap();
    let (record, _) = loaded.runs()[0].scenario.simulate().unwrap();
    assert!(record.mean_thread_ops_per_sec > 0.0);
}

#[test]
fn a_core_to_core_csv_gives_the_topology_and_each_distance() {
    let scratch = Scratch::new("import-csv");
    let file = input("c2c-2s-32c-ccx8-smt2.csv");
    let (spec, _) = import(
        &scratch,
        &[
            &file,
            "--sockets",
            "2",
            "--threads-per-core",
            "2",
            "--base",
            "milan-2s",
        ],
    );
    let t = &spec.topology;
    assert_eq!(
        (
            t.sockets,
            t.cores_per_socket,
            t.threads_per_core,
            t.cores_per_llc
        ),
        (2, 16, 2, 8)
    );
    // The cross-socket figure lies among the file's cross-socket cells
    // (CPU 40 and CPU 1 sit on the two sockets).
    let text = fs::read_to_string(&file).unwrap();
    let cross: Vec<f64> = text
        .lines()
        .enumerate()
        .flat_map(|(i, line)| {
            line.split(',')
                .enumerate()
                .filter(move |&(j, _)| (i % 32 < 16) != (j % 32 < 16))
                .filter_map(|(_, cell)| cell.parse::<f64>().ok())
                .collect::<Vec<_>>()
        })
        .collect();
    let remote = matrix(&spec.latency.remote)[0][1];
    let lowest = cross.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = cross.iter().copied().fold(0.0, f64::max);
    assert!((lowest..=highest).contains(&remote), "{remote}");
    let l = &spec.latency;
    assert!(l.smt < l.llc && l.llc < l.node && l.node < remote, "{l:?}");
    runs_as_named(&scratch);
}

#[test]
fn mlc_c2c_and_latency_matrix_set_transfers_and_memory() {
    let scratch = Scratch::new("import-mlc");
    let c2c = input("mlc-c2c-latency-2s.txt");
    let idle = input("mlc-latency-matrix-2s.txt");
    let (spec, _) = import(&scratch, &[&c2c, &idle, "--base", "clx-2s"]);
    let l = &spec.latency;
    assert_eq!((l.llc, l.node), (51.7, 51.7));
    // The mean of the writer-homed (111.3) and reader-homed (175.8) HITM.
    assert_eq!(matrix(&l.remote)[0][1], 143.6);
    assert_eq!(
        matrix(l.dram_remote.as_ref().unwrap()),
        [[77.9, 143.2], [144.4, 78.4]]
    );
    assert_eq!(l.dram_local, 78.2);
    // What the files do not measure stays the base's.
    let base = futexsim::machine::presets::preset("clx-2s").unwrap();
    assert_eq!(
        (l.smt, spec.topology.clone()),
        (base.latency.smt, base.topology)
    );
    runs_as_named(&scratch);
}

/// A plain `mlc` run holds both sections, and reads as the two outputs do.
#[test]
fn a_plain_mlc_run_reads_as_its_two_sections() {
    let scratch = Scratch::new("import-mlc-plain");
    let (whole, _) = import(&scratch, &[&input("mlc-2s.txt"), "--base", "clx-2s"]);
    let (parts, _) = import(
        &scratch,
        &[
            &input("mlc-c2c-latency-2s.txt"),
            &input("mlc-latency-matrix-2s.txt"),
            "--base",
            "clx-2s",
        ],
    );
    assert_eq!(whole.latency, parts.latency);
}

#[test]
fn a_latency_matrix_alone_keeps_the_base_transfers() {
    let scratch = Scratch::new("import-idle");
    let (spec, _) = import(&scratch, &[&input("mlc-latency-matrix-2s.txt")]);
    let base = futexsim::machine::presets::preset("icx-2s").unwrap();
    assert_eq!(spec.latency.remote, base.latency.remote);
    assert_ne!(spec.latency.dram_remote, base.latency.dram_remote);
    runs_as_named(&scratch);
}

#[test]
fn a_file_that_does_not_read_is_placed_and_refused_with_exit_2() {
    let scratch = Scratch::new("import-bad");
    let bad = scratch.0.join("bad.csv");
    fs::write(&bad, ",,\n20.5,,\n21.0,n/a,\n").unwrap();
    let out = scratch.0.join("box.toml");
    let run = futexsim(&[
        "machine",
        "import",
        bad.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("bad.csv:3:6: 'n/a': expected a latency"),
        "{stderr}"
    );
    assert!(!out.exists());
    // Two nodes of memory latencies do not fit a one-node base.
    let run = futexsim(&[
        "machine",
        "import",
        &input("mlc-latency-matrix-2s.txt"),
        "--base",
        "arm64-8",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("has 2 nodes, the machine 1"), "{stderr}");
    assert!(!out.exists());
}
