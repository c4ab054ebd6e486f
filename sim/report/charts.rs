//! SVG charts, drawn with plotters. Against the thread count (log2 axis),
//! one line per design: total throughput with its USL fits, averaged ops/s
//! per thread on a log axis (where a collapse shows as the drop it is), and
//! HITM and RFO from Modified per op. A sweep whose curves each have a
//! single thread count gets bar charts instead, since a line through one
//! point draws nothing. At the sweep's busiest point: each design's bucket
//! lock wait and hold (the mechanism the designs differ by), its
//! bucket-load histogram beside the balls-into-bins expectation, and its
//! node-by-node HITM per op heat map, every design's on one colour scale.
//!
//! Every point and bar that is a mean over repetitions carries its 95 %
//! seed interval (interval.rs) as an error bar. Every axis's ticks are
//! chosen and written by axis.rs, in units read from its magnitude.
//!
//! Every series differs from the others by colour, marker and dash, and the
//! first ones are drawn widest, so a series that coincides with another
//! (a design identical to the baseline) still shows under it.

use super::axis::{significant_decimals, Quantity, Ticks};
use super::interval::{SeedInterval, CONFIDENCE};
use super::summary::{self, Cell, Series};
use super::usl::{self, Usl};
use super::File;
use crate::files::file_part;
use crate::record::{LoadRecord, RunRecord};
use crate::results::{ResultSet, SpeedLog};
use crate::workload::lead::LeadFigure;
use plotters::coord::ranged1d::{AsRangedCoord, DefaultFormatting, KeyPointHint, ValueFormatter};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub const DIR: &str = "charts";
pub const THROUGHPUT: &str = "charts/throughput.svg";
pub const HITM_PER_OP: &str = "charts/hitm_per_op.svg";
pub const RFO_PER_OP: &str = "charts/rfo_modified_per_op.svg";
pub const LOCK_WAIT_HOLD: &str = "charts/lock_wait_hold.svg";

const SIZE: (u32, u32) = (960, 600);
const FONT: &str = "sans-serif";

/// The chart of a figure the benchmark is read by, named by its column
/// (charts/thread_ops_per_sec.svg, charts/wake_time_ms.svg).
pub fn lead_chart(figure: LeadFigure) -> String {
    format!("{DIR}/{}.svg", figure.column())
}

pub fn load_chart(design: &str) -> String {
    format!("{DIR}/bucket_load-{}.svg", file_part(design))
}

pub fn nodes_chart(design: &str) -> String {
    format!("{DIR}/hitm_nodes-{}.svg", file_part(design))
}

/// A figure of one run.
type ReadRun = fn(&RunRecord) -> f64;

/// One figure drawn against the thread count.
struct Figure {
    /// The chart's file.
    path: String,
    /// What the chart shows; its title appends "against threads", or "at N
    /// threads" when drawn as bars.
    what: String,
    /// What the axis counts; its ticks carry the unit.
    unit: String,
    quantity: Quantity,
    read: Box<dyn Fn(&RunRecord) -> f64>,
    /// A log y axis, when every value is positive.
    log_y: bool,
    /// Draw the USL fit of each curve.
    usl: bool,
}

/// The scaling figures of a benchmark read by `leads`: its total
/// throughput, each figure it is read by, and the two coherence figures
/// every design is compared by.
fn figures(leads: &[LeadFigure]) -> Vec<Figure> {
    let primary = leads[0];
    // The total throughput in the benchmark's own terms where it has one
    // (the figure the USL describes); ops/s otherwise, with no fit: a wake
    // or requeue time is not a throughput.
    let throughput = Figure {
        path: THROUGHPUT.into(),
        what: "Total throughput".into(),
        unit: match primary {
            LeadFigure::RequestsPerSec => "requests/s, all workers".into(),
            _ => "ops/s, all threads".into(),
        },
        quantity: Quantity::Count,
        read: Box::new(move |r| primary.throughput(r).unwrap_or(r.ops_per_sec)),
        // A collapse is a fall by a factor: on a linear axis it would
        // flatten against zero beside the designs that scale.
        log_y: true,
        usl: primary.nanoseconds_per_unit().is_none(),
    };
    let lead = leads.iter().map(|&figure| {
        let (quantity, scale) = match figure.nanoseconds_per_unit() {
            Some(ns) => (Quantity::Nanoseconds, ns),
            None => (Quantity::Count, 1.0),
        };
        Figure {
            path: lead_chart(figure),
            // The ticks carry the unit, read from the values' size.
            what: format!("{} ({} is better)", figure.name(), figure.better().word()),
            unit: figure.name().into(),
            quantity,
            read: Box::new(move |r| figure.read(r) * scale),
            log_y: true,
            usl: false,
        }
    });
    let coherence = [
        Figure {
            path: HITM_PER_OP.into(),
            what: "HITM loads per op".into(),
            unit: "HITM loads per op (local + remote)".into(),
            quantity: Quantity::Plain,
            read: Box::new(|r| r.coherence.hitm_per_op),
            log_y: false,
            usl: false,
        },
        Figure {
            path: RFO_PER_OP.into(),
            what: "RFO from Modified per op".into(),
            unit: "stores and RMWs taking a Modified line, per op".into(),
            quantity: Quantity::Plain,
            read: Box::new(|r| {
                let c = &r.coherence;
                summary::per_op(c.lcl_rfo_modified + c.rmt_rfo_modified, r)
            }),
            log_y: false,
            usl: false,
        },
    ];
    std::iter::once(throughput)
        .chain(lead)
        .chain(coherence)
        .collect()
}

