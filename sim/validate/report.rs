//! The validation report: at the top, how many model cases pass and their
//! median error; then a table per kind of figure (model ratios, model
//! absolute figures, closed forms, the last counted apart), each case with
//! its published and predicted figure, its error, tolerance and verdict;
//! then per case what was measured (kernels, machine, command line, source)
//! and, where the model falls short, what it lacks.

use super::verdict::{factor_between, short, Judged};
use super::{Outcome, Verdict};
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
    format!(
        "model cases: {} of {} pass, median error {}x; closed forms (counted apart): {} of {} pass",
        model.passed,
        model.total,
        short(model.median_error),
        closed.passed,
        closed.total
    )
}

fn kind_label(judged: Judged) -> &'static str {
    match judged {
        Judged::ClosedForm => "closed form",
        Judged::Ratio => "ratio",
        Judged::Absolute => "absolute",
    }
}

/// One line per case, for the terminal.
pub fn summary_line(o: &Outcome) -> String {
    format!(
        "{:4}  {:11}  published {:>12}  predicted {:>12}  error {:>7}x  ({})  {}",
        if o.verdict.passed() { "PASS" } else { "FAIL" },
        kind_label(o.judged),
        o.published.to_string(),
        short(o.predicted.figure),
        short(o.error),
        o.published.tolerance(o.judged),
        o.case.name
    )
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
         A ratio passes within 1.5x of the published one (2x below 0.1 or above 10) and on the \
         same side of 1; a published \"no change\" (within 5 % of 1) passes only if the prediction \
         is within 10 % of 1. An absolute figure, predicted on the case's machine profile, passes \
         within 2x. A closed form passes within 1.5x, with no rule about 1. A \
         published range passes widened by the kind's factor. Where a ratio's published figures \
         are known, the ratio table sets them beside the model's (not judged).\n"
    );
    let _ = writeln!(md, "## Model cases: ratios\n");
    let _ = writeln!(
        md,
        "| case | machine | published | predicted | error | tolerance | absolute: published → predicted | verdict |\n|---|---|---:|---:|---:|---|---|---|"
    );
    for o in &ratios {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {}x | {} | {} | {} |",
            o.case.name,
            machine_cell(o),
            o.published,
            short(o.predicted.figure),
            short(o.error),
            o.published.tolerance(o.judged),
            absolute_cell(o),
            verdict_cell(&o.verdict)
        );
    }
    let _ = writeln!(md, "\n## Model cases: absolute figures\n");
    let _ = writeln!(
        md,
        "| case | machine | unit | published | predicted | error | tolerance | verdict |\n|---|---|---|---:|---:|---:|---|---|"
    );
    for o in &absolutes {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {}x | {} | {} |",
            o.case.name,
            machine_cell(o),
            o.case.unit.as_deref().unwrap_or(""),
            o.published,
            short(o.predicted.figure),
            short(o.error),
            o.published.tolerance(o.judged),
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
            o.published.tolerance(o.judged),
            verdict_cell(&o.verdict)
        );
    }
    let _ = writeln!(md, "\n## Cases\n");
    for o in ratios.iter().chain(&absolutes).chain(&closed) {
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
    use crate::validate::verdict::Published;

    fn outcome(kind: &str, published: f64, predicted: f64) -> Outcome {
        let denominator = if kind == "ratio" {
            "denominator = { design = \"b\" }\n"
        } else {
            ""
        };
        let closed = if kind == "closed" {
            "kind = \"closed-form\"\n"
        } else {
            ""
        };
        let case: CaseSpec = toml::from_str(&format!(
            "name = \"{kind} {published}\"\n{closed}config = \"c.toml\"\nmetric = \"ops_per_sec\"\n\
             numerator = {{ design = \"a\" }}\n{denominator}published = {published}\nsource = \"s\"\n"
        ))
        .unwrap();
        let judged = case.judged();
        let p = Published::Value(published);
        Outcome {
            judged,
            verdict: p.judge(judged, predicted),
            error: p.error(predicted),
            published: p,
            predicted: Prediction {
                figure: predicted,
                numerator: predicted,
                denominator: None,
            },
            case,
        }
    }

    #[test]
    fn the_headline_counts_model_cases_apart_from_closed_forms() {
        let outcomes = [
            outcome("ratio", 0.5, 0.6),        // 1.2x, pass
            outcome("ratio", 0.5, 1.5),        // 3x, fail
            outcome("absolute", 100.0, 150.0), // 1.5x, pass
            outcome("closed", 10.0, 40.0),     // 4x, fail: not in the model tally
        ];
        let model = tally(outcomes.iter().filter(|o| o.judged != Judged::ClosedForm));
        assert_eq!((model.passed, model.total), (2, 3));
        assert!((model.median_error - 1.5).abs() < 1e-12);
        assert_eq!(
            headline(&outcomes),
            "model cases: 2 of 3 pass, median error 1.5x; closed forms (counted apart): 0 of 1 pass"
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
    fn an_even_count_takes_the_mean_of_the_middle_errors() {
        let outcomes = [outcome("ratio", 0.5, 0.5), outcome("ratio", 0.5, 1.0)];
        assert!((tally(&outcomes).median_error - 1.5).abs() < 1e-12);
        assert_eq!(tally([]).median_error, 1.0);
    }
}
