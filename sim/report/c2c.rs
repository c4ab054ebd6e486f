//! perf c2c's view of a run, laid out as `perf c2c report --stdio` lays out
//! its Trace Event Information, its Global Shared Cache Line Event
//! Information, its Shared Data Cache Line Table and its Shared Cache Line
//! Distribution Pareto, so that a user can put a simulated run beside a
//! capture and read (or diff) them line by line and column by column.
//!
//! The lines and columns perf has carry perf's definitions (docs/reports.md,
//! "The c2c tables"): HITM and the other load classes count loads only,
//! stores are L1 hits or misses, and each Pareto percentage is the row's
//! share of the line's count in that column, so a column sums to 100 % over
//! the line. A Pareto row is an offset and the function that made the
//! accesses (perf's Symbol). What futexsim knows and perf does not (what
//! lives at an offset, stores that took a Modified line) comes after perf's
//! columns, under names perf does not use. What futexsim cannot fill from a
//! simulation (code address, pid, tid, object, source line; the summary
//! lines of load classes the run's totals do not keep apart from stores) is
//! left out, not faked.

use crate::record::{
    AccessCounts, BucketRef, CoherenceRecord, LineRecord, OffsetRecord, RunRecord,
};
use crate::symbol::Symbol;
use std::fmt::Write;

/// The buckets whose lock words lie on the line, in offset order. Two or
/// more mean the line is falsely shared between bucket locks.
pub fn lock_buckets(line: &LineRecord) -> Vec<BucketRef> {
    let mut buckets: Vec<BucketRef> = Vec::new();
    for bucket in line.offsets.iter().filter_map(|o| o.what.bucket_lock()) {
        if !buckets.contains(&bucket) {
            buckets.push(bucket);
        }
    }
    buckets
}

/// A share of a total, in percent; 0 of 0 is 0.
pub fn percent(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * part as f64 / total as f64
    }
}

/// One Pareto row, as perf makes one for each offset and code address: an
/// offset and the accesses one function made there. A record written
/// before functions were kept has one row an offset, with no symbol.
#[derive(Clone, Copy, Debug)]
pub struct ParetoRow<'a> {
    pub offset: &'a OffsetRecord,
    pub symbol: Option<Symbol>,
    pub counts: &'a AccessCounts,
}

/// The line's Pareto rows: by offset, then by function.
pub fn pareto_rows(line: &LineRecord) -> Vec<ParetoRow<'_>> {
    let mut rows = Vec::new();
    for o in &line.offsets {
        if o.symbols.is_empty() {
            rows.push(ParetoRow {
                offset: o,
                symbol: None,
                counts: &o.counts,
            });
        }
        rows.extend(o.symbols.iter().map(|s| ParetoRow {
            offset: o,
            symbol: Some(s.symbol),
            counts: &s.counts,
        }));
    }
    rows
}

/// One Pareto row's percentages: the row's share of the line's remote
/// HITM, local HITM, store L1 hits and store L1 misses. Each is a share of
/// the line's total in that column, so over a line's rows every column
/// sums to 100 % (or is 0 throughout when the line has none of that kind).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParetoShares {
    pub rmt_hitm: f64,
    pub lcl_hitm: f64,
    pub store_l1_hit: f64,
    pub store_l1_miss: f64,
}

/// The shares of each of `pareto_rows(line)`, in order.
pub fn pareto_shares(line: &LineRecord) -> Vec<ParetoShares> {
    pareto_rows(line)
        .iter()
        .map(|r| ParetoShares {
            rmt_hitm: percent(r.counts.rmt_hitm, line.rmt_hitm),
            lcl_hitm: percent(r.counts.lcl_hitm, line.lcl_hitm),
            store_l1_hit: percent(r.counts.store_l1_hit, line.store_l1_hit),
            store_l1_miss: percent(r.counts.store_l1_miss, line.store_l1_miss),
        })
        .collect()
}

/// perf's Symbol column: the function, `[k]` before a kernel function's
/// name and `[.]` before user space's, as perf marks them.
pub fn symbol_cell(symbol: Option<Symbol>) -> String {
    match symbol {
        None => String::new(),
        Some(Symbol::Workload) => format!("[.] {}", Symbol::Workload.name()),
        Some(s) => format!("[k] {}", s.name()),
    }
}

/// perf c2c's Tot Hitm %: the line's share of every HITM load in the run.
pub fn tot_hitm_percent(line: &LineRecord, run: &CoherenceRecord) -> f64 {
    percent(line.hitm(), run.lcl_hitm + run.rmt_hitm)
}