/// What the error bars are, as titles say it.
const ERROR_BARS: &str = "error bars: 95 % seed interval";

pub fn files(set: &ResultSet, _: &SpeedLog) -> std::io::Result<Vec<File>> {
    let cells = summary::cells(set);
    let series = summary::series(set, &cells);
    let mut files = Vec::new();
    for figure in figures(summary::kind(set).lead_figures()) {
        files.push(File {
            bytes: scaling_chart(&series, &figure)?,
            path: figure.path,
        });
    }
    let Some(busiest) = summary::busiest_cells(&cells) else {
        return Ok(files);
    };
    files.push(File {
        path: LOCK_WAIT_HOLD.into(),
        bytes: lock_chart(&busiest)?,
    });
    let heat: Vec<Vec<Vec<f64>>> = busiest.iter().map(|c| hitm_per_op_by_nodes(c)).collect();
    // One colour scale for every design: per op, so that designs that do
    // different numbers of ops compare, and shared, so that the design
    // whose lines bounce most is the reddest.
    let most = heat
        .iter()
        .flatten()
        .flatten()
        .copied()
        .map(charted)
        .fold(0.0f64, f64::max);
    for (cell, matrix) in busiest.iter().zip(&heat) {
        if let Some(load) = &cell.runs[0].load {
            files.push(File {
                path: load_chart(cell.design),
                bytes: load_histogram(cell, load)?,
            });
        }
        files.push(File {
            path: nodes_chart(cell.design),
            bytes: node_heat_map(cell, matrix, most)?,
        });
    }
    Ok(files)
}

fn drawing_error(e: impl std::error::Error) -> std::io::Error {
    std::io::Error::other(format!("drawing a chart: {e}"))
}

/// A chart's frame in the house style: its title above, and room below and
/// to the left for the axes' labels (`y_labels` wide) and descriptions.
fn framed<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    y_labels: u32,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, (FONT, 22))
        .margin(20)
        .x_label_area_size(56)
        .y_label_area_size(y_labels);
    builder
}

/// The axes of a chart in the house style, each labelled as its ticks
/// write it.
fn draw_mesh<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    (x_desc, x_ticks): (&str, &Ticks),
    (y_desc, y_ticks): (&str, &Ticks),
) -> std::io::Result<()>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .x_label_formatter(&|x| x_ticks.label(*x))
        .y_label_formatter(&|y| y_ticks.label(*y))
        .draw()
        .map_err(drawing_error)
}

/// A chart's legend in the house style, at `position`, `margin` pixels in
/// from the plot's edge.
fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
    margin: u32,
) -> std::io::Result<()>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .margin(margin)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((FONT, 16))
        .draw()
        .map_err(drawing_error)
}

/// Whether the rectangle between two corners covers at least a pixel each
/// way: a bar thinner than that draws as a rectangle of no size, and is
/// left out (its value is written beside it or in its table).
fn covers_a_pixel<'a, DB, X, Y>(
    chart: &ChartContext<'a, DB, Cartesian2d<X, Y>>,
    a: (f64, f64),
    b: (f64, f64),
) -> bool
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let (a, b) = (chart.backend_coord(&a), chart.backend_coord(&b));
    a.0 != b.0 && a.1 != b.1
}

/// The largest value a chart draws: any axis around it, its top raised
/// by a quarter or to the next power of ten, stays finite.
const MOST_CHARTED: f64 = 1e300;

/// A value as a chart draws it: no figure a run gives comes near
/// [`MOST_CHARTED`], but a result set edited by hand may hold up to
/// f64::MAX, and the mean of two of those is infinite (an axis to infinity
/// never finishes drawing).
fn charted(v: f64) -> f64 {
    v.clamp(-MOST_CHARTED, MOST_CHARTED)
}

/// The powers of `base` around the values, so a log axis has whole ticks.
fn log_bounds(values: impl Iterator<Item = f64>, base: f64, floor: f64) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return (floor, floor * base);
    }
    let log = |v: f64| v.max(floor).ln() / base.ln();
    let lo = base.powf(log(lo).floor());
    let hi = base.powf(log(hi).ceil());
    if hi > lo {
        (lo, hi)
    } else {
        (lo / base, hi * base)
    }
}

/// The threads axis: every power of two from `lo` to `hi` (both powers of
/// two), written whole.
fn thread_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (first, last) = (lo.log2().round() as i32, hi.log2().round() as i32);
    (first..=last).map(|p| 2f64.powi(p)).collect()
}

