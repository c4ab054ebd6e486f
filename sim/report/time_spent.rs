//! Where the time goes: each design's op, part by part, as perf annotate
//! shows a function line by line: the share of the op's time, the
//! nanoseconds per op and how often per op each part ran, the most time
//! first, the parts summing to the mean latency; then what separates the
//! designs of a point. From the records' `time_spent`, which a run keeps
//! when asked to (`futexsim explain`); a report whose runs kept none has
//! no such section.

use super::summary::Cell;
use crate::engine::attribution::{TimeRow, TimeSpent};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// One design's op at one point, as a run recorded where its time went.
#[derive(Serialize)]
pub struct Explained<'a> {
    /// The point's label ("threads=64", or "-" without a sweep).
    pub point: String,
    pub design: &'a str,
    pub seed: u64,
    pub ops: u64,
    pub mean_latency_ns: f64,
    pub rows: &'a [TimeRow],
}

impl<'a> Explained<'a> {
    pub fn new(point: String, design: &'a str, seed: u64, spent: &'a TimeSpent) -> Explained<'a> {
        Explained {
            point,
            design,
            seed,
            ops: spent.ops,
            mean_latency_ns: spent.latency_ps as f64 / 1000.0 / spent.ops.max(1) as f64,
            rows: &spent.rows,
        }
    }
}

/// How the tables are written out: each format one renderer of the same
/// `Explained` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A heading and a table per design, then what separates the designs.
    Markdown,
    /// The list itself, every row with its numbers.
    Json,
}

/// `explained` written as `format` says.
pub fn render(explained: &[Explained], format: Format) -> String {
    match format {
        Format::Markdown => markdown(explained),
        Format::Json => {
            let mut json = serde_json::to_string_pretty(explained)
                .expect("the rows serialize: no map among them, no float but finite ones");
            json.push('\n');
            json
        }
    }
}

/// What the tables' columns mean: the report's section and the command
/// print it above them.
pub const INTRO: &str = "Each counted op's simulated time, from its start to its return, charged stretch by stretch to what its task waited on (sim/engine/attribution.rs): a compute step (syscall entry/exit with the era's mitigations, the key, jhash2), each access by the kernel function that made it, how the directory served it and the field it touched, a lock held by another task (spinning or queued), sleep, the wake-up's IPI, and the CPU shared with an SMT sibling or the tick. The parts of every op sum to its latency exactly; a store that retires into the store buffer is not the op's time (it commits in the background), only a later wait for the buffer is (\"ordering\"). share is the part's share of the mean latency, count/op how often per op the task waited on it. From the first repetition.\n";

fn markdown(explained: &[Explained]) -> String {
    let mut md = String::new();
    let mut points: Vec<&str> = Vec::new();
    for e in explained {
        if !points.contains(&e.point.as_str()) {
            points.push(&e.point);
        }
    }
    for point in points {
        let here: Vec<&Explained> = explained.iter().filter(|e| e.point == point).collect();
        for e in &here {
            table(&mut md, e);
        }
        if let Some((first, others)) = here.split_first() {
            for other in others {
                let _ = writeln!(md, "{}\n", against(other, first));
            }
        }
    }
    md
}

/// One design's op at one point as a table, the most time first, its
/// total the mean latency.
fn table(md: &mut String, e: &Explained) {
    let _ = writeln!(
        md,
        "### {}{} (seed {}): {:.2} ns per op over {} ops\n",
        e.design,
        at(&e.point),
        e.seed,
        e.mean_latency_ns,
        e.ops
    );
    let _ = writeln!(
        md,
        "| share | ns/op | count/op | part | symbol | served | touched |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---|---|---|---|");
    let latency_ps: u64 = e.rows.iter().map(|r| r.ps).sum();
    for r in e.rows {
        let _ = writeln!(
            md,
            "| {:.1}% | {:.2} | {:.2} | {} | {} | {} | {} |",
            100.0 * r.ps as f64 / latency_ps.max(1) as f64,
            r.ns_per_op,
            r.count_per_op,
            r.part.name(),
            r.symbol.map_or("", |s| s.name()),
            r.served.map_or("", |s| s.name()),
            r.field.as_deref().unwrap_or(""),
        );
    }
    let _ = writeln!(
        md,
        "| 100.0% | {:.2} | | total: the mean latency | | | |\n",
        e.mean_latency_ns
    );
}

