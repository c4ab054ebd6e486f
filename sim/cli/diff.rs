//! `futexsim diff A B`: two result sets (say before and after a layout
//! change) compared point by point. For each (point, design) both have, the
//! headline figures of A and B, each a mean with its seed interval, and
//! their paired ratio B / A (the mean of per-seed ratios) with its
//! interval, each improved, regressed, within the noise or not judged by
//! report::compare's test, whose noise threshold and significance level
//! are printed and can be set. Only the changes are listed unless --all;
//! what one side has and the other lacks is named, and a one-line summary
//! ends the output. `--pair A=B` compares design A of the first set with
//! design B of the second instead of designs of one name: a `--rule`
//! candidate against the baseline, in two sets or in one (B left out).
//! `--json` prints every compared figure as one JSON document instead
//! (schema in docs/reports.md, "futexsim diff").

use crate::cli::CliError;
use clap::Args;
use futexsim::echo::echo;
use futexsim::report;
use futexsim::report::compare::{Change, Test, Verdict};
use futexsim::report::interval::{SeedInterval, BIMODAL_RULE};
use futexsim::report::summary::{self, figure, Cell, BUCKETED_QUANTILES};
use futexsim::results::ResultSet;
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The report directory of the old result set.
    a: PathBuf,
    /// The report directory of the new result set; the old one again when
    /// left out, to compare two designs of one set with --pair.
    b: Option<PathBuf>,
    /// Compare design A of the old set with design B of the new one (names
    /// as the report writes them; a name may hold `=`: the split that names
    /// a design on each side is taken); repeatable. Without it, designs are
    /// compared with the design of the same name.
    #[arg(long = "pair", value_name = "A=B")]
    pairs: Vec<String>,
    /// List every compared figure, those within the noise too.
    #[arg(long)]
    all: bool,
    /// Exit with status 1 when a figure regressed beyond the noise.
    #[arg(long)]
    fail_on_regression: bool,
    /// Changes of the paired ratio inside 1 ± this fraction are noise.
    #[arg(long, default_value_t = Test::DEFAULT.noise_threshold, value_name = "FRACTION")]
    noise_threshold: f64,
    /// The chance the test accepts of calling a change that is not there
    /// real; the interval's confidence is 1 - this.
    #[arg(long, default_value_t = Test::DEFAULT.significance_level, value_name = "FRACTION")]
    significance_level: f64,
    /// Print every compared figure as one JSON document (for CI) instead
    /// of the table.
    #[arg(long)]
    json: bool,
}

/// The version of `--json`'s layout: a field is only ever added under it.
const JSON_SCHEMA: &str = "futexsim-diff/1";

/// `diff --json`: the whole comparison.
#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    a: Side,
    b: Side,
    test: TestStated<'a>,
    /// The figure A's benchmark exists for: each pair's first figure.
    primary: Primary,
    /// The designs compared with each other, by `--pair`; empty when
    /// designs were matched by name.
    pairs: Vec<Pair<'a>>,
    cells: Vec<Compared<'a>>,
    one_side_only: Vec<String>,
    summary: Counts,
}

/// A figure and which way it is better.
#[derive(Serialize)]
struct Primary {
    figure: &'static str,
    column: &'static str,
    better: &'static str,
}

#[derive(Serialize)]
struct Side {
    dir: String,
    git_commit: String,
}

/// A design of A compared with a design of B.
#[derive(Clone, Copy, Serialize)]
struct Pair<'a> {
    a: &'a str,
    b: &'a str,
}

/// The test as applied: the interval, the ratio, and its parameters.
#[derive(Serialize)]
struct TestStated<'a> {
    ratio: &'static str,
    interval: &'static str,
    confidence: f64,
    #[serde(flatten)]
    parameters: &'a Test,
    bimodal_rule: &'static str,
}

/// One figure of one (point, design): both sides' means and intervals, the
/// paired ratio B / A with its interval, and the verdict.
#[derive(Serialize)]
struct Compared<'a> {
    point: &'a str,
    /// A's design.
    design: &'a str,
    /// B's design: `design` unless `--pair` paired it with another.
    b_design: &'a str,
    figure: &'static str,
    better: &'static str,
    a: SeedInterval,
    b: SeedInterval,
    ratio: SeedInterval,
    verdict: Verdict,
}

#[derive(Default, Serialize)]
struct Counts {
    pairs: usize,
    figures: usize,
    improved: usize,
    regressed: usize,
    within_noise: usize,
    not_judged: usize,
}

impl Counts {
    fn count(&mut self, verdict: Verdict) {
        self.figures += 1;
        match verdict {
            Verdict::Improved => self.improved += 1,
            Verdict::Regressed => self.regressed += 1,
            Verdict::WithinNoise => self.within_noise += 1,
            Verdict::NoInterval | Verdict::Bimodal => self.not_judged += 1,
        }
    }
}

