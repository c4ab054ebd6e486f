//! SVG charts, drawn with plotters. Against the thread count (log2 axis),
//! one line per design: total throughput with its USL fits, averaged ops/s
//! per thread on a log axis (where a collapse shows as the drop it is), and
//! HITM per op. A sweep whose curves each have a single thread count gets
//! bar charts instead, since a line through one point draws nothing. At the
//! sweep's busiest point: each design's bucket-load histogram beside the
//! balls-into-bins expectation, and its node-by-node HITM heat map with its
//! colour scale.
//!
//! Every series differs from the others by colour, marker and dash, and the
//! first ones are drawn widest, so a series that coincides with another
//! (a design identical to the baseline) still shows under it.

use super::summary::{self, Cell, Series};
use super::usl::{self, Usl};
use super::File;
use crate::files::file_part;
use crate::record::{LoadRecord, RunRecord};
use crate::results::{ResultSet, SpeedLog};
use plotters::coord::ranged1d::{AsRangedCoord, SegmentValue, ValueFormatter};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;

pub const DIR: &str = "charts";
pub const THROUGHPUT: &str = "charts/throughput.svg";
pub const PER_THREAD: &str = "charts/per_thread.svg";
pub const HITM_PER_OP: &str = "charts/hitm_per_op.svg";
pub const RFO_PER_OP: &str = "charts/rfo_modified_per_op.svg";

const SIZE: (u32, u32) = (960, 600);
const FONT: &str = "sans-serif";

pub fn load_chart(design: &str) -> String {
    format!("{DIR}/bucket_load-{}.svg", file_part(design))
}

pub fn nodes_chart(design: &str) -> String {
    format!("{DIR}/hitm_nodes-{}.svg", file_part(design))
}

/// One figure drawn against the thread count.
struct Figure {
    /// What the chart shows, "against threads" or "by curve" appended.
    what: &'static str,
    unit: &'static str,
    read: fn(&RunRecord) -> f64,
    /// A log y axis, when every value is positive.
    log_y: bool,
    /// Draw the USL fit of each curve.
    usl: bool,
}

const FIGURES: [(&str, Figure); 4] = [
    (
        THROUGHPUT,
        Figure {
            what: "Throughput",
            unit: "M ops/s, all threads",
            read: |r| r.ops_per_sec / 1e6,
            // A collapse is a fall by a factor: on a linear axis it would
            // flatten against zero beside the designs that scale.
            log_y: true,
            usl: true,
        },
    ),
    (
        PER_THREAD,
        Figure {
            what: "Averaged ops/s per thread",
            unit: "M ops/s per thread",
            read: |r| r.mean_thread_ops_per_sec / 1e6,
            log_y: true,
            usl: false,
        },
    ),
    (
        HITM_PER_OP,
        Figure {
            what: "HITM loads per op",
            unit: "HITM loads per op (local + remote)",
            read: |r| r.coherence.hitm_per_op,
            log_y: false,
            usl: false,
        },
    ),
    (
        RFO_PER_OP,
        Figure {
            what: "RFO from Modified per op",
            unit: "stores and RMWs taking a Modified line, per op",
            read: |r| {
                let c = &r.coherence;
                summary::per_op(c.lcl_rfo_modified + c.rmt_rfo_modified, r)
            },
            log_y: false,
            usl: false,
        },
    ),
];

