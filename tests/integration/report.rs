//! The report rendered from a small real campaign: two designs, two CPU
//! counts, two repetitions on icx-2s, checked against the records.

use futexsim::kernel::table;
use futexsim::machine::presets;
use futexsim::record::RunRecord;
use futexsim::report::interval::t_quantile;
use futexsim::report::summary::{duration_ns, figure};
use futexsim::report::{self, GENERATION, REPORT_MD, RESULTS_JSON};
use futexsim::results::{MachineSource, Provenance, ResultSet, RunResult, SpeedLog};
use futexsim::scenario::Scenario;
use futexsim::symbol::Symbol;
use futexsim::task::RunWindow;
use futexsim::workload::{perf_hash::PerfHash, WorkloadSpec};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const DESIGNS: [&str; 2] = ["fixed-256", "aligned-3.14"];
const THREADS: [u32; 2] = [16, 64];
const REPETITIONS: u32 = 2;

fn campaign() -> &'static (ResultSet, SpeedLog) {
    static SET: OnceLock<(ResultSet, SpeedLog)> = OnceLock::new();
    SET.get_or_init(|| {
        let mut runs = Vec::new();
        let mut speed = SpeedLog {
            date: "2025-01-01T00:00:00Z".into(),
            peak_rss_bytes: 64 << 20,
            runs: Vec::new(),
        };
        for (point, threads) in THREADS.into_iter().enumerate() {
            for design in DESIGNS {
                for repetition in 0..REPETITIONS {
                    let scenario = Scenario {
                        machine: presets::preset("icx-2s").unwrap(),
                        design: table::preset(design).unwrap(),
                        workload: WorkloadSpec::PerfHash(PerfHash {
                            threads: Some(threads),
                            ..PerfHash::default()
                        }),
                        window: RunWindow {
                            warmup: 50_000_000,
                            duration: 150_000_000,
                            stop: None,
                        },
                        seed: 7 + u64::from(repetition),
                    };
                    let (record, run_speed) = scenario.simulate().unwrap();
                    let id = format!("{point}-{design}-{repetition}");
                    speed.runs.push((id.clone(), run_speed));
                    runs.push(RunResult {
                        point,
                        axis_values: vec![threads.to_string()],
                        design: design.into(),
                        repetition,
                        id,
                        record,
                    });
                }
            }
        }
        let set = ResultSet {
            provenance: Provenance {
                futexsim_version: "0.1.0".into(),
                git_commit: "test".into(),
                config_name: "report-test".into(),
                resolved_config: "[workload]\nname = \"perf-hash\"\n".into(),
                base_seed: 7,
                repetitions: REPETITIONS,
                machines: vec![MachineSource {
                    name: "icx-2s".into(),
                    source: "test".into(),
                }],
            },
            axes: vec!["threads".into()],
            designs: DESIGNS.map(String::from).to_vec(),
            baseline: DESIGNS[0].into(),
            runs,
        };
        (set, speed)
    })
}

/// A fresh directory under the target dir, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rendered(name: &str) -> (PathBuf, String) {
    let (set, speed) = campaign();
    let dir = scratch(name);
    report::write(&dir, set, speed, report::Layout::Generations).unwrap();
    let md = std::fs::read_to_string(dir.join(REPORT_MD)).unwrap();
    (dir, md)
}

fn records<'a>(set: &'a ResultSet, threads: u32, design: &str) -> Vec<&'a RunRecord> {
    set.runs
        .iter()
        .filter(|r| r.record.threads == threads && r.design == design)
        .map(|r| &r.record)
        .collect()
}

fn mean(rs: &[&RunRecord], f: impl Fn(&RunRecord) -> f64) -> f64 {
    rs.iter().map(|r| f(r)).sum::<f64>() / rs.len() as f64
}

/// Half the width of the 95 % t-interval of `f` over the repetitions,
/// computed here from its definition: t(0.975, n - 1) s / sqrt(n).
fn half_width(rs: &[&RunRecord], f: impl Fn(&RunRecord) -> f64) -> f64 {
    let m = mean(rs, &f);
    let n = rs.len() as f64;
    let s2 = rs.iter().map(|r| (f(r) - m).powi(2)).sum::<f64>() / (n - 1.0);
    t_quantile(0.95, rs.len() - 1) * (s2 / n).sqrt()
}

