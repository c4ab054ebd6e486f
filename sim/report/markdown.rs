//! report.md: the report people read and paste into a mailing-list thread.
//! Everything in it comes from the result set, except the run date and the
//! simulator speed, which come from the speed log, and the track record,
//! which the binary embeds; the same inputs give the same bytes.

use super::c2c;
use super::charts;
use super::compare::{Change, Direction, Test};
use super::interval::{SeedInterval, BIMODAL_RULE, CONFIDENCE};
use super::summary::{self, bytes, duration_ns, figure, of_keys, per_op, Cell, BUCKETED_QUANTILES};
use super::usl;
use super::{File, REPORT_MD};
use crate::perf_stat::{
    averaged_line, hash_thread_line, lock_pi_summary_line, rel_stderr_from_population_rsd,
    requeue_average_line, requeue_summary_line, wake_average_line, wake_parallel_line,
    wake_parallel_summary_line, wake_summary_line,
};
use crate::record::{LoadRecord, RunRecord, WorkloadKind};
use crate::results::{ResultSet, SpeedLog};
use crate::workload::lead::{Better, LeadFigure};
use crate::workload::{perf_lock_pi, perf_requeue, perf_wake, perf_wake_parallel};
use std::fmt::Write;

pub fn files(set: &ResultSet, speed: &SpeedLog) -> std::io::Result<Vec<File>> {
    let cells = summary::cells(set);
    let mut md = String::new();
    let _ = writeln!(md, "# futexsim report: {}\n", set.provenance.config_name);
    what_this_shows(&mut md, set, &cells);
    provenance(&mut md, set, speed);
    summary_table(&mut md, set, &cells);
    workload_figures(&mut md, &cells);
    super::private_hash::section(&mut md, &cells);
    super::time_spent::section(&mut md, &cells);
    comparison(&mut md, set, &cells);
    bimodal_cells(&mut md, set, &cells);
    super::track_record::section(&mut md, &set.designs, &cells);
    scaling(&mut md, set, &cells);
    bucket_load(&mut md, &cells);
    lock_and_nodes(&mut md, &cells);
    perf_bench_lines(&mut md, &cells);
    c2c_tables(&mut md, &cells);
    config(&mut md, set);
    let mut files = vec![File {
        path: REPORT_MD.into(),
        bytes: md.into_bytes(),
    }];
    files.extend(point_files(&cells));
    Ok(files)
}

/// The figure every summary, comparison and verdict uses: the one the
/// set's benchmark exists for.
fn primary(set: &ResultSet) -> LeadFigure {
    summary::kind(set).primary()
}

/// A value of `figure` as tables show it: rates whole, times and
/// latencies to four significant digits.
fn show(figure_shown: LeadFigure, v: f64) -> String {
    match figure_shown {
        LeadFigure::ThreadOpsPerSec | LeadFigure::LockPiPairs | LeadFigure::RequestsPerSec => {
            figure(v.round())
        }
        _ => figure(v),
    }
}

/// Whether a real change in `figure` that way is for the better: up for
/// a rate, down for a time.
fn for_the_better(figure: LeadFigure, direction: Direction) -> bool {
    matches!(
        (figure.better(), direction),
        (Better::Higher, Direction::Up) | (Better::Lower, Direction::Down)
    )
}

/// The cell's primary figure against the baseline's at the same point:
/// the paired ratio, judged by the default test; None without a baseline
/// cell or pairs.
fn against_baseline(set: &ResultSet, cells: &[Cell], c: &Cell) -> Option<Change> {
    let base = cells
        .iter()
        .find(|b| b.point == c.point && b.design == set.baseline)?;
    let lead = primary(set);
    c.against(base, |r| lead.read(r))
}

/// What "±" means in this report, with the number of repetitions: the
/// seed interval, or why there is none.
fn interval_words(set: &ResultSet) -> String {
    match set.provenance.repetitions {
        0 | 1 => "One repetition: there is no seed interval to state (`repetitions` of 2 or more \
                  gives one), so each figure is that one run's"
            .to_string(),
        n => format!(
            "Each figure is the mean over {n} repetitions (seeds) ± half the width of its {}% \
             Student-t interval over them",
            CONFIDENCE * 100.0
        ),
    }
}