/// How a series tells itself apart: colour, marker, dash, width.
struct Look {
    color: RGBColor,
    marker: usize,
    /// Dash and gap lengths in pixels; None for a solid line.
    dash: Option<(u32, u32)>,
    width: u32,
}

/// Okabe and Ito's colour-blind-safe palette, darkest first.
const COLOURS: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

const MARKERS: usize = 5;

fn look(i: usize) -> Look {
    Look {
        color: COLOURS[i % COLOURS.len()],
        marker: i % MARKERS,
        // The first solid and widest; the others dashed, each its own way,
        // so that one drawn over another leaves the other showing.
        dash: [
            None,
            Some((14, 6)),
            Some((5, 6)),
            Some((20, 8)),
            Some((9, 9)),
        ][i % 5],
        width: match i {
            0 => 6,
            1 => 4,
            _ => 3,
        },
    }
}

/// Draws series `i`'s markers at `points` and its legend entry (a short
/// line and the marker): a hollow circle, a triangle, a square, a cross or
/// a diamond. One arm per shape, as plotters' elements differ in type.
fn draw_markers<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    i: usize,
    label: &str,
    points: &[(f64, f64)],
) -> std::io::Result<()>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let color = look(i).color;
    let line = move || PathElement::new(vec![(-12, 0), (12, 0)], color.stroke_width(2));
    let at = |p: (f64, f64)| EmptyElement::<(f64, f64), DB>::at(p);
    let legend_at = |(x, y): (i32, i32)| EmptyElement::<(i32, i32), DB>::at((x, y));
    macro_rules! shape {
        ($make:expr) => {{
            chart
                .draw_series(points.iter().map(|&p| at(p) + $make))
                .map_err(drawing_error)?
                .label(label)
                .legend(move |c| legend_at(c) + line() + $make);
        }};
    }
    match look(i).marker {
        0 => shape!(Circle::new((0, 0), 7, color.stroke_width(2))),
        1 => shape!(TriangleMarker::new((0, 0), 7, color.filled())),
        2 => shape!(Rectangle::new([(-5, -5), (5, 5)], color.filled())),
        3 => shape!(Cross::new((0, 0), 6, color.stroke_width(3))),
        _ => shape!(Polygon::new(
            vec![(0, -7), (7, 0), (0, 7), (-7, 0)],
            color.filled()
        )),
    }
    Ok(())
}

/// A coordinate whose ticks are exactly the ones given: plotters draws its
/// mesh and labels there, so a chart shows the ticks axis.rs chose.
struct Ticked<R: Ranged<ValueType = f64>> {
    inner: R,
    ticks: Vec<f64>,
}

fn ticked<T: AsRangedCoord<Value = f64>>(range: T, ticks: &Ticks) -> Ticked<T::CoordDescType> {
    Ticked {
        inner: range.into(),
        ticks: ticks.values.clone(),
    }
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // The light mesh between ticks would fall at plotters' own points.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }

    fn axis_pixel_range(&self, limit: (i32, i32)) -> std::ops::Range<i32> {
        self.inner.axis_pixel_range(limit)
    }
}

/// A curve's USL fit, when it has one that is physical.
fn physical_fit(points: &[(f64, f64)]) -> Option<Usl> {
    usl::fit(points).ok().filter(|f| f.caveat().is_none())
}

/// One curve as a chart draws it: at each thread count the figure's mean
/// over repetitions with its seed interval.
struct Curve<'a> {
    label: &'a str,
    points: Vec<(f64, SeedInterval)>,
}

impl Curve<'_> {
    fn means(&self) -> Vec<(f64, f64)> {
        self.points.iter().map(|(x, i)| (*x, i.mean)).collect()
    }
}

/// An interval as a chart draws it: every end finite ([`charted`]).
fn charted_interval(values: &[f64]) -> Option<SeedInterval> {
    let values: Vec<f64> = values.iter().copied().map(charted).collect();
    SeedInterval::of(&values, CONFIDENCE).map(|i| SeedInterval {
        mean: charted(i.mean),
        low: i.low.map(charted),
        high: i.high.map(charted),
        ..i
    })
}

/// The top of an interval: its upper end, or its mean without one.
fn reach(i: &SeedInterval) -> f64 {
    i.high.unwrap_or(i.mean).max(i.mean)
}

