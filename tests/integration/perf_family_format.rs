//! `futexsim native wake|wake-parallel|requeue|lock-pi`, and the perf lines
//! of the simulated runs of those benchmarks, against a parser written for
//! `perf bench futex` output: one set of patterns per benchmark, each line
//! as perf 6.1's printf formats produce it (tools/perf/bench/futex-wake.c,
//! futex-wake-parallel.c, futex-requeue.c, futex-lock-pi.c). The runs are
//! short (two threads, one or two runs) for a small CI machine.

use crate::common::{futexsim, native, run_sweep, Scratch};
use regex::{Captures, Regex};

/// One benchmark's lines: the summary, the lines perf prints once per run
/// or thread (none with -s), and the last line, which follows a blank line
/// after per-thread lines.
struct Format {
    summary: Regex,
    each: Regex,
    last: Regex,
    blank_before_last: bool,
}

/// The fields of one benchmark's output, line by line.
struct Parsed<'a> {
    summary: Captures<'a>,
    each: Vec<Captures<'a>>,
    last: Captures<'a>,
}

const MS: &str = r"(\d+\.\d{4}) ms";
const PCT: &str = r"\(\+-(\d+\.\d\d)%\)";

fn wake() -> Format {
    Format {
        summary: Regex::new(r"^Run summary \[PID (\d+)\]: blocking on (\d+) threads \(at \[(shared|private)\] futex 0x([0-9a-f]+)\), waking up (\d+) at a time\.$").unwrap(),
        each: Regex::new(&format!(r"^\[Run (\d+)\]: Wokeup (\d+) of (\d+) threads in {MS}$")).unwrap(),
        last: Regex::new(&format!(r"^Wokeup (\d+) of (\d+) threads in {MS} {PCT}$")).unwrap(),
        blank_before_last: false,
    }
}

fn wake_parallel() -> Format {
    let latency = format!(r"Avg per-thread latency \(waking (\d+)/(\d+) threads\) in {MS} {PCT}$");
    Format {
        summary: Regex::new(r"^Run summary \[PID (\d+)\]: blocking on (\d+) threads \(at \[(shared|private)\] futex 0x([0-9a-f]+)\), (\d+) threads waking up (\d+) at a time\.$").unwrap(),
        each: Regex::new(&format!(r"^\[Run (\d+)\]: {latency}")).unwrap(),
        last: Regex::new(&format!("^{latency}")).unwrap(),
        blank_before_last: false,
    }
}

fn requeue() -> Format {
    Format {
        summary: Regex::new(r"^Run summary \[PID (\d+)\]: Requeuing (\d+) threads \(from \[(shared|private)\] 0x([0-9a-f]+) to (PI )?0x([0-9a-f]+)\), (\d+) at a time\.$").unwrap(),
        each: Regex::new(&format!(
            r"^\[Run (\d+)\]: (?:Requeued (\d+)|Awoke and Requeued \((\d+)\+(\d+)\)) of (\d+) threads in {MS}$"
        ))
        .unwrap(),
        last: Regex::new(&format!(r"^Requeued (\d+) of (\d+) threads in {MS} {PCT}$")).unwrap(),
        blank_before_last: false,
    }
}

fn lock_pi() -> Format {
    Format {
        summary: Regex::new(r"^Run summary \[PID (\d+)\]: (\d+) threads doing pi lock/unlock pairing for (\d+) secs\.$").unwrap(),
        // perf prints the thread number three wide.
        each: Regex::new(r"^\[thread ([ \d]{2}\d)\] futex: 0x([0-9a-f]+) \[ (\d+) ops/sec \]$").unwrap(),
        last: Regex::new(r"^Averaged (\d+) operations/sec \(\+- (\d+\.\d\d)%\), total secs = (\d+)$").unwrap(),
        blank_before_last: true,
    }
}

