//! The validation suite end to end: a case's prediction is read from the
//! named run and judged by its kind's tolerance; a model case must say what
//! was measured; the suite compiled into the binary is the one in the tree;
//! and `futexsim validate` runs from any directory, writes its report and
//! fails when a case fails unless told not to.

use futexsim::validate::case::{metric, CaseProblem};
use futexsim::validate::coverage::Coverage;
use futexsim::validate::verdict::Judged;
use futexsim::validate::{self, suite};
use std::path::{Path, PathBuf};
use std::process::Command;

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("futexsim-validate-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn config_path(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("configs")
        .join(name)
        .display()
        .to_string()
}

/// A cases file of one case, `body` after its name and config.
fn cases_file(dir: &Path, tag: &str, config: &str, body: &str) -> PathBuf {
    let path = dir.join(format!("cases-{tag}.toml"));
    std::fs::write(
        &path,
        format!(
            "[[case]]\nname = \"{tag}\"\nconfig = \"{}\"\n{body}source = \"s\"\n",
            config_path(config)
        ),
    )
    .unwrap();
    path
}

fn colliding_pairs(published: f64) -> String {
    format!(
        "kind = \"closed-form\"\nmetric = \"load.colliding_pairs\"\n\
         numerator = {{ design = \"global\", at = {{ \"table.global.slots\" = \"1024\" }} }}\n\
         published = {published}\n"
    )
}

