//! The figures of each (sweep point, design), averaged over repetitions:
//! what the summary table shows and the comparison and charts start from.

use super::compare::{Better, Change, Test};
use super::interval::{SeedInterval, CONFIDENCE};
use crate::record::{LoadRecord, RunRecord, WorkloadKind};
use crate::results::ResultSet;
use crate::workload::lead::LeadFigure;

/// The runs of one design at one sweep point.
pub struct Cell<'a> {
    pub point: usize,
    /// "cpus=64, line_size=128", or "-" without a sweep.
    pub label: String,
    pub design: &'a str,
    /// In repetition order.
    pub runs: Vec<&'a RunRecord>,
}

impl Cell<'_> {
    /// The mean of a figure over the repetitions.
    pub fn mean(&self, figure: impl Fn(&RunRecord) -> f64) -> f64 {
        self.runs.iter().map(|r| figure(r)).sum::<f64>() / self.runs.len().max(1) as f64
    }

    /// A figure per repetition.
    pub fn each(&self, figure: impl Fn(&RunRecord) -> f64) -> Vec<f64> {
        self.runs.iter().map(|r| figure(r)).collect()
    }

    /// The mean of a figure over the repetitions with its 95 % seed
    /// interval; None for a cell without runs.
    pub fn interval(&self, figure: impl Fn(&RunRecord) -> f64) -> Option<SeedInterval> {
        SeedInterval::of(&self.each(figure), CONFIDENCE)
    }

    /// The paired ratio of a figure, this cell over `baseline` (the same
    /// point's baseline cell), judged by the default test.
    pub fn against(&self, baseline: &Cell, figure: impl Fn(&RunRecord) -> f64) -> Option<Change> {
        Change::between(&baseline.each(&figure), &self.each(&figure), &Test::DEFAULT)
    }

    /// The CPUs the workload keeps busy: one thread per CPU.
    pub fn threads(&self) -> u32 {
        self.runs.first().map_or(0, |r| r.threads)
    }
}

/// A figure `diff` and summary.csv give for every cell.
#[derive(Clone, Copy, Debug)]
pub struct Headline {
    /// As `diff` prints it.
    pub name: &'static str,
    /// As summary.csv's columns and `diff --json` name it (results.csv's
    /// column of the same figure).
    pub column: &'static str,
    pub better: Better,
    source: Source,
}

/// Where a headline figure is read from.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// One of the figures a benchmark is read by (workload::lead).
    Lead(LeadFigure),
    /// A field of every record; NaN where a record lacks it.
    Record(fn(&RunRecord) -> f64),
}

impl Headline {
    /// The figure of one run; NaN where a record lacks it.
    pub fn read(&self, r: &RunRecord) -> f64 {
        match self.source {
            Source::Lead(figure) => figure.read(r),
            Source::Record(read) => read(r),
        }
    }

    fn lead(figure: LeadFigure) -> Headline {
        Headline {
            name: figure.name(),
            column: figure.column(),
            better: figure.better(),
            source: Source::Lead(figure),
        }
    }
}

/// The figures every workload has, after its own.
const EVERY_WORKLOAD: [Headline; 4] = [
    Headline {
        name: "ops/s",
        column: "ops_per_sec",
        better: Better::Higher,
        source: Source::Record(|r| r.ops_per_sec),
    },
    Headline {
        name: "p99 ns",
        column: "lat_p99_ns",
        better: Better::Lower,
        source: Source::Record(|r| r.latency_ns.p99 as f64),
    },
    Headline {
        name: "HITM/op",
        column: "hitm_per_op",
        better: Better::Lower,
        source: Source::Record(|r| r.coherence.hitm_per_op),
    },
    Headline {
        name: "max load",
        column: "max_load",
        better: Better::Lower,
        source: Source::Record(|r| r.load.as_ref().map_or(f64::NAN, |l| l.max_load as f64)),
    },
];

