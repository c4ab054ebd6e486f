//! `futexsim layout`: hash one benchmark's futex keys into several table
//! designs and print, per design, how keys share buckets and occupied
//! buckets share lines, beside a uniform hash's expectation.

use super::{parse_u32, parse_u64, CliError};
use clap::builder::PossibleValuesParser;
use clap::{Args, ValueEnum};
use futexsim::analysis::layout::{analyze, LayoutReport};
use futexsim::analysis::population::KeyPopulation;
use futexsim::kernel::table::{preset, title, PRESET_NAMES};
use futexsim::machine::Platform;
use futexsim::record::LoadCount;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

#[derive(Clone, Copy, ValueEnum)]
enum Workload {
    /// perf bench futex hash: --threads arrays of --futexes words.
    PerfHash,
    /// will-it-scale futex1-4 in thread mode: one stack word per thread.
    WillItScaleThreads,
    /// will-it-scale futex1-4 in process mode: one stack word per process.
    WillItScaleProcesses,
}

#[derive(Args)]
pub struct LayoutArgs {
    /// Table design preset; repeat to compare designs on the same keys.
    #[arg(long = "table", required = true, value_parser = PossibleValuesParser::new(PRESET_NAMES))]
    tables: Vec<String>,
    /// CPUs (all possible CPUs online).
    #[arg(long, value_parser = parse_u64)]
    cpus: u64,
    #[arg(long, value_parser = parse_u32, default_value = "1")]
    nodes: u32,
    /// Threads (perf-hash) or tasks (will-it-scale); default: --cpus.
    #[arg(long, value_parser = parse_u32)]
    threads: Option<u32>,
    /// Futexes per thread (perf-hash only).
    #[arg(long, value_parser = parse_u32, default_value = "1024")]
    futexes: u32,
    #[arg(long, value_enum, default_value = "perf-hash")]
    workload: Workload,
    /// Shared futexes (perf -S; will-it-scale futex1/futex2) instead of private.
    #[arg(long)]
    shared: bool,
    /// Coherence line size in bytes.
    #[arg(long, value_parser = parse_u64, default_value = "64")]
    line: u64,
    /// The kernel's base page in bytes (65536 on ppc64le).
    #[arg(long, value_parser = parse_u64, default_value = "4096")]
    page_size: u64,
    /// Seed for the address-space randomization that places the keys.
    #[arg(long, value_parser = parse_u64, default_value = "1")]
    seed: u64,
    #[arg(long)]
    json: bool,
}

/// Everything one invocation computed, as --json prints it.
#[derive(Serialize)]
struct LayoutOutput {
    population: KeyPopulation,
    platform: Platform,
    seed: u64,
    designs: Vec<LayoutReport>,
}

