//! results.csv: one row per (sweep point, design, repetition), in the result
//! set's order. The columns, stable across versions (new ones are only
//! appended):
//!
//! - `point`, then one `axis.NAME` column per sweep axis, `design`,
//!   `repetition`, `id` (the run's stable hash), `machine`, `workload`,
//!   `seed`: the run's identity;
//! - the figures the benchmark is read by (workload::lead), the one it
//!   exists for first, each followed by `F_better` (`higher` or `lower`):
//!   `thread_ops_per_sec` for perf bench futex hash and will-it-scale,
//!   `wake_time_ms` (perf bench futex wake), `per_thread_latency_ms`
//!   (wake-parallel), `requeue_time_ms` (requeue), `lock_pi_ops_per_sec`
//!   (lock-pi), `requests_per_sec` and `wakeup_p99_us` (schbench),
//!   `solve_time_ms` (the FEA-style solver), `all_exited_s` (time_exit);
//!   empty where a run lacks one;
//! - `cpus`, `nodes`, `threads`, `processes`, `line_size` (bytes);
//! - the table: `table_slots` (one global instance), `table_instances`,
//!   `private_slots` (all private hashes together), `table_bytes`;
//! - throughput: `sim_ns` (simulated time counted), `ops`, `ops_per_sec`,
//!   `thread_ops_per_sec` (mean of per-thread rates, as perf bench prints
//!   it; among the leading figures where the benchmark is read by it),
//!   `thread_rsd_pct`, `min_thread_ops`, `max_thread_ops`;
//! - latency of one op in ns: `lat_mean_ns`, `lat_p50_ns`, `lat_p90_ns`,
//!   `lat_p99_ns`, `lat_max_ns`;
//! - bucket locks: `lock_acquisitions`, `lock_contended`, `lock_wait_ns`,
//!   `lock_hold_ns` (means per acquisition);
//! - coherence, counts of accesses: `loads`, `stores`, `l1_hit`, `lcl_hit`,
//!   `rmt_hit`, `lcl_hitm`, `rmt_hitm`, `dram_lcl`, `dram_rmt`, `transfers`,
//!   `transfers_per_op`, `hitm_per_op`, `true_sharing`, `false_sharing`;
//! - bucket load of the workload's keys: `keys`, `buckets` (reachable),
//!   `max_load`, `mean_load` (keys per occupied bucket),
//!   `keys_sharing_bucket`, `keys_sharing_line`, `colliding_pairs`, and the
//!   uniform-hash expectations `uniform_max_load`,
//!   `uniform_keys_sharing_bucket`, `uniform_keys_sharing_line`,
//!   `uniform_colliding_pairs`;
//! - `events` simulated, `asleep_at_end` (tasks blocked when the run ended);
//! - `lcl_rfo_modified`, `rmt_rfo_modified`: stores and RMWs that took a line
//!   from a cache holding it Modified (`lcl_hitm` and `rmt_hitm` count loads
//!   only, as perf c2c's HITM does);
//! - for a mix (sim/workload/mix.rs), each group's
//!   `group.LABEL.ops_per_sec` and `group.LABEL.thread_ops_per_sec`.
//!
//! A run is one seed's sample and has no interval; summary.csv gives each
//! cell's. One row per (sweep point, design), in the result set's order:
//! `point`, one `axis.NAME` column per axis, `design`, `repetitions`, then
//! for each headline figure F (the benchmark's own first, then
//! `thread_ops_per_sec` where that is not among them, `ops_per_sec`,
//! `lat_p99_ns`, `hitm_per_op`, `max_load`, named as results.csv names
//! them): `F_better` (`higher` or `lower`), `F_mean` (over repetitions),
//! `F_ci_low`, `F_ci_high` (the 95 %
//! t-interval over the repetitions; empty with one), `F_bimodal` (the
//! seeds split into two groups: report::interval's rule), and the paired
//! ratio to the baseline at the same point, `F_ratio_mean` (the mean of the
//! per-seed ratios), `F_ratio_ci_low`, `F_ratio_ci_high`, `F_ratio_bimodal`
//! (all empty on the baseline's rows, and where a ratio cannot be taken).
//! A figure a workload lacks is empty.

use super::interval::SeedInterval;
use super::summary;
use super::File;
use crate::record::LoadRecord;
use crate::results::{ResultSet, RunResult, SpeedLog};
use crate::workload::lead::LeadFigure;

pub const PATH: &str = "results.csv";
pub const SUMMARY_PATH: &str = "summary.csv";

