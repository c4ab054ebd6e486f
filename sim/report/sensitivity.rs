//! The model interval of a `--sensitivity` run (sim/sensitivity), one
//! exporter per format: sensitivity.md for a person, sensitivity.json for a
//! program (the [`Sensitivity`] as it is, every swing included).

use super::summary::figure;
use super::File;
use crate::files;
use crate::limits::RESULTS_CAP;
use crate::results::ResultSet;
use crate::sensitivity::spans::{Sensitivity, Span};
use std::fmt::Write;
use std::path::Path;

pub const MARKDOWN: &str = "sensitivity.md";
pub const JSON: &str = "sensitivity.json";

/// What an answer is when the model interval holds both of its sides.
pub const CANNOT_TELL: &str = "the model cannot tell";

/// A renderer of the model interval into its files.
pub type Format = fn(&Sensitivity) -> std::io::Result<Vec<File>>;

pub const FORMATS: [Format; 2] = [markdown, json];

/// The model interval `dir` holds (its sensitivity.json), when it was
/// computed around `set`; None when there is none, it does not read, or it
/// describes other results (it is then not published again).
pub fn kept(dir: &Path, set: &ResultSet) -> Option<Sensitivity> {
    let bytes = files::read(&dir.join(JSON), RESULTS_CAP).ok()?;
    let interval: Sensitivity = serde_json::from_slice(&bytes).ok()?;
    interval.describes(set).then_some(interval)
}

fn json(s: &Sensitivity) -> std::io::Result<Vec<File>> {
    let mut bytes = serde_json::to_vec_pretty(s)?;
    bytes.push(b'\n');
    Ok(vec![File {
        path: JSON.into(),
        bytes,
    }])
}

fn markdown(s: &Sensitivity) -> std::io::Result<Vec<File>> {
    let mut md = String::new();
    let _ = writeln!(md, "# Model interval: {}\n", s.config_name);
    let _ = writeln!(
        md,
        "The config re-run over the plausible ranges of its machine profile's unmeasured \
         parameters (the profile's `[plausible]` table): {}. The nominal run is the config as \
         it is (report.md). Each figure's model interval is its least and greatest value over \
         the nominal run and the samples; the parameter that moves it most is the one whose \
         one-at-a-time swing (the figure with the parameter at its high minus at its low, the \
         others nominal) is largest. The interval is over the model's unknowns only: the seed \
         interval is beside it in report.md. Reproduce with `futexsim run CONFIG \
         --sensitivity`.\n",
        s.rule
    );
    parameters(&mut md, s);
    conclusions(&mut md, s);
    let _ = writeln!(
        md,
        "## Ratios to the baseline {}\n\n{}.\n",
        s.baseline, s.ratio_definition
    );
    let _ = writeln!(
        md,
        "| point | design | nominal | model interval | moved most by | sign |"
    );
    let _ = writeln!(md, "|---|---|---:|---:|---|---|");
    for r in &s.ratios {
        let (low, high) = (r.span.low, r.span.high);
        let sign = if r.cannot_tell {
            CANNOT_TELL
        } else if low > 1.0 {
            "faster throughout"
        } else if high < 1.0 {
            "slower throughout"
        } else if low == high {
            "equal throughout"
        } else if low == 1.0 {
            "faster or equal throughout"
        } else {
            "slower or equal throughout"
        };
        let _ = writeln!(
            md,
            "| {} | {} | {:.3}x | {:.3}x to {:.3}x | {} | {sign} |",
            r.point,
            r.design,
            r.span.nominal,
            r.span.low,
            r.span.high,
            mover(s, &r.span, |v| format!("{v:+.3}"))
        );
    }
    let _ = writeln!(
        md,
        "\n## Best design\n\nThe design best by the figure the ratios are of, as report.md \
         names it, in the nominal run and in every sample.\n"
    );
    let _ = writeln!(md, "| point | nominal | within the model interval |");
    let _ = writeln!(md, "|---|---|---|");
    for f in &s.fastest {
        let within = if f.cannot_tell {
            format!("{}: {CANNOT_TELL}", f.within.join(", "))
        } else {
            format!("{} throughout", f.nominal)
        };
        let _ = writeln!(md, "| {} | {} | {within} |", f.point, f.nominal);
    }
    let _ = writeln!(
        md,
        "\n## Figures\n\nEach a mean over repetitions.\n\n| point | design | figure | nominal | \
         model interval | moved most by |\n|---|---|---|---:|---:|---|"
    );
    for f in &s.figures {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} to {} | {} |",
            f.point,
            f.design,
            f.figure,
            figure(f.span.nominal),
            figure(f.span.low),
            figure(f.span.high),
            mover(s, &f.span, |v| {
                let sign = if v >= 0.0 { "+" } else { "" };
                format!("{sign}{}", figure(v))
            })
        );
    }
    Ok(vec![File {
        path: MARKDOWN.into(),
        bytes: md.into_bytes(),
    }])
}

