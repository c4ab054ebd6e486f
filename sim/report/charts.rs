//! SVG charts, drawn with plotters: throughput and HITM per op against CPUs
//! (one line per design, log2 CPU axis), and at the sweep's busiest point
//! each design's bucket-load histogram beside the balls-into-bins
//! expectation and its node-by-node HITM heat map.

use super::summary::{self, Cell, Series};
use super::usl;
use super::File;
use crate::record::{LoadRecord, RunRecord};
use crate::results::{ResultSet, SpeedLog};
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

pub const DIR: &str = "charts";
pub const THROUGHPUT: &str = "charts/throughput.svg";
pub const HITM_PER_OP: &str = "charts/hitm_per_op.svg";

const SIZE: (u32, u32) = (960, 600);
const FONT: &str = "sans-serif";

pub fn load_chart(design: &str) -> String {
    format!("{DIR}/bucket_load-{}.svg", file_part(design))
}

pub fn nodes_chart(design: &str) -> String {
    format!("{DIR}/hitm_nodes-{}.svg", file_part(design))
}

/// A design name made safe for a file name.
pub fn file_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub fn files(set: &ResultSet, _: &SpeedLog) -> std::io::Result<Vec<File>> {
    let cells = summary::cells(set);
    let series = summary::series(set, &cells);
    let mut files = vec![
        File {
            path: THROUGHPUT.into(),
            bytes: scaling_chart(
                &series,
                "Throughput against CPUs (dashed: USL fit)",
                "M ops/s, all threads",
                |r| r.ops_per_sec / 1e6,
                true,
            )?,
        },
        File {
            path: HITM_PER_OP.into(),
            bytes: scaling_chart(
                &series,
                "HITM per op against CPUs",
                "HITM per op (local + remote)",
                |r| r.coherence.hitm_per_op,
                false,
            )?,
        },
    ];
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

/// The powers of two around the values, so the log2 axis has whole ticks.
fn log2_bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return (1.0, 2.0);
    }
    let lo = lo.max(1.0).log2().floor().exp2();
    let hi = hi.max(1.0).log2().ceil().exp2();
    if hi > lo {
        (lo, hi)
    } else {
        (lo / 2.0, hi * 2.0)
    }
}

fn scaling_chart(
    series: &[Series],
    title: &str,
    y_desc: &str,
    figure: impl Fn(&RunRecord) -> f64 + Copy,
    with_usl: bool,
) -> std::io::Result<Vec<u8>> {
    let curves: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .map(|s| {
            let points = s
                .cells
                .iter()
                .map(|c| (f64::from(c.threads()), c.mean(figure)))
                .collect();
            (s.label.as_str(), points)
        })
        .collect();
    let (x_lo, x_hi) = log2_bounds(curves.iter().flat_map(|c| c.1.iter().map(|p| p.0)));
    let y_hi = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let y_hi = if y_hi > 0.0 { y_hi * 1.15 } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 24))
            .margin(20)
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d((x_lo..x_hi).log_scale().base(2.0), 0.0..y_hi)
            .map_err(drawing_error)?;
        chart
            .configure_mesh()
            .x_desc("CPUs, one thread each (log2 scale)")
            .y_desc(y_desc)
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.2}"))
            .draw()
            .map_err(drawing_error)?;
        for (i, (label, points)) in curves.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(3)))
                .map_err(drawing_error)?
                .label(*label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3))
                });
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 5, color.filled())))
                .map_err(drawing_error)?;
            let fit = with_usl.then(|| usl::fit(points)).flatten();
            if let Some(fit) = fit {
                let steps = 64;
                let curve = (0..=steps).map(|k| {
                    let n = x_lo * (x_hi / x_lo).powf(f64::from(k) / f64::from(steps));
                    (n, fit.throughput(n).clamp(0.0, y_hi))
                });
                chart
                    .draw_series(DashedLineSeries::new(curve, 6, 4, color.stroke_width(1)))
                    .map_err(drawing_error)?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font((FONT, 16))
            .draw()
            .map_err(drawing_error)?;
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
    let width = (hi - lo + 1).div_ceil(MAX_BARS).max(1);
    let bins = ((hi - lo) / width + 1) as usize;
    let mut bars = vec![0u64; bins];
    for c in measured {
        bars[((c.load - lo) / width) as usize] += c.buckets;
    }
    let mut uniform = vec![0.0f64; bins];
    for c in expected {
        uniform[((c.load - lo) / width) as usize] += c.buckets;
    }
    let y_hi = bars
        .iter()
        .map(|&b| b as f64)
        .chain(uniform.iter().copied())
        .fold(1.0f64, f64::max)
        * 1.15;
    let x = |bin: usize| (lo + bin as u64 * width) as f64;
    let (x_lo, x_hi) = (lo as f64, x(bins));
    let w = width as f64;
    let title = format!(
        "Bucket load, {} at {} ({} keys in {} buckets)",
        cell.design, cell.label, load.keys, load.buckets
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
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 22))
            .margin(20)
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d(x_lo..x_hi, 0.0..y_hi)
            .map_err(drawing_error)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("buckets")
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(drawing_error)?;
        let bar = BLUE.mix(0.6);
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
        chart
            .draw_series(LineSeries::new(centres.clone(), RED.stroke_width(2)))
            .map_err(drawing_error)?
            .label("uniform hash (balls into bins)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], RED.stroke_width(2)));
        chart
            .draw_series(centres.iter().map(|&p| Circle::new(p, 3, RED.filled())))
            .map_err(drawing_error)?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font((FONT, 16))
            .draw()
            .map_err(drawing_error)?;
        root.present().map_err(drawing_error)?;
    }
    Ok(svg.into_bytes())
}

/// Cells get their count written in them up to this many nodes.
const LABELLED_NODES: u32 = 16;

fn node_heat_map(cell: &Cell, r: &RunRecord) -> std::io::Result<Vec<u8>> {
    let matrix = &r.coherence.hitm_nodes;
    let n = matrix.len() as u32;
    let most = matrix.iter().flatten().copied().max().unwrap_or(0).max(1);
    let title = format!(
        "HITM by node, {} at {} (darkest: {most})",
        cell.design, cell.label
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 700)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 22))
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
                let shade = (255.0 * (1.0 - 0.85 * share)) as u8;
                Rectangle::new(
                    [
                        (SegmentValue::Exact(col), SegmentValue::Exact(row)),
                        (SegmentValue::Exact(col + 1), SegmentValue::Exact(row + 1)),
                    ],
                    RGBColor(255, shade, shade).filled(),
                )
            }))
            .map_err(drawing_error)?;
        if n <= LABELLED_NODES {
            chart
                .draw_series(cells.map(|(row, col)| {
                    Text::new(
                        matrix[row as usize][col as usize].to_string(),
                        (SegmentValue::CenterOf(col), SegmentValue::CenterOf(row)),
                        (FONT, 16).into_font().color(&BLACK),
                    )
                }))
                .map_err(drawing_error)?;
        }
        root.present().map_err(drawing_error)?;
    }
    Ok(svg.into_bytes())
}