/// The conclusions first: which design is fastest where, and each design
/// against the baseline, by how much, counting only what is beyond the
/// noise.
fn what_this_shows(md: &mut String, set: &ResultSet, cells: &[Cell]) {
    let mut points: Vec<(usize, &str)> = Vec::new();
    for c in cells {
        if !points.iter().any(|p| p.0 == c.point) {
            points.push((c.point, &c.label));
        }
    }
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return;
    };
    let _ = writeln!(md, "## What this shows\n");
    // Without a sweep there is one point and nothing to name it by.
    let single = points.len() == 1;
    let span = match (single, first.1) {
        (true, "-") => String::new(),
        (true, label) => format!(" at {label}"),
        (false, _) => format!(" at {} points ({} to {})", points.len(), first.1, last.1),
    };
    let lead = primary(set);
    let read = |r: &RunRecord| lead.read(r);
    let headline = match (is_perf_hash(&cells[0]), lead) {
        (true, _) => "Averaged ops/s per thread (what `perf bench futex hash` prints as \"Averaged\"; higher is better)".to_string(),
        (false, LeadFigure::ThreadOpsPerSec) => {
            "Ops/s per thread (the mean of the per-thread rates; higher is better)".to_string()
        }
        (false, _) => format!("The benchmark's own figure, {}", lead.heading()),
    };
    let shown = |c: &Cell| {
        c.interval(read)
            .map_or(String::new(), |i| i.show(|v| show(lead, v)))
    };
    if set.designs.len() == 1 {
        let value = |c: &&Cell| c.mean(read);
        let high = cells.iter().max_by(|a, b| value(a).total_cmp(&value(b)));
        let low = cells.iter().min_by(|a, b| value(a).total_cmp(&value(b)));
        if let (true, Some(only)) = (single, high) {
            let _ = writeln!(
                md,
                "One design, {}{span}: {} {}. {}.\n",
                set.designs[0],
                lead.heading(),
                shown(only),
                interval_words(set)
            );
        } else if let (Some(high), Some(low)) = (high, low) {
            let _ = writeln!(
                md,
                "One design, {}{span}: {} highest at {} ({}), lowest at {} ({}, {:.2}x the highest mean). {}.\n",
                set.designs[0],
                lead.heading(),
                high.label,
                shown(high),
                low.label,
                shown(low),
                value(&low) / value(&high).max(f64::MIN_POSITIVE),
                interval_words(set)
            );
        }
        return;
    }
    let _ = writeln!(
        md,
        "{headline}, each design against the baseline {}{span}: the paired ratio (mean of per-seed ratios, design over baseline at the same seed). A change within the noise is not counted as one: {}.\n",
        set.baseline,
        Test::DEFAULT.describe()
    );
    // The fastest design at each point (the best by the primary figure's
    // direction), consecutive points with the same one grouped.
    let goodness = |c: &Cell| match lead.better() {
        Better::Higher => c.mean(read),
        Better::Lower => -c.mean(read),
    };
    let mut fastest: Vec<(&str, Vec<&str>)> = Vec::new();
    for &(point, label) in &points {
        let best = cells
            .iter()
            .filter(|c| c.point == point)
            .max_by(|a, b| goodness(a).total_cmp(&goodness(b)));
        let Some(best) = best else { continue };
        match fastest.last_mut() {
            Some((design, labels)) if *design == best.design => labels.push(label),
            _ => fastest.push((best.design, vec![label])),
        }
    }
    let runs: Vec<String> = fastest
        .iter()
        .map(|(design, labels)| match (fastest.len(), &labels[..]) {
            (1, _) if labels.len() == points.len() && points.len() > 1 => {
                format!("**{design}** at every point")
            }
            (_, [one]) => format!("**{design}**{}", at(one)),
            (_, [from, .., to]) => format!("**{design}** from {from} to {to}"),
            _ => String::new(),
        })
        .collect();
    let _ = writeln!(md, "- Fastest: {}.", runs.join("; "));
    for design in set.designs.iter().filter(|d| **d != set.baseline) {
        let mut faster: Vec<(f64, &str)> = Vec::new();
        let mut slower: Vec<(f64, &str)> = Vec::new();
        let mut noise: Vec<&str> = Vec::new();
        let mut unjudged: Vec<&str> = Vec::new();
        let mut bimodal: Vec<&str> = Vec::new();
        for c in cells.iter().filter(|c| c.design == design) {
            let Some(change) = against_baseline(set, cells, c) else {
                continue;
            };
            match change.direction {
                Direction::WithinNoise => noise.push(&c.label),
                Direction::Up | Direction::Down if for_the_better(lead, change.direction) => {
                    faster.push((change.ratio.mean, &c.label))
                }
                Direction::Up | Direction::Down => slower.push((change.ratio.mean, &c.label)),
                Direction::NoInterval => unjudged.push(&c.label),
                Direction::Bimodal => bimodal.push(&c.label),
            }
        }
        let mut parts = Vec::new();
        if !faster.is_empty() {
            parts.push(format!("faster{}", ratio_range(&faster)));
        }
        if !slower.is_empty() {
            parts.push(format!("slower{}", ratio_range(&slower)));
        }
        let places = |labels: &[&str]| match labels.len() {
            _ if single => at(labels[0]),
            n if n == points.len() => " at every point".to_string(),
            1..=3 => format!(" at {}", labels.join(", ")),
            n => format!(" at {n} points"),
        };
        if !noise.is_empty() {
            parts.push(format!("within noise{}", places(&noise)));
        }
        if !unjudged.is_empty() {
            parts.push(format!(
                "not judged (one repetition, no interval){}",
                places(&unjudged)
            ));
        }
        if !bimodal.is_empty() {
            parts.push(format!(
                "not judged (bimodal: the seeds' ratios split in two){}",
                places(&bimodal)
            ));
        }
        let _ = writeln!(md, "- {design}: {}.", parts.join("; "));
    }
    md.push('\n');
}