/// perf c2c's Node column (its default form): the nodes of the CPUs that
/// made the accesses, each as `%2d`, one space apart.
pub fn nodes(c: &AccessCounts) -> String {
    c.nodes
        .iter()
        .map(|n| format!("{n:2}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One column: the text over a group of columns (spanning `span` of them,
/// this one first), its own header, its width and alignment.
struct Column {
    group: Option<(&'static str, usize)>,
    header: &'static str,
    width: usize,
    left: bool,
}

const fn col(header: &'static str, width: usize) -> Column {
    Column {
        group: None,
        header,
        width,
        left: false,
    }
}

const fn group(text: &'static str, span: usize, header: &'static str, width: usize) -> Column {
    Column {
        group: Some((text, span)),
        header,
        width,
        left: false,
    }
}

const fn left(header: &'static str, width: usize) -> Column {
    Column {
        group: None,
        header,
        width,
        left: true,
    }
}

/// perf separates columns by two spaces and starts header lines with "# ".
const SEP: &str = "  ";

/// The two header lines and the dotted line, as perf prints them.
fn header(out: &mut String, columns: &[Column]) {
    let mut top = String::from("#");
    let mut i = 0;
    while i < columns.len() {
        let (text, span) = columns[i].group.unwrap_or(("", 1));
        let span = span.min(columns.len() - i);
        let width: usize =
            columns[i..i + span].iter().map(|c| c.width).sum::<usize>() + SEP.len() * (span - 1);
        let _ = write!(top, " {text:>width$}");
        top.push(' ');
        i += span;
    }
    let _ = writeln!(out, "{}", top.trim_end());
    let mut low = String::from("#");
    let mut dots = String::from("#");
    for c in columns {
        let w = c.width;
        if c.left {
            let _ = write!(low, " {:<w$} ", c.header);
        } else {
            let _ = write!(low, " {:>w$} ", c.header);
        }
        let _ = write!(dots, " {} ", ".".repeat(w));
    }
    let _ = writeln!(out, "{}", low.trim_end());
    let _ = writeln!(out, "{}", dots.trim_end());
    let _ = writeln!(out, "#");
}

/// One row: each cell right-aligned (or left) to its column's width.
fn row(out: &mut String, columns: &[Column], cells: &[String]) {
    let mut line = String::from(" ");
    for (c, text) in columns.iter().zip(cells) {
        let w = c.width;
        if c.left {
            let _ = write!(line, " {text:<w$} ");
        } else {
            let _ = write!(line, " {text:>w$} ");
        }
    }
    let _ = writeln!(out, "{}", line.trim_end());
}

fn banner(out: &mut String, title: &str) {
    let rule = "=".repeat(49);
    let _ = writeln!(out, "{rule}\n{title:^49}\n{rule}\n#");
}

fn pct(share: f64) -> String {
    format!("{share:.2}%")
}

/// futexsim's own columns, after perf's: stores and RMWs that took the line
/// from a cache holding it Modified.
const RFO_GROUP: &str = "RFO from Modified";

const LINE_COLUMNS: [Column; 26] = [
    col("Index", 5),
    group("----------- Cacheline ----------", 3, "Address", 18),
    col("Node", 4),
    col("PA cnt", 6),
    group("Tot", 1, "Hitm", 7),
    group("------- Load Hitm -------", 3, "Total", 7),
    col("LclHitm", 7),
    col("RmtHitm", 7),
    group("Total", 1, "records", 7),
    group("Total", 1, "Loads", 7),
    group("Total", 1, "Stores", 7),
    group("--------- Stores --------", 3, "L1Hit", 7),
    col("L1Miss", 7),
    col("N/A", 7),
    group("----- Core Load Hit -----", 3, "FB", 7),
    col("L1", 7),
    col("L2", 7),
    group("- LLC Load Hit --", 2, "LclHit", 8),
    col("LclHitm", 7),
    group("- RMT Load Hit --", 2, "RmtHit", 8),
    col("RmtHitm", 7),
    group("--- Load Dram ----", 2, "Lcl", 8),
    col("Rmt", 8),
    group(RFO_GROUP, 2, "Lcl", 8),
    col("Rmt", 8),
    left("Region", 6),
];

const PARETO_COLUMNS: [Column; 19] = [
    col("Num", 5),
    group("----- HITM -----", 2, "RmtHitm", 7),
    col("LclHitm", 7),
    group("------- Store Refs ------", 3, "L1 Hit", 7),
    col("L1 Miss", 7),
    col("N/A", 7),
    group("---------- Data address ----------", 3, "Offset", 18),
    col("Node", 4),
    col("PA cnt", 6),
    group("------------ ns ------------", 3, "rmt hitm", 8),
    col("lcl hitm", 8),
    col("load", 8),
    group("Total", 1, "records", 7),
    group("cpu", 1, "cnt", 8),
    left("Symbol", 34),
    left("Node", 4),
    group(RFO_GROUP, 2, "Lcl", 8),
    col("Rmt", 8),
    left("Data", 4),
];

/// The cache line's own row in the Pareto, between the dashed rules: its
/// counts in the columns that follow as percentages.
const PARETO_LINE_RULE: &str =
    "  ----------------------------------------------------------------------";

/// One line of perf's summaries: its label padded to perf's 34 columns,
/// then the value in 10.
fn summary_line(out: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "  {label:<34}: {value:>10}");
}

/// perf's Trace Event Information, of every access the run counted: the
/// lines the run's totals fill. The load classes below HITM (L1D, LLC,
/// remote clean hits, DRAM, and what perf derives from them) and the
/// stores' L1D hits and misses are kept by the run's totals for loads and
/// stores together, and so are left out; a simulation makes no
/// uncacheable, I/O or unmapped access, and every sample parses.
fn trace_event_information(out: &mut String, c: &CoherenceRecord) {
    banner_plain(out, "Trace Event Information");
    summary_line(out, "Total records", c.loads + c.stores);
    summary_line(out, "Load Operations", c.loads);
    summary_line(out, "Loads - uncacheable", 0);
    summary_line(out, "Loads - IO", 0);
    summary_line(out, "Loads - no mapping", 0);
    summary_line(out, "Load Local HITM", c.lcl_hitm);
    summary_line(out, "Load Remote HITM", c.rmt_hitm);
    summary_line(out, "Store Operations", c.stores);
    summary_line(out, "Store - uncacheable", 0);
    summary_line(out, "Store - no mapping", 0);
    summary_line(out, "No Page Map Rejects", 0);
    summary_line(out, "Unable to parse data source", 0);
}

/// perf's Global Shared Cache Line Event Information, over the lines of
/// the Shared Data Cache Line Table (perf's is over every line with a
/// HITM: the same where the table holds them all). Locked and blocked
/// accesses are not kept by line, and are left out; a simulated core has
/// one private level, so fill-buffer and L2 hits are 0, as in the table.
fn global_shared_cache_line_information(out: &mut String, lines: &[LineRecord]) {
    let sum = |f: fn(&LineRecord) -> u64| lines.iter().map(f).sum::<u64>();
    banner_plain(out, "Global Shared Cache Line Event Information");
    summary_line(out, "Total Shared Cache Lines", lines.len());
    summary_line(out, "Load HITs on shared lines", sum(|l| l.loads));
    summary_line(out, "Fill Buffer Hits on shared lines", 0);
    summary_line(
        out,
        "L1D hits on shared lines",
        sum(LineRecord::load_l1_hit),
    );
    summary_line(out, "L2D hits on shared lines", 0);
    summary_line(
        out,
        "LLC hits on shared lines",
        sum(|l| l.lcl_hit + l.lcl_hitm),
    );
    summary_line(out, "Store HITs on shared lines", sum(|l| l.stores));
    summary_line(
        out,
        "Store L1D hits on shared lines",
        sum(|l| l.store_l1_hit),
    );
    summary_line(out, "Total Merged records", sum(|l| l.hitm() + l.stores));
}

/// perf's banner over its two summaries: the title centred, no `#` after.
fn banner_plain(out: &mut String, title: &str) {
    let rule = "=".repeat(49);
    let _ = writeln!(out, "{rule}\n{title:^49}\n{rule}");
}

/// The four tables for one run, as `perf c2c report --stdio` prints them.
pub fn stdio(r: &RunRecord) -> String {
    let mut out = String::new();
    trace_event_information(&mut out, &r.coherence);
    out.push('\n');
    global_shared_cache_line_information(&mut out, &r.top_lines);
    out.push('\n');
    banner(&mut out, "Shared Data Cache Line Table");
    header(&mut out, &LINE_COLUMNS);
    for (i, l) in r.top_lines.iter().enumerate() {
        let cells = [
            i.to_string(),
            format!("{:#x}", l.address),
            l.node.to_string(),
            // Each simulated line is one physical address.
            "1".into(),
            pct(tot_hitm_percent(l, &r.coherence)),
            l.hitm().to_string(),
            l.lcl_hitm.to_string(),
            l.rmt_hitm.to_string(),
            (l.loads + l.stores).to_string(),
            l.loads.to_string(),
            l.stores.to_string(),
            l.store_l1_hit.to_string(),
            l.store_l1_miss.to_string(),
            // Every simulated store has a known outcome; futexsim models one
            // private cache level, so a load that stays there is an L1 hit.
            "0".into(),
            "0".into(),
            l.load_l1_hit().to_string(),
            "0".into(),
            l.lcl_hit.to_string(),
            l.lcl_hitm.to_string(),
            l.rmt_hit.to_string(),
            l.rmt_hitm.to_string(),
            l.dram_lcl.to_string(),
            l.dram_rmt.to_string(),
            l.lcl_rfo_modified.to_string(),
            l.rmt_rfo_modified.to_string(),
            l.region.clone(),
        ];
        row(&mut out, &LINE_COLUMNS, &cells);
    }
    out.push('\n');
    banner(&mut out, "Shared Cache Line Distribution Pareto");
    header(&mut out, &PARETO_COLUMNS);
    for (i, l) in r.top_lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "{PARETO_LINE_RULE}");
        let _ = writeln!(
            out,
            "  {i:>5}  {:>7}  {:>7}  {:>7}  {:>7}  {:>7}  {:>18}",
            l.rmt_hitm,
            l.lcl_hitm,
            l.store_l1_hit,
            l.store_l1_miss,
            0,
            format!("{:#x}", l.address)
        );
        let _ = writeln!(out, "{PARETO_LINE_RULE}");
        for (r, share) in pareto_rows(l).into_iter().zip(pareto_shares(l)) {
            let c = r.counts;
            let cells = [
                String::new(),
                pct(share.rmt_hitm),
                pct(share.lcl_hitm),
                pct(share.store_l1_hit),
                pct(share.store_l1_miss),
                pct(0.0),
                format!("{:#x}", r.offset.offset),
                l.node.to_string(),
                "1".into(),
                format!("{:6.0}", c.mean_rmt_hitm_ns),
                format!("{:6.0}", c.mean_lcl_hitm_ns),
                format!("{:6.0}", c.mean_load_ns),
                (c.loads + c.stores).to_string(),
                c.cpu_count.to_string(),
                symbol_cell(r.symbol),
                nodes(c),
                c.lcl_rfo_modified.to_string(),
                c.rmt_rfo_modified.to_string(),
                r.offset.what.to_string(),
            ];
            row(&mut out, &PARETO_COLUMNS, &cells);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::table::FieldName;
    use crate::record::{BucketTable, Occupant};

    fn bucket(index: u32) -> BucketRef {
        BucketRef {
            table: BucketTable::Global,
            index,
        }
    }

    fn field(index: u32, name: FieldName) -> Occupant {
        Occupant::Bucket {
            bucket: bucket(index),
            field: Some(name),
        }
    }

    fn offset(offset: u16, what: Occupant) -> OffsetRecord {
        OffsetRecord {
            offset,
            what,
            counts: AccessCounts {
                lcl_hitm: 1,
                rmt_hitm: 0,
                loads: 1,
                stores: 0,
                store_l1_hit: 0,
                store_l1_miss: 0,
                lcl_rfo_modified: 0,
                rmt_rfo_modified: 0,
                mean_rmt_hitm_ns: 0.0,
                mean_lcl_hitm_ns: 0.0,
                mean_load_ns: 0.0,
                cpu_count: 1,
                nodes: vec![0, 1],
            },
            symbols: Vec::new(),
        }
    }

    #[test]
    fn a_line_names_the_buckets_whose_locks_it_holds() {
        let line = LineRecord {
            address: 0x1000,
            region: "futex_queues".into(),
            node: 0,
            lcl_hitm: 0,
            rmt_hitm: 0,
            lcl_hit: 0,
            rmt_hit: 0,
            dram_lcl: 0,
            dram_rmt: 0,
            loads: 0,
            stores: 0,
            store_l1_hit: 0,
            store_l1_miss: 0,
            lcl_rfo_modified: 0,
            rmt_rfo_modified: 0,
            offsets: vec![
                offset(0, field(3, FieldName::Chain)),
                offset(8, field(4, FieldName::Lock)),
                offset(40, Occupant::PrivateHashHeader),
                offset(48, field(5, FieldName::Lock)),
                offset(52, field(5, FieldName::Waiters)),
                offset(56, field(4, FieldName::Lock)),
            ],
        };
        assert_eq!(lock_buckets(&line), [bucket(4), bucket(5)]);
        assert_eq!(nodes(&line.offsets[0].counts), " 0  1");
    }

    /// A group's text spans its columns: the header lines are as wide as
    /// the dotted line under them.
    #[test]
    fn group_headers_span_their_columns() {
        for columns in [&LINE_COLUMNS[..], &PARETO_COLUMNS[..]] {
            let mut out = String::new();
            header(&mut out, columns);
            let lines: Vec<&str> = out.lines().collect();
            let dots = lines[2].len();
            assert!(lines[0].len() <= dots, "{}", lines[0]);
            assert!(lines[1].len() <= dots + 4, "{}", lines[1]);
            for c in columns.iter().filter_map(|c| c.group) {
                assert!(lines[0].contains(c.0));
            }
        }
    }
}
