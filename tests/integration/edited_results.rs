//! A result set, speed log or run file edited by hand is input futexsim
//! does not trust: each is read field by field, and a value no run gives
//! (a point index of 2^64 - 1, a negative figure, a number past a float's
//! range, a matrix that does not fit its nodes) is refused in one line
//! naming the file and the field, with exit status 2, before anything is
//! sized by it or written. `report`, `c2c`, `diff` and `run` all read
//! through the same checks.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::{futexsim, perf_hash_sweep, run_sweep, Scratch};

/// Two tables over two CPU counts, twice each: 8 runs, runs[3] the
/// second repetition of the second table at 2 CPUs.
fn small_sweep() -> String {
    perf_hash_sweep(
        "duration_us = 20\nwarmup_us = 5\nrepetitions = 2",
        &["fixed-256", "private-6.17"],
        "[2, 8]",
    )
}

/// A campaign of the small sweep in `s`, and its config.
fn campaign(s: &Scratch, name: &str) -> (PathBuf, PathBuf) {
    let config = s.0.join("small.toml");
    fs::write(&config, small_sweep()).unwrap();
    let dir = s.0.join(name);
    let out = run_sweep(&config, &dir, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, config)
}

/// Every file under `dir` with its bytes (links followed), paths relative to `dir`.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                // A report's generations are reached through its links.
                if !name.starts_with(".report") {
                    todo.push(path);
                }
            } else if name != ".futexsim.lock" {
                let bytes = fs::read(&path).unwrap();
                out.push((path.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

/// results.json of `dir` with `edit` applied to its text.
fn edit_results(dir: &Path, edit: impl Fn(&str) -> String) {
    let path = dir.join("results.json");
    let text = fs::read_to_string(&path).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changes the file");
    // results.json is a link into the live report: write through it.
    fs::write(&path, edited).unwrap();
}

/// `text` with the value of the `n`th (from 0) `"key": value` replaced.
fn set_nth(text: &str, key: &str, n: usize, value: &str) -> String {
    let pattern = regex::Regex::new(&format!(r#""{key}": ?(-?[0-9.eE+-]+)"#)).unwrap();
    let found = pattern.captures_iter(text).nth(n).unwrap();
    let number = found.get(1).unwrap();
    format!(
        "{}{value}{}",
        &text[..number.start()],
        &text[number.end()..]
    )
}

/// Runs `args`, asserting the command was refused as bad input: exit
/// status 2, one line on stderr holding every one of `named`, no panic.
fn refused(args: &[&str], named: &[&str]) {
    let out = futexsim(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    for name in named {
        assert!(stderr.contains(name), "{args:?} names {name}: {stderr}");
    }
}

/// `report`, `c2c` and `diff` (either side) on the edited `dir` are each
/// refused naming its results.json and `field`, and change no file.
fn every_reader_refuses(dir: &Path, good: &Path, field: &str) {
    let before = (tree(dir), tree(good));
    let (d, g) = (dir.to_str().unwrap(), good.to_str().unwrap());
    let file = dir.join("results.json").display().to_string();
    for args in [
        &["report", d][..],
        &["c2c", d],
        &["c2c", d, "--point", "0"],
        &["diff", d, g],
        &["diff", g, d],
    ] {
        refused(args, &[&file, field]);
    }
    assert!(before == (tree(dir), tree(good)), "no file changed");
}

#[test]
fn a_results_json_with_a_point_index_of_2_pow_64_minus_1_is_refused_naming_the_field() {
    let s = Scratch::new("point-2-64");
    let (dir, _) = campaign(&s, "c");
    let (good, _) = campaign(&s, "good");
    edit_results(&dir, |t| set_nth(t, "point", 3, "18446744073709551615"));
    every_reader_refuses(&dir, &good, "runs[3].point");
}

#[test]
fn a_results_json_with_a_point_index_of_10_pow_12_is_refused_before_anything_is_sized_by_it() {
    let s = Scratch::new("point-10-12");
    let (dir, _) = campaign(&s, "c");
    let (good, _) = campaign(&s, "good");
    edit_results(&dir, |t| set_nth(t, "point", 3, "1000000000000"));
    every_reader_refuses(&dir, &good, "runs[3].point");
}

#[test]
fn a_negative_figure_in_results_json_is_refused_naming_the_field() {
    let s = Scratch::new("negative");
    let (dir, _) = campaign(&s, "c");
    let (good, _) = campaign(&s, "good");
    edit_results(&dir, |t| set_nth(t, "ops_per_sec", 3, "-5.0"));
    every_reader_refuses(&dir, &good, "runs[3].record.ops_per_sec: -5.0 is negative");
    // A count too: its type says so, and the field is named all the same.
    edit_results(&dir, |t| set_nth(t, "sim_ns", 2, "-7"));
    every_reader_refuses(&dir, &good, "runs[2].record.sim_ns");
}

#[test]
fn a_figure_past_the_range_of_a_float_is_refused_naming_the_field() {
    let s = Scratch::new("float-range");
    let (dir, _) = campaign(&s, "c");
    let (good, _) = campaign(&s, "good");
    // Read as infinity, or as no number at all: either way no figure.
    edit_results(&dir, |t| set_nth(t, "mean_thread_ops_per_sec", 5, "1e999"));
    every_reader_refuses(&dir, &good, "runs[5].record.mean_thread_ops_per_sec");
}

#[test]
fn a_node_matrix_that_does_not_fit_its_nodes_is_refused_naming_the_field() {
    let s = Scratch::new("hitm-nodes");
    let (dir, _) = campaign(&s, "c");
    let (good, _) = campaign(&s, "good");
    // Every run's matrix given another row: at 2 CPUs, icx-2s has 1 node.
    edit_results(&dir, |t| {
        let matrix = regex::Regex::new(r#""hitm_nodes": \[\s*\["#).unwrap();
        matrix
            .replace_all(t, "\"hitm_nodes\": [[7], [")
            .into_owned()
    });
    every_reader_refuses(
        &dir,
        &good,
        "runs[0].record.coherence.hitm_nodes: 2 rows, but nodes is 1",
    );
}

#[test]
fn a_negative_time_in_speed_json_is_refused_naming_the_field() {
    let s = Scratch::new("speed");
    let (dir, _) = campaign(&s, "c");
    let path = dir.join("speed.json");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, set_nth(&text, "wall_s", 1, "-0.5")).unwrap();
    let before = tree(&dir);
    let file = path.display().to_string();
    refused(
        &["report", dir.to_str().unwrap()],
        &[&file, "runs[1][1].wall_s"],
    );
    assert!(before == tree(&dir), "no file changed");
}

/// Runs `args` to its end, or fails the test after `limit`.
fn within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("{args:?} did not finish in {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_figure_near_the_largest_float_is_charted_without_drawing_an_axis_to_infinity() {
    let s = Scratch::new("huge-figure");
    let (dir, _) = campaign(&s, "c");
    // Finite, so a figure; the mean of two is not.
    edit_results(&dir, |t| {
        let figure = regex::Regex::new(r#""hitm_per_op": [0-9.eE+-]+"#).unwrap();
        figure
            .replace_all(t, "\"hitm_per_op\": 1.7e308")
            .into_owned()
    });
    let out = within(&["report", dir.to_str().unwrap()], Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(dir.join("charts").is_dir());
}

#[test]
fn run_over_a_published_report_whose_results_json_was_edited_is_refused_naming_the_field() {
    let s = Scratch::new("run-report");
    let (dir, config) = campaign(&s, "c");
    // A checkout of reports/: the report, no campaign file, no runs.
    fs::remove_file(dir.join("campaign.json")).unwrap();
    fs::remove_dir_all(dir.join("runs")).unwrap();
    let file = dir.join("results.json").display().to_string();
    for (key, n, value, field) in [
        ("point", 3, "18446744073709551615", "runs[3].point"),
        ("ops_per_sec", 3, "-5.0", "runs[3].record.ops_per_sec"),
    ] {
        let original = fs::read_to_string(dir.join("results.json")).unwrap();
        fs::write(dir.join("results.json"), set_nth(&original, key, n, value)).unwrap();
        let before = tree(&dir);
        let args = [
            "run",
            config.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
        ];
        refused(&args, &[&file, field]);
        assert!(before == tree(&dir), "no file changed");
        fs::write(dir.join("results.json"), original).unwrap();
    }
}

/// The run file `path` with `edit` applied to its body and its checksum
/// made anew, as a careful hand would.
fn edit_run_file(path: &Path, edit: impl Fn(&str) -> String) {
    const KEY: &str = ",\"checksum\":\"";
    let text = fs::read_to_string(path).unwrap();
    let (body, _) = text.rsplit_once(KEY).unwrap();
    let body = edit(body);
    let (c, b) = futexsim::hash::lookup3::hashlittle2(body.as_bytes(), 0, 0);
    let sum = format!("{:016x}", (u64::from(c) << 32) | u64::from(b));
    fs::write(path, format!("{body}{KEY}{sum}\"}}")).unwrap();
}

#[test]
fn a_run_file_edited_with_its_checksum_made_anew_is_simulated_again_naming_the_field() {
    let s = Scratch::new("run-file");
    let (dir, config) = campaign(&s, "c");
    let results = fs::read(dir.join("results.json")).unwrap();
    let mut files: Vec<PathBuf> = fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    edit_run_file(&files[0], |t| set_nth(t, "ops_per_sec", 0, "-5.0"));
    edit_run_file(&files[1], |t| {
        set_nth(t, "mean_thread_ops_per_sec", 0, "1e999")
    });
    fs::remove_file(dir.join("results.json")).unwrap();
    let out = run_sweep(&config, &dir, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for (file, field) in [
        (&files[0], "record.ops_per_sec: -5.0 is negative"),
        (&files[1], "record.mean_thread_ops_per_sec"),
    ] {
        let name = file.display().to_string();
        assert!(
            stderr.lines().any(|l| l.contains("warning")
                && l.contains(&name)
                && l.contains(field)
                && l.contains("simulating it again")),
            "{name}: {stderr}"
        );
    }
    assert!(stderr.contains("2 runs simulated now"), "{stderr}");
    // Simulated again, the set is the one the untouched files gave.
    assert_eq!(fs::read(dir.join("results.json")).unwrap(), results);
}
