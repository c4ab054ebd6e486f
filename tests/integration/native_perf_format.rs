//! `futexsim native hash` against a parser written for `perf bench futex
//! hash` output: one pattern per line as perf's printf formats produce them
//! (tools/perf/bench/futex-hash.c and futex.c), so a script that reads
//! perf's output reads futexsim's unchanged.

use crate::common::{futexsim, native};
use regex::Regex;

/// What a perf-output script takes from a run.
#[derive(Debug, Default)]
struct PerfHashRun {
    pid: u32,
    threads: u32,
    futexes: u32,
    shared: bool,
    runtime_secs: u32,
    /// Per thread: (tid, first futex, last futex, ops/sec).
    per_thread: Vec<(u32, u64, u64, u64)>,
    averaged: u64,
    stderr_pct: f64,
    total_secs: u32,
    hashing: String,
}

/// Parses perf bench futex hash output; every line must match one of perf's
/// line formats, in perf's order.
fn parse_perf_hash(text: &str) -> Result<PerfHashRun, String> {
    let summary = Regex::new(
        r"^Run summary \[PID (\d+)\]: (\d+) threads, each operating on (\d+) \[(shared|private)\] futexes for (\d+) secs\.$",
    )
    .unwrap();
    let many = Regex::new(
        r"^\[thread +(\d+)\] futexes: 0x([0-9a-f]+) \.\.\. 0x([0-9a-f]+) \[ (\d+) ops/sec \]$",
    )
    .unwrap();
    let one = Regex::new(r"^\[thread +(\d+)\] futex: 0x([0-9a-f]+) \[ (\d+) ops/sec \]$").unwrap();
    let averaged =
        Regex::new(r"^Averaged (\d+) operations/sec \(\+- (\d+\.\d\d)%\), total secs = (\d+)$")
            .unwrap();
    let hashing =
        Regex::new(r"^Futex hashing: (global hash|\d+ hash buckets|auto resized to \d+ buckets)$")
            .unwrap();
    let mut lines = text.lines().peekable();
    let mut run = PerfHashRun::default();
    let first = lines.next().ok_or("empty output")?;
    let c = summary
        .captures(first)
        .ok_or(format!("not perf's summary: {first:?}"))?;
    run.pid = c[1].parse().unwrap();
    run.threads = c[2].parse().unwrap();
    run.futexes = c[3].parse().unwrap();
    run.shared = &c[4] == "shared";
    run.runtime_secs = c[5].parse().unwrap();
    if lines.next() != Some("") {
        return Err("perf prints a blank line after its summary".into());
    }
    while let Some(line) = lines.next() {
        if let Some(c) = many.captures(line) {
            let hex = |i: usize| u64::from_str_radix(&c[i], 16).unwrap();
            run.per_thread
                .push((c[1].parse().unwrap(), hex(2), hex(3), c[4].parse().unwrap()));
        } else if let Some(c) = one.captures(line) {
            let first = u64::from_str_radix(&c[2], 16).unwrap();
            run.per_thread
                .push((c[1].parse().unwrap(), first, first, c[3].parse().unwrap()));
        } else if line.is_empty() {
            let line = lines.next().ok_or("no Averaged line")?;
            let c = averaged
                .captures(line)
                .ok_or(format!("not perf's average: {line:?}"))?;
            run.averaged = c[1].parse().unwrap();
            run.stderr_pct = c[2].parse().unwrap();
            run.total_secs = c[3].parse().unwrap();
            let line = lines.next().ok_or("no Futex hashing line")?;
            let c = hashing
                .captures(line)
                .ok_or(format!("not perf's hashing line: {line:?}"))?;
            run.hashing = c[1].to_string();
            return match lines.next() {
                None => Ok(run),
                Some(extra) => Err(format!("a line perf does not print: {extra:?}")),
            };
        } else {
            return Err(format!("a line perf does not print: {line:?}"));
        }
    }
    Err("the output ends before the Averaged line".into())
}

