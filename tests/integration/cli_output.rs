//! What futexsim prints for people and scripts: `diff` lists only the
//! changes, with a verdict per figure, what one side lacks and a summary
//! line, and fails on a regression when asked; `run --json` over several
//! configs is one JSON document; `run` without --out writes under out/.

use std::fs;
use std::path::Path;
use std::process::Output;

use crate::common;

use common::{futexsim, Scratch};

fn config(designs: &[&str], cpus: &str) -> String {
    let tables: String = designs
        .iter()
        .map(|d| format!("[[table]]\npreset = \"{d}\"\n\n"))
        .collect();
    format!(
        "[run]\nduration_us = 20\nwarmup_us = 5\nrepetitions = 2\n\n[machine]\npreset = \"icx-2s\"\n\n\
         [workload]\nname = \"perf-hash\"\nfutexes = 32\n\n{tables}[sweep]\ncpus = {cpus}\n"
    )
}

/// Runs `config` as `name`.toml into `dir`/`name`; the directory.
fn campaign(scratch: &Scratch, name: &str, config: &str) -> String {
    run_printing(scratch, name, config);
    scratch.0.join(name).to_str().unwrap().to_string()
}

/// Runs `config` as `name`.toml into `dir`/`name`, which must succeed;
/// what it printed.
fn run_printing(scratch: &Scratch, name: &str, config: &str) -> Output {
    let path = scratch.0.join(format!("{name}.toml"));
    fs::write(&path, config).unwrap();
    let out = scratch.0.join(name);
    let run = futexsim(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    run
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn diff_of_identical_sets_lists_nothing_and_says_so() {
    let s = Scratch::new("diff-same");
    let a = campaign(&s, "a", &config(&["fixed-256", "aligned-3.14"], "[2, 8]"));
    let out = futexsim(&["diff", &a, &a, "--fail-on-regression"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout_of(&out);
    assert!(!text.contains("| cpus="), "{text}");
    assert!(
        text.contains("No figure changed beyond the noise."),
        "{text}"
    );
    // The test is stated with its two parameters, and the ratio named.
    assert!(
        text.contains("significance level 5%, noise threshold 2%"),
        "{text}"
    );
    assert!(
        text.contains("the paired ratio, the mean of per-seed ratios"),
        "{text}"
    );
    // 2 points x 2 designs x 5 figures, all within noise.
    assert!(
        text.contains("summary: 20 figures of 4 (point, design) pairs: 0 improved, 0 regressed, 20 within noise, 0 not judged\n"),
        "{text}"
    );
    // --all lists them, integers as integers with thousands grouped.
    let all = stdout_of(&futexsim(&["diff", &a, &a, "--all"]));
    let rows: Vec<&str> = all.lines().filter(|l| l.starts_with("| cpus=")).collect();
    assert_eq!(rows.len(), 20, "{all}");
    assert!(rows
        .iter()
        .all(|r| r.ends_with("| 1.000 (1.000..1.000) | within noise |")));
    assert!(
        !all.contains(".000 |"),
        "no integer printed with decimals: {all}"
    );
}

/// `diff --json`: one document, every compared figure with both sides'
/// intervals, the paired ratio's, and a verdict that agrees with the
/// printed range and the stated test.
#[test]
fn diff_json_gives_each_cell_its_interval_and_a_verdict_that_matches_it() {
    let s = Scratch::new("diff-json");
    let fast = campaign(&s, "fast", &config(&["aligned-3.14"], "[8, 32]"));
    let slow_config = config(&["fixed-256"], "[8, 32]").replace(
        "preset = \"fixed-256\"",
        "preset = \"fixed-256\"\nname = \"aligned-3.14\"",
    );
    let slow = campaign(&s, "slow", &slow_config);
    let out = futexsim(&["diff", &fast, &slow, "--json", "--noise-threshold", "0.05"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["schema"], "futexsim-diff/1");
    assert_eq!(doc["test"]["noise_threshold"], 0.05);
    assert_eq!(doc["test"]["significance_level"], 0.05);
    assert_eq!(doc["test"]["confidence"], 0.95);
    let cells = doc["cells"].as_array().unwrap();
    assert!(!cells.is_empty());
    for cell in cells {
        let ratio = &cell["ratio"];
        let (low, high) = (
            ratio["low"].as_f64().unwrap(),
            ratio["high"].as_f64().unwrap(),
        );
        assert!(low <= ratio["mean"].as_f64().unwrap() && ratio["mean"].as_f64().unwrap() <= high);
        assert_eq!(cell["a"]["repetitions"], 2);
        let beyond = low > 1.05 || high < 0.95;
        let verdict = cell["verdict"].as_str().unwrap();
        match verdict {
            "improved" | "regressed" => assert!(beyond, "{cell}"),
            "within_noise" => assert!(!beyond, "{cell}"),
            "bimodal" => assert_eq!(ratio["bimodal"], true, "{cell}"),
            other => panic!("verdict {other}: {cell}"),
        }
    }
    let summary = &doc["summary"];
    assert_eq!(summary["pairs"], 2);
    assert_eq!(summary["figures"].as_u64().unwrap(), cells.len() as u64);
    // A significance level outside (0, 1) is bad input.
    let bad = futexsim(&["diff", &fast, &slow, "--significance-level", "1.5"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// `diff --pair A=B`: design A of one set against design B of another (or
/// of the same set), and a `--rule` candidate against the baseline, whose
/// name holds an `=` of its own.
#[test]
fn diff_pair_compares_designs_of_different_names_and_a_rule_against_the_baseline() {
    let s = Scratch::new("diff-pair");
    let a = campaign(&s, "a", &config(&["aligned-3.14", "fixed-256"], "[8, 32]"));
    let out = futexsim(&["diff", &a, "--pair", "aligned-3.14=fixed-256", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["schema"], "futexsim-diff/1");
    assert_eq!(
        doc["pairs"],
        serde_json::json!([{ "a": "aligned-3.14", "b": "fixed-256" }])
    );
    assert_eq!(doc["summary"]["pairs"], 2);
    assert_eq!(doc["one_side_only"], serde_json::json!([]));
    let cells = doc["cells"].as_array().unwrap();
    assert!(cells
        .iter()
        .all(|c| c["design"] == "aligned-3.14" && c["b_design"] == "fixed-256"));
    // fixed-256's packed buckets lose ops/s per thread against aligned ones.
    assert!(
        cells
            .iter()
            .any(|c| c["figure"] == "ops/s/thread" && c["verdict"] == "regressed"),
        "{doc}"
    );
    let text = stdout_of(&futexsim(&[
        "diff",
        &a,
        &a,
        "--pair",
        "aligned-3.14=fixed-256",
        "--all",
    ]));
    assert!(
        text.lines()
            .any(|l| l.starts_with("| cpus=8 | aligned-3.14 → fixed-256 | ops/s/thread |")),
        "{text}"
    );
    // Without --pair, designs of one name are compared, as before.
    let by_name: serde_json::Value =
        serde_json::from_slice(&futexsim(&["diff", &a, &a, "--json"]).stdout).unwrap();
    assert_eq!(by_name["pairs"], serde_json::json!([]));
    assert_eq!(by_name["summary"]["pairs"], 4);

    // A rule beside the baseline, held against it within its own set.
    let path = s.0.join("rule.toml");
    fs::write(&path, config(&["fixed-256"], "[8, 32]")).unwrap();
    let ruled = s.0.join("rule");
    let run = futexsim(&[
        "run",
        path.to_str().unwrap(),
        "--rule",
        "roundup_pow_of_two(4 * threads)",
        "--out",
        ruled.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let ruled = ruled.to_str().unwrap();
    let pair = "fixed-256=fixed-256 slots=roundup_pow_of_two(4 * threads)";
    let out = futexsim(&["diff", ruled, "--pair", pair, "--all"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout_of(&out);
    assert!(
        text.contains(
            "| fixed-256 → fixed-256 slots=roundup_pow_of_two(4 * threads) | ops/s/thread |"
        ),
        "{text}"
    );
    assert!(text.contains(" of 2 (point, design) pairs"), "{text}");

    // A pair that names no design on a side, or no B and no pair, is bad input.
    let bad = futexsim(&["diff", &a, "--pair", "aligned-3.14=nothing"]);
    assert_eq!(bad.status.code(), Some(2));
    let why = String::from_utf8_lossy(&bad.stderr);
    assert!(
        why.contains("A's designs: aligned-3.14, fixed-256; B's designs: aligned-3.14, fixed-256"),
        "{why}"
    );
    assert_eq!(futexsim(&["diff", &a]).status.code(), Some(2));
}

#[test]
fn diff_names_regressions_and_what_one_side_lacks() {
    let s = Scratch::new("diff-changes");
    // B drops a design, adds one, and adds a point.
    let a = campaign(
        &s,
        "a",
        &config(&["aligned-3.14", "private-6.17"], "[2, 8]"),
    );
    let b = campaign(
        &s,
        "b",
        &config(&["aligned-3.14", "fixed-256"], "[2, 8, 32]"),
    );
    let out = futexsim(&["diff", &a, &b]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout_of(&out);
    assert!(text.contains("only in A: design private-6.17"), "{text}");
    assert!(text.contains("only in B: design fixed-256"), "{text}");
    assert!(text.contains("only in B: point cpus=32"), "{text}");
    assert!(text.contains("; 3 present on one side only"), "{text}");

    // The same design name at the same points, B's table slower: fixed-256
    // under aligned-3.14's name.
    let fast = config(&["aligned-3.14"], "[8, 32]");
    let slow = config(&["fixed-256"], "[8, 32]").replace(
        "preset = \"fixed-256\"",
        "preset = \"fixed-256\"\nname = \"aligned-3.14\"",
    );
    let fast = campaign(&s, "fast", &fast);
    let slow = campaign(&s, "slow", &slow);
    let out = futexsim(&["diff", &fast, &slow, "--fail-on-regression"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout_of(&out));
    let text = stdout_of(&out);
    assert!(
        text.lines()
            .any(|l| l.contains("| ops/s/thread |") && l.ends_with("| regressed |")),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("regressed beyond the noise"));
    // The other way round it improved, and no regression fails it.
    let back = futexsim(&["diff", &slow, &fast, "--fail-on-regression"]);
    let back_text = stdout_of(&back);
    assert!(
        back_text
            .lines()
            .any(|l| l.contains("| ops/s/thread |") && l.ends_with("| improved |")),
        "{back_text}"
    );
}

#[test]
fn run_json_over_several_configs_is_one_array() {
    let s = Scratch::new("json-many");
    let (one, two) = (s.0.join("one.toml"), s.0.join("two.toml"));
    fs::write(&one, config(&["fixed-256"], "[2]")).unwrap();
    fs::write(&two, config(&["aligned-3.14"], "[2, 8]")).unwrap();
    let args = |configs: &[&Path], out: &Path| {
        let mut args: Vec<String> = vec!["run".into()];
        args.extend(configs.iter().map(|c| c.to_str().unwrap().to_string()));
        args.extend([
            "--out".into(),
            out.to_str().unwrap().into(),
            "--json".into(),
        ]);
        args
    };
    // Several configs share a root, one subdirectory each.
    let both = args(&[&one, &two], &s.0.join("root"));
    let run = futexsim(&both.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).expect("one JSON document");
    let sets = doc.as_array().expect("an array");
    let names: Vec<&str> = sets
        .iter()
        .map(|s| s["provenance"]["config_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["one", "two"]);
    // One config: the result set itself.
    let single = args(&[&one], &s.0.join("one-campaign"));
    let run = futexsim(&single.iter().map(String::as_str).collect::<Vec<_>>());
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).expect("one JSON document");
    assert_eq!(doc["provenance"]["config_name"], "one");
}

#[test]
fn run_without_out_writes_under_out_and_reports_this_process_s_speed() {
    let s = Scratch::new("default-out");
    fs::write(s.0.join("mine.toml"), config(&["fixed-256"], "[2]")).unwrap();
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_futexsim"))
            .args(["run", "mine.toml"])
            .current_dir(&s.0)
            .output()
            .unwrap()
    };
    let first = run();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(s.0.join("out/mine/results.json").is_file());
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(
        stderr.contains("2 runs simulated now, 2 in all"),
        "{stderr}"
    );
    assert!(stderr.contains("in this process"), "{stderr}");
    // Again: nothing simulated, so no speed claimed.
    let again = run();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("0 runs simulated now"), "{stderr}");
    assert!(!stderr.contains("events/s"), "{stderr}");
}

/// A baseline that completes no op in the window has no ratio to give:
/// the table says so instead of printing NaN or inf.
#[test]
fn run_gives_no_ratio_against_a_baseline_without_ops() {
    let s = Scratch::new("no-ops");
    let config = "[run]\nduration_us = 20\nwarmup_us = 5\n\n[machine]\npreset = \"icx-2s\"\n\n\
        [workload]\nname = \"program\"\nthreads = 2\nsteps = [{ op = \"compute\", ns = 1000000 }]\n\n\
        [[table]]\npreset = \"fixed-256\"\n\n[[table]]\npreset = \"aligned-3.14\"\n";
    let printed = stdout_of(&run_printing(&s, "idle", config));
    assert!(printed.contains("0 (-)"), "{printed}");
    assert!(
        !printed.contains("NaN") && !printed.contains("inf"),
        "{printed}"
    );
}