/// The cells of the table row that starts with `prefix`, in `section`.
fn row(md: &str, section: &str, prefix: &str) -> Vec<String> {
    let start = md.find(section).unwrap_or_else(|| panic!("no {section}"));
    let line = md[start..]
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no row {prefix} in {section}"));
    line.trim_matches('|')
        .split(" | ")
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
fn the_summary_shows_the_records() {
    let (set, _) = campaign();
    let (dir, md) = rendered("summary");
    for threads in THREADS {
        for design in DESIGNS {
            let rs = records(set, threads, design);
            assert_eq!(rs.len(), REPETITIONS as usize);
            let cells = row(
                &md,
                "## Summary",
                &format!("| threads={threads} | {design} |"),
            );
            // Every figure is the mean ± half its seed interval; a flag
            // may follow.
            let shown = |f: &dyn Fn(&RunRecord) -> f64, show: &dyn Fn(f64) -> String| {
                format!("{} ± {}", show(mean(&rs, f)), show(half_width(&rs, f)))
            };
            // The figure perf bench futex hash exists for leads, then ops/s,
            // whole, in groups of three digits.
            let whole = |v: f64| figure(v.round());
            let thread = |r: &RunRecord| r.mean_thread_ops_per_sec;
            assert!(
                cells[2].starts_with(&shown(&thread, &whole)),
                "{design} at {threads}: {}",
                cells[2]
            );
            let ops = |r: &RunRecord| r.ops_per_sec;
            assert!(cells[3].starts_with(&shown(&ops, &whole)), "{}", cells[3]);
            // The spread over threads is a column of its own, no interval.
            let rsd = mean(&rs, |r| r.thread_rsd_pct);
            assert_eq!(cells[4], format!("{rsd:.1}%"));
            // Latencies in the unit that keeps them short.
            let p99 = |r: &RunRecord| r.latency_ns.p99 as f64;
            assert!(
                cells[6].starts_with(&shown(&p99, &duration_ns)),
                "{}",
                cells[6]
            );
            let rmt = |r: &RunRecord| r.coherence.rmt_hitm as f64 / r.ops as f64;
            assert!(
                cells[8].starts_with(&shown(&rmt, &|v| format!("{v:.3}"))),
                "{}",
                cells[8]
            );
            let max_load = |r: &RunRecord| r.load.as_ref().unwrap().max_load as f64;
            assert!(
                cells[11].starts_with(&shown(&max_load, &|v| format!("{v:.1}"))),
                "{}",
                cells[11]
            );
            // Every key of the workload is in the load record.
            assert!(rs
                .iter()
                .all(|r| r.load.as_ref().unwrap().keys == u64::from(threads) * 1024));
            let load = rs[0].load.as_ref().unwrap();
            let counted: u64 = load.histogram.iter().map(|c| c.buckets).sum();
            assert_eq!(counted, load.buckets);
        }
    }
    // Packed 40-byte buckets share lines, aligned ones never do.
    let aligned = row(&md, "## Summary", "| threads=64 | aligned-3.14 |");
    assert_eq!(aligned[14], "0.0% ± 0.0%");
    let fixed = row(&md, "## Summary", "| threads=64 | fixed-256 |");
    assert!(!fixed[14].starts_with("0.0%"));
    // The comparison has one row per point for the non-baseline design.
    let cmp = row(&md, "## Comparison", "| threads=64 | aligned-3.14 |");
    // The mean of the ratios of repetitions paired by seed, to the digits shown.
    let (aligned, fixed) = (
        records(set, 64, "aligned-3.14"),
        records(set, 64, "fixed-256"),
    );
    let ratio = aligned
        .iter()
        .zip(&fixed)
        .map(|(a, f)| a.mean_thread_ops_per_sec / f.mean_thread_ops_per_sec)
        .sum::<f64>()
        / aligned.len() as f64;
    let shown: f64 = cmp[2].split(' ').next().unwrap().parse().unwrap();
    assert!((shown - ratio).abs() < 0.0005, "{shown} vs {ratio}");
    for chart in [
        "throughput",
        "hitm_per_op",
        "rfo_modified_per_op",
        "bucket_load-fixed-256",
        "hitm_nodes-aligned-3.14",
    ] {
        let path = format!("charts/{chart}.svg");
        assert!(md.contains(&format!("({path})")), "{path} not linked");
        let svg = std::fs::read_to_string(dir.join(&path)).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    }
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + set.runs.len());
    assert!(csv.starts_with("point,axis.threads,design,repetition,id,"));
    // summary.csv: one row per cell, the interval beside each mean.
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 1 + THREADS.len() * DESIGNS.len());
    assert!(summary.starts_with(
        "point,axis.threads,design,repetitions,thread_ops_per_sec_better,\
         thread_ops_per_sec_mean,thread_ops_per_sec_ci_low,thread_ops_per_sec_ci_high,thread_ops_per_sec_bimodal,\
         thread_ops_per_sec_ratio_mean,"
    ));
}

