//! The validation report: at the top, how many model cases pass and their
//! median error; then a table per kind of figure (model ratios, model
//! absolute figures, closed forms, the last counted apart), each case with
//! its published and predicted figure, its error, tolerance and verdict;
//! then per case what was measured (kernels, machine, command line, source)
//! and, where the model falls short, what it lacks.

use super::coverage::Coverage;
use super::verdict::{factor_between, percent, short, Judged, ASSUMED_NOISE};
use super::{Outcome, Verdict};
use crate::report::summary::duration_ns;
use std::fmt::Write;

/// Cases passed, out of how many, and the median of their errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tally {
    pub passed: usize,
    pub total: usize,
    /// The median factor between predicted and published; 1 with no cases.
    pub median_error: f64,
}

pub fn tally<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> Tally {
    let mut errors = Vec::new();
    let mut passed = 0;
    for o in outcomes {
        errors.push(o.error);
        passed += usize::from(o.verdict.passed());
    }
    errors.sort_by(f64::total_cmp);
    let n = errors.len();
    let median_error = match n {
        0 => 1.0,
        _ if n % 2 == 1 => errors[n / 2],
        _ => (errors[n / 2 - 1] + errors[n / 2]) / 2.0,
    };
    Tally {
        passed,
        total: n,
        median_error,
    }
}

fn of_kind<'a>(outcomes: &'a [Outcome], kinds: &[Judged]) -> Vec<&'a Outcome> {
    outcomes
        .iter()
        .filter(|o| kinds.contains(&o.judged))
        .collect()
}

/// The model cases' and the closed forms' tallies, in one line.
pub fn headline(outcomes: &[Outcome]) -> String {
    let model = tally(of_kind(outcomes, &[Judged::Ratio, Judged::Absolute]));
    let closed = tally(of_kind(outcomes, &[Judged::ClosedForm]));
    let calibrations = of_kind(outcomes, &[Judged::Calibration]).len();
    let coverage =
        Coverage::of(outcomes).map_or_else(|| not_covered(model.total), |c| c.headline());
    format!(
        "model cases: {} of {} pass, median error {}x, {coverage}; closed forms (counted \
         apart): {} of {} pass; calibration inputs (used to calibrate, not tests): {calibrations}",
        model.passed,
        model.total,
        short(model.median_error),
        closed.passed,
        closed.total
    )
}

/// Why there is no coverage: no model case, or a suite run without its
/// samples.
fn not_covered(model_cases: usize) -> String {
    if model_cases == 0 {
        "no coverage: no model case".to_string()
    } else {
        "coverage not computed: the suite ran without its profiles' plausible ranges \
         (--no-coverage)"
            .to_string()
    }
}

/// A model case's stated interval, and whether it holds the published
/// figure; empty where the suite ran without its samples.
fn interval_cell(o: &Outcome) -> String {
    let Some(interval) = &o.interval else {
        return String::new();
    };
    let model = interval.model.map_or(String::new(), |(low, high)| {
        format!("; model {}..{}", short(low), short(high))
    });
    let inside = if interval.covers(o.published) {
        "inside"
    } else {
        "**outside**"
    };
    format!(
        "{}..{} ({inside}{model})",
        short(interval.low),
        short(interval.high)
    )
}

fn kind_label(judged: Judged) -> &'static str {
    match judged {
        Judged::ClosedForm => "closed form",
        Judged::Calibration => "calibration",
        Judged::Ratio => "ratio",
        Judged::Absolute => "absolute",
    }
}

/// One line per case, for the terminal.
pub fn summary_line(o: &Outcome) -> String {
    let verdict = match (o.judged, o.verdict.passed()) {
        (Judged::Calibration, _) => "FIT",
        (_, true) => "PASS",
        (_, false) => "FAIL",
    };
    format!(
        "{:4}  {:11}  published {:>12}  predicted {:>12}  error {:>7}x  ({})  {}",
        verdict,
        kind_label(o.judged),
        o.published.to_string(),
        short(o.predicted.figure),
        short(o.error),
        tolerance(o),
        o.case.name
    )
}

/// The rule the case is judged by, as it reads.
fn tolerance(o: &Outcome) -> String {
    match &o.change {
        Some(change) => change.tolerance(),
        None => o.published.tolerance(o.judged),
    }
}

