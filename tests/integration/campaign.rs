//! `futexsim run` as a campaign: results independent of --jobs and of
//! sharding, re-runs that simulate only what is missing, and configs that
//! are refused before anything is written.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;

use common::{futexsim, perf_hash_sweep, run_sweep, Scratch};
use futexsim::campaign::Shard;

/// Two tables over three CPU counts, twice each: enough runs to shard.
fn small_sweep() -> String {
    perf_hash_sweep(
        "duration_us = 20\nwarmup_us = 5\nrepetitions = 2",
        &["fixed-256", "private-6.17"],
        "[2, 8, 32]",
    )
}

/// A scratch directory holding the config as sweep.toml.
fn with_config(name: &str, config: &str) -> Scratch {
    Scratch::holding(name, "sweep.toml", config).0
}

impl Scratch {
    fn config(&self) -> PathBuf {
        self.0.join("sweep.toml")
    }

    fn out(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

fn run(scratch: &Scratch, out: &str, extra: &[&str]) -> Output {
    let config = scratch.config();
    let out = scratch.out(out);
    let output = run_sweep(&config, &out, extra);
    assert!(
        output.status.success(),
        "futexsim run {config:?} --out {out:?} {extra:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn results(dir: &Path) -> String {
    fs::read_to_string(dir.join("results.json")).unwrap()
}

fn run_files(dir: &Path) -> usize {
    fs::read_dir(dir.join("runs")).unwrap().count()
}

#[test]
fn results_do_not_depend_on_jobs_or_sharding() {
    let s = with_config("shards", &small_sweep());
    run(&s, "one", &["--jobs", "1"]);
    run(&s, "two", &["--jobs", "2"]);
    assert_eq!(results(&s.out("one")), results(&s.out("two")));
    assert_eq!(run_files(&s.out("one")), 3 * 2 * 2);

    run(&s, "shard1", &["--shard", "1/2"]);
    run(&s, "shard2", &["--shard", "2/2"]);
    assert!(
        !s.out("shard1").join("results.json").exists(),
        "a shard alone is no result set"
    );
    let (a, b) = (run_files(&s.out("shard1")), run_files(&s.out("shard2")));
    assert_eq!(a + b, 12, "the shards split the runs");
    // Each shard holds the runs its rule gives it (which ones depends on the
    // build, whose hash is in every run id).
    for (k, dir) in [(1, s.out("shard1")), (2, s.out("shard2"))] {
        let shard = Shard { index: k, count: 2 };
        for f in fs::read_dir(dir.join("runs")).unwrap() {
            let name = f.unwrap().file_name().into_string().unwrap();
            let id = name.trim_end_matches(".json");
            assert!(shard.holds(id), "run {id} in shard {shard}");
        }
    }
    let (s1, s2, merged) = (s.out("shard1"), s.out("shard2"), s.out("merged"));
    let out = futexsim(&[
        "merge",
        s1.to_str().unwrap(),
        s2.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(results(&merged), results(&s.out("one")));

    // One shard is not enough to merge.
    let out = futexsim(&[
        "merge",
        s1.to_str().unwrap(),
        "--out",
        s.out("half").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run the missing shards"));
}

#[test]
fn a_campaign_resumes_and_a_finished_one_simulates_nothing() {
    let s = with_config("resume", &small_sweep());
    run(&s, "c", &[]);
    let full = results(&s.out("c"));
    let speed = fs::read_to_string(s.out("c").join("speed.json")).unwrap();
    // Dates are to the second: the reuse must come in a later one.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let again = run(&s, "c", &[]);
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("0 runs simulated now"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(results(&s.out("c")), full);
    // When and in how much memory the runs were simulated, not the reuse.
    assert_eq!(
        fs::read_to_string(s.out("c").join("speed.json")).unwrap(),
        speed
    );

    // Cut short: some runs and the results are gone.
    fs::remove_file(s.out("c").join("results.json")).unwrap();
    let mut runs: Vec<_> = fs::read_dir(s.out("c").join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    for path in runs.iter().step_by(3) {
        fs::remove_file(path).unwrap();
    }
    let resumed = run(&s, "c", &[]);
    assert!(
        String::from_utf8_lossy(&resumed.stderr).contains("4 runs simulated now"),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(results(&s.out("c")), full);
}

#[test]
fn a_changed_config_is_refused_unless_asked() {
    let s = with_config("changed", &small_sweep());
    run(&s, "c", &[]);
    fs::write(
        s.config(),
        small_sweep().replace("futexes = 32", "futexes = 64"),
    )
    .unwrap();
    let out = futexsim(&[
        "run",
        s.config().to_str().unwrap(),
        "--out",
        s.out("c").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("another config") && err.contains("futexes"),
        "{err}"
    );
    run(&s, "c", &["--overwrite"]);
    assert!(results(&s.out("c")).contains("-f 64"));
    assert_eq!(
        run_files(&s.out("c")),
        12,
        "runs of the old config are gone"
    );
}

#[test]
fn a_malformed_config_is_one_line_exit_2_and_nothing_written() {
    let s = with_config(
        "malformed",
        &small_sweep().replace("futexes = 32", "futexes = \"many\""),
    );
    let out_dir = s.out("c");
    let out = futexsim(&[
        "run",
        s.config().to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("sweep.toml:12:11:"), "{err}");
    assert!(!out_dir.exists(), "nothing is written");
}

#[test]
fn a_candidate_rule_runs_beside_the_configs_designs() {
    let s = with_config("rule", &small_sweep());
    let out = run(&s, "c", &["--rule", "roundup_pow_of_two(16 * cpus)"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("fixed-256 slots=roundup_pow_of_two(16 * cpus)"),
        "{table}"
    );
    let bad = futexsim(&["run", s.config().to_str().unwrap(), "--rule", "2 *"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--rule:1:"));
}
