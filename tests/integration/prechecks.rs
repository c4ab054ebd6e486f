//! Everything a command can check is checked before its first run: a sweep
//! too large for its run count, a design name (a config's or a `--rule`'s)
//! that would break a file name or a table, a validation case reading a
//! figure no run has, an --out that is not a directory. Each is refused at
//! once, with exit 2 and the place to fix, and nothing is simulated or
//! written; a value echoed in the error is cut short. `machine import`
//! places every mistake in the file it read, and warns of figures in an
//! order no machine has.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::{perf_hash_sweep, Scratch};

/// Runs the futexsim binary with `args`, failing the test if it has not
/// ended within `limit`: a refusal that comes only after simulating is as
/// good as none. Its output goes to files, which never fill up as a pipe
/// does while nobody reads it.
fn within(limit: Duration, args: &[&str]) -> Output {
    let s =
        Scratch::new(&format!("within-{:?}", std::thread::current().id()).replace(['(', ')'], ""));
    let (out, err) = (s.0.join("stdout"), s.0.join("stderr"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(args)
        .stdout(Stdio::from(fs::File::create(&out).unwrap()))
        .stderr(Stdio::from(fs::File::create(&err).unwrap()))
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("futexsim {:?} had not ended after {limit:?}", &args[..2]);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: fs::read(&out).unwrap(),
        stderr: fs::read(&err).unwrap(),
    }
}

/// Exit 2, one line on stderr, nothing on stdout: the stderr.
fn refused(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(output.stdout.is_empty(), "{stderr}");
    stderr
}

/// The small campaign these tests start from: one design, two CPU counts.
fn small() -> String {
    perf_hash_sweep("duration_us = 20\nwarmup_us = 5", &["fixed-256"], "[2, 4]")
}

const SECONDS: Duration = Duration::from_secs(5);

#[test]
fn a_sweep_of_a_million_points_is_refused_by_its_run_count_before_any_point_is_resolved() {
    let values = |n: usize| {
        let v: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
        format!("[{}]", v.join(", "))
    };
    let text = format!(
        "[run]\nduration_us = 20\nrepetitions = 1\nmax_points = 1000000\n\n[machine]\npreset = \"uv-4096\"\n\n\
         [workload]\nname = \"perf-hash\"\n\n[[table]]\npreset = \"fixed-256\"\n\n\
         [sweep]\nfutexes = {}\n\"run.seed\" = {}\n",
        values(1000),
        values(1000)
    );
    let (s, config) = Scratch::holding("million", "million.toml", &text);
    let out = s.0.join("c");
    let started = Instant::now();
    let result = within(
        Duration::from_secs(30),
        &[
            "run",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let stderr = refused(&result);
    assert!(started.elapsed() < SECONDS, "{:?}", started.elapsed());
    assert!(
        stderr.contains(&format!("{}:", config.display()))
            && stderr.contains("1000000 runs")
            && stderr.contains("points x designs x repetitions"),
        "{stderr}"
    );
    assert!(!out.exists(), "a refused sweep writes nothing");
}

#[test]
fn a_rule_too_long_for_a_chart_file_name_is_refused_before_any_run() {
    let (s, config) = Scratch::holding("long-rule", "small.toml", &small());
    let out = s.0.join("c");
    // 244 characters: the design `fixed-256 slots=<rule>` and its chart
    // file `bucket_load-<design>.svg` are over 255 bytes.
    let rule = format!("64{}", " + 0".repeat(60));
    let result = within(
        SECONDS,
        &[
            "run",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--rule",
            &rule,
        ],
    );
    let stderr = refused(&result);
    assert!(
        stderr.contains("--rule:1:1:") && stderr.contains("too long for a chart's file name"),
        "{stderr}"
    );
    assert!(!out.exists(), "a refused rule writes nothing");
}

#[test]
fn a_rule_holding_a_newline_is_refused_as_a_config_refuses_the_design_name() {
    let (s, config) = Scratch::holding("newline-rule", "small.toml", &small());
    let out = s.0.join("c");
    let result = within(
        SECONDS,
        &[
            "run",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--rule",
            "64\n* 2",
        ],
    );
    let stderr = refused(&result);
    // The newline is the rule's third character.
    assert!(
        stderr.contains("--rule:1:3:") && stderr.contains("holds a control character"),
        "{stderr}"
    );
    assert!(!out.exists(), "a refused rule writes nothing");
}

#[test]
fn a_rule_of_100_kb_is_echoed_in_about_100_characters() {
    let (s, config) = Scratch::holding("huge-rule", "small.toml", &small());
    let out = s.0.join("c");
    let rule = "1 + ".repeat(25_000) + "1";
    let result = within(
        SECONDS,
        &[
            "run",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--rule",
            &rule,
        ],
    );
    let stderr = refused(&result);
    assert!(stderr.len() < 400, "{} bytes: {stderr}", stderr.len());
    assert!(
        stderr.contains("--rule:1:") && stderr.contains("1 + 1 + 1") && stderr.contains('…'),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// A cases file of one closed-form case on balls-into-bins.toml reading `metric`.
fn cases_reading(s: &Scratch, metric: &str) -> std::path::PathBuf {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/balls-into-bins.toml");
    let text = format!(
        "[[case]]\nname = \"a figure\"\nconfig = \"{}\"\nkind = \"closed-form\"\n\
         metric = \"{metric}\"\n\
         numerator = {{ design = \"global\", at = {{ \"table.global.slots\" = \"1024\" }} }}\n\
         published = 1.0\nsource = \"s\"\n",
        config.display()
    );
    let path = s.0.join("cases.toml");
    fs::write(&path, text).unwrap();
    path
}

#[test]
fn validate_refuses_a_metric_no_run_has_before_simulating() {
    let s = Scratch::new("unknown-metric");
    let out = s.0.join("v");
    for (metric, says) in [
        (
            "load.colliding_pair",
            "'load.colliding_pair' is not a numeric field",
        ),
        ("extra.solve time", "reports no figure 'solve time'"),
    ] {
        let cases = cases_reading(&s, metric);
        let result = within(
            SECONDS,
            &[
                "validate",
                "--cases",
                cases.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        let stderr = refused(&result);
        // The metric is on the file's fifth line, its value at column 10.
        assert!(
            stderr.contains(&format!("{}:5:10:", cases.display())) && stderr.contains(says),
            "{stderr}"
        );
        assert!(!out.exists(), "nothing is written");
    }
}

#[test]
fn an_out_that_is_a_file_is_refused_with_exit_2_before_anything_runs() {
    let (s, config) = Scratch::holding("out-file", "small.toml", &small());
    let file = s.0.join("a-file");
    fs::write(&file, "mine").unwrap();
    for out in [file.clone(), file.join("below")] {
        let result = within(
            SECONDS,
            &[
                "run",
                config.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        let stderr = refused(&result);
        assert!(
            stderr.contains(&format!("--out {}", out.display()))
                && stderr.contains("is a file, not a directory"),
            "{stderr}"
        );
    }
    let cases = cases_reading(&s, "load.colliding_pairs");
    let result = within(
        SECONDS,
        &[
            "validate",
            "--cases",
            cases.to_str().unwrap(),
            "--out",
            file.to_str().unwrap(),
        ],
    );
    let stderr = refused(&result);
    assert!(stderr.contains("is a file, not a directory"), "{stderr}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "mine");
}

const MLC: &str = "Intel(R) Memory Latency Checker - v3.9\n\
Command line parameters: --c2c_latency \n\
\n\
Measuring cache-to-cache transfer latency (in ns)...\n\
Local Socket L2->L2 HIT  latency\t51.6\n\
Local Socket L2->L2 HITM latency\t51.7\n";

const IDLE: &str = "Intel(R) Memory Latency Checker - v3.9\n\
Command line parameters: --latency_matrix \n\
\n\
Using buffer size of 2000.000MiB\n\
Measuring idle latencies (in ns)...\n\
\t\tNuma node\n\
Numa node\t     0\t     1\t\n\
       0\t  77.9\t 143.2\t\n\
       1\t 144.4\t  78.4\t\n";

/// `machine import FILE --base clx-2s --out box.toml` of `text`.
fn import(s: &Scratch, name: &str, text: &str) -> Output {
    let input = s.0.join(name);
    fs::write(&input, text).unwrap();
    let out = s.0.join("box.toml");
    within(
        SECONDS,
        &[
            "machine",
            "import",
            input.to_str().unwrap(),
            "--base",
            "clx-2s",
            "--out",
            out.to_str().unwrap(),
        ],
    )
}

#[test]
fn machine_import_places_a_latency_of_zero_or_less_in_the_file_it_read() {
    let s = Scratch::new("import-zero");
    for (name, text, place) in [
        ("hitm.txt", MLC.replace("51.7", "-5.0"), "hitm.txt:6:34:"),
        (
            "idle.txt",
            IDLE.replace("  77.9", "   0.0"),
            "idle.txt:8:6:",
        ),
    ] {
        let stderr = refused(&import(&s, name, &text));
        assert!(
            stderr.contains(place) && stderr.contains("a latency in ns above 0"),
            "{stderr}"
        );
        assert!(!stderr.contains("box.toml"), "{stderr}");
        assert!(!s.0.join("box.toml").exists(), "no profile is written");
    }
}

#[test]
fn machine_import_blames_the_files_it_read_for_figures_that_make_no_machine() {
    let s = Scratch::new("import-floor");
    // An LLC transfer of 0.1 ns, faster than the base's L1 hit.
    let stderr = refused(&import(&s, "fast.txt", &MLC.replace("51.7", "0.1")));
    assert!(
        stderr.contains("fast.txt") && stderr.contains("latency.llc = 0.1"),
        "{stderr}"
    );
    assert!(!stderr.contains("box.toml"), "{stderr}");
    assert!(!s.0.join("box.toml").exists(), "no profile is written");
}

#[test]
fn machine_import_warns_when_smt_siblings_come_out_slower_than_the_llc() {
    let s = Scratch::new("import-siblings");
    // The shipped matrix, its CPUs renumbered with each core's two threads
    // side by side (CPU c and c + 32 become 2c and 2c + 1), as some tools
    // and other systems number them.
    let linux = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/machine_import/c2c-2s-32c-ccx8-smt2.csv"),
    )
    .unwrap();
    let rows: Vec<Vec<&str>> = linux.lines().map(|l| l.split(',').collect()).collect();
    let cpus = rows.len();
    let new_id = |c: usize| {
        if c < cpus / 2 {
            2 * c
        } else {
            2 * (c - cpus / 2) + 1
        }
    };
    let mut grid = vec![vec![String::new(); cpus]; cpus];
    for (i, row) in rows.iter().enumerate() {
        for (j, cell) in row.iter().enumerate() {
            if !cell.is_empty() {
                let (a, b) = (new_id(i), new_id(j));
                grid[a.max(b)][a.min(b)] = cell.to_string();
            }
        }
    }
    let text: String = grid.iter().map(|r| r.join(",") + "\n").collect();
    let input = s.0.join("adjacent.csv");
    fs::write(&input, text).unwrap();
    let out = s.0.join("box.toml");
    let result = within(
        SECONDS,
        &[
            "machine",
            "import",
            input.to_str().unwrap(),
            "--sockets",
            "2",
            "--threads-per-core",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning")
            && stderr.contains("adjacent.csv")
            && stderr.contains("SMT siblings")
            && stderr.contains("slower than")
            && stderr.contains("as Linux numbers them"),
        "{stderr}"
    );
    assert!(out.exists());
}

#[test]
fn a_machine_of_zero_latencies_and_costs_is_refused_with_the_floor_it_breaks() {
    let zero = "topology.nr_cpus = 2\n\
        latency = { l1_hit = 0.0, smt = 0.0, llc = 0.0, node = 0.0, remote = [[0.0, 0.0], [0.0, 0.0]], \
        dram_local = 0.0, rmw = 0.0 }\n\
        kernel = { syscall = 0.0, futex_key_private = 0.0, futex_key_shared = 0.0, jhash2 = 0.0, \
        schedule = 0.0 }\n";
    let text = small().replace(
        "preset = \"icx-2s\"\n",
        &format!("preset = \"icx-2s\"\n{zero}"),
    );
    let (s, config) = Scratch::holding("zero-costs", "zero.toml", &text);
    let out = s.0.join("c");
    let result = within(
        SECONDS,
        &[
            "run",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let stderr = refused(&result);
    assert!(
        stderr.contains(&format!("{}:", config.display()))
            && stderr.contains("latency.l1_hit = 0")
            && stderr.contains("0.2 ns"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// What a case may read as `extra.<name>` is known before any run: each
/// workload's declared figures hold every figure its runs report.
#[test]
fn every_figure_a_run_reports_is_one_its_workload_declares() {
    let workloads = [
        "name = \"perf-wake\"",
        "name = \"perf-wake-parallel\"",
        "name = \"perf-requeue\"",
        "name = \"perf-lock-pi\"",
        "name = \"schbench\"",
        "name = \"fea-solver\"\nprocesses = 2\nthreads_per_process = 2\nsteps = 2",
        "name = \"time-exit\"",
        "name = \"program\"\nthreads = 2\nsteps = [{ op = \"compute\", ns = 50 }]\niterations = 3",
    ];
    for workload in workloads {
        let text = format!(
            "[run]\nduration_us = 200\nwarmup_us = 0\n\n[machine]\npreset = \"icx-2s\"\n\
             topology.nr_cpus = 8\n\n[workload]\n{workload}\n\n[[table]]\npreset = \"fixed-256\"\n"
        );
        let config = futexsim::config::Config::parse("figures.toml", "figures", &text, &[])
            .unwrap_or_else(|e| panic!("{workload}: {e}"));
        let run = &config.runs()[0];
        let declared = run.scenario.workload.workload().figures();
        let (record, _) = run.scenario.simulate().unwrap();
        assert!(!record.extra.is_empty(), "{workload}: no figures to check");
        for figure in &record.extra {
            assert!(
                declared.contains(&figure.name),
                "{workload}: '{}' is not among {declared:?}",
                figure.name
            );
        }
    }
}