/// A change's effect on time per op, published → predicted, each with the
/// nanoseconds per op it adds or saves where the figures are known.
fn effect_cell(o: &Outcome) -> String {
    let Some(change) = &o.change else {
        return String::new();
    };
    let side = |relative: f64, ns: Option<f64>| match ns {
        Some(ns) if ns < 0.0 => format!("{} ({} saved)", percent(relative), duration_ns(-ns)),
        Some(ns) => format!("{} ({} added)", percent(relative), duration_ns(ns)),
        None => percent(relative),
    };
    format!(
        "{} → {}",
        side(change.published, change.published_ns),
        side(change.predicted, change.predicted_ns)
    )
}

/// `text` with its first letter upper case.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or(String::new(), |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

fn verdict_cell(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Pass => "pass".to_string(),
        Verdict::Fail(why) => format!("**fail**: {why}"),
    }
}

/// A published figure beside the model's, with the factor between them.
fn against(published: f64, predicted: f64) -> String {
    format!(
        "{} → {} ({}x)",
        short(published),
        short(predicted),
        short(factor_between(predicted, published))
    )
}

/// The absolute figures behind a ratio, published and predicted.
fn absolute_cell(o: &Outcome) -> String {
    match (&o.case.absolute, o.predicted.denominator) {
        (Some(a), Some(denominator)) => format!(
            "{}; {} {}",
            against(a.numerator, o.predicted.numerator),
            against(a.denominator, denominator),
            a.unit
        ),
        _ => "not published".to_string(),
    }
}

fn machine_cell(o: &Outcome) -> &str {
    o.case.machine.as_deref().unwrap_or("")
}