#[test]
fn the_c2c_tables_show_the_records_in_perf_s_layout() {
    let (set, _) = campaign();
    let (dir, md) = rendered("c2c");
    // Every point has its file, linked from report.md, which keeps the
    // tables of the point with the most threads and no other.
    for p in 0..THREADS.len() {
        let path = format!("points/point-{p}.md");
        assert!(dir.join(&path).exists(), "{path}");
        assert!(md.contains(&format!("]({path})")), "report.md links {path}");
    }
    assert!(!md.contains("### fixed-256 at threads=16"));
    let r = records(set, 64, "fixed-256")[0];
    let section = "### fixed-256 at threads=64";
    let text = std::fs::read_to_string(dir.join("points/point-1.md")).unwrap();
    assert_eq!(
        text[text.find(section).unwrap()..],
        md[md.find(section).unwrap()..md.find("## Resolved config").unwrap()]
    );
    let start = text.find(section).unwrap_or_else(|| panic!("no {section}"));
    let tables = &text[start..];
    let shared = r
        .top_lines
        .iter()
        .filter(|line| report::c2c::lock_buckets(line).len() >= 2)
        .count();
    assert!(
        shared > 0,
        "fixed-256 at 64 CPUs has no line with two bucket locks"
    );
    for (i, line) in r.top_lines.iter().enumerate() {
        // The line's row: perf's columns in perf's order, whitespace apart.
        let address = format!("{:#x}", line.address);
        let cells: Vec<&str> = tables
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|c| c.len() > 2 && c[0] == i.to_string() && c[1] == address)
            .unwrap_or_else(|| panic!("no row {i} {address}"));
        let expected = [
            line.hitm(),
            line.lcl_hitm,
            line.rmt_hitm,
            line.loads + line.stores,
            line.loads,
            line.stores,
            line.store_l1_hit,
            line.store_l1_miss,
        ]
        .map(|n| n.to_string());
        assert_eq!(cells[5..13], expected, "row {i}");
        // Lines holding two buckets' lock words are named as false sharing.
        let named = tables.contains(&format!("- Line {address} holds the lock words of"));
        assert_eq!(
            named,
            report::c2c::lock_buckets(line).len() >= 2,
            "{address}"
        );
    }
}

#[test]
fn report_rebuilds_from_results_json_byte_for_byte() {
    let (dir, md) = rendered("round-trip");
    let json = std::fs::read(dir.join(RESULTS_JSON)).unwrap();
    let csv = std::fs::read(dir.join("results.csv")).unwrap();
    std::fs::remove_file(dir.join(REPORT_MD)).unwrap();
    let (set, speed) = report::read(&dir).unwrap();
    assert_eq!(&set, &campaign().0);
    report::write(&dir, &set, &speed, report::Layout::Generations).unwrap();
    assert_eq!(std::fs::read_to_string(dir.join(REPORT_MD)).unwrap(), md);
    assert_eq!(std::fs::read(dir.join(RESULTS_JSON)).unwrap(), json);
    assert_eq!(std::fs::read(dir.join("results.csv")).unwrap(), csv);
    assert_eq!(generations(&dir), 1, "the old report is gone");

    // The command does the same, and says where the report is.
    std::fs::remove_file(dir.join(REPORT_MD)).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .arg("report")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(dir.join(REPORT_MD)).unwrap(), md);
}

/// Report generations in `dir`, live or not.
fn generations(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with(GENERATION)
        })
        .count()
}