fn scaling_chart(series: &[Series], figure: &Figure) -> std::io::Result<Vec<u8>> {
    let curves: Vec<Curve> = series
        .iter()
        .map(|s| Curve {
            label: s.label.as_str(),
            points: s
                .cells
                .iter()
                .filter_map(|c| {
                    let interval = charted_interval(&c.each(&figure.read))?;
                    Some((f64::from(c.threads()), interval))
                })
                .collect(),
        })
        .collect();
    let single_points = curves.iter().all(|c| {
        c.points
            .iter()
            .all(|p| p.0 == c.points.first().map_or(0.0, |f| f.0))
    });
    if single_points {
        return scaling_bars(series, figure);
    }
    let means: Vec<(&str, Vec<(f64, f64)>)> = curves.iter().map(|c| (c.label, c.means())).collect();
    let values = || curves.iter().flat_map(|c| c.points.iter().map(|p| p.1));
    let mut svg = String::new();
    if figure.log_y && values().all(|v| v.mean > 0.0) {
        let (lo, hi) = log_bounds(
            values().flat_map(|i| {
                [i.mean, reach(&i)]
                    .into_iter()
                    .chain(i.low.filter(|l| *l > 0.0))
            }),
            10.0,
            1e-12,
        );
        let (l, h) = (lo.ln(), hi.ln());
        let (legend, _) = free_corner(&means, |v| (v.ln() - l) / (h - l));
        let ticks = Ticks::log(lo, hi, figure.quantity);
        let y = YAxis {
            range: lo..hi,
            ticks: &ticks,
            scale: " (log scale)",
        };
        line_chart(
            &mut svg,
            &curves,
            figure,
            ticked((lo..hi).log_scale(), &ticks),
            &y,
            legend,
        )?;
    } else {
        let top = values().map(|i| reach(&i)).fold(0.0f64, f64::max);
        let mut hi = if top > 0.0 { top * 1.15 } else { 1.0 };
        let (mut legend, hidden) = free_corner(&means, |v| v / hi);
        if hidden > 0 {
            // No corner is free: raise the top until the upper band is.
            hi = top / 0.6;
            legend = free_corner(&means, |v| v / hi).0;
        }
        let ticks = Ticks::linear(0.0, hi, figure.quantity);
        let y = YAxis {
            range: 0.0..hi,
            ticks: &ticks,
            scale: "",
        };
        line_chart(
            &mut svg,
            &curves,
            figure,
            ticked(0.0..hi, &ticks),
            &y,
            legend,
        )?;
    }
    Ok(svg.into_bytes())
}

/// A scaling figure for a sweep whose curves have one thread count each:
/// one bar per curve, one colour per design whatever the other axes'
/// values, each bar the mean over every run of its curve.
fn scaling_bars(series: &[Series], figure: &Figure) -> std::io::Result<Vec<u8>> {
    let mut designs: Vec<&str> = Vec::new();
    let mut bars = Vec::new();
    for s in series {
        let colour = designs
            .iter()
            .position(|d| *d == s.design)
            .unwrap_or_else(|| {
                designs.push(s.design);
                designs.len() - 1
            });
        let values: Vec<f64> = s.cells.iter().flat_map(|c| c.each(&figure.read)).collect();
        if let Some(interval) = charted_interval(&values) {
            bars.push(Bar {
                label: s.label.clone(),
                interval,
                colour,
                light: false,
            });
        }
    }
    let mut threads: Vec<u32> = series
        .iter()
        .flat_map(|s| s.cells.iter().map(|c| c.threads()))
        .collect();
    threads.sort_unstable();
    threads.dedup();
    let at = match threads[..] {
        [1] => " at 1 thread".to_string(),
        [n] => format!(" at {n} threads"),
        _ => " by curve".to_string(),
    };
    bar_chart(
        &format!("{}{at}", figure.what),
        &figure.unit,
        figure.quantity,
        &bars,
    )
}

/// The y axis of a line chart: its range, its ticks and what its
/// description adds about its scale.
struct YAxis<'a> {
    range: std::ops::Range<f64>,
    ticks: &'a Ticks,
    scale: &'static str,
}

impl YAxis<'_> {
    /// A value clamped into the axis, so that an interval's end past it
    /// draws at its edge.
    fn clamp(&self, v: f64) -> f64 {
        v.clamp(self.range.start, self.range.end)
    }
}

/// The corner of the plot where the legend hides the fewest points (the
/// fewest in its box of 30 % of the width and 38 % of the height), and how
/// many it hides there.
/// `height` maps a value to its height in the plot, 0 at the bottom, 1 at
/// the top; threads are on a log axis.
fn free_corner(
    curves: &[(&str, Vec<(f64, f64)>)],
    height: impl Fn(f64) -> f64,
) -> (SeriesLabelPosition, usize) {
    let xs = || curves.iter().flat_map(|c| c.1.iter().map(|p| p.0.log2()));
    let (x_lo, x_hi) = (
        xs().fold(f64::INFINITY, f64::min),
        xs().fold(f64::NEG_INFINITY, f64::max),
    );
    let width = (x_hi - x_lo).max(f64::MIN_POSITIVE);
    let points: Vec<(f64, f64)> = curves
        .iter()
        .flat_map(|c| c.1.iter())
        .map(|&(x, y)| ((x.log2() - x_lo) / width, height(y)))
        .collect();
    let hidden = |left: bool, upper: bool| {
        points
            .iter()
            .filter(|&&(x, y)| {
                let across = if left { x <= 0.3 } else { x >= 0.7 };
                let up = if upper { y >= 0.62 } else { y <= 0.38 };
                across && up
            })
            .count()
    };
    [
        (SeriesLabelPosition::UpperLeft, true, true),
        (SeriesLabelPosition::UpperRight, false, true),
        (SeriesLabelPosition::LowerRight, false, false),
        (SeriesLabelPosition::LowerLeft, true, false),
    ]
    .into_iter()
    .map(|(corner, left, upper)| (corner, hidden(left, upper)))
    .min_by_key(|&(_, n)| n)
    .unwrap_or((SeriesLabelPosition::UpperLeft, 0))
}

