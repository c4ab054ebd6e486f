//! The validation suite end to end on one small case: the prediction is read
//! from the named run, judged, and a figure the model does not reach fails.

use futexsim::validate::{self, case::metric};
use std::path::Path;

fn cases_file(dir: &Path, published: f64) -> std::path::PathBuf {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/balls-into-bins.toml");
    let path = dir.join(format!("cases-{published}.toml"));
    std::fs::write(
        &path,
        format!(
            r#"[[case]]
name = "colliding pairs, 1024 keys in 1024 buckets"
config = "{}"
metric = "load.colliding_pairs"
numerator = {{ design = "global", at = {{ "table.global.slots" = "1024" }} }}
published = {published}
source = "C(m,2)/n"
"#,
            config.display()
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_case_reads_its_run_and_is_judged_by_the_tolerance() {
    let dir = std::env::temp_dir().join(format!("futexsim-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let expected = 1024.0 * 1023.0 / 2.0 / 1024.0;
    for (published, passes) in [(expected, true), (expected * 3.0, false)] {
        let (cases, configs) = validate::load(&cases_file(&dir, published)).unwrap();
        let config = configs.values().next().unwrap();
        let point = config
            .points
            .iter()
            .position(|p| p.axis_values == ["1024"])
            .unwrap();
        let run = config
            .runs()
            .into_iter()
            .find(|r| r.point == point)
            .unwrap();
        let direct = metric(&run.scenario.simulate().unwrap().0, "load.colliding_pairs").unwrap();
        let outcomes = validate::run(cases, &configs, 1).unwrap();
        assert_eq!(outcomes[0].predicted, direct);
        assert_eq!(
            outcomes[0].verdict.passed(),
            passes,
            "published {published}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_selector_naming_no_axis_value_is_an_error() {
    let dir = std::env::temp_dir().join(format!("futexsim-validate-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = cases_file(&dir, 1.0);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"1024\" }", "\"1000\" }");
    std::fs::write(&path, text).unwrap();
    let (cases, configs) = validate::load(&path).unwrap();
    let err = validate::run(cases, &configs, 1).unwrap_err();
    assert!(err.contains("selects 0 sweep points"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The suite's cases that read the ticket-lock config.
fn ticket_cases() -> (
    Vec<validate::case::CaseSpec>,
    std::collections::BTreeMap<String, futexsim::config::Config>,
) {
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
    let (mut best, mut at) = (0.0, String::new());
    for run in config.runs() {
        let figure = metric(&run.scenario.simulate().unwrap().0, &knee.metric).unwrap();
        if figure > best {
            best = figure;
            at = config.points[run.point].axis_values[0].clone();
        }
    }
    let outcomes = validate::run(vec![knee], &configs, 2).unwrap();
    assert_eq!(outcomes[0].predicted, at.parse::<f64>().unwrap());
}

#[test]
fn argmax_with_a_denominator_or_an_unswept_axis_is_an_error() {
    let (cases, configs) = ticket_cases();
    let config = configs.values().next().unwrap();
    let mut knee = cases.iter().find(|c| c.argmax.is_some()).unwrap().clone();
    knee.denominator = Some(knee.numerator.clone());
    assert!(knee.check(config).unwrap_err().contains("no denominator"));
    knee.denominator = None;
    knee.argmax = Some("cpus".into());
    assert!(knee
        .check(config)
        .unwrap_err()
        .contains("argmax names 'cpus'"));
}