pub fn files(set: &ResultSet, _: &SpeedLog) -> std::io::Result<Vec<File>> {
    let cells = summary::cells(set);
    let series = summary::series(set, &cells);
    let mut files = Vec::new();
    for (path, figure) in &FIGURES {
        files.push(File {
            path: (*path).into(),
            bytes: scaling_chart(&series, figure)?,
        });
    }
    let Some(point) = summary::busiest_point(&cells) else {
        return Ok(files);
    };
    for cell in cells.iter().filter(|c| c.point == point) {
        let first = cell.runs[0];
        if let Some(load) = &first.load {
            files.push(File {
                path: load_chart(cell.design),
                bytes: load_histogram(cell, load)?,
            });
        }
        files.push(File {
            path: nodes_chart(cell.design),
            bytes: node_heat_map(cell, first)?,
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

/// The axes of a chart that counts something against a whole-numbered x
/// (threads, keys), in the house style: whole x labels, y labels as
/// `axis_number` writes them.
fn draw_counting_mesh<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    x_desc: impl Into<String>,
    y_desc: impl Into<String>,
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
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| axis_number(*y))
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

/// An axis number without trailing zeros: 0.25, 4, 1500.
fn axis_number(v: f64) -> String {
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    summary::group_thousands(text)
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

/// A curve's USL fit, when it has one that is physical.
fn physical_fit(points: &[(f64, f64)]) -> Option<Usl> {
    usl::fit(points).filter(|f| f.caveat().is_none())
}

fn scaling_chart(series: &[Series], figure: &Figure) -> std::io::Result<Vec<u8>> {
    let curves: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .map(|s| {
            let points = s
                .cells
                .iter()
                .map(|c| (f64::from(c.threads()), charted(c.mean(figure.read))))
                .collect();
            (s.label.as_str(), points)
        })
        .collect();
    let single_points = curves.iter().all(|(_, points)| {
        points
            .iter()
            .all(|p| p.0 == points.first().map_or(0.0, |f| f.0))
    });
    if single_points {
        // One colour per design, whatever the other axes' values.
        let mut designs: Vec<&str> = Vec::new();
        let colours: Vec<usize> = series
            .iter()
            .map(|s| {
                designs
                    .iter()
                    .position(|d| *d == s.design)
                    .unwrap_or_else(|| {
                        designs.push(s.design);
                        designs.len() - 1
                    })
            })
            .collect();
        return bar_chart(&curves, &colours, figure);
    }
    let values = || curves.iter().flat_map(|c| c.1.iter().map(|p| p.1));
    let mut svg = String::new();
    if figure.log_y && values().all(|v| v > 0.0) {
        let (lo, hi) = log_bounds(values(), 10.0, 1e-12);
        let (l, h) = (lo.ln(), hi.ln());
        let (legend, _) = free_corner(&curves, |v| (v.ln() - l) / (h - l));
        line_chart(
            &mut svg,
            &curves,
            figure,
            (lo..hi).log_scale(),
            "log scale",
            legend,
        )?;
    } else {
        let top = values().fold(0.0f64, f64::max);
        let mut hi = if top > 0.0 { top * 1.15 } else { 1.0 };
        let (mut legend, hidden) = free_corner(&curves, |v| v / hi);
        if hidden > 0 {
            // No corner is free: raise the top until the upper band is.
            hi = top / 0.6;
            legend = free_corner(&curves, |v| v / hi).0;
        }
        line_chart(&mut svg, &curves, figure, 0.0..hi, "", legend)?;
    }
    Ok(svg.into_bytes())
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

fn line_chart<Y>(
    svg: &mut String,
    curves: &[(&str, Vec<(f64, f64)>)],
    figure: &Figure,
    y_range: Y,
    y_scale: &str,
    legend: SeriesLabelPosition,
) -> std::io::Result<()>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let (x_lo, x_hi) = log_bounds(
        curves.iter().flat_map(|c| c.1.iter().map(|p| p.0)),
        2.0,
        1.0,
    );
    let fits: Vec<Option<Usl>> = curves
        .iter()
        .map(|(_, points)| figure.usl.then(|| physical_fit(points)).flatten())
        .collect();
    let fitted = fits.iter().flatten().count();
    let title = if fitted > 0 {
        format!(
            "{} against threads; thin lines: USL fits of {fitted} of {} curves",
            figure.what,
            curves.len()
        )
    } else {
        format!("{} against threads", figure.what)
    };
    let y_desc = if y_scale.is_empty() {
        figure.unit.to_string()
    } else {
        format!("{} ({y_scale})", figure.unit)
    };
    {
        let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let mut chart = framed(&root, &title, 90)
            .build_cartesian_2d((x_lo..x_hi).log_scale().base(2.0), y_range)
            .map_err(drawing_error)?;
        draw_counting_mesh(&mut chart, "threads, one per CPU (log2 scale)", y_desc)?;
        for (i, ((label, points), fit)) in curves.iter().zip(&fits).enumerate() {
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
            draw_markers(&mut chart, i, label, points)?;
            if let Some(fit) = fit {
                let steps = 64;
                let curve = (0..=steps).map(|k| {
                    let n = x_lo * (x_hi / x_lo).powf(f64::from(k) / f64::from(steps));
                    (n, fit.throughput(n))
                });
                chart
                    .draw_series(LineSeries::new(curve, color.mix(0.6).stroke_width(1)))
                    .map_err(drawing_error)?;
            }
        }
        draw_legend(&mut chart, legend, 12)?;
        root.present().map_err(drawing_error)?;
    }
    Ok(())
}

/// Horizontal bars, one per curve, for sweeps whose curves have one
/// thread count each: the value written at the end of each bar, bar `i`
/// in colour `colours[i]`.
fn bar_chart(
    curves: &[(&str, Vec<(f64, f64)>)],
    colours: &[usize],
    figure: &Figure,
) -> std::io::Result<Vec<u8>> {
    let bars: Vec<(&str, f64)> = curves
        .iter()
        .map(|(label, points)| {
            let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len().max(1) as f64;
            (*label, mean)
        })
        .collect();
    let mut threads: Vec<f64> = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.0))
        .collect();
    threads.dedup();
    let title = match threads[..] {
        [1.0] => format!("{} at 1 thread", figure.what),
        [n] => format!("{} at {n:.0} threads", figure.what),
        _ => format!("{} by curve", figure.what),
    };
    let hi = bars.iter().map(|b| b.1).fold(0.0f64, f64::max);
    let hi = if hi > 0.0 { hi * 1.25 } else { 1.0 };
    let n = bars.len().max(1) as u32;
    let longest = bars.iter().map(|b| b.0.len()).max().unwrap_or(0) as u32;
    let height = (120 + 48 * n).max(300);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (SIZE.0, height)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let mut chart = framed(&root, &title, (12 + 8 * longest).min(420))
            .build_cartesian_2d(0.0..hi, (0..n - 1).into_segmented())
            .map_err(drawing_error)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(figure.unit)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 18))
            .y_labels(n as usize)
            .x_label_formatter(&|x| axis_number(*x))
            // The first bar on top: row n-1 holds bar 0.
            .y_label_formatter(&|y| match y {
                SegmentValue::CenterOf(row) => bars
                    .get((n - 1 - row) as usize)
                    .map_or(String::new(), |b| b.0.to_string()),
                _ => String::new(),
            })
            .draw()
            .map_err(drawing_error)?;
        for (i, &(_, value)) in bars.iter().enumerate() {
            let row = n - 1 - i as u32;
            let color = look(colours[i]).color;
            let corners = [
                (0.0, SegmentValue::Exact(row)),
                (value, SegmentValue::Exact(row + 1)),
            ];
            chart
                .draw_series([
                    Rectangle::new(corners.clone(), color.mix(0.85).filled()),
                    // A white edge parts neighbouring bars.
                    Rectangle::new(corners, WHITE.stroke_width(8)),
                ])
                .map_err(drawing_error)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!(" {}", axis_number(value)),
                    (value, SegmentValue::CenterOf(row)),
                    (FONT, 15).into_font().color(&BLACK),
                )))
                .map_err(drawing_error)?;
        }
        root.present().map_err(drawing_error)?;
    }
    Ok(svg.into_bytes())
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
        "Bucket load, {} at {} ({} keys in {} buckets)",
        cell.design,
        cell.label,
        summary::figure(load.keys as f64),
        summary::figure(load.buckets as f64)
    );
    let x_desc = if width == 1 {
        "keys in a bucket".to_string()
    } else {
        format!("keys in a bucket (groups of {width})")
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let mut chart = framed(&root, &title, 90)
            .build_cartesian_2d(x_lo..x_hi, 0.0..y_hi)
            .map_err(drawing_error)?;
        draw_counting_mesh(&mut chart, x_desc, "buckets")?;
        let bar = COLOURS[0].mix(0.6);
        chart
            .draw_series(bars.iter().enumerate().map(|(i, &n)| {
                Rectangle::new(
                    [(x(i) + 0.1 * w, 0.0), (x(i) + 0.9 * w, n as f64)],
                    bar.filled(),
                )
            }))
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

/// Cells get their count written in them up to this many nodes.
const LABELLED_NODES: u32 = 16;

/// White for none, through to full red for the most.
fn heat(share: f64) -> RGBColor {
    let shade = (255.0 * (1.0 - 0.85 * share.clamp(0.0, 1.0))) as u8;
    RGBColor(255, shade, shade)
}

fn node_heat_map(cell: &Cell, r: &RunRecord) -> std::io::Result<Vec<u8>> {
    let matrix = &r.coherence.hitm_nodes;
    let n = matrix.len() as u32;
    let most = matrix.iter().flatten().copied().max().unwrap_or(0).max(1);
    let title = format!("HITM loads by node pair, {} at {}", cell.design, cell.label);
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
            // A segmented range includes its end: nodes 0 to n-1.
            .build_cartesian_2d(
                (0..n.max(1) - 1).into_segmented(),
                (0..n.max(1) - 1).into_segmented(),
            )
            .map_err(drawing_error)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("node whose cache held the line Modified")
            .y_desc("requesting node")
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .x_labels(n.min(LABELLED_NODES) as usize)
            .y_labels(n.min(LABELLED_NODES) as usize)
            .draw()
            .map_err(drawing_error)?;
        let cells = (0..n).flat_map(|row| (0..n).map(move |col| (row, col)));
        chart
            .draw_series(cells.clone().map(|(row, col)| {
                let share = matrix[row as usize][col as usize] as f64 / most as f64;
                Rectangle::new(
                    [
                        (SegmentValue::Exact(col), SegmentValue::Exact(row)),
                        (SegmentValue::Exact(col + 1), SegmentValue::Exact(row + 1)),
                    ],
                    heat(share).filled(),
                )
            }))
            .map_err(drawing_error)?;
        if n <= LABELLED_NODES {
            chart
                .draw_series(cells.map(|(row, col)| {
                    Text::new(
                        summary::figure(matrix[row as usize][col as usize] as f64),
                        (SegmentValue::CenterOf(col), SegmentValue::CenterOf(row)),
                        (FONT, 14).into_font().color(&BLACK),
                    )
                }))
                .map_err(drawing_error)?;
        }
        colour_scale(&scale, most)?;
        root.present().map_err(drawing_error)?;
    }
    Ok(svg.into_bytes())
}

/// The heat map's key: the colour of every count from 0 to `most`.
fn colour_scale(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    most: u64,
) -> std::io::Result<()> {
    let most = most as f64;
    let mut key = ChartBuilder::on(area)
        .margin_top(20)
        .margin_bottom(76)
        .margin_right(10)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..1.0, 0.0..most)
        .map_err(drawing_error)?;
    key.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_desc("HITM loads")
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .y_label_formatter(&|y| axis_number(*y))
        .draw()
        .map_err(drawing_error)?;
    let steps = 64;
    key.draw_series((0..steps).map(|k| {
        let (from, to) = (
            most * k as f64 / steps as f64,
            most * (k + 1) as f64 / steps as f64,
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