/// Half the width of an error bar's caps, in pixels.
const CAP: i32 = 6;

/// An error bar between two points of the chart with a cap across each
/// end, `cap` the cap's half extent in pixels (across the bar).
fn draw_error_bar<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    (from, to): ((f64, f64), (f64, f64)),
    cap: (i32, i32),
    style: ShapeStyle,
) -> std::io::Result<()>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .draw_series([PathElement::new(vec![from, to], style)])
        .map_err(drawing_error)?;
    chart
        .draw_series([from, to].map(|end| {
            EmptyElement::at(end) + PathElement::new(vec![(-cap.0, -cap.1), (cap.0, cap.1)], style)
        }))
        .map_err(drawing_error)?;
    Ok(())
}

fn line_chart<Y>(
    svg: &mut String,
    curves: &[Curve],
    figure: &Figure,
    y_coord: Y,
    y: &YAxis,
    legend: SeriesLabelPosition,
) -> std::io::Result<()>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let (x_lo, x_hi) = log_bounds(
        curves.iter().flat_map(|c| c.points.iter().map(|p| p.0)),
        2.0,
        1.0,
    );
    let x_ticks = Ticks::at_whole_numbers(thread_ticks(x_lo, x_hi));
    let means: Vec<Vec<(f64, f64)>> = curves.iter().map(Curve::means).collect();
    let fits: Vec<Option<Usl>> = means
        .iter()
        .map(|points| figure.usl.then(|| physical_fit(points)).flatten())
        .collect();
    let fitted = fits.iter().flatten().count();
    let with_intervals = curves
        .iter()
        .any(|c| c.points.iter().any(|p| p.1.half_width().is_some()));
    let mut notes = Vec::new();
    if fitted > 0 {
        notes.push(format!(
            "thin lines: USL fits of {fitted} of {} curves",
            curves.len()
        ));
    }
    if with_intervals {
        notes.push(ERROR_BARS.to_string());
    }
    let title = if notes.is_empty() {
        format!("{} against threads", figure.what)
    } else {
        format!("{} against threads; {}", figure.what, notes.join("; "))
    };
    let y_desc = format!("{}{}", figure.unit, y.scale);
    {
        let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let mut chart = framed(&root, &title, 90)
            .build_cartesian_2d(
                ticked((x_lo..x_hi).log_scale().base(2.0), &x_ticks),
                y_coord,
            )
            .map_err(drawing_error)?;
        draw_mesh(
            &mut chart,
            ("threads, one per CPU (log2 scale)", &x_ticks),
            (&y_desc, y.ticks),
        )?;
        for (i, ((curve, points), fit)) in curves.iter().zip(&means).zip(&fits).enumerate() {
            let style = look(i);
            let line = style.color.stroke_width(style.width);
            match style.dash {
                Some((dash, gap)) => chart
                    .draw_series(DashedLineSeries::new(points.clone(), dash, gap, line))
                    .map_err(drawing_error)?,
                None => chart
                    .draw_series(LineSeries::new(points.clone(), line))
                    .map_err(drawing_error)?,
            };
            let color = style.color;
            for (x, interval) in &curve.points {
                if let (Some(low), Some(high)) = (interval.low, interval.high) {
                    let ends = ((*x, y.clamp(low)), (*x, y.clamp(high)));
                    draw_error_bar(&mut chart, ends, (CAP, 0), color.stroke_width(2))?;
                }
            }
            draw_markers(&mut chart, i, curve.label, points)?;
            if let Some(fit) = fit {
                let steps = 64;
                let fitted = (0..=steps).map(|k| {
                    let n = x_lo * (x_hi / x_lo).powf(f64::from(k) / f64::from(steps));
                    (n, y.clamp(fit.throughput(n)))
                });
                chart
                    .draw_series(LineSeries::new(fitted, color.mix(0.6).stroke_width(1)))
                    .map_err(drawing_error)?;
            }
        }
        draw_legend(&mut chart, legend, 12)?;
        root.present().map_err(drawing_error)?;
    }
    Ok(())
}

/// One bar of a bar chart.
struct Bar {
    label: String,
    interval: SeedInterval,
    /// The index of its [`look`]'s colour.
    colour: usize,
    /// Drawn in a lighter shade, to tell a second figure of one design
    /// (the lock's hold beside its wait).
    light: bool,
}