/// Where `e`'s op spends its time unlike `base`'s: the functions (or,
/// for the parts no function makes, the parts) whose ns per op differ
/// most, with the mean latencies.
fn against(e: &Explained, base: &Explained) -> String {
    let by_what = |e: &Explained| {
        let mut sums: BTreeMap<&str, f64> = BTreeMap::new();
        for r in e.rows {
            let what = r.symbol.map_or(r.part.name(), |s| s.name());
            *sums.entry(what).or_default() += r.ns_per_op;
        }
        sums
    };
    let (mine, theirs) = (by_what(e), by_what(base));
    let either: BTreeSet<&str> = mine.keys().chain(theirs.keys()).copied().collect();
    let mut differences: Vec<(&str, f64)> = either
        .into_iter()
        .map(|what| {
            let of = |sums: &BTreeMap<&str, f64>| sums.get(what).copied().unwrap_or(0.0);
            (what, of(&mine) - of(&theirs))
        })
        .collect();
    differences.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(b.0)));
    let most: Vec<String> = differences
        .iter()
        .filter(|(_, d)| d.abs() >= 0.005)
        .take(4)
        .map(|(what, d)| format!("{d:+.2} ns in {what}"))
        .collect();
    let what = match most.is_empty() {
        true => "the same parts".to_string(),
        false => most.join(", "),
    };
    format!(
        "{} against {}{}: {:.2} against {:.2} ns per op; per op, {what}.",
        e.design,
        base.design,
        at(&e.point),
        e.mean_latency_ns,
        base.mean_latency_ns
    )
}

/// " at POINT", or nothing for a config without a sweep, whose one point
/// is labelled "-" (summary::point_label).
fn at(point: &str) -> String {
    match point {
        "-" => String::new(),
        _ => format!(" at {point}"),
    }
}

/// report.md's "Where the time goes": every point and design whose first
/// repetition kept its time; nothing when none did.
pub fn section(md: &mut String, cells: &[Cell]) {
    let explained: Vec<Explained> = cells
        .iter()
        .filter_map(|c| {
            let r = c.runs.first()?;
            let spent = r.time_spent.as_ref()?;
            Some(Explained::new(c.label.clone(), c.design, r.seed, spent))
        })
        .collect();
    if explained.is_empty() {
        return;
    }
    let _ = writeln!(md, "## Where the time goes\n");
    let _ = writeln!(md, "{INTRO}");
    md.push_str(&render(&explained, Format::Markdown));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::attribution::Part;
    use crate::symbol::Symbol;

    fn row(part: Part, symbol: Option<Symbol>, ns_per_op: f64) -> TimeRow {
        TimeRow {
            part,
            symbol,
            served: None,
            field: None,
            ps: (ns_per_op * 1000.0) as u64,
            count: 1,
            ns_per_op,
            count_per_op: 1.0,
        }
    }

    fn spent(rows: Vec<TimeRow>) -> TimeSpent {
        TimeSpent {
            ops: 1,
            latency_ps: rows.iter().map(|r| r.ps).sum(),
            unbalanced_ops: 0,
            rows,
        }
    }

    #[test]
    fn the_tables_total_the_mean_latency_and_name_what_separates_the_designs() {
        let old = spent(vec![row(Part::Syscall, None, 90.0)]);
        let new = spent(vec![
            row(Part::Syscall, None, 90.0),
            row(Part::Access, Some(Symbol::FutexPrivateHashGet), 16.0),
        ]);
        let explained = [
            Explained::new("-".into(), "v6.16", 1, &old),
            Explained::new("-".into(), "v6.17", 1, &new),
        ];
        let md = render(&explained, Format::Markdown);
        assert!(
            md.contains("| 100.0% | 106.00 | | total: the mean latency |"),
            "{md}"
        );
        assert!(
            md.contains("| 84.9% | 90.00 | 1.00 | syscall entry/exit |"),
            "{md}"
        );
        assert!(
            md.contains("v6.17 against v6.16: 106.00 against 90.00 ns per op; per op, +16.00 ns in futex_private_hash_get."),
            "{md}"
        );
        assert!(
            !md.contains(" at -"),
            "a config without a sweep names no point: {md}"
        );
        let swept = render(
            &[Explained::new("threads=8".into(), "v6.16", 1, &old)],
            Format::Markdown,
        );
        assert!(swept.contains("### v6.16 at threads=8 (seed 1)"), "{swept}");
        let json: serde_json::Value =
            serde_json::from_str(&render(&explained, Format::Json)).unwrap();
        assert_eq!(json[1]["rows"][1]["symbol"], "futex_private_hash_get");
    }
}