fn test_of(args: &DiffArgs) -> Result<Test, CliError> {
    if !(args.noise_threshold.is_finite() && args.noise_threshold >= 0.0) {
        return Err(CliError::Input(format!(
            "--noise-threshold {} is not a fraction of 0 or more (0.02 is 2 %)",
            args.noise_threshold
        )));
    }
    if !(args.significance_level > 0.0 && args.significance_level < 1.0) {
        return Err(CliError::Input(format!(
            "--significance-level {} is not a fraction between 0 and 1 (0.05 is 5 %)",
            args.significance_level
        )));
    }
    Ok(Test {
        noise_threshold: args.noise_threshold,
        significance_level: args.significance_level,
    })
}

/// `--pair A=B` read against the designs of both sets: the one split at an
/// `=` that names a design of A on its left and one of B on its right.
fn pair_of<'a>(text: &str, a: &'a ResultSet, b: &'a ResultSet) -> Result<Pair<'a>, CliError> {
    let splits: Vec<Pair> = text
        .match_indices('=')
        .filter_map(|(at, _)| {
            let (left, right) = (&text[..at], &text[at + 1..]);
            let in_a = a.designs.iter().find(|d| *d == left)?;
            let in_b = b.designs.iter().find(|d| *d == right)?;
            Some(Pair { a: in_a, b: in_b })
        })
        .collect();
    match splits[..] {
        [one] => Ok(one),
        [] => Err(CliError::Input(format!(
            "--pair '{}' names no design of A on the left of an '=' and one of B on its right; \
             A's designs: {}; B's designs: {}",
            echo(text),
            a.designs.join(", "),
            b.designs.join(", ")
        ))),
        _ => Err(CliError::Input(format!(
            "--pair '{}' splits into designs at more than one '=': {}",
            echo(text),
            splits
                .iter()
                .map(|p| format!("'{}' = '{}'", p.a, p.b))
                .collect::<Vec<_>>()
                .join(" or ")
        ))),
    }
}

pub fn run(args: &DiffArgs, out: &mut impl Write) -> Result<(), CliError> {
    let test = test_of(args)?;
    let read = |dir: &PathBuf| report::read_locked(dir).map_err(CliError::from);
    let b_dir =
        match &args.b {
            Some(b) => b,
            None if !args.pairs.is_empty() => &args.a,
            None => return Err(CliError::Input(
                "diff needs two report directories, or one and --pair A=B to compare two of its \
                 designs"
                    .into(),
            )),
        };
    let (a, _) = read(&args.a)?;
    let (b, _) = read(b_dir)?;
    if let Some(why) = report::incomparable(&a, &b) {
        eprintln!("futexsim: warning: the sets do not compare like with like: {why}");
    }
    let pairs = args
        .pairs
        .iter()
        .map(|text| pair_of(text, &a, &b))
        .collect::<Result<Vec<_>, _>>()?;
    let (cells_a, cells_b) = (summary::cells(&a), summary::cells(&b));
    let mut counts = Counts::default();
    let mut compared = Vec::new();
    let mut matched = Vec::new();
    for old in &cells_a {
        // Points are matched by their axis values.
        for design in partners(old.design, &pairs) {
            if let Some(new) = cells_b
                .iter()
                .find(|c| c.label == old.label && c.design == design)
            {
                matched.push((old, new));
            }
        }
    }
    // The figures of A's benchmark, the one it exists for first.
    let headline = summary::headline(&a);
    for (old, new) in matched {
        counts.pairs += 1;
        for h in &headline {
            let (old_each, new_each) = (old.each(|r| h.read(r)), new.each(|r| h.read(r)));
            let sides = (
                SeedInterval::of(&old_each, test.confidence()),
                SeedInterval::of(&new_each, test.confidence()),
            );
            let Some((change, (a_side, b_side))) = Change::between(&old_each, &new_each, &test)
                .filter(|c| c.ratio.mean.is_finite())
                .zip(sides.0.zip(sides.1))
            else {
                continue;
            };
            let verdict = change.verdict(h.better);
            counts.count(verdict);
            compared.push(Compared {
                point: &old.label,
                design: old.design,
                b_design: new.design,
                figure: h.name,
                better: h.better.word(),
                a: a_side,
                b: b_side,
                ratio: change.ratio,
                verdict,
            });
        }
    }
    if counts.pairs == 0 {
        return Err(CliError::Input(format!(
            "{} and {} have no (point, design) in common{}",
            args.a.display(),
            b_dir.display(),
            if pairs.is_empty() {
                " (--pair A=B compares designs named differently)"
            } else {
                ""
            }
        )));
    }
    let reversed: Vec<Pair> = pairs.iter().map(|p| Pair { a: p.b, b: p.a }).collect();
    let mut one_sided = one_side_only("A", &cells_a, &cells_b, &pairs);
    one_sided.extend(one_side_only("B", &cells_b, &cells_a, &reversed));
    let regressed = counts.regressed;
    let side = |dir: &PathBuf, set: &ResultSet| Side {
        dir: dir.display().to_string(),
        git_commit: set.provenance.git_commit.clone(),
    };
    let document = Document {
        schema: JSON_SCHEMA,
        a: side(&args.a, &a),
        b: side(b_dir, &b),
        test: TestStated {
            ratio: "paired: the mean over repetitions of B/A at the same seed",
            interval: "two-sided Student-t over the per-seed values",
            confidence: test.confidence(),
            parameters: &test,
            bimodal_rule: BIMODAL_RULE,
        },
        primary: Primary {
            figure: headline[0].name,
            column: headline[0].column,
            better: headline[0].better.word(),
        },
        pairs,
        cells: compared,
        one_side_only: one_sided,
        summary: counts,
    };
    if args.json {
        let json = serde_json::to_string_pretty(&document)
            .map_err(|e| CliError::Failed(format!("writing the comparison as JSON: {e}")))?;
        writeln!(out, "{json}")?;
    } else {
        print_table(args.all, &document, &test, out)?;
    }
    if args.fail_on_regression && regressed > 0 {
        out.flush()?;
        return Err(CliError::Failed(format!(
            "{regressed} figures regressed beyond the noise (--fail-on-regression)"
        )));
    }
    Ok(())
}