pub fn markdown(outcomes: &[Outcome]) -> String {
    let ratios = of_kind(outcomes, &[Judged::Ratio]);
    let absolutes = of_kind(outcomes, &[Judged::Absolute]);
    let closed = of_kind(outcomes, &[Judged::ClosedForm]);
    let calibrations = of_kind(outcomes, &[Judged::Calibration]);
    let model = tally(ratios.iter().chain(&absolutes).copied());
    let mut md = String::new();
    let _ = writeln!(md, "# Validation against published results\n");
    let _ = writeln!(
        md,
        "**Model cases: {} of {} pass; median error {}x** ({} ratios: {} pass; {} absolute figures: {} pass).\n",
        model.passed,
        model.total,
        short(model.median_error),
        ratios.len(),
        tally(ratios.iter().copied()).passed,
        absolutes.len(),
        tally(absolutes.iter().copied()).passed,
    );
    match Coverage::of(outcomes) {
        Some(coverage) => {
            let _ = writeln!(md, "**{}.**\n", capitalised(&coverage.headline()));
            let _ = writeln!(md, "{}\n", super::coverage::RULE);
        }
        None => {
            let _ = writeln!(md, "{}.\n", capitalised(&not_covered(model.total)));
        }
    }
    let closed_tally = tally(closed.iter().copied());
    let _ = writeln!(
        md,
        "Closed forms, counted apart: {} of {} pass, median error {}x.\n",
        closed_tally.passed,
        closed_tally.total,
        short(closed_tally.median_error)
    );
    let _ = writeln!(
        md,
        "The error is the factor between predicted and published (1 inside a published range). \
         A ratio is a change from its denominator's run to its numerator's, judged by its \
         effect: the relative change in time per op (a rate's ratio r saves 1 - 1/r of each op's \
         time), which passes with the published effect's sign and within ±50 % of its size; a \
         published effect within the published run-to-run noise is \"no change\", and passes \
         only if the predicted effect is within that noise too ({} where the source publishes \
         none, an assumption said beside each such case). An absolute figure, predicted on the \
         case's machine profile, passes within 2x. A closed form passes within 1.5x, with no \
         rule about 1. A published range passes widened by the kind's factor. Where a ratio's \
         published figures are known, the ratio table sets them beside the model's (not \
         judged).\n",
        percent(ASSUMED_NOISE).trim_start_matches('+')
    );
    let _ = writeln!(md, "## Model cases: ratios\n");
    let _ = writeln!(
        md,
        "| case | machine | published | predicted | stated interval | error | effect on time per op: published → predicted | tolerance | absolute: published → predicted | verdict |\n|---|---|---:|---:|---|---:|---|---|---|---|"
    );
    for o in &ratios {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {}x | {} | {} | {} | {} |",
            o.case.name,
            machine_cell(o),
            o.published,
            short(o.predicted.figure),
            interval_cell(o),
            short(o.error),
            effect_cell(o),
            tolerance(o),
            absolute_cell(o),
            verdict_cell(&o.verdict)
        );
    }
    let _ = writeln!(md, "\n## Model cases: absolute figures\n");
    let _ = writeln!(
        md,
        "| case | machine | unit | published | predicted | stated interval | error | tolerance | verdict |\n|---|---|---|---:|---:|---|---:|---|---|"
    );
    for o in &absolutes {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {}x | {} | {} |",
            o.case.name,
            machine_cell(o),
            o.case.unit.as_deref().unwrap_or(""),
            o.published,
            short(o.predicted.figure),
            interval_cell(o),
            short(o.error),
            tolerance(o),
            verdict_cell(&o.verdict)
        );
    }
    let _ = writeln!(md, "\n## Closed forms (counted apart)\n");
    let _ = writeln!(
        md,
        "| case | published | predicted | error | tolerance | verdict |\n|---|---:|---:|---:|---|---|"
    );
    for o in &closed {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {}x | {} | {} |",
            o.case.name,
            o.published,
            short(o.predicted.figure),
            short(o.error),
            tolerance(o),
            verdict_cell(&o.verdict)
        );
    }
    let _ = writeln!(
        md,
        "\n## Calibration inputs (used to calibrate, not tests)\n\nA published figure a \
         profile's parameter was fitted to: the model meets it by construction, so it is shown \
         here and counted in no tally.\n"
    );
    let _ = writeln!(
        md,
        "| calibration input | machine | published | predicted | calibrates |\n|---|---|---:|---:|---|"
    );
    for o in &calibrations {
        let unit = o.case.unit.as_deref().unwrap_or("");
        let _ = writeln!(
            md,
            "| {} | {} | {} {unit} | {} {unit} | {} |",
            o.case.name,
            machine_cell(o),
            o.published,
            short(o.predicted.figure),
            o.case.calibrates.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(md, "\n## Cases\n");
    for o in ratios
        .iter()
        .chain(&absolutes)
        .chain(&closed)
        .chain(&calibrations)
    {
        let _ = writeln!(
            md,
            "- **{}** ({}, {}, {}): {}",
            o.case.name,
            kind_label(o.judged),
            o.case.config,
            o.case.reads(),
            o.case.source
        );
        if !o.case.kernel.is_empty() {
            let kernels: Vec<String> = o
                .case
                .designs()
                .iter()
                .filter_map(|d| o.case.kernel.get(*d).map(|k| format!("`{d}` = {k}")))
                .collect();
            let _ = writeln!(md, "  - Kernel: {}", kernels.join("; "));
        }
        if let Some(machine) = &o.case.machine {
            let _ = writeln!(md, "  - Machine profile: `{machine}`");
        }
        if let Some(command) = &o.case.command {
            let _ = writeln!(md, "  - Command: `{command}`");
        }
        match (&o.case.lacks, o.verdict.passed()) {
            (Some(lacks), _) => {
                let _ = writeln!(md, "  - The model lacks: {lacks}");
            }
            (None, false) => {
                let _ = writeln!(md, "  - The model lacks: not yet explained");
            }
            (None, true) => {}
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::case::{CaseSpec, Prediction};
    use crate::validate::coverage::StatedInterval;
    use crate::validate::verdict::Published;

    fn outcome(kind: &str, published: f64, predicted: f64) -> Outcome {
        let denominator = if kind == "ratio" {
            "denominator = { design = \"b\" }\n"
        } else {
            ""
        };
        let closed = match kind {
            "closed" => "kind = \"closed-form\"\n",
            "calibration" => "kind = \"calibration\"\ncalibrates = \"kernel.fitted_ibrs\"\n",
            _ => "",
        };
        let case: CaseSpec = toml::from_str(&format!(
            "name = \"{kind} {published}\"\n{closed}config = \"c.toml\"\nmetric = \"ops_per_sec\"\n\
             numerator = {{ design = \"a\" }}\n{denominator}published = {published}\nsource = \"s\"\n"
        ))
        .unwrap();
        let judged = case.judged();
        let p = Published::Value(published);
        let predicted = Prediction {
            figure: predicted,
            numerator: predicted,
            denominator: (judged == Judged::Ratio).then_some(1.0),
            reading: Some(crate::validate::verdict::Reading::Rate),
            seed: None,
        };
        let change = (judged == Judged::Ratio).then(|| case.change(published, &predicted).unwrap());
        Outcome {
            judged,
            verdict: change.map_or_else(|| p.judge(judged, predicted.figure), |c| c.judge()),
            error: p.error(predicted.figure),
            likeness: None,
            change,
            published: p,
            predicted,
            interval: None,
            case,
        }
    }

    #[test]
    fn the_headline_counts_model_cases_apart_from_closed_forms() {
        let outcomes = [
            outcome("ratio", 0.5, 0.6), // 1.2x, effect +67 % against +100 %: pass
            outcome("ratio", 0.5, 1.5), // 3x, opposite direction: fail
            outcome("absolute", 100.0, 150.0), // 1.5x, pass
            outcome("closed", 10.0, 40.0), // 4x, fail: not in the model tally
        ];
        let model = tally(outcomes.iter().filter(|o| o.judged != Judged::ClosedForm));
        assert_eq!((model.passed, model.total), (2, 3));
        assert!((model.median_error - 1.5).abs() < 1e-12);
        assert_eq!(
            headline(&outcomes),
            "model cases: 2 of 3 pass, median error 1.5x, coverage not computed: the suite ran \
             without its profiles' plausible ranges (--no-coverage); closed forms (counted \
             apart): 0 of 1 pass; calibration inputs (used to calibrate, not tests): 0"
        );
        // With stated intervals: two of the three model figures inside.
        let mut stated = outcomes.clone();
        for (o, (low, high)) in stated
            .iter_mut()
            .zip([(0.4, 0.7), (1.0, 2.0), (90.0, 160.0)])
        {
            o.interval = Some(StatedInterval {
                low,
                high,
                model: None,
            });
        }
        assert!(
            headline(&stated).contains(", coverage 67 % (2 of 3 published figures inside"),
            "{}",
            headline(&stated)
        );
        let md = markdown(&outcomes);
        assert!(md.contains("**Model cases: 2 of 3 pass; median error 1.5x**"));
        let tables: Vec<&str> = md.split("\n## ").collect();
        assert!(tables[1].starts_with("Model cases: ratios") && tables[1].contains("ratio 0.5"));
        assert!(
            tables[2].starts_with("Model cases: absolute") && tables[2].contains("absolute 100")
        );
        assert!(tables[3].starts_with("Closed forms") && tables[3].contains("closed 10"));
        assert!(md.contains("The model lacks: not yet explained"));
    }

    #[test]
    fn a_calibration_input_is_reported_apart_and_counted_in_no_tally() {
        let model = [
            outcome("ratio", 0.5, 0.6),
            outcome("absolute", 100.0, 150.0),
        ];
        let mut with = model.to_vec();
        // Far from its figure, to show it would fail if it were judged.
        with.push(outcome("calibration", 100.0, 900.0));
        let counted = |line: &str| line.split("; calibration").next().unwrap().to_string();
        assert_eq!(counted(&headline(&with)), counted(&headline(&model)));
        assert!(headline(&with).ends_with("calibration inputs (used to calibrate, not tests): 1"));
        let md = markdown(&with);
        assert!(
            md.contains("**Model cases: 2 of 2 pass; median error 1.35x**"),
            "{md}"
        );
        let apart = md
            .split("\n## ")
            .find(|t| t.starts_with("Calibration inputs (used to calibrate, not tests)"))
            .unwrap();
        assert!(apart.contains("| calibration 100 |") && apart.contains("kernel.fitted_ibrs"));
        assert!(summary_line(&with[2]).starts_with("FIT "));
    }

    #[test]
    fn an_even_count_takes_the_mean_of_the_middle_errors() {
        let outcomes = [outcome("ratio", 0.5, 0.5), outcome("ratio", 0.5, 1.0)];
        assert!((tally(&outcomes).median_error - 1.5).abs() < 1e-12);
        assert_eq!(tally([]).median_error, 1.0);
    }
}