/// The kind of benchmark a result set ran (its first run's).
pub fn kind(set: &ResultSet) -> WorkloadKind {
    set.runs
        .first()
        .map_or(WorkloadKind::Other, |r| r.record.workload.kind)
}

/// The headline figures of a result set: the figures its benchmark is read
/// by, the one it exists for first; then ops/s per thread where that is
/// not among them, and the figures every workload has.
pub fn headline(set: &ResultSet) -> Vec<Headline> {
    let lead = kind(set).lead_figures();
    let mut figures: Vec<Headline> = lead.iter().map(|&f| Headline::lead(f)).collect();
    if !lead.contains(&LeadFigure::ThreadOpsPerSec) {
        figures.push(Headline::lead(LeadFigure::ThreadOpsPerSec));
    }
    figures.extend(EVERY_WORKLOAD);
    figures
}

/// Why p99 (and p50) can show an interval of no width, said wherever they
/// are printed with one.
pub const BUCKETED_QUANTILES: &str = "p50 and p99 are read from the run's latency histogram \
     as the lower bound of the bucket the quantile falls in (buckets about 3 % wide, 32 per \
     power of two), so seeds whose quantile falls in one bucket agree exactly and its interval \
     can read ± 0: it resolves nothing finer than a bucket";

/// Every (point, design) with runs: points in sweep order, designs in the
/// set's order.
pub fn cells(set: &ResultSet) -> Vec<Cell<'_>> {
    let mut cells = Vec::new();
    for point in 0..set.points() {
        for design in &set.designs {
            let runs: Vec<_> = set.runs_of(point, design).collect();
            let Some(first) = runs.first() else {
                continue;
            };
            cells.push(Cell {
                point,
                label: point_label(&set.axes, &first.axis_values),
                design,
                runs: runs.iter().map(|r| &r.record).collect(),
            });
        }
    }
    cells
}

pub fn point_label(axes: &[String], values: &[String]) -> String {
    if axes.is_empty() {
        return "-".into();
    }
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{a}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// " at cpus=64" for a sweep point, nothing for a config without a sweep
/// (whose one point is labelled "-").
pub fn at_point(label: &str) -> String {
    if label == "-" {
        String::new()
    } else {
        format!(" at {label}")
    }
}

/// Per-op rate of a count; 0 for a run without ops.
pub fn per_op(count: u64, r: &RunRecord) -> f64 {
    if r.ops == 0 {
        0.0
    } else {
        count as f64 / r.ops as f64
    }
}

/// Percent of a run's keys.
pub fn of_keys(count: f64, load: &LoadRecord) -> f64 {
    if load.keys == 0 {
        0.0
    } else {
        100.0 * count / load.keys as f64
    }
}

/// Axes along which a sweep scales the CPU count; points that differ only
/// there lie on one scaling curve.
const SCALING_AXES: [&str; 2] = ["cpus", "threads"];

/// One scaling curve: a design, with every other axis held.
pub struct Series<'a> {
    /// The design, and the values of the other axes when there are any.
    pub label: String,
    pub design: &'a str,
    /// Cells in increasing thread count.
    pub cells: Vec<&'a Cell<'a>>,
}