/// " at cpus=8", or nothing for the one point of a config without a sweep.
fn at(label: &str) -> String {
    if label == "-" {
        String::new()
    } else {
        format!(" at {label}")
    }
}

/// " at cpus=8 (0.92x)", or " at 6 points, 1.04x (cpus=16) to 14.32x (cpus=512)":
/// paired ratios, whose intervals are in the comparison table.
fn ratio_range(ratios: &[(f64, &str)]) -> String {
    let low = ratios.iter().min_by(|a, b| a.0.total_cmp(&b.0));
    let high = ratios.iter().max_by(|a, b| a.0.total_cmp(&b.0));
    match (ratios, low, high) {
        ([(ratio, label)], _, _) => format!("{} ({ratio:.2}x)", at(label)),
        (_, Some(low), Some(high)) => format!(
            " at {} points, {:.2}x ({}) to {:.2}x ({})",
            ratios.len(),
            low.0,
            low.1,
            high.0,
            high.1
        ),
        _ => String::new(),
    }
}

fn provenance(md: &mut String, set: &ResultSet, speed: &SpeedLog) {
    let p = &set.provenance;
    let _ = writeln!(md, "## Provenance\n");
    let _ = writeln!(md, "| | |\n|---|---|");
    let _ = writeln!(
        md,
        "| futexsim | {} (commit {}) |",
        p.futexsim_version, p.git_commit
    );
    let _ = writeln!(
        md,
        "| config | {} (resolved in full at the end of this report) |",
        p.config_name
    );
    let _ = writeln!(
        md,
        "| seeds | base seed {}, {} repetition(s); every run's seed is in results.csv |",
        p.base_seed, p.repetitions
    );
    for m in &p.machines {
        let _ = writeln!(md, "| machine profile | {}: {} |", m.name, m.source);
    }
    let axes = if set.axes.is_empty() {
        "none".to_string()
    } else {
        set.axes.join(", ")
    };
    let _ = writeln!(
        md,
        "| sweep | axes: {axes}; {} point(s) x {} design(s) x {} repetition(s) = {} runs |",
        set.points(),
        set.designs.len(),
        p.repetitions,
        set.runs.len()
    );
    let _ = writeln!(
        md,
        "| designs | {} (baseline: {}) |",
        set.designs.join(", "),
        set.baseline
    );
    if speed.runs.is_empty() {
        let _ = writeln!(md, "| run date | not recorded |");
        let _ = writeln!(md, "| simulator speed | not recorded |");
    } else {
        let total = speed.total();
        let _ = writeln!(md, "| run date | {} |", speed.date);
        let _ = writeln!(
            md,
            "| simulator speed | {} events in {:.2} s of run time ({:.2} M events/s, {:.2} M simulated ops/s of run time); peak memory {} |",
            figure(total.events as f64),
            total.wall_s,
            total.events_per_sec / 1e6,
            total.sim_ops_per_sec / 1e6,
            bytes(speed.peak_rss_bytes)
        );
    }
    let _ = writeln!(
        md,
        "\nData: [results.csv](results.csv) (one row per run), [results.json](results.json) (the records with this provenance), [speed.json](speed.json) (run date and simulator speed).\n"
    );
}

/// A cell's figure with its seed interval, each number shown by `show`;
/// a dash for a cell without runs.
fn with_interval(
    c: &Cell,
    read: impl Fn(&RunRecord) -> f64,
    show: impl Fn(f64) -> String,
) -> String {
    c.interval(read).map_or("-".into(), |i| i.show(show))
}

