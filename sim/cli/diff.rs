//! `futexsim diff A B`: two result sets (say before and after a layout
//! change) compared point by point. For each (point, design) both have, the
//! headline figures of A and B and their ratio B / A, each improved,
//! regressed or within the noise (report::compare's named rule). Only the
//! changes are listed unless --all; what one side has and the other lacks
//! is named, and a one-line summary ends the output.

use crate::cli::CliError;
use clap::Args;
use futexsim::record::RunRecord;
use futexsim::report;
use futexsim::report::compare::{Better, Change, Verdict, NOISE_RULE};
use futexsim::report::summary::{self, figure, Cell};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The report directory of the old result set.
    a: PathBuf,
    /// The report directory of the new result set.
    b: PathBuf,
    /// List every compared figure, those within the noise too.
    #[arg(long)]
    all: bool,
    /// Exit with status 1 when a figure regressed beyond the noise.
    #[arg(long)]
    fail_on_regression: bool,
}

type Figure = fn(&RunRecord) -> f64;

/// The figures compared: name, which way is better, and how to read it
/// (NaN where a record lacks it).
const HEADLINE: [(&str, Better, Figure); 5] = [
    ("ops/s/thread", Better::Higher, |r| {
        r.mean_thread_ops_per_sec
    }),
    ("ops/s", Better::Higher, |r| r.ops_per_sec),
    ("p99 ns", Better::Lower, |r| r.latency_ns.p99 as f64),
    ("HITM/op", Better::Lower, |r| r.coherence.hitm_per_op),
    ("max load", Better::Lower, |r| {
        r.load.as_ref().map_or(f64::NAN, |l| l.max_load as f64)
    }),
];

pub fn run(args: &DiffArgs, out: &mut impl Write) -> Result<(), CliError> {
    let read = |dir: &PathBuf| report::read_locked(dir).map_err(CliError::from);
    let (a, _) = read(&args.a)?;
    let (b, _) = read(&args.b)?;
    if let Some(why) = report::incomparable(&a, &b) {
        eprintln!("futexsim: warning: the sets do not compare like with like: {why}");
    }
    let (cells_a, cells_b) = (summary::cells(&a), summary::cells(&b));
    writeln!(
        out,
        "A: {} ({})\nB: {} ({})\nB/A: mean ratio over paired repetitions (min..max); {NOISE_RULE}\n",
        args.a.display(),
        a.provenance.git_commit,
        args.b.display(),
        b.provenance.git_commit,
    )?;
    let (mut improved, mut regressed, mut noise) = (0, 0, 0);
    let mut rows = Vec::new();
    let mut pairs = 0;
    for old in &cells_a {
        // Points are matched by their axis values, designs by name.
        let Some(new) = cells_b
            .iter()
            .find(|c| c.label == old.label && c.design == old.design)
        else {
            continue;
        };
        pairs += 1;
        for (name, better, read) in HEADLINE {
            let Some(change) =
                Change::between(&old.each(read), &new.each(read)).filter(|c| c.ratio.is_finite())
            else {
                continue;
            };
            let verdict = change.verdict(better);
            match verdict {
                Verdict::Improved => improved += 1,
                Verdict::Regressed => regressed += 1,
                Verdict::WithinNoise => noise += 1,
            }
            if args.all || verdict != Verdict::WithinNoise {
                rows.push(format!(
                    "| {} | {} | {name} | {} | {} | {:.3} ({:.3}..{:.3}) | {} |",
                    old.label,
                    old.design,
                    figure(old.mean(read)),
                    figure(new.mean(read)),
                    change.ratio,
                    change.min,
                    change.max,
                    verdict.word()
                ));
            }
        }
    }
    if pairs == 0 {
        return Err(CliError::Input(format!(
            "{} and {} have no (point, design) in common",
            args.a.display(),
            args.b.display()
        )));
    }
    if rows.is_empty() {
        writeln!(out, "No figure changed beyond the noise.\n")?;
    } else {
        writeln!(out, "| point | design | figure | A | B | B/A | verdict |")?;
        writeln!(out, "|---|---|---|---:|---:|---:|---|")?;
        for row in &rows {
            writeln!(out, "{row}")?;
        }
        writeln!(out)?;
    }
    let mut one_sided = one_side_only("A", &cells_a, &cells_b);
    one_sided.extend(one_side_only("B", &cells_b, &cells_a));
    for line in &one_sided {
        writeln!(out, "{line}")?;
    }
    let unmatched = if one_sided.is_empty() {
        String::new()
    } else {
        format!("; {} present on one side only", one_sided.len())
    };
    writeln!(
        out,
        "summary: {} figures of {pairs} (point, design) pairs: {improved} improved, {regressed} \
         regressed, {noise} within noise{unmatched}",
        improved + regressed + noise
    )?;
    if args.fail_on_regression && regressed > 0 {
        out.flush()?;
        return Err(CliError::Failed(format!(
            "{regressed} figures regressed beyond the noise (--fail-on-regression)"
        )));
    }
    Ok(())
}

/// The designs, points and (point, design) pairs of `ours` that `theirs`
/// lacks, each named once: a design missing everywhere is one line, not one
/// per point.
fn one_side_only(side: &str, ours: &[Cell], theirs: &[Cell]) -> Vec<String> {
    let designs: BTreeSet<&str> = theirs.iter().map(|c| c.design).collect();
    let points: BTreeSet<&str> = theirs.iter().map(|c| c.label.as_str()).collect();
    let mut lines: Vec<String> = Vec::new();
    let mut push = |line: String| {
        if !lines.contains(&line) {
            lines.push(line);
        }
    };
    for cell in ours {
        if theirs
            .iter()
            .any(|c| c.label == cell.label && c.design == cell.design)
        {
            continue;
        }
        if !designs.contains(cell.design) {
            push(format!("only in {side}: design {}", cell.design));
        } else if !points.contains(cell.label.as_str()) {
            push(format!("only in {side}: point {}", cell.label));
        } else {
            push(format!("only in {side}: {} at {}", cell.design, cell.label));
        }
    }
    lines
}