/// The parameters varied and held, and the samples.
fn parameters(md: &mut String, s: &Sensitivity) {
    let _ = writeln!(
        md,
        "## Parameters\n\n| parameter | nominal | low | high | source of the range |\n\
         |---|---:|---:|---:|---|"
    );
    for p in &s.parameters {
        let _ = writeln!(
            md,
            "| `{}` | {} | {} | {} | {} |",
            p.path, p.nominal, p.range.low, p.range.high, p.range.source
        );
    }
    if s.parameters.is_empty() {
        let _ = writeln!(md, "| (none) | | | | |");
    }
    for h in &s.held {
        let _ = writeln!(
            md,
            "\nHeld at the config's value: `{}`, as {}.",
            h.path, h.why
        );
    }
    let _ = writeln!(
        md,
        "\nEach sample sets the parameters it names; the others keep their nominal values.\n\n\
         | sample | sets |\n|---|---|"
    );
    for sample in &s.samples {
        let sets: Vec<String> = sample
            .settings
            .iter()
            .map(|(p, v)| format!("`{p}` = {v}"))
            .collect();
        let _ = writeln!(md, "| {} | {} |", sample.label, sets.join(", "));
    }
    md.push('\n');
}

/// What the interval changes in the report's answers, first.
fn conclusions(md: &mut String, s: &Sensitivity) {
    let _ = writeln!(md, "## What the model interval changes\n");
    let unsure: Vec<String> = s
        .ratios
        .iter()
        .filter(|r| r.cannot_tell)
        .map(|r| format!("{} at {}", r.design, r.point))
        .collect();
    let changing: Vec<&str> = s
        .fastest
        .iter()
        .filter(|f| f.cannot_tell)
        .map(|f| f.point.as_str())
        .collect();
    let _ = writeln!(
        md,
        "- Ratios to the baseline whose interval spans both sides of 1 ({CANNOT_TELL} whether \
         faster or slower): {} of {}{}.",
        unsure.len(),
        s.ratios.len(),
        listed(&unsure)
    );
    let _ = writeln!(
        md,
        "- Points where the best design changes inside the model interval ({CANNOT_TELL} \
         which is best): {} of {}{}.\n",
        changing.len(),
        s.fastest.len(),
        listed(&changing.iter().map(|p| p.to_string()).collect::<Vec<_>>())
    );
}

fn listed(items: &[String]) -> String {
    if items.is_empty() {
        String::new()
    } else {
        format!(": {}", items.join("; "))
    }
}

/// "`coherence.read_occupancy` (swing +0.312)": the parameter that moves the
/// figure most and its swing; "nothing" when none moves it.
fn mover(s: &Sensitivity, span: &Span, show: impl Fn(f64) -> String) -> String {
    let Some(path) = &span.moved_most_by else {
        return "nothing".into();
    };
    let swing = s
        .parameters
        .iter()
        .position(|p| &p.path == path)
        .and_then(|j| span.swings.get(j));
    match swing {
        Some(swing) => format!("`{path}` (swing {})", show(*swing)),
        None => format!("`{path}`"),
    }
}