/// Horizontal bars, the first on top, each with its seed interval as an
/// error bar and its mean and half width written past its end. Each bar
/// takes a row of its own, so the layout holds for one bar as for many.
fn bar_chart(
    title: &str,
    x_desc: &str,
    quantity: Quantity,
    bars: &[Bar],
) -> std::io::Result<Vec<u8>> {
    let n = bars.len().max(1);
    let top = bars
        .iter()
        .map(|b| reach(&b.interval))
        .fold(0.0f64, f64::max);
    // Room past the longest bar for its written value.
    let hi = if top > 0.0 { top * 1.45 } else { 1.0 };
    let x_ticks = Ticks::linear(0.0, hi, quantity);
    // Bar i in row n-1-i, rows 0..n from the bottom, labelled at its centre.
    let row = |i: usize| (n - 1 - i) as f64;
    let centres: Vec<f64> = (0..n).map(|i| row(i) + 0.5).collect();
    let y_ticks = Ticks::at_whole_numbers(centres.clone());
    let name = |y: f64| {
        let from_bottom = y.floor() as usize;
        n.checked_sub(from_bottom + 1)
            .and_then(|i| bars.get(i))
            .map_or(String::new(), |b| b.label.clone())
    };
    let longest = bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(0) as u32;
    let height = (120 + 48 * n as u32).max(300);
    let with_intervals = bars.iter().any(|b| b.interval.half_width().is_some());
    let title = if with_intervals {
        format!("{title}; {ERROR_BARS}")
    } else {
        title.to_string()
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (SIZE.0, height)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let mut chart = framed(&root, &title, (12 + 8 * longest).min(420))
            .build_cartesian_2d(ticked(0.0..hi, &x_ticks), ticked(0.0..n as f64, &y_ticks))
            .map_err(drawing_error)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(x_desc)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 18))
            .x_label_formatter(&|x| x_ticks.label(*x))
            .y_label_formatter(&|y| name(*y))
            .draw()
            .map_err(drawing_error)?;
        for (i, bar) in bars.iter().enumerate() {
            let (bottom, centre) = (row(i), row(i) + 0.5);
            let look = look(bar.colour);
            let fill = look.color.mix(if bar.light { 0.4 } else { 0.85 });
            let interval = &bar.interval;
            let corners = [(0.0, bottom + 0.15), (interval.mean, bottom + 0.85)];
            if covers_a_pixel(&chart, corners[0], corners[1]) {
                chart
                    .draw_series([Rectangle::new(corners, fill.filled())])
                    .map_err(drawing_error)?;
            }
            if let (Some(low), Some(high)) = (interval.low, interval.high) {
                let ends = ((low.clamp(0.0, hi), centre), (high.clamp(0.0, hi), centre));
                draw_error_bar(&mut chart, ends, (0, CAP), BLACK.stroke_width(2))?;
            }
            let value = match interval.half_width() {
                Some(half) => quantity.show_with_half_width(interval.mean, half),
                None => quantity.show(interval.mean),
            };
            let flag = if interval.bimodal { " (bimodal)" } else { "" };
            // Past the bar's end and its error bar's cap.
            let written = EmptyElement::at((reach(interval), centre))
                + Text::new(
                    format!("{value}{flag}"),
                    (CAP + 6, 0),
                    (FONT, 15)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                );
            chart
                .draw_series(std::iter::once(written))
                .map_err(drawing_error)?;
        }
        root.present().map_err(drawing_error)?;
    }
    Ok(svg.into_bytes())
}

/// Each design's bucket lock at the busiest point: the mean wait for an
/// acquisition beside the mean hold, the two that tell a lock that
/// serialises from one that bounces.
fn lock_chart(busiest: &[&Cell]) -> std::io::Result<Vec<u8>> {
    // The hold in a lighter shade of the design's colour.
    let figures: [(&str, ReadRun, bool); 2] = [
        ("wait", |r| r.locks.mean_wait_ns, false),
        ("hold", |r| r.locks.mean_hold_ns, true),
    ];
    let mut bars = Vec::new();
    for (colour, cell) in busiest.iter().enumerate() {
        for (what, read, light) in figures {
            if let Some(interval) = charted_interval(&cell.each(read)) {
                bars.push(Bar {
                    label: format!("{}: {what}", cell.design),
                    interval,
                    colour,
                    light,
                });
            }
        }
    }
    let at = busiest
        .first()
        .map_or(String::new(), |c| summary::at_point(&c.label));
    bar_chart(
        &format!("Bucket lock: mean wait and hold per acquisition{at}"),
        "time per bucket-lock acquisition",
        Quantity::Nanoseconds,
        &bars,
    )
}

/// Most bars a histogram shows; wider load ranges are grouped.
const MAX_BARS: u64 = 48;