pub fn files(set: &ResultSet, _: &SpeedLog) -> std::io::Result<Vec<File>> {
    let mut out = ::csv::Writer::from_writer(Vec::new());
    let lead = summary::kind(set).lead_figures();
    let mut header = vec!["point".to_string()];
    header.extend(set.axes.iter().map(|a| format!("axis.{a}")));
    if let Some(first) = set.runs.first() {
        header.extend(columns(first, lead).into_iter().map(|(name, _)| name));
    }
    out.write_record(&header)?;
    for run in &set.runs {
        let mut row = vec![run.point.to_string()];
        row.extend(run.axis_values.iter().cloned());
        row.extend(columns(run, lead).into_iter().map(|(_, value)| value));
        out.write_record(&row)?;
    }
    let bytes = out.into_inner().map_err(|e| e.into_error())?;
    Ok(vec![File {
        path: PATH.into(),
        bytes,
    }])
}

/// The columns after the axes, each with its value for one run: the
/// run's identity, then the `lead` figures with their directions (moved
/// from their place among the record's columns where they are one), then
/// the record's columns.
fn columns(run: &RunResult, lead: &[LeadFigure]) -> Vec<(String, String)> {
    let mut record = record_columns(run);
    let mut leading = Vec::new();
    for figure in lead {
        let value = match record.iter().position(|(name, _)| *name == figure.column()) {
            Some(at) => record.remove(at).1,
            None => Some(figure.read(&run.record))
                .filter(|v| v.is_finite())
                .map_or(String::new(), |v| v.to_string()),
        };
        leading.push((figure.column().to_string(), value));
        leading.push((
            format!("{}_better", figure.column()),
            figure.better().word().to_string(),
        ));
    }
    let identity = record
        .iter()
        .position(|(name, _)| *name == "seed")
        .map_or(0, |seed| seed + 1);
    let mut all: Vec<(String, String)> = record
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect();
    all.splice(identity..identity, leading);
    for g in &run.record.groups {
        all.push((
            format!("group.{}.ops_per_sec", g.label),
            g.ops_per_sec.to_string(),
        ));
        all.push((
            format!("group.{}.thread_ops_per_sec", g.label),
            g.mean_thread_ops_per_sec.to_string(),
        ));
    }
    all
}

/// The record's columns, each with its value for one run. Floats are
/// written in their shortest exact form.
fn record_columns(run: &RunResult) -> Vec<(&'static str, String)> {
    let r = &run.record;
    let c = &r.coherence;
    // Empty for a workload without a static key population.
    let load = |figure: fn(&LoadRecord) -> String| r.load.as_ref().map_or(String::new(), figure);
    let private: u64 = r.table.private_slots.iter().sum();
    vec![
        ("design", run.design.clone()),
        ("repetition", run.repetition.to_string()),
        ("id", run.id.clone()),
        ("machine", r.machine.clone()),
        ("workload", r.workload.label.clone()),
        ("seed", r.seed.to_string()),
        ("cpus", r.cpus.to_string()),
        ("nodes", r.nodes.to_string()),
        ("threads", r.threads.to_string()),
        ("processes", r.processes.to_string()),
        ("line_size", r.line_size.to_string()),
        ("table_slots", r.table.slots.to_string()),
        ("table_instances", r.table.instances.to_string()),
        ("private_slots", private.to_string()),
        ("table_bytes", r.table.bytes.to_string()),
        ("sim_ns", r.sim_ns.to_string()),
        ("ops", r.ops.to_string()),
        ("ops_per_sec", r.ops_per_sec.to_string()),
        ("thread_ops_per_sec", r.mean_thread_ops_per_sec.to_string()),
        ("thread_rsd_pct", r.thread_rsd_pct.to_string()),
        ("min_thread_ops", r.min_thread_ops.to_string()),
        ("max_thread_ops", r.max_thread_ops.to_string()),
        ("lat_mean_ns", r.latency_ns.mean.to_string()),
        ("lat_p50_ns", r.latency_ns.p50.to_string()),
        ("lat_p90_ns", r.latency_ns.p90.to_string()),
        ("lat_p99_ns", r.latency_ns.p99.to_string()),
        ("lat_max_ns", r.latency_ns.max.to_string()),
        ("lock_acquisitions", r.locks.acquisitions.to_string()),
        ("lock_contended", r.locks.contended.to_string()),
        ("lock_wait_ns", r.locks.mean_wait_ns.to_string()),
        ("lock_hold_ns", r.locks.mean_hold_ns.to_string()),
        ("loads", c.loads.to_string()),
        ("stores", c.stores.to_string()),
        ("l1_hit", c.l1_hit.to_string()),
        ("lcl_hit", c.lcl_hit.to_string()),
        ("rmt_hit", c.rmt_hit.to_string()),
        ("lcl_hitm", c.lcl_hitm.to_string()),
        ("rmt_hitm", c.rmt_hitm.to_string()),
        ("dram_lcl", c.dram_lcl.to_string()),
        ("dram_rmt", c.dram_rmt.to_string()),
        ("transfers", c.transfers.to_string()),
        ("transfers_per_op", c.transfers_per_op.to_string()),
        ("hitm_per_op", c.hitm_per_op.to_string()),
        ("true_sharing", c.true_sharing.to_string()),
        ("false_sharing", c.false_sharing.to_string()),
        ("keys", load(|l| l.keys.to_string())),
        ("buckets", load(|l| l.buckets.to_string())),
        ("max_load", load(|l| l.max_load.to_string())),
        ("mean_load", load(|l| l.mean_load.to_string())),
        (
            "keys_sharing_bucket",
            load(|l| l.keys_sharing_bucket.to_string()),
        ),
        (
            "keys_sharing_line",
            load(|l| l.keys_sharing_line.to_string()),
        ),
        ("colliding_pairs", load(|l| l.colliding_pairs.to_string())),
        ("uniform_max_load", load(|l| l.uniform.max_load.to_string())),
        (
            "uniform_keys_sharing_bucket",
            load(|l| l.uniform.keys_sharing_bucket.to_string()),
        ),
        (
            "uniform_keys_sharing_line",
            load(|l| l.uniform.keys_sharing_line.to_string()),
        ),
        (
            "uniform_colliding_pairs",
            load(|l| l.uniform.colliding_pairs.to_string()),
        ),
        ("events", r.events.to_string()),
        ("asleep_at_end", r.asleep_at_end.to_string()),
        ("lcl_rfo_modified", c.lcl_rfo_modified.to_string()),
        ("rmt_rfo_modified", c.rmt_rfo_modified.to_string()),
    ]
}