fn summary_table(md: &mut String, set: &ResultSet, cells: &[Cell]) {
    let lead = summary::kind(set).lead_figures();
    let _ = writeln!(md, "## Summary\n");
    let _ = writeln!(
        md,
        "The first {} the benchmark exists for, with which way is better. {}; \"bimodal\" marks a figure whose seeds split into two groups ({BIMODAL_RULE}), listed seed by seed under \"Bimodal cells\". ops/s/thread is the mean of the per-thread rates, which `perf bench futex hash` prints as \"Averaged\"; thread rsd is the relative standard deviation of those rates over the threads of a run (a spread over threads, not over seeds, and not perf's `(+- x%)`, which is the standard error of the mean), averaged over repetitions. p50 and p99 are op latencies: {BUCKETED_QUANTILES}. HITM, false and true sharing are cache-line transfers per op; bucket load is over the keys the workload hashes (static layout); a key shares a line when its bucket touches a line holding another occupied bucket's lock word. Per-cell means, intervals and paired ratios are in [summary.csv](summary.csv).\n",
        if lead.len() == 1 { "column is the figure" } else { "columns are the figures" },
        interval_words(set)
    );
    // ops/s per thread keeps its column where the benchmark is not read by it.
    let per_thread_column = !lead.contains(&LeadFigure::ThreadOpsPerSec);
    let headings: Vec<String> = lead.iter().map(|f| f.heading()).collect();
    let _ = writeln!(
        md,
        "| point | design | {} | ops/s |{} thread rsd (over threads) | p50 | p99 | HITM Lcl/op | HITM Rmt/op | false sharing/op | true sharing/op | bucket max load | mean load | keys sharing a bucket | keys sharing a line | table memory |",
        headings.join(" | "),
        if per_thread_column { " ops/s/thread |" } else { "" }
    );
    let columns = 15 + lead.len() + usize::from(per_thread_column);
    let _ = writeln!(md, "|---|---|{}", "---:|".repeat(columns - 2));
    let whole = |v: f64| figure(v.round());
    let per_op_3 = |v: f64| format!("{v:.3}");
    for c in cells {
        let own: Vec<String> = lead
            .iter()
            .map(|&f| with_interval(c, |r| f.read(r), |v| show(f, v)))
            .collect();
        let per_thread = if per_thread_column {
            format!(
                " {} |",
                with_interval(c, |r| r.mean_thread_ops_per_sec, whole)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |{per_thread} {:.1}% | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.label,
            c.design,
            own.join(" | "),
            with_interval(c, |r| r.ops_per_sec, whole),
            c.mean(|r| r.thread_rsd_pct),
            with_interval(c, |r| r.latency_ns.p50 as f64, duration_ns),
            with_interval(c, |r| r.latency_ns.p99 as f64, duration_ns),
            with_interval(c, |r| per_op(r.coherence.lcl_hitm, r), per_op_3),
            with_interval(c, |r| per_op(r.coherence.rmt_hitm, r), per_op_3),
            with_interval(c, |r| per_op(r.coherence.false_sharing, r), per_op_3),
            with_interval(c, |r| per_op(r.coherence.true_sharing, r), per_op_3),
            load_columns(c),
            with_interval(c, |r| r.table.bytes as f64, |v| bytes(v.round() as u64)),
        );
    }
    md.push('\n');
}

/// The figures a workload measures itself (time until all exited, requests
/// per second, wake-up latency...), for the workloads that have them; a run
/// that lacks one (a time never reached) shows a dash.
fn workload_figures(md: &mut String, cells: &[Cell]) {
    let mut names: Vec<(String, String)> = Vec::new();
    for m in cells
        .iter()
        .flat_map(|c| &c.runs)
        .flat_map(|r| r.workload_figures())
    {
        if !names
            .iter()
            .any(|(name, unit)| *name == m.name && *unit == m.unit)
        {
            names.push((m.name, m.unit));
        }
    }
    if names.is_empty() {
        return;
    }
    let header: Vec<String> = names
        .iter()
        .map(|(name, unit)| match unit.as_str() {
            "" => name.clone(),
            unit => format!("{name} ({unit})"),
        })
        .collect();
    let _ = writeln!(md, "## Workload figures\n");
    let _ = writeln!(
        md,
        "What the benchmark itself reports, means over repetitions ± half their 95% seed interval (none with one repetition).\n"
    );
    let _ = writeln!(md, "| point | design | {} |", header.join(" | "));
    let _ = writeln!(md, "|---|---|{}", "---:|".repeat(names.len()));
    for c in cells {
        let values: Vec<String> = names
            .iter()
            .map(|(name, _)| {
                let each: Vec<f64> = c
                    .runs
                    .iter()
                    .filter_map(|r| r.workload_figures().find(|m| m.name == *name))
                    .map(|m| m.value)
                    .collect();
                match SeedInterval::of(&each, CONFIDENCE) {
                    Some(i) if each.len() == c.runs.len() => i.show(figure),
                    _ => "-".into(),
                }
            })
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            c.label,
            c.design,
            values.join(" | ")
        );
    }
    md.push('\n');
}

/// Bucket max and mean load and the keys sharing a bucket or a line, means
/// over repetitions with their seed intervals; dashes for a workload
/// without a static key population.
fn load_columns(c: &Cell) -> String {
    if c.runs.iter().any(|r| r.load.is_none()) {
        return "- | - | - | -".into();
    }
    let load = |figure: fn(&LoadRecord) -> f64, show: fn(f64) -> String| {
        with_interval(c, |r| r.load.as_ref().map_or(0.0, figure), show)
    };
    format!(
        "{} | {} | {} | {}",
        load(|l| l.max_load as f64, |v| format!("{v:.1}")),
        load(|l| l.mean_load, |v| format!("{v:.2}")),
        load(
            |l| of_keys(l.keys_sharing_bucket as f64, l),
            |v| format!("{v:.1}%")
        ),
        load(
            |l| of_keys(l.keys_sharing_line as f64, l),
            |v| format!("{v:.1}%")
        ),
    )
}