#[test]
fn a_failed_write_leaves_the_previous_report() {
    let (dir, md) = rendered("interrupted");
    // A killed writer's generation is cleared; one of a user's files in the
    // way of a report's name stops the write before the swap.
    let dead = dir.join(format!("{GENERATION}99999999-1"));
    std::fs::create_dir(&dead).unwrap();
    std::fs::write(dead.join("manifest"), "report.md\n").unwrap();
    std::fs::write(dead.join(REPORT_MD), "half").unwrap();
    std::fs::remove_file(dir.join("results.csv")).unwrap();
    std::fs::create_dir(dir.join("results.csv")).unwrap();
    std::fs::write(dir.join("results.csv").join("mine"), "mine").unwrap();
    let (set, speed) = campaign();
    let mut changed = set.clone();
    changed.provenance.config_name = "changed".into();
    let err = report::write(&dir, &changed, speed, report::Layout::Generations).unwrap_err();
    assert!(err.to_string().contains("results.csv"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join(REPORT_MD)).unwrap(), md);
    let (kept, _) = report::read(&dir).unwrap();
    assert_eq!(kept.provenance.config_name, "report-test");
    assert!(!dead.exists());
    assert_eq!(generations(&dir), 1, "only the live report");
    assert_eq!(
        std::fs::read(dir.join("results.csv").join("mine")).unwrap(),
        b"mine"
    );
}

#[test]
fn bad_report_directories_are_input_errors() {
    let dir = scratch("bad-input");
    let futexsim = |args: &[&Path]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_futexsim"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = futexsim(&[Path::new("report"), &dir]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&dir.join(RESULTS_JSON).display().to_string()),
        "{stderr}"
    );
    std::fs::write(dir.join(RESULTS_JSON), "{\"runs\": 3}").unwrap();
    let out = futexsim(&[Path::new("diff"), &dir, &dir]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a futexsim result file"));
}

#[test]
fn diff_compares_two_result_sets_point_by_point() {
    let (a, _) = rendered("diff-a");
    let (b, _) = rendered("diff-b");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .arg("--all")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // The same results: every ratio is exactly 1 and inside the noise.
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| threads="))
        .collect();
    assert_eq!(rows.len(), THREADS.len() * DESIGNS.len() * 5);
    assert!(rows
        .iter()
        .all(|l| l.ends_with("| 1.000 (1.000..1.000) | within noise |")));
}

#[test]
fn the_perf_section_prints_perf_s_lines_with_perf_s_definitions() {
    let (set, _) = campaign();
    let (dir, md) = rendered("perf-lines");
    // report.md's section without thread lines, each point's file with them.
    let section_of = |text: &str| -> String {
        let start = text
            .find("## As perf bench prints it")
            .expect("a perf section");
        let end = text[start..]
            .find("\n## perf c2c")
            .map_or(text.len(), |e| start + e);
        text[start..end].to_string()
    };
    let mut sections = vec![(section_of(&md), None)];
    for (p, threads) in THREADS.into_iter().enumerate() {
        let page = std::fs::read_to_string(dir.join(format!("points/point-{p}.md"))).unwrap();
        sections.push((section_of(&page), Some(threads)));
    }
    // perf's printf formats, as a perf-output parser reads them.
    let summary = regex::Regex::new(
        r"^Run summary \[PID (\d+)\]: (\d+) threads, each operating on (\d+) \[(shared|private)\] futexes for (\d+) secs\.$",
    )
    .unwrap();
    let averaged = regex::Regex::new(
        r"^Averaged (\d+) operations/sec \(\+- (\d+\.\d\d)%\), total secs = (\d+)$",
    )
    .unwrap();
    let thread = regex::Regex::new(
        r"^\[thread +(\d+)\] futexes: 0x([0-9a-f]+) \.\.\. 0x([0-9a-f]+) \[ (\d+) ops/sec \]$",
    )
    .unwrap();
    let mut blocks = 0;
    for (section, with_threads) in &sections {
        for threads in THREADS
            .into_iter()
            .filter(|t| with_threads.is_none_or(|w| w == *t))
        {
            for design in DESIGNS {
                let heading = format!("{design} at threads={threads}:");
                let at = section
                    .find(&heading)
                    .unwrap_or_else(|| panic!("no {heading}"));
                let lines: Vec<&str> = section[at..].lines().skip(3).collect();
                let c = summary
                    .captures(lines[0])
                    .unwrap_or_else(|| panic!("{lines:?}"));
                assert_eq!(c[2].parse::<u32>().unwrap(), threads);
                assert_eq!(&c[3], "1024");
                assert_eq!(lines[1], "");
                let r = records(set, threads, design)[0];
                let thread_lines = if with_threads.is_some() {
                    threads as usize
                } else {
                    0
                };
                for (i, line) in lines[2..2 + thread_lines].iter().enumerate() {
                    let c = thread
                        .captures(line)
                        .unwrap_or_else(|| panic!("thread {i}: {line}"));
                    let t = &r.perf_threads[i];
                    assert_eq!(c[1].parse::<usize>().unwrap(), i);
                    assert_eq!(u64::from_str_radix(&c[2], 16).unwrap(), t.first_futex);
                    assert_eq!(u64::from_str_radix(&c[3], 16).unwrap(), t.last_futex);
                    assert_eq!(t.last_futex - t.first_futex, 1023 * 4);
                    let rate = (t.ops as f64 / (r.sim_ns as f64 / 1e9)) as u64;
                    assert_eq!(c[4].parse::<u64>().unwrap(), rate);
                }
                let rest = &lines[2 + thread_lines + usize::from(thread_lines > 0)..];
                let c = averaged
                    .captures(rest[0])
                    .unwrap_or_else(|| panic!("{lines:?}"));
                assert_eq!(
                    c[1].parse::<u64>().unwrap(),
                    r.mean_thread_ops_per_sec as u64
                );
                // Population rsd over sqrt(n - 1) is the sample sd over sqrt(n).
                let expected = r.thread_rsd_pct / f64::from(threads - 1).sqrt();
                let shown: f64 = c[2].parse().unwrap();
                assert!((shown - expected).abs() <= 0.005, "{shown} vs {expected}");
                blocks += 1;
            }
        }
    }
    assert_eq!(blocks, 2 * THREADS.len() * DESIGNS.len());
}