fn native_hash(args: &[&str]) -> String {
    native(&[&["hash"], args].concat())
}

#[test]
fn native_hash_prints_every_line_as_perf_does() {
    let text = native_hash(&["-t", "2", "-r", "1", "-f", "64"]);
    let run = parse_perf_hash(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(
        (run.threads, run.futexes, run.shared, run.runtime_secs),
        (2, 64, false, 1)
    );
    assert_ne!(run.pid, 0);
    assert_eq!(run.per_thread.len(), 2);
    for (i, &(tid, first, last, rate)) in run.per_thread.iter().enumerate() {
        assert_eq!(tid, i as u32);
        // A thread's futexes are one calloc'd array of u32.
        assert_eq!(last - first, 63 * 4);
        assert!(rate > 0, "{text}");
    }
    // A run of 1 s lasts 1 s and a bit: perf's whole seconds.
    assert_eq!(run.total_secs, 1);
    // Averaged is the truncated mean of the per-thread rates.
    let rates: Vec<f64> = run.per_thread.iter().map(|t| t.3 as f64).collect();
    let mean = rates.iter().sum::<f64>() / 2.0;
    assert_eq!(run.averaged, mean as u64);
    // (+- x%): the sample deviation (n - 1) over sqrt(n), over the mean.
    let sd = ((rates[0] - mean).powi(2) + (rates[1] - mean).powi(2)).sqrt();
    let expected = 100.0 * sd / 2f64.sqrt() / (mean as u64) as f64;
    assert!((run.stderr_pct - expected).abs() <= 0.006, "{text}");
    assert!(!run.hashing.is_empty());
}

#[test]
fn a_hash_size_that_is_not_a_power_of_two_is_bad_input_not_an_old_kernel() {
    let out = futexsim(&["native", "hash", "-b", "3", "-r", "1", "-t", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("-b 3: a private futex hash takes a power of two"),
        "{stderr}"
    );
    assert!(!stderr.contains("needs Linux"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing runs");
}

/// perf bench futex hash takes `-t 0` as its default, a thread per online
/// CPU; it does not print a run of 0 threads.
#[test]
fn zero_threads_run_a_thread_per_online_cpu_as_perf_does() {
    let text = native_hash(&["-t", "0", "-r", "1", "-f", "16"]);
    let run = parse_perf_hash(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    assert_eq!(run.threads, cpus, "{text}");
}

#[test]
fn silent_and_single_futex_runs_print_perf_s_other_forms() {
    let text = native_hash(&["-t", "1", "-r", "1", "-f", "1", "-S"]);
    let run = parse_perf_hash(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(run.shared);
    assert_eq!(run.per_thread.len(), 1);
    assert_eq!(run.per_thread[0].1, run.per_thread[0].2);
    // One sample has no spread.
    assert_eq!(run.stderr_pct, 0.0);

    let text = native_hash(&["-t", "1", "-r", "1", "-s"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[2].starts_with("Averaged "), "{text}");
    assert!(lines[3].starts_with("Futex hashing: "), "{text}");
}

#[test]
fn the_parser_refuses_what_perf_does_not_print() {
    let good =
        "Run summary [PID 7]: 1 threads, each operating on 2 [private] futexes for 1 secs.\n\n\
                [thread  0] futexes: 0x10 ... 0x14 [ 5 ops/sec ]\n\n\
                Averaged 5 operations/sec (+- 0.00%), total secs = 1\n\
                Futex hashing: global hash\n";
    assert!(parse_perf_hash(good).is_ok());
    // The old format: a population deviation and a total in operations/sec.
    let old = good.replace(
        "Averaged 5 operations/sec (+- 0.00%), total secs = 1",
        "Averaged 5 operations/sec (+- 0.00%), total 5 operations/sec",
    );
    assert!(parse_perf_hash(&old).is_err());
    assert!(parse_perf_hash(&good.replace("[thread  0]", "thread 0:")).is_err());
}