fn comparison(md: &mut String, set: &ResultSet, cells: &[Cell]) {
    if set.designs.len() < 2 {
        return;
    }
    let _ = writeln!(md, "## Comparison against {}\n", set.baseline);
    let lead = primary(set);
    let _ = writeln!(
        md,
        "{}, design over baseline, as the paired ratio: the mean of the per-seed ratios (repetition r of the design over repetition r of the baseline, the same seed), then in brackets its {}% Student-t interval over those ratios (none with one repetition). The verdict: {}.\n",
        capitalised(&lead.heading()),
        CONFIDENCE * 100.0,
        Test::DEFAULT.describe()
    );
    let _ = writeln!(
        md,
        "| point | design | {} paired ratio (95% interval) | verdict |",
        lead.name()
    );
    let _ = writeln!(md, "|---|---|---:|---|");
    for c in cells.iter().filter(|c| c.design != set.baseline) {
        let Some(change) = against_baseline(set, cells, c) else {
            continue;
        };
        let verdict = match change.direction {
            Direction::Up | Direction::Down if for_the_better(lead, change.direction) => "faster",
            Direction::Up | Direction::Down => "slower",
            Direction::WithinNoise => "within noise",
            Direction::NoInterval => "not judged: one repetition",
            Direction::Bimodal => "not judged: bimodal",
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {verdict} |",
            c.label,
            c.design,
            change.ratio.show_range()
        );
    }
    md.push('\n');
}

/// Every cell whose headline figure (or, for a design, its paired ratio of
/// the primary figure) split into two groups of seeds, with each seed's
/// value: a flagged mean is shown beside what it averages.
fn bimodal_cells(md: &mut String, set: &ResultSet, cells: &[Cell]) {
    let lead = primary(set);
    let read = |r: &RunRecord| lead.read(r);
    let mut rows = Vec::new();
    for c in cells {
        for h in summary::headline(set) {
            if c.interval(|r| h.read(r)).is_some_and(|i| i.bimodal) {
                let values: Vec<String> = c.each(|r| h.read(r)).into_iter().map(figure).collect();
                rows.push((c, h.name.to_string(), values));
            }
        }
        let base = cells
            .iter()
            .find(|b| b.point == c.point && b.design == set.baseline && c.design != set.baseline);
        if let Some(base) = base.filter(|b| c.against(b, read).is_some_and(|ch| ch.ratio.bimodal)) {
            let ratios: Vec<String> = c
                .each(read)
                .iter()
                .zip(base.each(read))
                .map(|(d, b)| format!("{:.3}", d / b))
                .collect();
            rows.push((
                c,
                format!("{} paired ratio to {}", lead.name(), set.baseline),
                ratios,
            ));
        }
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(md, "## Bimodal cells\n");
    let _ = writeln!(
        md,
        "Figures whose seeds split into two groups ({BIMODAL_RULE}). Their mean is a value no seed showed and their interval describes neither group, so each seed's value is given here; a comparison does not judge them.\n"
    );
    let _ = writeln!(md, "| point | design | figure | each seed (seed: value) |");
    let _ = writeln!(md, "|---|---|---|---|");
    for (c, name, values) in rows {
        let each: Vec<String> = c
            .runs
            .iter()
            .zip(&values)
            .map(|(r, v)| format!("{}: {v}", r.seed))
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} | {name} | {} |",
            c.label,
            c.design,
            each.join(", ")
        );
    }
    md.push('\n');
}

fn scaling(md: &mut String, set: &ResultSet, cells: &[Cell]) {
    let series = summary::series(set, cells);
    let curves = series
        .iter()
        .any(|s| s.cells.iter().any(|c| c.threads() != s.cells[0].threads()));
    let _ = writeln!(
        md,
        "## {}\n",
        if curves {
            "Scaling"
        } else {
            "Throughput by design"
        }
    );
    let _ = writeln!(md, "![Throughput]({})\n", charts::THROUGHPUT);
    for &figure in summary::kind(set).lead_figures() {
        let _ = writeln!(md, "![{}]({})\n", figure.name(), charts::lead_chart(figure));
    }
    let _ = writeln!(
        md,
        "![HITM loads per op]({})\n\n![RFO from Modified per op]({})\n",
        charts::HITM_PER_OP,
        charts::RFO_PER_OP
    );
    // A sweep drawn as bars has no curve to fit: no table rather than a
    // table of curves that each state they are not fitted.
    if !curves {
        return;
    }
    let lead = primary(set);
    if lead.throughput(cells[0].runs[0]).is_none() {
        let _ = writeln!(
            md,
            "The Universal Scalability Law describes a throughput against threads; this benchmark's figure, {}, is a time, to which the fit does not apply: none is fitted.\n",
            lead.name()
        );
        return;
    }
    let mut rows = Vec::new();
    for s in &series {
        let samples: Vec<(f64, f64)> = s
            .cells
            .iter()
            .flat_map(|c| {
                c.runs.iter().filter_map(|r| {
                    lead.throughput(r)
                        .filter(|x| x.is_finite())
                        .map(|x| (f64::from(r.threads), x))
                })
            })
            .collect();
        let mut threads: Vec<String> = s.cells.iter().map(|c| c.threads().to_string()).collect();
        threads.dedup();
        let f = match usl::fit(&samples) {
            Ok(f) => f,
            Err(failure) => {
                rows.push(format!(
                    "| {} | {} | - | - | - | - | - | {failure} |",
                    s.label,
                    threads.join(", ")
                ));
                continue;
            }
        };
        let note = f.caveat().unwrap_or("");
        let peak = match (f.caveat(), f.peak()) {
            (Some(_), _) => "-".to_string(),
            (None, Some(p)) => format!("{p:.0}"),
            (None, None) => "none".to_string(),
        };
        rows.push(format!(
            "| {} | {} | {} | {:.4} | {:.3e} | {peak} | {:.3} | {note} |",
            s.label,
            threads.join(", "),
            figure(f.lambda.round()),
            f.alpha,
            f.beta,
            f.r_squared
        ));
    }
    let _ = writeln!(
        md,
        "Universal Scalability Law fitted by least squares to the total {} over every run of each curve with {} or more thread counts: X(N) = lambda N / (1 + alpha (N-1) + beta N (N-1)), N the threads (one per CPU). alpha is contention, beta coherency (lines bouncing between caches); the peak is at sqrt((1 - alpha) / beta) threads. A fit with a negative coefficient does not have the law's shape: it is flagged, and not drawn in the chart; a curve without a fit says why.\n",
        throughput_words(lead),
        usl::MIN_POINTS
    );
    let _ = writeln!(
        md,
        "| curve | threads | lambda ({} per thread) | alpha | beta | peak threads | R² | note |",
        lead.unit()
    );
    let _ = writeln!(md, "|---|---|---:|---:|---:|---:|---:|---|");
    for row in rows {
        let _ = writeln!(md, "{row}");
    }
    md.push('\n');
}

