//! Limits met before or while a sweep runs: more memory than the machine
//! has (or the process may map), more threads than it may start, and a
//! campaign directory that cannot be written. Each is one clear line,
//! found before anything is laid out or started, and results already
//! written stay as they were.

use std::fs;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::{futexsim, perf_hash_sweep, Scratch};

/// futexsim with `args`, its address space limited to `bytes` (RLIMIT_AS,
/// `ulimit -v`), run to its end or killed after `limit` (the test fails).
fn futexsim_within(args: &[&str], address_space: u64, limit: Duration) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_futexsim"));
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe, and the closure touches
    // nothing else of the parent's.
    unsafe {
        command.pre_exec(move || {
            let rlimit = libc::rlimit {
                rlim_cur: address_space,
                rlim_max: address_space,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &rlimit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let mut child = command.spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{args:?} did not end in {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Asserts `out` is a refusal: exit status 2, one line on stderr naming
/// every one of `named` and a limit by name, no panic.
fn refused(out: &Output, named: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for name in named {
        assert!(stderr.contains(name), "names {name}: {stderr}");
    }
    stderr
}

const GIB: u64 = 1 << 30;

/// 512 threads of 32768 futexes on uv-512: their arrays' 1 M lines and the
/// machine's 512 CPUs, some 330 MiB a run, and 1000 at once.
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

/// 1000 children each inheriting 100000 vmas: each child's exit, queued
/// whole, is 400000 actions, some 40 GB in all.
const EXITS: &str = r#"
[run]
duration_us = 2
warmup_us = 1

[machine]
preset = "icx-2s"

[workload]
name = "time-exit"
children = 1000
anon_vmas = 100000

[[table]]
preset = "fixed-256"
"#;

#[test]
fn a_run_too_large_to_lay_out_is_refused_in_seconds_naming_the_memory() {
    let (s, config) = Scratch::holding("exits", "exits.toml", EXITS);
    let out = s.0.join("c");
    let args = [
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let started = Instant::now();
    // Under 8 GiB of address space whatever the host has: the memory is
    // counted from the config's numbers, never laid out to be counted.
    for extra in [&[][..], &["--force"]] {
        let args: Vec<&str> = args.iter().chain(extra).copied().collect();
        let result = futexsim_within(&args, 8 * GIB, Duration::from_secs(60));
        let stderr = refused(&result, &["exits.toml", "MiB to lay out", "allows"]);
        assert!(
            stderr.contains("RLIMIT_AS") || stderr.contains("MemAvailable"),
            "names the limit: {stderr}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "refused in {:?}",
        started.elapsed()
    );
    assert!(!out.exists(), "a refused sweep writes nothing");
}

/// A sweep of 2600 short runs.
fn many_runs() -> String {
    perf_hash_sweep(
        "duration_us = 2\nwarmup_us = 1\nrepetitions = 1300",
        &["fixed-256", "private-6.17"],
        "[2]",
    )
}

#[test]
fn jobs_whose_threads_stacks_pass_the_address_space_are_refused_naming_it() {
    let (s, config) = Scratch::holding("jobs-stacks", "many.toml", &many_runs());
    let out = s.0.join("c");
    let args = [
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "1000",
    ];
    // 1000 runs of some 20 MiB, and two threads' stacks for each.
    let result = futexsim_within(&args, 3 * GIB, Duration::from_secs(120));
    refused(&result, &["1000 at once need", "RLIMIT_AS", "lower --jobs"]);
    assert!(!out.exists(), "a refused sweep writes nothing");
}

#[test]
fn jobs_2500_on_a_sweep_of_2600_runs_run_or_are_refused_in_one_line() {
    let (s, config) = Scratch::holding("jobs-2500", "many.toml", &many_runs());
    let out = s.0.join("c");
    let args = [
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "2500",
    ];
    let result = futexsim_within(&args, u64::MAX, Duration::from_secs(300));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    match result.status.code() {
        Some(0) => assert!(out.join("results.json").exists(), "{stderr}"),
        Some(2) => {
            refused(&result, &["--jobs"]);
            assert!(!out.exists(), "a refused sweep writes nothing");
        }
        _ => panic!("{:?}: {stderr}", result.status),
    }
}

#[test]
fn native_hash_with_100000_threads_or_4e9_futexes_is_refused_before_a_thread_starts() {
    for (threads, futexes, named) in [
        ("100000", "1024", "--threads 100000"),
        ("1", "4000000000", "--futexes 4000000000"),
    ] {
        let args = [
            "native", "hash", "-t", threads, "-f", futexes, "-r", "1", "-s",
        ];
        let result = futexsim_within(&args, 4 * GIB, Duration::from_secs(30));
        let stderr = refused(&result, &[named, "allows"]);
        assert!(
            stderr.contains("RLIMIT") || stderr.contains("MemAvailable"),
            "names the limit: {stderr}"
        );
        assert!(
            result.stdout.is_empty(),
            "nothing ran: {}",
            String::from_utf8_lossy(&result.stdout)
        );
    }
}

/// The memory check counts a run from its config's numbers; laying it out
/// is what it must never need. So what it counts must cover what a run
/// does lay out: every shipped config's first repetition of each design at
/// each point, counted and then laid out, field by field. Runs the count
/// puts past 256 MiB are left out, to keep the test fast.
#[test]
fn the_count_from_a_configs_numbers_covers_what_each_shipped_run_lays_out() {
    use futexsim::config::Config;
    use futexsim::machine::Machine;
    let configs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut compared = 0;
    for entry in fs::read_dir(&configs).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let config = Config::load(&path, &[]).unwrap();
        for run in config.runs().iter().filter(|r| r.repetition == 0) {
            let machine = Machine::new(run.scenario.machine.clone()).unwrap();
            let prepared = run.scenario.prepare(&machine).unwrap();
            let counted = prepared.estimate();
            if counted.bytes() > 256 << 20 {
                continue;
            }
            let laid_out = prepared.footprint().unwrap();
            let at = format!(
                "{} point {} design {}",
                path.display(),
                run.point,
                run.design
            );
            assert!(
                counted.lines >= laid_out.lines,
                "{at}: lines {counted:?} < {laid_out:?}"
            );
            assert!(
                counted.locks >= laid_out.locks,
                "{at}: locks {counted:?} < {laid_out:?}"
            );
            assert!(
                counted.tasks >= laid_out.tasks,
                "{at}: tasks {counted:?} < {laid_out:?}"
            );
            assert_eq!(counted.cpus, laid_out.cpus, "{at}");
            assert!(
                counted.program_bytes >= laid_out.program_bytes,
                "{at}: program bytes {counted:?} < {laid_out:?}"
            );
            compared += 1;
        }
    }
    assert!(compared > 100, "only {compared} runs compared");
}