#[test]
fn c2c_prints_one_run_s_tables_and_refuses_what_is_not_there() {
    let (set, _) = campaign();
    let (dir, _) = rendered("c2c-cli");
    let futexsim = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_futexsim"))
            .arg("c2c")
            .arg(&dir)
            .args(args)
            .output()
            .unwrap()
    };
    let r = records(set, 64, "fixed-256")[0];
    for point in ["1", "threads=64"] {
        let out = futexsim(&["--point", point, "--design", "fixed-256"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            report::c2c::stdio(r)
        );
    }
    // Without --design, every design at the point, each after a `#` line.
    let out = futexsim(&["--point", "0"]);
    let text = String::from_utf8(out.stdout).unwrap();
    for design in DESIGNS {
        assert!(text.contains(&format!(
            "# futexsim: design {design} at threads=16 (seed 7)"
        )));
    }
    for bad in [
        &["--point", "7"][..],
        &["--point", "threads=65"],
        &["--design", "no-such-design"],
    ] {
        let out = futexsim(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("expected"), "{err}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(["c2c", "/nonexistent/futexsim-report"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The functions that made the accesses at each offset of a line.
fn symbols_at(line: &futexsim::record::LineRecord, field: table::FieldName) -> Vec<Symbol> {
    line.offsets
        .iter()
        .filter(|o| {
            matches!(o.what, futexsim::record::Occupant::Bucket { field: Some(f), .. } if f == field)
        })
        .flat_map(|o| o.symbols.iter().map(|s| s.symbol))
        .collect()
}

#[test]
fn the_pareto_names_the_lock_s_functions_at_the_lock_word_and_the_waiter_count_s_at_waiters() {
    let (set, _) = campaign();
    let r = records(set, 64, "fixed-256")[0];
    let shared = r
        .top_lines
        .iter()
        .find(|line| report::c2c::lock_buckets(line).len() >= 2)
        .expect("fixed-256 at 64 CPUs has a line with two bucket locks");
    let at_lock = symbols_at(shared, table::FieldName::Lock);
    assert!(
        at_lock.contains(&Symbol::RawSpinLock) && at_lock.contains(&Symbol::RawSpinUnlock),
        "{at_lock:?}"
    );
    assert!(at_lock.iter().all(|s| matches!(
        s,
        Symbol::RawSpinLock | Symbol::RawSpinUnlock | Symbol::QueuedSpinLockSlowpath
    )));
    // fixed-256's buckets have no waiter count; aligned-3.14's do. perf
    // bench futex hash's wait fails at the compare: the count rises before
    // the lock and falls after it, and nothing wakes.
    let aligned = records(set, 64, "aligned-3.14")[0];
    let at_waiters: Vec<Symbol> = aligned
        .top_lines
        .iter()
        .flat_map(|line| symbols_at(line, table::FieldName::Waiters))
        .collect();
    assert!(
        at_waiters.contains(&Symbol::FutexHbWaitersInc),
        "{at_waiters:?}"
    );
    assert!(at_waiters
        .iter()
        .all(|s| matches!(s, Symbol::FutexHbWaitersInc | Symbol::FutexHbWaitersDec)));
    let md = std::fs::read_to_string(rendered("symbols").0.join("points/point-1.md")).unwrap();
    assert!(md.contains("[k] _raw_spin_lock") && md.contains("[k] futex_hb_waiters_inc"));
}

#[test]
fn every_pareto_column_sums_to_100_over_a_line_s_function_rows() {
    let (set, _) = campaign();
    for run in &set.runs {
        for line in &run.record.top_lines {
            let rows = report::c2c::pareto_rows(line);
            assert!(rows.iter().all(|r| r.symbol.is_some()));
            for o in &line.offsets {
                let of = |f: fn(&futexsim::record::AccessCounts) -> u64| {
                    o.symbols.iter().map(|s| f(&s.counts)).sum::<u64>()
                };
                assert_eq!(
                    (
                        of(|c| c.loads),
                        of(|c| c.stores),
                        of(|c| c.lcl_hitm + c.rmt_hitm)
                    ),
                    (
                        o.counts.loads,
                        o.counts.stores,
                        o.counts.lcl_hitm + o.counts.rmt_hitm
                    ),
                    "offset {:#x}: its functions' counts are its own",
                    o.offset
                );
            }
            let shares = report::c2c::pareto_shares(line);
            let sum = |f: fn(&report::c2c::ParetoShares) -> f64| shares.iter().map(f).sum::<f64>();
            for (total, column) in [
                (line.rmt_hitm, sum(|s| s.rmt_hitm)),
                (line.lcl_hitm, sum(|s| s.lcl_hitm)),
                (line.store_l1_hit, sum(|s| s.store_l1_hit)),
                (line.store_l1_miss, sum(|s| s.store_l1_miss)),
            ] {
                let expected = if total == 0 { 0.0 } else { 100.0 };
                assert!((column - expected).abs() < 1e-6, "{column} of {total}");
            }
        }
    }
}

/// The value perf prints after a summary line's label.
fn summary_value(text: &str, label: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            (name.trim() == label).then(|| value.trim().parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no line {label}"))
}

#[test]
fn perf_s_summary_tables_agree_with_the_run_and_its_shared_data_table() {
    let (set, _) = campaign();
    let r = records(set, 64, "fixed-256")[0];
    let text = report::c2c::stdio(r);
    let trace = text.find("Trace Event Information").unwrap();
    let global = text
        .find("Global Shared Cache Line Event Information")
        .unwrap();
    let table = text.find("Shared Data Cache Line Table").unwrap();
    assert!(trace < global && global < table, "perf's order");
    let c = &r.coherence;
    let (trace, global) = (&text[trace..global], &text[global..table]);
    assert_eq!(summary_value(trace, "Total records"), c.loads + c.stores);
    assert_eq!(summary_value(trace, "Load Operations"), c.loads);
    assert_eq!(summary_value(trace, "Load Local HITM"), c.lcl_hitm);
    assert_eq!(summary_value(trace, "Load Remote HITM"), c.rmt_hitm);
    assert_eq!(summary_value(trace, "Store Operations"), c.stores);
    let lines = &r.top_lines;
    let sum = |f: fn(&futexsim::record::LineRecord) -> u64| lines.iter().map(f).sum::<u64>();
    assert_eq!(
        summary_value(global, "Total Shared Cache Lines"),
        lines.len() as u64
    );
    assert_eq!(
        summary_value(global, "Load HITs on shared lines"),
        sum(|l| l.loads)
    );
    assert_eq!(
        summary_value(global, "L1D hits on shared lines"),
        sum(|l| l.load_l1_hit())
    );
    assert_eq!(
        summary_value(global, "LLC hits on shared lines"),
        sum(|l| l.lcl_hit + l.lcl_hitm)
    );
    assert_eq!(
        summary_value(global, "Store HITs on shared lines"),
        sum(|l| l.stores)
    );
    assert_eq!(
        summary_value(global, "Store L1D hits on shared lines"),
        sum(|l| l.store_l1_hit)
    );
    assert_eq!(
        summary_value(global, "Total Merged records"),
        sum(|l| l.hitm() + l.stores)
    );
    // The lines in the table are a part of the run's accesses.
    assert!(sum(|l| l.lcl_hitm) <= c.lcl_hitm && sum(|l| l.loads) <= c.loads);
}