/// What the USL is fitted to for a figure that is a throughput.
fn throughput_words(lead: LeadFigure) -> &'static str {
    match lead {
        LeadFigure::LockPiPairs => "lock/unlock pairs per second of all threads",
        LeadFigure::RequestsPerSec => "requests per second",
        _ => "ops/s",
    }
}

/// "Wake time (ms, lower is better)": a heading that opens a sentence.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or(String::new(), |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

fn bucket_load(md: &mut String, cells: &[Cell]) {
    if cells.iter().all(|c| c.runs[0].load.is_none()) {
        return;
    }
    let _ = writeln!(md, "## Bucket load\n");
    let _ = writeln!(
        md,
        "The workload's keys hashed into each design's buckets (first repetition), beside a uniform hash of as many keys into as many buckets (balls into bins: the expected value, ± one standard deviation where it is known exactly).\n"
    );
    let _ = writeln!(
        md,
        "| point | design | keys | buckets | max load (uniform) | mean load (uniform) | keys sharing a bucket (uniform) | keys sharing a line (uniform) | colliding pairs (uniform) |"
    );
    let _ = writeln!(md, "|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (c, l) in cells
        .iter()
        .filter_map(|c| c.runs[0].load.as_ref().map(|l| (c, l)))
    {
        let u = &l.uniform;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} ({:.1}) | {:.2} ({:.2}) | {} ({} ± {}) | {} ({}) | {} ({} ± {}) |",
            c.label,
            c.design,
            figure(l.keys as f64),
            figure(l.buckets as f64),
            l.max_load,
            u.max_load,
            l.mean_load,
            u.mean_load,
            figure(l.keys_sharing_bucket as f64),
            figure(u.keys_sharing_bucket.round()),
            figure(u.keys_sharing_bucket_sd.round()),
            figure(l.keys_sharing_line as f64),
            figure(u.keys_sharing_line.round()),
            figure(l.colliding_pairs as f64),
            figure(u.colliding_pairs.round()),
            figure(u.colliding_pairs_sd.round()),
        );
    }
    let Some(busiest) = summary::busiest_cells(cells) else {
        return;
    };
    let _ = writeln!(
        md,
        "\nHistograms{} (first repetition):\n",
        summary::at_point(&busiest[0].label)
    );
    for c in busiest.iter().filter(|c| c.runs[0].load.is_some()) {
        let _ = writeln!(
            md,
            "![Bucket load of {d}]({})\n",
            charts::load_chart(c.design),
            d = c.design
        );
    }
}

/// The mechanism at the busiest point: each design's bucket lock wait and
/// hold, and where its HITM loads go between nodes.
fn lock_and_nodes(md: &mut String, cells: &[Cell]) {
    let Some(busiest) = summary::busiest_cells(cells) else {
        return;
    };
    let _ = writeln!(
        md,
        "## Bucket lock and HITM by node{}\n",
        summary::at_point(&busiest[0].label)
    );
    let _ = writeln!(
        md,
        "Each design's bucket lock per acquisition: the mean time spent waiting for it beside the mean time it is held, each the mean over repetitions with its 95 % seed interval. A lock whose wait grows far past its hold serialises its callers; a hold that grows is a critical section slowed by its lines' transfers.\n\n![Bucket lock wait and hold]({})\n",
        charts::LOCK_WAIT_HOLD
    );
    let _ = writeln!(
        md,
        "HITM loads per op by requesting node (rows) and the node whose cache held the line Modified (columns), the mean over repetitions; every design's map on one colour scale, so the reddest design is the one whose lines bounce most per op.\n"
    );
    for c in busiest {
        let _ = writeln!(
            md,
            "![HITM loads per op by node of {d}]({})\n",
            charts::nodes_chart(c.design),
            d = c.design
        );
    }
}