pub fn run(args: &LayoutArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let platform = Platform {
        cpus: args.cpus,
        possible_cpus: args.cpus,
        nodes: args.nodes,
        line_size: args.line,
        page_size: args.page_size,
    };
    platform
        .validate()
        .map_err(|e| CliError::Input(e.to_string()))?;
    // Validated above: at most 65536.
    let threads = args.threads.unwrap_or(args.cpus as u32);
    let population = match args.workload {
        Workload::PerfHash => KeyPopulation::PerfHash {
            threads,
            futexes: args.futexes,
            shared: args.shared,
        },
        Workload::WillItScaleThreads | Workload::WillItScaleProcesses => {
            KeyPopulation::WillItScale {
                tasks: threads,
                process_mode: matches!(args.workload, Workload::WillItScaleProcesses),
                shared: args.shared,
            }
        }
    };
    population
        .validate()
        .map_err(|e| CliError::Input(e.to_string()))?;
    let words = population.place(args.seed);
    let designs = args
        .tables
        .iter()
        .map(|name| {
            let design =
                preset(name).ok_or_else(|| CliError::Input(format!("no table preset '{name}'")))?;
            analyze(&design, &platform, &words).map_err(|e| CliError::Input(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let output = LayoutOutput {
        population,
        platform,
        seed: args.seed,
        designs,
    };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &output).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        write_markdown(&output, out)?;
    }
    Ok(())
}

fn percent(fraction: f64) -> String {
    format!("{:.2} %", 100.0 * fraction)
}

/// A load histogram on one line; long ones in at most `MAX_BINS` ranges.
fn compact_histogram(histogram: &[LoadCount]) -> String {
    const MAX_BINS: u64 = 10;
    let (Some(first), Some(last)) = (histogram.first(), histogram.last()) else {
        return "none".into();
    };
    let width = (last.load - first.load + 1).div_ceil(MAX_BINS);
    let mut bins: BTreeMap<u64, u64> = BTreeMap::new();
    for c in histogram {
        *bins
            .entry(first.load + (c.load - first.load) / width * width)
            .or_insert(0) += c.buckets;
    }
    bins.into_iter()
        .map(|(start, buckets)| {
            let end = (start + width - 1).min(last.load);
            if end == start {
                format!("{start}: {buckets}")
            } else {
                format!("{start}-{end}: {buckets}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn write_markdown(o: &LayoutOutput, out: &mut dyn Write) -> std::io::Result<()> {
    let p = &o.platform;
    let keys = o.designs.first().map_or(0, |r| r.keys);
    writeln!(out, "# Futex hash layout")?;
    writeln!(out)?;
    writeln!(out, "{} ({keys} keys)", o.population.describe())?;
    writeln!(
        out,
        "{} CPUs, {} node(s), {}-byte lines, seed {}",
        p.cpus, p.nodes, p.line_size, o.seed
    )?;
    for r in &o.designs {
        write_design(r, out)?;
    }
    Ok(())
}

fn write_design(r: &LayoutReport, out: &mut dyn Write) -> std::io::Result<()> {
    let e = &r.expected;
    writeln!(out)?;
    writeln!(out, "## {}", title(&r.design, &r.era))?;
    writeln!(out)?;
    let mut private: BTreeMap<u64, usize> = BTreeMap::new();
    for &slots in r.private_slots_per_process.iter().filter(|&&s| s > 0) {
        *private.entry(slots).or_insert(0) += 1;
    }
    let private = if private.is_empty() {
        "no private hash".to_string()
    } else {
        private
            .iter()
            .map(|(slots, n)| format!("private hash of {slots} slots in {n} process(es)"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(
        out,
        "- tables: {} global instance(s) of {} slots, {private}; {} bytes",
        r.instances, r.slots_per_instance, r.table_bytes
    )?;
    let locks: Vec<String> = r
        .lock_words_per_line
        .iter()
        .map(|c| format!("{} lines with {}", c.lines, c.locks))
        .collect();
    writeln!(out, "- lock words per line: {}", locks.join(", "))?;
    writeln!(
        out,
        "- buckets the keys can reach: {}; by load: {}",
        r.reachable_buckets,
        compact_histogram(&r.load_histogram)
    )?;
    let busiest: Vec<String> = r
        .busiest_buckets
        .iter()
        .map(|b| format!("{} #{} ({})", b.table, b.index, b.load))
        .collect();
    writeln!(out, "- busiest buckets (keys): {}", busiest.join(", "))?;
    writeln!(out)?;
    writeln!(out, "| figure | measured | uniform hash |")?;
    writeln!(out, "|---|---:|---:|")?;
    writeln!(
        out,
        "| max bucket load | {} | {:.2} |",
        r.max_load, e.max_load
    )?;
    writeln!(
        out,
        "| mean load of non-empty buckets | {:.2} | {:.2} |",
        r.mean_load_nonempty, e.mean_load_nonempty
    )?;
    writeln!(
        out,
        "| keys sharing a bucket | {} ({}) | {:.1} ± {:.1} ({}) |",
        r.keys_sharing_bucket,
        percent(r.fraction_sharing_bucket),
        e.keys_sharing_bucket,
        e.keys_sharing_bucket_sd,
        percent(e.fraction_sharing_bucket)
    )?;
    writeln!(
        out,
        "| colliding key pairs | {} | {:.1} ± {:.1} |",
        r.colliding_pairs, e.colliding_pairs, e.colliding_pairs_sd
    )?;
    writeln!(
        out,
        "| occupied bucket pairs with locks on one line | {} | {:.1} |",
        r.line_sharing_bucket_pairs, e.line_sharing_bucket_pairs
    )?;
    writeln!(
        out,
        "| keys on a line with another occupied bucket's lock | {} ({}) | {:.1} ({}) |",
        r.keys_on_shared_lines,
        percent(r.fraction_on_shared_lines),
        e.keys_on_shared_lines,
        percent(e.fraction_on_shared_lines)
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(pairs: &[(u64, u64)]) -> Vec<LoadCount> {
        pairs
            .iter()
            .map(|&(load, buckets)| LoadCount { load, buckets })
            .collect()
    }

    #[test]
    fn short_histograms_are_listed_and_long_ones_binned() {
        assert_eq!(
            compact_histogram(&hist(&[(0, 5), (1, 3), (4, 1)])),
            "0: 5, 1: 3, 4: 1"
        );
        let long: Vec<(u64, u64)> = (100..130).map(|l| (l, 1)).collect();
        assert_eq!(
            compact_histogram(&hist(&long)),
            "100-102: 3, 103-105: 3, 106-108: 3, 109-111: 3, 112-114: 3, 115-117: 3, 118-120: 3, 121-123: 3, 124-126: 3, 127-129: 3"
        );
        assert_eq!(compact_histogram(&[]), "none");
    }
}