#[test]
fn a_case_reads_its_run_and_is_judged_by_the_tolerance() {
    let dir = temp_dir("judged");
    let expected = 1024.0 * 1023.0 / 2.0 / 1024.0;
    for (published, passes) in [(expected, true), (expected * 3.0, false)] {
        let path = cases_file(
            &dir,
            &format!("{published}"),
            "balls-into-bins.toml",
            &colliding_pairs(published),
        );
        let (cases, configs) = validate::load(&path).unwrap();
        let config = configs.values().next().unwrap();
        let point = config
            .points
            .iter()
            .position(|p| p.axis_values == ["1024"])
            .unwrap();
        // The case reads the mean over the point's repetitions.
        let each: Vec<f64> = config
            .runs()
            .into_iter()
            .filter(|r| r.point == point)
            .map(|r| metric(&r.scenario.simulate().unwrap().0, "load.colliding_pairs").unwrap())
            .collect();
        let direct = each.iter().sum::<f64>() / each.len() as f64;
        let outcomes = validate::run(cases, &configs, 1, validate::Intervals::Seed).unwrap();
        assert_eq!(outcomes[0].judged, Judged::ClosedForm);
        assert_eq!(outcomes[0].predicted.figure, direct);
        assert_eq!(
            outcomes[0].verdict.passed(),
            passes,
            "published {published}"
        );
        assert_eq!(
            outcomes[0].error,
            (direct / published).max(published / direct)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_selector_naming_no_axis_value_is_an_error_before_anything_runs() {
    let dir = temp_dir("bad-axis");
    let body = colliding_pairs(1.0).replace("\"1024\" }", "\"1000\" }");
    let path = cases_file(&dir, "bad-axis", "balls-into-bins.toml", &body);
    let err = validate::load(&path).unwrap_err().to_string();
    // At the numerator, the sixth line of the file.
    assert!(
        err.starts_with(&format!("{}:6:", path.display()))
            && err.contains("selects 0 sweep points"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

const SYNC_RATIO: &str = "metric = \"mean_thread_ops_per_sec\"\n\
    numerator = { design = \"ticket\", at = { threads = \"2\" } }\n\
    denominator = { design = \"qspinlock\", at = { threads = \"2\" } }\n\
    published = 0.9\n";
const SYNC_BINDING: &str = "machine = \"x86-vm-48c96t\"\n\
    kernel = { ticket = \"t\", qspinlock = \"q\" }\n\
    command = \"perf bench sync\"\n";

#[test]
fn a_model_case_must_say_what_was_measured() {
    let dir = temp_dir("binding");
    let full = format!("{SYNC_RATIO}{SYNC_BINDING}");
    let path = cases_file(&dir, "full", "perf-bench-sync-vm.toml", &full);
    assert!(validate::load(&path).is_ok());
    for (tag, body, complaint) in [
        (
            "no-machine",
            full.replace("machine = \"x86-vm-48c96t\"\n", ""),
            "names its machine profile",
        ),
        (
            "wrong-machine",
            full.replace("x86-vm-48c96t", "icx-2s"),
            "runs on 'x86-vm-48c96t'",
        ),
        (
            "no-command",
            full.replace("command = \"perf bench sync\"\n", ""),
            "command line",
        ),
        (
            "no-kernel",
            full.replace(", qspinlock = \"q\"", ""),
            "no kernel state for design 'qspinlock'",
        ),
        (
            "stray-kernel",
            full.replace("qspinlock = \"q\"", "qspinlock = \"q\", global = \"g\""),
            "a design it does not read",
        ),
        (
            "ratio-unit",
            full.replace("published = 0.9\n", "published = 0.9\nunit = \"ns\"\n"),
            "a ratio has no unit",
        ),
        (
            "absolute-no-unit",
            full.replace(
                "denominator = { design = \"qspinlock\", at = { threads = \"2\" } }\n",
                "",
            )
            .replace(", qspinlock = \"q\"", ""),
            "needs its unit",
        ),
        (
            "noise-not-a-share",
            full.replace("published = 0.9\n", "published = 0.9\nnoise = 4.2\n"),
            "noise = 4.2 is not a share",
        ),
        (
            "noise-on-an-absolute",
            full.replace(
                "denominator = { design = \"qspinlock\", at = { threads = \"2\" } }\n",
                "",
            )
            .replace(", qspinlock = \"q\"", "")
            .replace(
                "published = 0.9\n",
                "published = 0.9\nunit = \"ops/s\"\nnoise = 0.01\n",
            ),
            "the published noise of a change",
        ),
    ] {
        let path = cases_file(&dir, tag, "perf-bench-sync-vm.toml", &body);
        let err = validate::load(&path).unwrap_err().to_string();
        assert!(err.contains(complaint), "{tag}: {err}");
        assert!(err.contains(&format!("case '{tag}'")), "{tag}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ns_per_op_turns_a_rate_into_the_time_per_op_and_keeps_the_effect() {
    let dir = temp_dir("ns");
    // One seed: the paired ratio of times is then exactly the inverse of
    // the paired ratio of rates.
    let one_seed = dir.join("perf-bench-sync-one-seed.toml");
    let text = std::fs::read_to_string(config_path("perf-bench-sync-vm.toml")).unwrap();
    std::fs::write(
        &one_seed,
        text.replacen("[run]\n", "[run]\nrepetitions = 1\n", 1),
    )
    .unwrap();
    let rate = format!("{SYNC_RATIO}{SYNC_BINDING}");
    let time = rate.replace("metric = ", "ns_per_op = true\nmetric = ");
    let read = |tag: &str, config: &str, body: &str| {
        let path = cases_file(&dir, tag, config, body);
        let (cases, configs) = validate::load(&path).unwrap();
        validate::run(cases, &configs, 1, validate::Intervals::Seed)
            .unwrap()
            .remove(0)
    };
    let config = one_seed.to_str().unwrap();
    let (rate1, time1) = (read("rate", config, &rate), read("time", config, &time));
    assert_eq!(rate1.judged, Judged::Ratio);
    let rel = |a: f64, b: f64| ((a - b) / b).abs();
    assert!(rel(time1.predicted.figure, 1.0 / rate1.predicted.figure) < 1e-12);
    assert!(rel(time1.predicted.numerator, 1e9 / rate1.predicted.numerator) < 1e-12);
    // Either way the change saves or adds the same share of each op's time.
    let (rate1, time1) = (rate1.change.unwrap(), time1.change.unwrap());
    assert!(
        rel(rate1.predicted, time1.predicted) < 1e-9,
        "{rate1:?} {time1:?}"
    );
    assert!(rel(rate1.predicted_ns.unwrap(), time1.predicted_ns.unwrap()) < 1e-9);
    // Over several seeds each is the mean of its own per-seed ratios, and
    // the mean of x times the mean of 1/x is at least 1 (Cauchy-Schwarz):
    // equal only where every seed gives the same ratio.
    let config = "perf-bench-sync-vm.toml";
    let (rate, time) = (read("rates", config, &rate), read("times", config, &time));
    assert!(rate.predicted.figure * time.predicted.figure >= 1.0 - 1e-12);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_embedded_suite_is_the_tree_and_every_embedded_config_is_used() {
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join(validate::SUITE);
    assert_eq!(std::fs::read_to_string(&tree).unwrap(), suite::CASES);
    let (cases, configs) = validate::load_embedded().unwrap();
    let (tree_cases, tree_configs) = validate::load(&tree).unwrap();
    assert_eq!(cases.len(), tree_cases.len());
    assert_eq!(
        configs.keys().collect::<Vec<_>>(),
        tree_configs.keys().collect::<Vec<_>>()
    );
    for (name, _) in suite::CONFIGS {
        assert!(
            cases.iter().any(|c| c.config == *name),
            "{name} is embedded but no case reads it"
        );
    }
    let model = cases
        .iter()
        .filter(|c| matches!(c.judged(), Judged::Ratio | Judged::Absolute));
    assert!(
        model.count() >= 30,
        "the suite has fewer than 30 model cases"
    );
}

/// A suite of one passing and one failing closed form, on disk.
pub(crate) fn two_cases(dir: &Path) -> PathBuf {
    let expected = 1024.0 * 1023.0 / 2.0 / 1024.0;
    let pass = std::fs::read_to_string(cases_file(
        dir,
        "pass",
        "balls-into-bins.toml",
        &colliding_pairs(expected),
    ))
    .unwrap();
    let fail = std::fs::read_to_string(cases_file(
        dir,
        "fail",
        "balls-into-bins.toml",
        &colliding_pairs(expected * 3.0),
    ))
    .unwrap();
    let path = dir.join("two.toml");
    std::fs::write(&path, format!("{pass}\n{fail}")).unwrap();
    path
}

#[test]
fn validate_fails_when_a_case_fails_unless_told_not_to() {
    let dir = temp_dir("cli");
    let cases = two_cases(&dir);
    let out = dir.join("out");
    let validate = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_futexsim"))
            .current_dir(&dir)
            .args(["validate", "--jobs", "1", "--cases"])
            .arg(&cases)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let failing = validate(&[]);
    assert_eq!(failing.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&failing.stderr);
    assert!(stderr.contains("1 of 2 cases fail"), "{stderr}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Closed forms"), "{report}");
    assert!(report.contains("The model lacks: not yet explained"));
    std::fs::remove_file(out.join("report.md")).unwrap();
    let told = validate(&["--no-fail"]);
    assert!(told.status.success(), "{told:?}");
    assert!(out.join("report.md").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The ticket-lock config's cases, from the suite in the tree.
fn ticket_cases() -> validate::Suite {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join(validate::SUITE);
    let (cases, configs) = validate::load(&suite).unwrap();
    let cases: Vec<_> = cases
        .into_iter()
        .filter(|c| c.config.ends_with("ticket-knee.toml"))
        .collect();
    let configs = configs
        .into_iter()
        .filter(|(name, _)| name.ends_with("ticket-knee.toml"))
        .collect();
    (cases, configs)
}

#[test]
fn argmax_reads_the_axis_value_of_the_highest_run() {
    let (cases, configs) = ticket_cases();
    let knee = cases.iter().find(|c| c.argmax.is_some()).unwrap().clone();
    let config = configs.values().next().unwrap();
    // The mean over each point's repetitions; the first point of the highest.
    let mut sums = vec![(0.0, 0); config.points.len()];
    for run in config.runs() {
        let figure = metric(&run.scenario.simulate().unwrap().0, &knee.metric).unwrap();
        sums[run.point].0 += figure;
        sums[run.point].1 += 1;
    }
    let (mut best, mut at) = (0.0, String::new());
    for (point, (sum, n)) in sums.iter().enumerate() {
        let mean = sum / f64::from(*n);
        if mean > best {
            best = mean;
            at = config.points[point].axis_values[0].clone();
        }
    }
    let outcomes = validate::run(vec![knee], &configs, 2, validate::Intervals::Seed).unwrap();
    assert_eq!(outcomes[0].predicted.figure, at.parse::<f64>().unwrap());
}

#[test]
fn argmax_with_a_denominator_or_an_unswept_axis_is_an_error() {
    let (cases, configs) = ticket_cases();
    let config = configs.values().next().unwrap();
    let mut knee = cases.iter().find(|c| c.argmax.is_some()).unwrap().clone();
    knee.denominator = Some(knee.numerator.clone());
    let err = knee.check(config).unwrap_err();
    assert!(
        matches!(err.problem, CaseProblem::ArgmaxWithDenominator) && err.key == "denominator",
        "{err}"
    );
    assert!(err.to_string().contains("no denominator"), "{err}");
    knee.denominator = None;
    knee.ns_per_op = true;
    let err = knee.check(config).unwrap_err();
    assert!(
        matches!(err.problem, CaseProblem::ArgmaxOfNsPerOp) && err.key == "ns_per_op",
        "{err}"
    );
    knee.ns_per_op = false;
    knee.argmax = Some("cpus".into());
    let err = knee.check(config).unwrap_err();
    assert!(
        matches!(&err.problem, CaseProblem::ArgmaxAxisNotSwept { axis, .. } if axis == "cpus"),
        "{err}"
    );
    assert!(err.to_string().contains("argmax names 'cpus'"), "{err}");
}

#[test]
fn the_track_record_futexsim_embeds_is_what_the_suite_judges_now() {
    use futexsim::report::track_record::TrackRecord;
    let (cases, configs) = validate::load_embedded().unwrap();
    let outcomes = validate::run(cases, &configs, 2, validate::Intervals::Seed).unwrap();
    let fresh = validate::track_record(&outcomes).to_toml().unwrap();
    let embedded = TrackRecord::embedded().unwrap().to_toml().unwrap();
    assert!(
        fresh == embedded,
        "reports/validation/track-record.toml is stale: regenerate it with \
         `cargo run --release -- validate --no-fail --out reports/validation`"
    );
}

#[test]
fn a_model_cases_stated_interval_holds_its_seed_interval_and_coverage_counts_what_it_holds() {
    let dir = temp_dir("coverage");
    // Two thread counts, a short run: the profile's plausible ranges still
    // give every sample.
    let small = dir.join("perf-bench-sync-small.toml");
    let text = std::fs::read_to_string(config_path("perf-bench-sync-vm.toml")).unwrap();
    std::fs::write(
        &small,
        text.replace("threads = [1, 2, 6, 8, 96]", "threads = [1, 2]")
            .replace("duration_us = 200", "duration_us = 50"),
    )
    .unwrap();
    let config = small.to_str().unwrap();
    let judge = |tag: &str, published: f64| {
        let body = format!("{SYNC_RATIO}{SYNC_BINDING}")
            .replace("published = 0.9", &format!("published = {published}"));
        let path = cases_file(&dir, tag, config, &body);
        let (cases, configs) = validate::load(&path).unwrap();
        validate::run(cases, &configs, 2, validate::Intervals::SeedAndModel)
            .unwrap()
            .remove(0)
    };
    let inside = judge("inside", 0.9);
    let stated = inside
        .interval
        .expect("a model case gets a stated interval");
    let seed = inside
        .predicted
        .seed
        .expect("several repetitions give a seed interval");
    assert!(stated.low <= seed.low.unwrap() && seed.high.unwrap() <= stated.high);
    let (model_low, model_high) = stated.model.expect("the profile has plausible ranges");
    assert!(model_low < model_high, "no parameter moved the ratio");
    assert!(stated.low <= model_low && model_high <= stated.high);
    // A published figure at the nominal prediction is covered; one far
    // outside every sample is not, and coverage says so.
    let at_nominal = judge("at-nominal", inside.predicted.figure);
    let far = judge("far", stated.high * 10.0);
    let coverage = Coverage::of(&[at_nominal, far]).unwrap();
    assert_eq!((coverage.covered, coverage.cases), (1, 2));
    assert!(coverage.headline().starts_with("coverage 50 %"));
    // The suite run without its samples states no interval and no coverage.
    let path = cases_file(
        &dir,
        "seed-only",
        config,
        &format!("{SYNC_RATIO}{SYNC_BINDING}"),
    );
    let (cases, configs) = validate::load(&path).unwrap();
    let seed_only = validate::run(cases, &configs, 2, validate::Intervals::Seed).unwrap();
    assert_eq!(seed_only[0].interval, None);
    assert_eq!(Coverage::of(&seed_only), None);
    std::fs::remove_dir_all(&dir).unwrap();
}
