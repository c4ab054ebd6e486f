//! The validation report: per case the published figure, the predicted one,
//! the tolerance and the verdict, then what the model lacks for each case it
//! fails.

use super::verdict::short;
use super::Outcome;
use std::fmt::Write;

/// One line per case, for the terminal.
pub fn summary_line(o: &Outcome) -> String {
    format!(
        "{:4}  published {:>12}  predicted {:>12}  ({})  {}",
        if o.verdict.passed() { "PASS" } else { "FAIL" },
        o.published.to_string(),
        short(o.predicted),
        o.published.tolerance(),
        o.case.name
    )
}

pub fn markdown(outcomes: &[Outcome]) -> String {
    let passed = outcomes.iter().filter(|o| o.verdict.passed()).count();
    let mut md = String::new();
    let _ = writeln!(md, "# Validation against published results\n");
    let _ = writeln!(
        md,
        "{passed} of {} cases pass. A ratio passes within a factor of 1.5 of the published one \
         (2 below 0.1 or above 10) and on the same side of 1; a published range passes \
         widened by 1.5x.\n",
        outcomes.len()
    );
    let _ = writeln!(
        md,
        "| case | published | predicted | tolerance | verdict |\n|---|---:|---:|---|---|"
    );
    for o in outcomes {
        let verdict = match &o.verdict {
            super::Verdict::Pass => "pass".to_string(),
            super::Verdict::Fail(why) => format!("**fail**: {why}"),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {verdict} |",
            o.case.name,
            o.published,
            short(o.predicted),
            o.published.tolerance()
        );
    }
    let _ = writeln!(md, "\n## Cases\n");
    for o in outcomes {
        let _ = writeln!(
            md,
            "- **{}** ({}, {}): {}",
            o.case.name,
            o.case.config,
            o.case.reads(),
            o.case.source
        );
        if let Some(lacks) = &o.case.lacks {
            let _ = writeln!(md, "  - The model lacks: {lacks}");
        }
    }
    md
}
