//! Limits met before or while a sweep runs: more memory than the machine
//! has, and a campaign directory that cannot be written. Either is one
//! clear line, and results already written stay as they were.

use std::fs;

use crate::common;

use common::{futexsim, perf_hash_sweep, Scratch};

/// 512 threads of 32768 futexes: their arrays are mmapped far apart, so the
/// memory map spans some 68 M lines, several GiB per run.
const HUGE: &str = r#"
[run]
repetitions = 1000

[machine]
preset = "uv-512"

[workload]
name = "perf-hash"
futexes = 32768

[[table]]
preset = "fixed-256"
"#;

#[test]
fn runs_that_cannot_fit_in_memory_together_are_refused_before_they_start() {
    let s = Scratch::new("memory");
    let config = s.0.join("huge.toml");
    fs::write(&config, HUGE).unwrap();
    let out = s.0.join("c");
    let result = futexsim(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "1000",
    ]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("1000 at once need") && stderr.contains("pass --force"),
        "{stderr}"
    );
    assert!(!out.exists(), "a refused sweep writes nothing");
}

/// Permissions do not bind root: there the test has nothing to show.
fn running_as_root() -> bool {
    fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

#[test]
fn an_unwritable_campaign_is_one_line_and_keeps_its_results() {
    if running_as_root() {
        eprintln!("skipped: permissions do not bind root");
        return;
    }
    let small = perf_hash_sweep("duration_us = 20\nwarmup_us = 5", &["fixed-256"], "[2, 4]");
    let (s, config) = Scratch::holding("readonly", "small.toml", &small);
    let dir = s.0.join("c");
    let (config, out) = (config.to_str().unwrap(), dir.to_str().unwrap());
    assert!(futexsim(&["run", config, "--out", out]).status.success());
    let results = fs::read(dir.join("results.json")).unwrap();

    let read_only = |on: bool| {
        for d in [dir.clone(), dir.join("runs")] {
            let mut p = fs::metadata(&d).unwrap().permissions();
            p.set_readonly(on);
            fs::set_permissions(&d, p).unwrap();
        }
    };
    read_only(true);
    // A new candidate adds runs, which cannot be written.
    let result = futexsim(&["run", config, "--out", out, "--rule", "64"]);
    read_only(false);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(out), "the error names the path: {stderr}");
    assert_eq!(fs::read(dir.join("results.json")).unwrap(), results);
}