pub fn series<'a>(set: &ResultSet, cells: &'a [Cell<'a>]) -> Vec<Series<'a>> {
    let held = |point: usize| -> Vec<String> {
        let run = set.runs.iter().find(|r| r.point == point);
        set.axes
            .iter()
            .zip(run.map_or(&[][..], |r| &r.axis_values[..]))
            .filter(|(a, _)| !SCALING_AXES.contains(&a.as_str()))
            .map(|(a, v)| format!("{a}={v}"))
            .collect()
    };
    let mut series: Vec<Series> = Vec::new();
    let mut keys: Vec<(String, Vec<String>)> = Vec::new();
    for cell in cells {
        let key = (cell.design.to_string(), held(cell.point));
        match keys.iter().position(|k| *k == key) {
            Some(i) => series[i].cells.push(cell),
            None => {
                let label = if key.1.is_empty() {
                    key.0.clone()
                } else {
                    format!("{} ({})", key.0, key.1.join(", "))
                };
                series.push(Series {
                    label,
                    design: cell.design,
                    cells: vec![cell],
                });
                keys.push(key);
            }
        }
    }
    for s in &mut series {
        s.cells.sort_by_key(|c| (c.threads(), c.point));
    }
    series
}

/// The point with the most threads (the last such in sweep order): where
/// the load histogram and the node heat map are drawn.
pub fn busiest_point(cells: &[Cell]) -> Option<usize> {
    cells
        .iter()
        .max_by_key(|c| (c.threads(), c.point))
        .map(|c| c.point)
}

/// The cells of the busiest point, in their order; None without cells.
pub fn busiest_cells<'a>(cells: &'a [Cell<'a>]) -> Option<Vec<&'a Cell<'a>>> {
    let point = busiest_point(cells)?;
    Some(cells.iter().filter(|c| c.point == point).collect())
}

/// A measured figure as people read it: whole numbers as they are, others
/// to four significant digits, the integer part in groups of three
/// ("6,714,750", "0.1235", "1,234.5").
pub fn figure(v: f64) -> String {
    let plain = if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let digits = v.abs().log10().floor() as i32;
        format!("{v:.*}", (3 - digits).clamp(0, 12) as usize)
    };
    group_thousands(&plain)
}

/// "-1234567.25" as "-1,234,567.25": commas between groups of three digits
/// of the integer part.
pub fn group_thousands(number: &str) -> String {
    let (sign, unsigned) = match number.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", number),
    };
    let (whole, fraction) = match unsigned.find('.') {
        Some(dot) => unsigned.split_at(dot),
        None => (unsigned, ""),
    };
    if !whole.bytes().all(|b| b.is_ascii_digit()) {
        return number.to_string(); // inf, NaN
    }
    let mut grouped = String::with_capacity(number.len() + whole.len() / 3);
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}{fraction}")
}

/// A time in nanoseconds in the unit that keeps it short, to three
/// significant digits: "850 ns", "12.3 µs", "4.56 ms", "1.23 s".
pub fn duration_ns(ns: f64) -> String {
    let (value, unit) = match ns.abs() {
        a if a < 1e3 => (ns, "ns"),
        a if a < 1e6 => (ns / 1e3, "µs"),
        a if a < 1e9 => (ns / 1e6, "ms"),
        _ => (ns / 1e9, "s"),
    };
    if value == 0.0 {
        return "0 ns".into();
    }
    let digits = value.abs().log10().floor() as i32;
    format!("{value:.*} {unit}", (2 - digits).clamp(0, 2) as usize)
}

/// Bytes as B, KiB, MiB or GiB with one decimal.
pub fn bytes(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_grouped_in_thousands() {
        assert_eq!(figure(6714750.0), "6,714,750");
        assert_eq!(figure(-1234.0), "-1,234");
        assert_eq!(figure(999.0), "999");
        assert_eq!(figure(1234.6), "1,235");
        assert_eq!(figure(0.123456), "0.1235");
        assert_eq!(figure(12.5), "12.50");
        assert_eq!(group_thousands("1234567.25"), "1,234,567.25");
        assert_eq!(figure(f64::NAN), "NaN");
    }

    #[test]
    fn durations_take_the_unit_that_keeps_them_short() {
        assert_eq!(duration_ns(850.0), "850 ns");
        assert_eq!(duration_ns(85.25), "85.2 ns");
        assert_eq!(duration_ns(12_345.0), "12.3 µs");
        assert_eq!(duration_ns(4_560_000.0), "4.56 ms");
        assert_eq!(duration_ns(1.5e9), "1.50 s");
        assert_eq!(duration_ns(0.0), "0 ns");
    }
}