/// Parses one benchmark's output: every line must be one perf prints, in
/// perf's order, and nothing may follow the last.
fn parse<'a>(text: &'a str, format: &Format) -> Result<Parsed<'a>, String> {
    let mut lines = text.lines().peekable();
    let first = lines.next().ok_or("empty output")?;
    let summary = format
        .summary
        .captures(first)
        .ok_or(format!("not perf's summary: {first:?}"))?;
    if lines.next() != Some("") {
        return Err("perf prints a blank line after its summary".into());
    }
    let mut each = Vec::new();
    while let Some(c) = lines.peek().and_then(|l| format.each.captures(l)) {
        each.push(c);
        lines.next();
    }
    if format.blank_before_last && !each.is_empty() && lines.next() != Some("") {
        return Err("perf prints a blank line before its average".into());
    }
    let line = lines.next().ok_or("no last line")?;
    let last = format
        .last
        .captures(line)
        .ok_or(format!("not perf's last line: {line:?}"))?;
    match lines.next() {
        None => Ok(Parsed {
            summary,
            each,
            last,
        }),
        Some(extra) => Err(format!("a line perf does not print: {extra:?}")),
    }
}

fn number<T: std::str::FromStr>(c: &Captures, i: usize) -> T
where
    T::Err: std::fmt::Debug,
{
    c[i].trim().parse().unwrap()
}

/// perf's `(+-x%)` of samples: the sample deviation over sqrt(n), over the mean.
fn rel_stderr(samples: &[f64]) -> f64 {
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    if samples.len() < 2 || mean == 0.0 {
        return 0.0;
    }
    let var = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0);
    100.0 * (var / n).sqrt() / mean
}

