//! `futexsim diff A B`: two result sets (say before and after a layout
//! change) compared point by point: for each (point, design) both have, the
//! headline figures of A and B and their ratio B / A, marked when the
//! change is within the noise (report::compare).

use crate::cli::CliError;
use clap::Args;
use futexsim::record::RunRecord;
use futexsim::report::{self, compare::Change, summary};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The report directory of the old result set.
    a: PathBuf,
    /// The report directory of the new result set.
    b: PathBuf,
}

type Figure = fn(&RunRecord) -> f64;

/// The figures compared, with their names.
const HEADLINE: [(&str, Figure); 5] = [
    ("ops/s/thread", |r| r.mean_thread_ops_per_sec),
    ("ops/s", |r| r.ops_per_sec),
    ("p99 ns", |r| r.latency_ns.p99 as f64),
    ("HITM/op", |r| r.coherence.hitm_per_op),
    ("max load", |r| {
        r.load.as_ref().map_or(f64::NAN, |l| l.max_load as f64)
    }),
];

pub fn run(args: &DiffArgs, out: &mut impl Write) -> Result<(), CliError> {
    let read = |dir: &PathBuf| report::read(dir).map_err(|e| CliError::Input(e.to_string()));
    let (a, _) = read(&args.a)?;
    let (b, _) = read(&args.b)?;
    if let Some(why) = report::incomparable(&a, &b) {
        eprintln!("futexsim: warning: the sets do not compare like with like: {why}");
    }
    let (cells_a, cells_b) = (summary::cells(&a), summary::cells(&b));
    writeln!(
        out,
        "A: {} ({})\nB: {} ({})\nratio B/A, mean over paired repetitions (min..max); within noise under {:.0}% or the repetitions' spread\n",
        args.a.display(),
        a.provenance.git_commit,
        args.b.display(),
        b.provenance.git_commit,
        100.0 * report::compare::NOISE_THRESHOLD
    )?;
    writeln!(out, "| point | design | figure | A | B | B/A |")?;
    writeln!(out, "|---|---|---|---:|---:|---|")?;
    let mut matched = 0;
    for old in &cells_a {
        // Points are matched by their axis values, designs by name.
        let Some(new) = cells_b
            .iter()
            .find(|c| c.label == old.label && c.design == old.design)
        else {
            continue;
        };
        matched += 1;
        for (name, figure) in HEADLINE {
            let change = Change::between(&old.each(figure), &new.each(figure))
                .map_or("-".into(), |c| c.describe());
            writeln!(
                out,
                "| {} | {} | {name} | {:.3} | {:.3} | {change} |",
                old.label,
                old.design,
                old.mean(figure),
                new.mean(figure)
            )?;
        }
    }
    if matched == 0 {
        return Err(CliError::Input(format!(
            "{} and {} have no (point, design) in common",
            args.a.display(),
            args.b.display()
        )));
    }
    Ok(())
}