fn load_histogram(cell: &Cell, load: &LoadRecord) -> std::io::Result<Vec<u8>> {
    let measured = &load.histogram;
    let expected = &load.uniform.histogram;
    let loads = measured
        .iter()
        .map(|c| c.load)
        .chain(expected.iter().map(|c| c.load));
    let (lo, hi) = loads.fold((u64::MAX, 0), |(lo, hi), l| (lo.min(l), hi.max(l)));
    let (lo, hi) = if lo > hi { (0, 0) } else { (lo, hi) };
    // Saturating: loads from 0 to 2^64 - 1 (a file edited) still make MAX_BARS bins.
    let width = (hi - lo).saturating_add(1).div_ceil(MAX_BARS).max(1);
    let bins = ((hi - lo) / width + 1) as usize;
    let mut bars = vec![0u64; bins];
    for c in measured {
        let bar = &mut bars[((c.load - lo) / width) as usize];
        *bar = bar.saturating_add(c.buckets);
    }
    let mut uniform = vec![0.0f64; bins];
    for c in expected {
        uniform[((c.load - lo) / width) as usize] += c.buckets;
    }
    let uniform: Vec<f64> = uniform.into_iter().map(charted).collect();
    let y_hi = bars
        .iter()
        .map(|&b| b as f64)
        .chain(uniform.iter().copied())
        .fold(1.0f64, f64::max)
        * 1.15;
    // In floating point: past the last bin may lie past 2^64.
    let x = |bin: usize| lo as f64 + bin as f64 * width as f64;
    let (x_lo, x_hi) = (lo as f64, x(bins));
    let w = width as f64;
    let title = format!(
        "Bucket load, {}{} ({} keys in {} buckets)",
        cell.design,
        summary::at_point(&cell.label),
        summary::figure(load.keys as f64),
        summary::figure(load.buckets as f64)
    );
    let x_desc = if width == 1 {
        "keys in a bucket".to_string()
    } else {
        format!("keys in a bucket (groups of {width})")
    };
    let x_ticks = Ticks::whole(x_lo, x_hi);
    let y_ticks = Ticks::linear(0.0, y_hi, Quantity::Count);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let mut chart = framed(&root, &title, 90)
            .build_cartesian_2d(ticked(x_lo..x_hi, &x_ticks), ticked(0.0..y_hi, &y_ticks))
            .map_err(drawing_error)?;
        draw_mesh(
            &mut chart,
            (&x_desc, &x_ticks),
            ("buckets (first repetition)", &y_ticks),
        )?;
        let bar = COLOURS[0].mix(0.6);
        // A bin with no buckets (or too few to cover a pixel) draws nothing.
        let drawn: Vec<[(f64, f64); 2]> = bars
            .iter()
            .enumerate()
            .map(|(i, &n)| [(x(i) + 0.1 * w, 0.0), (x(i) + 0.9 * w, n as f64)])
            .filter(|[a, b]| covers_a_pixel(&chart, *a, *b))
            .collect();
        chart
            .draw_series(
                drawn
                    .into_iter()
                    .map(|corners| Rectangle::new(corners, bar.filled())),
            )
            .map_err(drawing_error)?
            .label("measured (the design's hash of the workload's keys)")
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], bar.filled()));
        let centres: Vec<(f64, f64)> = uniform
            .iter()
            .enumerate()
            .map(|(i, &e)| (x(i) + 0.5 * w, e))
            .collect();
        let expected = COLOURS[1];
        chart
            .draw_series(DashedLineSeries::new(
                centres.clone(),
                10,
                5,
                expected.stroke_width(2),
            ))
            .map_err(drawing_error)?
            .label("uniform hash (balls into bins, expected)")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], expected.stroke_width(2))
            });
        chart
            .draw_series(
                centres
                    .iter()
                    .map(|&p| Cross::new(p, 5, expected.stroke_width(2))),
            )
            .map_err(drawing_error)?;
        // plotters' own margin of a legend, 10 pixels.
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight, 10)?;
        root.present().map_err(drawing_error)?;
    }
    Ok(svg.into_bytes())
}

/// A cell's HITM loads by node pair per op, the mean over its
/// repetitions: row the requesting node, column the node whose cache held
/// the line Modified.
fn hitm_per_op_by_nodes(cell: &Cell) -> Vec<Vec<f64>> {
    let nodes = cell
        .runs
        .first()
        .map_or(0, |r| r.coherence.hitm_nodes.len());
    let mut mean = vec![vec![0.0f64; nodes]; nodes];
    let runs = cell.runs.len().max(1) as f64;
    for r in &cell.runs {
        for (sum_row, row) in mean.iter_mut().zip(&r.coherence.hitm_nodes) {
            for (sum, &count) in sum_row.iter_mut().zip(row) {
                *sum += summary::per_op(count, r) / runs;
            }
        }
    }
    mean
}

/// Cells get their count written in them up to this many nodes.
const LABELLED_NODES: usize = 16;

/// White for none, through to full red for the most.
fn heat(share: f64) -> RGBColor {
    let shade = (255.0 * (1.0 - 0.85 * share.clamp(0.0, 1.0))) as u8;
    RGBColor(255, shade, shade)
}