/// A simulated run's output as its perf bench benchmark prints it (first
/// repetition), as it would be printed in a code block: perf's lines with
/// perf's definitions; None for a workload perf bench does not run, or a
/// record without the figures the lines need. With `threads`, perf bench
/// futex hash's `[thread N]` line for every thread.
fn perf_output(r: &RunRecord, threads: bool) -> Option<Vec<String>> {
    let extra = |name: &str| r.extra.iter().find(|m| m.name == name).map(|m| m.value);
    let secs = r.sim_ns / 1_000_000_000;
    let t = r.threads;
    let lines = match r.workload.kind {
        WorkloadKind::PerfHash { shared } => {
            let futexes = r.load.as_ref().map_or(0, |l| l.keys / u64::from(t.max(1)));
            let mut lines = vec![
                format!(
                    "Run summary [PID 0]: {t} threads, each operating on {futexes} [{}] futexes for {secs} secs.",
                    if shared { "shared" } else { "private" }
                ),
                String::new(),
            ];
            if threads && !r.perf_threads.is_empty() {
                let window_s = r.sim_ns as f64 / 1e9;
                lines.extend(r.perf_threads.iter().enumerate().map(|(i, thread)| {
                    let rate = (thread.ops as f64 / window_s) as u64;
                    hash_thread_line(i, thread.first_futex, thread.last_futex, rate)
                }));
                lines.push(String::new());
            }
            let pct = rel_stderr_from_population_rsd(r.thread_rsd_pct, t.into());
            lines.push(averaged_line(
                r.mean_thread_ops_per_sec as u64,
                pct,
                secs,
                true,
            ));
            lines
        }
        WorkloadKind::PerfWake { nwakes, shared } => vec![
            wake_summary_line(0, t, shared, 0, nwakes),
            String::new(),
            wake_average_line(
                extra(perf_wake::WOKEN_PER_ROUND)? as u64,
                t,
                extra(perf_wake::WAKE_TIME)? * 1000.0,
                extra(perf_wake::WAKE_TIME_SPREAD)?,
            ),
        ],
        WorkloadKind::PerfWakeParallel { wakers, shared } => {
            let wakers = perf_wake_parallel::wakers_of(wakers, t);
            vec![
                wake_parallel_summary_line(0, t, shared, 0, wakers, t / wakers.max(1)),
                String::new(),
                wake_parallel_line(
                    None,
                    extra(perf_wake_parallel::WOKEN_PER_WAKER)? as u64,
                    t,
                    extra(perf_wake_parallel::WAKER_LATENCY)? * 1000.0,
                    extra(perf_wake_parallel::WAKER_LATENCY_SPREAD)?,
                ),
            ]
        }
        WorkloadKind::PerfRequeue { nrequeue, shared } => vec![
            requeue_summary_line(
                0,
                t,
                shared,
                0,
                0,
                false,
                perf_requeue::requeued_per_call(nrequeue, t),
            ),
            String::new(),
            requeue_average_line(
                extra(perf_requeue::REQUEUED_PER_ROUND)? as u64,
                t,
                extra(perf_requeue::REQUEUE_TIME)? * 1000.0,
                extra(perf_requeue::REQUEUE_TIME_SPREAD)?,
            ),
        ],
        WorkloadKind::PerfLockPi { .. } => vec![
            lock_pi_summary_line(0, t, secs),
            String::new(),
            averaged_line(
                extra(perf_lock_pi::AVERAGED_PAIRS)? as u64,
                extra(perf_lock_pi::AVERAGED_PAIRS_SPREAD)?,
                secs,
                true,
            ),
        ],
        WorkloadKind::Schbench
        | WorkloadKind::FeaSolver
        | WorkloadKind::TimeExit
        | WorkloadKind::Other => return None,
    };
    Some(lines)
}

/// One cell's perf output (first repetition) in a code block under its
/// design and point; nothing where perf bench does not run its workload.
fn perf_bench_block(md: &mut String, c: &Cell, threads: bool) {
    let Some(lines) = perf_output(c.runs[0], threads) else {
        return;
    };
    let _ = writeln!(
        md,
        "{}{}:\n\n```text\n{}\n```\n",
        c.design,
        summary::at_point(&c.label),
        lines.join("\n")
    );
}

fn is_perf_hash(c: &Cell) -> bool {
    matches!(c.runs[0].workload.kind, WorkloadKind::PerfHash { .. })
}

/// Whether perf bench runs the cell's workload: its output is printed again.
fn is_perf_bench(c: &Cell) -> bool {
    perf_output(c.runs[0], false).is_some()
}

/// perf bench's lines for each simulated run of one of its benchmarks:
/// the summary and the closing line; for perf bench futex hash, the thread
/// lines, one per thread, are in the point's file.
fn perf_bench_lines(md: &mut String, cells: &[Cell]) {
    let perf: Vec<&Cell> = cells.iter().filter(|c| is_perf_bench(c)).collect();
    if perf.is_empty() {
        return;
    }
    let _ = writeln!(md, "## As perf bench prints it\n");
    let _ = writeln!(md, "{PERF_INTRO}");
    if is_perf_hash(perf[0]) {
        let _ = writeln!(
            md,
            "Here the `Run summary` and `Averaged` lines; each point's file (linked under \"perf c2c tables\") adds perf's `[thread N]` line for every thread.\n"
        );
    }
    for c in perf {
        perf_bench_block(md, c, false);
    }
}