/// summary.csv: each cell's means, seed intervals and paired ratios.
pub fn summary_files(set: &ResultSet, _: &SpeedLog) -> std::io::Result<Vec<File>> {
    let mut out = ::csv::Writer::from_writer(Vec::new());
    let mut header = vec!["point".to_string()];
    header.extend(set.axes.iter().map(|a| format!("axis.{a}")));
    header.extend(["design".to_string(), "repetitions".to_string()]);
    let headline = summary::headline(set);
    for h in &headline {
        for part in [
            "better",
            "mean",
            "ci_low",
            "ci_high",
            "bimodal",
            "ratio_mean",
            "ratio_ci_low",
            "ratio_ci_high",
            "ratio_bimodal",
        ] {
            header.push(format!("{}_{part}", h.column));
        }
    }
    out.write_record(&header)?;
    let cells = summary::cells(set);
    for cell in &cells {
        let mut row = vec![cell.point.to_string()];
        row.extend(
            set.runs_of(cell.point, cell.design)
                .next()
                .map(|r| r.axis_values.clone())
                .unwrap_or_default(),
        );
        row.extend([cell.design.to_string(), cell.runs.len().to_string()]);
        let baseline = cells
            .iter()
            .find(|b| b.point == cell.point && b.design == set.baseline)
            .filter(|_| cell.design != set.baseline);
        for h in &headline {
            row.push(h.better.word().to_string());
            let own = cell.interval(|r| h.read(r)).filter(|i| i.mean.is_finite());
            row.extend(interval_columns(own.as_ref()));
            let ratio = baseline
                .and_then(|b| cell.against(b, |r| h.read(r)))
                .map(|c| c.ratio)
                .filter(|i| i.mean.is_finite());
            row.extend(interval_columns(ratio.as_ref()));
        }
        out.write_record(&row)?;
    }
    let bytes = out.into_inner().map_err(|e| e.into_error())?;
    Ok(vec![File {
        path: SUMMARY_PATH.into(),
        bytes,
    }])
}

/// Mean, interval ends and the bimodal flag; empty where there is none.
fn interval_columns(interval: Option<&SeedInterval>) -> [String; 4] {
    let text = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    match interval {
        None => Default::default(),
        Some(i) => [
            i.mean.to_string(),
            text(i.low),
            text(i.high),
            i.bimodal.to_string(),
        ],
    }
}