/// The heat map of `matrix` (HITM loads per op by node pair), coloured on
/// the scale from 0 to `most` that every design's map shares.
fn node_heat_map(cell: &Cell, matrix: &[Vec<f64>], most: f64) -> std::io::Result<Vec<u8>> {
    let n = matrix.len().max(1);
    let top = if most > 0.0 { most } else { 1.0 };
    let title = format!(
        "HITM loads per op by node pair, {}{}",
        cell.design,
        summary::at_point(&cell.label)
    );
    // Every node labelled up to LABELLED_NODES, every k-th past that.
    let every = n.div_ceil(LABELLED_NODES);
    let node_ticks =
        Ticks::at_whole_numbers((0..n).step_by(every).map(|k| k as f64 + 0.5).collect());
    let node = |v: f64| format!("{}", v.floor());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (860, 700)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let root = root.titled(&title, (FONT, 22)).map_err(drawing_error)?;
        let (map, scale) = root.split_horizontally(720);
        let mut chart = ChartBuilder::on(&map)
            .margin(20)
            .x_label_area_size(56)
            .y_label_area_size(80)
            .build_cartesian_2d(
                ticked(0.0..n as f64, &node_ticks),
                ticked(0.0..n as f64, &node_ticks),
            )
            .map_err(drawing_error)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("node whose cache held the line Modified")
            .y_desc("requesting node")
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .x_label_formatter(&|v| node(*v))
            .y_label_formatter(&|v| node(*v))
            .draw()
            .map_err(drawing_error)?;
        let cells = || (0..n).flat_map(|row| (0..n).map(move |col| (row, col)));
        let value = |row: usize, col: usize| {
            charted(
                matrix
                    .get(row)
                    .and_then(|r| r.get(col))
                    .copied()
                    .unwrap_or(0.0),
            )
        };
        chart
            .draw_series(cells().map(|(row, col)| {
                let (x, y) = (col as f64, row as f64);
                Rectangle::new(
                    [(x, y), (x + 1.0, y + 1.0)],
                    heat(value(row, col) / top).filled(),
                )
            }))
            .map_err(drawing_error)?;
        if n <= LABELLED_NODES {
            chart
                .draw_series(cells().map(|(row, col)| {
                    let v = value(row, col);
                    // Two significant digits each: a cell far below the
                    // shared scale's top still reads as what it is.
                    let text = if v == 0.0 {
                        "0".to_string()
                    } else {
                        format!("{v:.*}", significant_decimals(v, 2))
                    };
                    Text::new(
                        text,
                        (col as f64 + 0.5, row as f64 + 0.5),
                        (FONT, if n <= 8 { 14 } else { 11 })
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Center, VPos::Center)),
                    )
                }))
                .map_err(drawing_error)?;
        }
        colour_scale(&scale, top)?;
        root.present().map_err(drawing_error)?;
    }
    Ok(svg.into_bytes())
}

/// The heat maps' key: the colour of every value from 0 to `top`.
fn colour_scale(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    top: f64,
) -> std::io::Result<()> {
    let ticks = Ticks::linear(0.0, top, Quantity::Plain);
    let mut key = ChartBuilder::on(area)
        .margin_top(20)
        .margin_bottom(76)
        .margin_right(10)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..1.0, ticked(0.0..top, &ticks))
        .map_err(drawing_error)?;
    key.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_desc("HITM loads per op, every design")
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .y_label_formatter(&|y| ticks.label(*y))
        .draw()
        .map_err(drawing_error)?;
    let steps = 64;
    key.draw_series((0..steps).map(|k| {
        let (from, to) = (
            top * k as f64 / steps as f64,
            top * (k + 1) as f64 / steps as f64,
        );
        Rectangle::new(
            [(0.0, from), (1.0, to)],
            heat(k as f64 / (steps - 1) as f64).filled(),
        )
    }))
    .map_err(drawing_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corner(curves: &[(&str, Vec<(f64, f64)>)]) -> (SeriesLabelPosition, usize) {
        free_corner(curves, |v| v / 10.0)
    }

    fn is(p: &SeriesLabelPosition, expected: &SeriesLabelPosition) -> bool {
        format!("{p:?}") == format!("{expected:?}")
    }

    /// The legend goes where no point is, and says when there is no such corner.
    #[test]
    fn the_legend_takes_a_corner_no_point_is_in() {
        // A falling curve fills the upper left and the lower right.
        let falling = [("a", vec![(8.0, 9.0), (64.0, 5.0), (512.0, 1.0)])];
        let (at, hidden) = corner(&falling);
        assert!(is(&at, &SeriesLabelPosition::UpperRight), "{at:?}");
        assert_eq!(hidden, 0);
        // Points in all four corners: one is hidden wherever the legend goes.
        let everywhere = [(
            "b",
            vec![(8.0, 9.0), (8.0, 1.0), (512.0, 9.0), (512.0, 1.0)],
        )];
        assert_eq!(corner(&everywhere).1, 1);
    }
}