const PERF_INTRO: &str = "Each run's output as `perf bench futex` prints it (first repetition), for scripts that read perf's output. `(+- x%)` is perf's: the sample standard deviation of what perf averages (the per-thread rates for hash and lock-pi, the rounds' times for wake and requeue, the wakers' times for wake-parallel) over the square root of their number, over their mean. wake, wake-parallel and requeue print as with perf's `-s`, without a `[Run N]` line per round. A simulation has no process id (0 here) and keeps no futex address for wake, wake-parallel and requeue (0x0 there); it runs for a window of simulated time, well under perf's whole seconds, so the seconds fields read its whole seconds (usually 0) while the rates are per simulated second (perf divides by its whole seconds).\n";

/// Where a point's perf output goes: perf bench's thread lines and perf
/// c2c's tables.
fn point_file(point: usize) -> String {
    format!("points/point-{point}.md")
}

/// The c2c tables of every design at one point, as `perf c2c report
/// --stdio` prints them, each followed by the lines that hold two or more
/// buckets' lock words.
fn c2c_of_point(md: &mut String, cells: &[Cell], point: usize) {
    for c in cells.iter().filter(|c| c.point == point) {
        let r = c.runs[0];
        let _ = writeln!(
            md,
            "### {}{} (seed {})\n",
            c.design,
            summary::at_point(&c.label),
            r.seed
        );
        if r.top_lines.is_empty() {
            let _ = writeln!(md, "No load found a line Modified in another cache.\n");
            continue;
        }
        let _ = writeln!(md, "```text\n{}```\n", c2c::stdio(r));
        for line in &r.top_lines {
            let locks = c2c::lock_buckets(line);
            if locks.len() >= 2 {
                let names: Vec<String> = locks.iter().map(ToString::to_string).collect();
                let _ = writeln!(
                    md,
                    "- Line {:#x} holds the lock words of {} (false sharing).",
                    line.address,
                    names.join(", ")
                );
            }
        }
        md.push('\n');
    }
}

const C2C_INTRO: &str = "As `perf c2c report --stdio` prints them, from the first repetition: the lines with the most HITM loads, sorted by them. The columns perf has carry perf's definitions: HITM and the other load classes count loads only, stores are L1 hits or misses, and each Pareto percentage is the offset's share of the line's count in that column. After perf's columns come futexsim's own: RFO from Modified (stores and RMWs that took the line from a cache holding it Modified), the region, and what lives at each offset. `futexsim c2c DIR --point P --design D` prints one run's tables alone.\n";

/// The c2c tables: the busiest point's in report.md, each other point's in
/// its own appendix file, linked from here.
fn c2c_tables(md: &mut String, cells: &[Cell]) {
    let Some(busiest) = summary::busiest_point(cells) else {
        return;
    };
    let _ = writeln!(md, "## perf c2c tables\n");
    let _ = writeln!(md, "{C2C_INTRO}");
    let _ = writeln!(
        md,
        "The point with the most threads is here. Every point's perf output, with its perf bench thread lines and its c2c tables, is in a file of its own:\n"
    );
    for c in first_of_each_point(cells) {
        let _ = writeln!(md, "- [{}]({})", c.label, point_file(c.point));
    }
    md.push('\n');
    c2c_of_point(md, cells, busiest);
}

/// Each point's first cell, in point order.
fn first_of_each_point<'a>(cells: &'a [Cell<'a>]) -> Vec<&'a Cell<'a>> {
    let mut firsts: Vec<&Cell> = Vec::new();
    for c in cells {
        if !firsts.iter().any(|f| f.point == c.point) {
            firsts.push(c);
        }
    }
    firsts
}

/// Each point's perf output in a file of its own: perf bench's lines with
/// one line per thread, and perf c2c's tables, for every design there.
fn point_files(cells: &[Cell]) -> Vec<File> {
    let mut files = Vec::new();
    for c in first_of_each_point(cells) {
        let at_point: Vec<&Cell> = cells.iter().filter(|o| o.point == c.point).collect();
        let mut page = String::new();
        let _ = writeln!(page, "# perf output{}\n", summary::at_point(&c.label));
        if is_perf_bench(c) {
            let _ = writeln!(page, "## As perf bench prints it\n");
            let _ = writeln!(page, "{PERF_INTRO}");
            for cell in &at_point {
                perf_bench_block(&mut page, cell, true);
            }
        }
        let _ = writeln!(page, "## perf c2c tables\n");
        let _ = writeln!(page, "{C2C_INTRO}");
        c2c_of_point(&mut page, cells, c.point);
        files.push(File {
            path: point_file(c.point),
            bytes: page.into_bytes(),
        });
    }
    files
}

fn config(md: &mut String, set: &ResultSet) {
    let _ = writeln!(md, "## Resolved config\n");
    let _ = writeln!(
        md,
        "```toml\n{}\n```",
        set.provenance.resolved_config.trim_end()
    );
}