#[test]
fn native_wake_prints_each_run_and_the_mean_as_perf_does() {
    let text = native(&["wake", "-t", "2", "--runs", "2"]);
    let run = parse(&text, &wake()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_ne!(number::<u32>(&run.summary, 1), 0, "a real process id");
    assert_eq!(number::<u32>(&run.summary, 2), 2);
    assert_eq!(&run.summary[3], "private");
    assert_eq!(
        number::<u32>(&run.summary, 5),
        1,
        "one woken a call by default"
    );
    let times: Vec<f64> = run.each.iter().map(|c| number(c, 4)).collect();
    for (i, c) in run.each.iter().enumerate() {
        assert_eq!(number::<usize>(c, 1), i + 1);
        assert_eq!((number::<u32>(c, 2), number::<u32>(c, 3)), (2, 2));
    }
    assert_eq!(times.len(), 2);
    let mean: f64 = number(&run.last, 3);
    assert!((mean - (times[0] + times[1]) / 2.0).abs() < 1e-4, "{text}");
    let pct: f64 = number(&run.last, 4);
    assert!((pct - rel_stderr(&times)).abs() <= 0.006, "{text}");
}

#[test]
fn native_wake_parallel_prints_the_wakers_latency_per_run_and_over_all() {
    let text = native(&["wake-parallel", "-t", "2", "-w", "2", "--runs", "2", "-S"]);
    let run = parse(&text, &wake_parallel()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(&run.summary[3], "shared");
    assert_eq!(
        (
            number::<u32>(&run.summary, 5),
            number::<u32>(&run.summary, 6)
        ),
        (2, 1),
        "two wakers of one thread each"
    );
    assert_eq!(run.each.len(), 2);
    for c in &run.each {
        assert_eq!((number::<u32>(c, 2), number::<u32>(c, 3)), (1, 2));
    }
    assert_eq!(
        (number::<u32>(&run.last, 1), number::<u32>(&run.last, 2)),
        (1, 2)
    );

    let silent = native(&["wake-parallel", "-t", "2", "--runs", "1", "-s"]);
    let run = parse(&silent, &wake_parallel()).unwrap_or_else(|e| panic!("{e}\n{silent}"));
    assert!(run.each.is_empty(), "-s prints no run lines");
}

#[test]
fn native_requeue_prints_perf_s_plain_and_pi_run_lines() {
    let text = native(&["requeue", "-t", "2", "--runs", "2"]);
    let run = parse(&text, &requeue()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let (from, to): (String, String) = (run.summary[4].into(), run.summary[6].into());
    let address = |hex: &str| u64::from_str_radix(hex, 16).unwrap();
    assert_eq!(address(&from) - address(&to), 4, "perf's adjacent words");
    assert!(run.summary.get(5).is_none(), "no PI without -p");
    assert_eq!(number::<u32>(&run.summary, 7), 1);
    for c in &run.each {
        assert_eq!(number::<u32>(c, 2), 2, "{text}");
    }
    assert_eq!(number::<u32>(&run.last, 1), 2);

    let pi = native(&["requeue", "-t", "2", "-p", "-B", "--runs", "1"]);
    let run = parse(&pi, &requeue()).unwrap_or_else(|e| panic!("{e}\n{pi}"));
    assert_eq!(run.summary.get(5).map(|m| m.as_str()), Some("PI "));
    assert_eq!(number::<u32>(&run.summary, 7), 2, "-B requeues all at once");
    let line = &run.each[0];
    let (woken, requeued): (u32, u32) = (number(line, 3), number(line, 4));
    assert_eq!(woken + requeued, 2, "{pi}");
}

#[test]
fn native_lock_pi_prints_a_line_per_thread_and_perf_s_average() {
    let text = native(&["lock-pi", "-t", "2", "-r", "1"]);
    let run = parse(&text, &lock_pi()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(number::<u32>(&run.summary, 2), 2);
    assert_eq!(number::<u32>(&run.summary, 3), 1);
    assert_eq!(run.each.len(), 2);
    assert_eq!(run.each[0][2], run.each[1][2], "one futex for all");
    let rates: Vec<f64> = run.each.iter().map(|c| number(c, 3)).collect();
    let average: u64 = number(&run.last, 1);
    assert_eq!(average, ((rates[0] + rates[1]) / 2.0) as u64);
    assert_eq!(number::<u32>(&run.last, 3), 1, "whole seconds");

    let multi = native(&["lock-pi", "-t", "2", "-r", "1", "-M"]);
    let run = parse(&multi, &lock_pi()).unwrap_or_else(|e| panic!("{e}\n{multi}"));
    assert_ne!(run.each[0][2], run.each[1][2], "-M: a futex each");
    let silent = native(&["lock-pi", "-t", "1", "-r", "1", "-s"]);
    let run = parse(&silent, &lock_pi()).unwrap_or_else(|e| panic!("{e}\n{silent}"));
    assert!(run.each.is_empty());
}

#[test]
fn options_perf_would_refuse_or_hang_on_are_refused_with_the_option_named() {
    for (args, named) in [
        (&["wake-parallel", "-t", "4", "-w", "3"][..], "--nwakers 3"),
        (&["requeue", "-t", "2", "-q", "0"][..], "--nrequeue 0"),
        (&["lock-pi", "-t", "1", "-r", "0"][..], "--runtime 0"),
        (&["wake", "-t", "1", "--runs", "0"][..], "--runs 0"),
    ] {
        let out = futexsim(&[&["native"], args].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "nothing runs: {args:?}");
    }
    // An option perf does not have is clap's error, also 2.
    let out = futexsim(&["native", "wake", "-r", "3"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_parser_refuses_what_perf_does_not_print() {
    let good = "Run summary [PID 7]: blocking on 2 threads (at [private] futex 0x10), waking up 1 at a time.\n\n\
                [Run 1]: Wokeup 2 of 2 threads in 0.0100 ms\n\
                Wokeup 2 of 2 threads in 0.0100 ms (+-0.00%)\n";
    assert!(parse(good, &wake()).is_ok());
    assert!(parse(&good.replace("0.0100 ms\n", "0.01 ms\n"), &wake()).is_err());
    assert!(parse(&good.replace("(+-0.00%)", "(+- 0.00%)"), &wake()).is_err());
    let lock = "Run summary [PID 7]: 1 threads doing pi lock/unlock pairing for 1 secs.\n\n\
                [thread  0] futex: 0x10 [ 5 ops/sec ]\n\n\
                Averaged 5 operations/sec (+- 0.00%), total secs = 1\n";
    assert!(
        parse(lock, &lock_pi()).is_err(),
        "hash's two-wide thread number"
    );
    assert!(parse(&lock.replace("[thread  0]", "[thread   0]"), &lock_pi()).is_ok());
}

/// A short simulated run of `workload` (a `[workload]` body) at 2 and 4
/// threads, two designs, two repetitions; its report.md and results.csv.
fn simulated(name: &str, workload: &str) -> (String, String) {
    let config = format!(
        "[run]\nduration_us = 2_000\nwarmup_us = 0\nrepetitions = 2\n\n[machine]\npreset = \"icx-2s\"\n\n\
         [workload]\n{workload}\n\n[[table]]\npreset = \"aligned-3.14\"\n\n[[table]]\npreset = \"fixed-256\"\n\n\
         [sweep]\nthreads = [2, 4]\n"
    );
    let (scratch, path) = Scratch::holding(name, "config.toml", &config);
    let out_dir = scratch.0.join("out");
    let out = run_sweep(&path, &out_dir, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |file: &str| std::fs::read_to_string(out_dir.join(file)).unwrap();
    (read("report.md"), read("results.csv"))
}

/// The code blocks of report.md's perf section.
fn perf_blocks(md: &str) -> Vec<&str> {
    let start = md
        .find("## As perf bench prints it")
        .expect("a perf section");
    let end = md[start..]
        .find("\n## perf c2c")
        .map_or(md.len(), |e| start + e);
    md[start..end]
        .split("```text\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap())
        .collect()
}

#[test]
fn simulated_perf_runs_print_perf_s_lines_and_lead_with_their_own_figure() {
    for (name, workload, format, column, heading) in [
        (
            "sim-wake",
            "name = \"perf-wake\"\nsettle_us = 100",
            wake(),
            "wake_time_ms",
            "wake time (ms, lower is better)",
        ),
        (
            "sim-wake-parallel",
            "name = \"perf-wake-parallel\"\nsettle_us = 100\nwakers = 2",
            wake_parallel(),
            "per_thread_latency_ms",
            "per-thread latency (ms, lower is better)",
        ),
        (
            "sim-requeue",
            "name = \"perf-requeue\"\nsettle_us = 100",
            requeue(),
            "requeue_time_ms",
            "requeue time (ms, lower is better)",
        ),
        (
            "sim-lock-pi",
            "name = \"perf-lock-pi\"",
            lock_pi(),
            "lock_pi_ops_per_sec",
            "lock-pi ops/s per thread (ops/s, higher is better)",
        ),
    ] {
        let (md, csv) = simulated(name, workload);
        let blocks = perf_blocks(&md);
        assert_eq!(blocks.len(), 4, "two points of two designs: {name}");
        for block in blocks {
            let run = parse(block, &format).unwrap_or_else(|e| panic!("{name}: {e}\n{block}"));
            assert_eq!(number::<u32>(&run.summary, 1), 0, "a simulation has no pid");
        }
        // The benchmark's own figure leads the summary table and results.csv.
        let table = md
            .lines()
            .find(|l| l.starts_with("| point | design |"))
            .unwrap();
        assert!(
            table.starts_with(&format!("| point | design | {heading} |")),
            "{name}: {table}"
        );
        let header = csv.lines().next().unwrap();
        assert!(
            header.contains(&format!(",seed,{column},{column}_better,cpus,")),
            "{name}: {header}"
        );
        let fit_applies = column == "lock_pi_ops_per_sec";
        assert_eq!(
            md.contains("to which the fit does not apply"),
            !fit_applies,
            "{name}: the USL describes throughputs, not times"
        );
    }
}