/// The comparison as people read it: the test stated, the changed figures
/// (all with `all`), what one side lacks, and the summary line.
fn print_table(
    all: bool,
    doc: &Document,
    test: &Test,
    out: &mut impl Write,
) -> Result<(), CliError> {
    writeln!(
        out,
        "A: {} ({})\nB: {} ({})\nA and B: means over repetitions ± half their {}% seed interval \
         (Student-t); B/A: the paired ratio, the mean of per-seed ratios B/A, with its interval \
         (low..high).\ntest: {}.\n{BIMODAL_RULE}.\np99 ns: {BUCKETED_QUANTILES}.\nfirst figure of \
         each pair: {} ({} is better), the figure A's benchmark exists for.\n",
        doc.a.dir,
        doc.a.git_commit,
        doc.b.dir,
        doc.b.git_commit,
        test.confidence() * 100.0,
        test.describe(),
        doc.primary.figure,
        doc.primary.better,
    )?;
    let rows: Vec<&Compared> = doc
        .cells
        .iter()
        .filter(|c| all || c.verdict != Verdict::WithinNoise)
        .collect();
    if rows.is_empty() {
        writeln!(out, "No figure changed beyond the noise.\n")?;
    } else {
        writeln!(
            out,
            "| point | design | figure | A | B | B/A paired ratio (interval) | verdict |"
        )?;
        writeln!(out, "|---|---|---|---:|---:|---:|---|")?;
        for c in rows {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                c.point,
                shown_design(c),
                c.figure,
                c.a.show(figure),
                c.b.show(figure),
                c.ratio.show_range(),
                c.verdict.word()
            )?;
        }
        writeln!(out)?;
    }
    for line in &doc.one_side_only {
        writeln!(out, "{line}")?;
    }
    let unmatched = if doc.one_side_only.is_empty() {
        String::new()
    } else {
        format!("; {} present on one side only", doc.one_side_only.len())
    };
    writeln!(
        out,
        "summary: {} figures of {} (point, design) pairs: {} improved, {} regressed, {} within \
         noise, {} not judged{unmatched}",
        doc.summary.figures,
        doc.summary.pairs,
        doc.summary.improved,
        doc.summary.regressed,
        doc.summary.within_noise,
        doc.summary.not_judged
    )?;
    Ok(())
}

/// The designs of the other set that `design` is compared with: those
/// `pairs` (ours, theirs) give it, or without pairs the one of its name.
fn partners<'a>(design: &'a str, pairs: &[Pair<'a>]) -> Vec<&'a str> {
    if pairs.is_empty() {
        vec![design]
    } else {
        pairs
            .iter()
            .filter(|p| p.a == design)
            .map(|p| p.b)
            .collect()
    }
}

/// A compared design as the table shows it: its name, or `A → B` when
/// `--pair` compared two names.
fn shown_design(c: &Compared) -> String {
    if c.design == c.b_design {
        c.design.to_string()
    } else {
        format!("{} → {}", c.design, c.b_design)
    }
}

/// The designs, points and (point, design) pairs of `ours` that `theirs`
/// lacks, each named once: a design missing everywhere is one line, not one
/// per point. With `pairs` (ours, theirs), only the paired designs are
/// looked at, each against its partner; without, each against its name.
fn one_side_only(side: &str, ours: &[Cell], theirs: &[Cell], pairs: &[Pair]) -> Vec<String> {
    let designs: BTreeSet<&str> = theirs.iter().map(|c| c.design).collect();
    let points: BTreeSet<&str> = theirs.iter().map(|c| c.label.as_str()).collect();
    let mut lines: Vec<String> = Vec::new();
    let mut push = |line: String| {
        if !lines.contains(&line) {
            lines.push(line);
        }
    };
    for cell in ours {
        let partners = partners(cell.design, pairs);
        if partners.is_empty()
            || theirs
                .iter()
                .any(|c| c.label == cell.label && partners.contains(&c.design))
        {
            continue;
        }
        if !partners.iter().any(|p| designs.contains(p)) {
            push(format!("only in {side}: design {}", cell.design));
        } else if !points.contains(cell.label.as_str()) {
            push(format!("only in {side}: point {}", cell.label));
        } else {
            push(format!("only in {side}: {} at {}", cell.design, cell.label));
        }
    }
    lines
}
