//! `futexsim run`: simulate a workload (perf bench futex hash unless told
//! otherwise) on a machine profile for one or more table designs and print a
//! record per design.

use crate::cli::{parse_u64, CliError};
use clap::Args;
use futexsim::engine::RunWindow;
use futexsim::kernel::table;
use futexsim::machine::presets;
use futexsim::record::{RunRecord, Speed};
use futexsim::scenario::Scenario;
use futexsim::workload::{perf_hash::PerfHash, WorkloadSpec};
use rayon::prelude::*;
use std::io::Write;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Machine profile (configs/machines/).
    #[arg(long, default_value = "icx-2s")]
    machine: String,
    /// Table design preset; repeat to compare several.
    #[arg(long = "table", default_values = ["fixed-256", "aligned-3.14"])]
    tables: Vec<String>,
    /// perf bench futex hash -t: threads (the machine's CPUs by default).
    #[arg(long, value_parser = parse_u64)]
    threads: Option<u64>,
    /// perf bench futex hash -f: futexes per thread.
    #[arg(long, default_value = "1024", value_parser = parse_u64)]
    futexes: u64,
    /// perf bench futex hash -S: shared futexes.
    #[arg(long)]
    shared: bool,
    /// Any workload, as the TOML table a config's [workload] holds, e.g.
    /// 'name = "schbench"' or 'name = "will-it-scale", test = 4, mode = "process"';
    /// replaces the perf bench futex hash options.
    #[arg(long)]
    workload: Option<String>,
    /// Simulated microseconds counted.
    #[arg(long, default_value = "1000", value_parser = parse_u64)]
    duration_us: u64,
    /// Simulated microseconds before counting starts.
    #[arg(long, default_value = "500", value_parser = parse_u64)]
    warmup_us: u64,
    #[arg(long, default_value = "1", value_parser = parse_u64)]
    seed: u64,
    /// Print the records as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &RunArgs, out: &mut impl Write) -> Result<(), CliError> {
    let machine = presets::preset(&args.machine).ok_or_else(|| {
        CliError::Input(format!(
            "unknown machine '{}'; expected one of {}",
            args.machine,
            presets::names().collect::<Vec<_>>().join(", ")
        ))
    })?;
    let designs = args
        .tables
        .iter()
        .map(|name| {
            table::preset(name).ok_or_else(|| {
                CliError::Input(format!(
                    "unknown table '{name}'; expected one of {}",
                    table::PRESET_NAMES.join(", ")
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let threads = args.threads.map(|t| u32::try_from(t).unwrap_or(u32::MAX));
    let futexes = u32::try_from(args.futexes)
        .map_err(|_| CliError::Input("--futexes is too large".into()))?;
    if futexes == 0 {
        return Err(CliError::Input("--futexes must be at least 1".into()));
    }
    let workload = match &args.workload {
        Some(table) => toml::from_str::<WorkloadSpec>(table)
            .map_err(|e| CliError::Input(format!("--workload: {e}")))?,
        None => WorkloadSpec::PerfHash(PerfHash {
            threads,
            futexes,
            shared: args.shared,
        }),
    };
    let window = RunWindow {
        warmup: args.warmup_us * 1_000_000,
        duration: args.duration_us.max(1) * 1_000_000,
    };
    let results: Vec<(RunRecord, Speed)> = designs
        .into_par_iter()
        .map(|design| {
            Scenario {
                machine: machine.clone(),
                design,
                workload: workload.clone(),
                window,
                seed: args.seed,
            }
            .simulate()
            .map_err(CliError::Input)
        })
        .collect::<Result<_, _>>()?;
    if args.json {
        let records: Vec<&RunRecord> = results.iter().map(|(r, _)| r).collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&records).expect("records serialize")
        )?;
    } else {
        print_table(&results, out)?;
    }
    let events: u64 = results.iter().map(|(_, s)| s.events).sum();
    let wall: f64 = results.iter().map(|(_, s)| s.wall_s).sum();
    eprintln!(
        "simulator: {events} events in {wall:.2} s of simulation time across threads ({:.1} M events/s per core)",
        events as f64 / wall.max(1e-9) / 1e6
    );
    Ok(())
}

fn print_table(results: &[(RunRecord, Speed)], out: &mut impl Write) -> Result<(), CliError> {
    let first = &results[0].0;
    writeln!(
        out,
        "{} on {} ({} CPUs, {} nodes), {} ms simulated",
        first.workload,
        first.machine,
        first.cpus,
        first.nodes,
        first.sim_ns as f64 / 1e6
    )?;
    writeln!(
        out,
        "| design | slots | averaged ops/s/thread | total ops/s | p50 ns | p99 ns | HITM/op (lcl+rmt) | false/true sharing | lock wait ns |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")?;
    for (r, _) in results {
        let slots = match r.table.private_slots.first() {
            Some(p) => format!(
                "{} (+{p} private)",
                r.table.slots * u64::from(r.table.instances)
            ),
            None => (r.table.slots * u64::from(r.table.instances)).to_string(),
        };
        writeln!(
            out,
            "| {} | {slots} | {:.0} | {:.0} | {} | {} | {:.3} ({}+{}) | {}/{} | {:.1} |",
            r.design,
            r.mean_thread_ops_per_sec,
            r.ops_per_sec,
            r.latency_ns.p50,
            r.latency_ns.p99,
            r.coherence.hitm_per_op,
            r.coherence.lcl_hitm,
            r.coherence.rmt_hitm,
            r.coherence.false_sharing,
            r.coherence.true_sharing,
            r.locks.mean_wait_ns
        )?;
    }
    for (r, _) in results {
        if !r.extra.is_empty() {
            let figures: Vec<String> = r
                .extra
                .iter()
                .map(|m| format!("{} {:.4} {}", m.name, m.value, m.unit))
                .collect();
            writeln!(out, "{}: {}", r.design, figures.join("; "))?;
        }
    }
    for (r, _) in results {
        if let Some(line) = r.top_lines.first() {
            let what: Vec<String> = line
                .offsets
                .iter()
                .filter(|o| o.lcl_hitm + o.rmt_hitm > 0)
                .map(|o| {
                    format!(
                        "+{} {} ({} HITM, {} CPUs)",
                        o.offset,
                        o.what,
                        o.lcl_hitm + o.rmt_hitm,
                        o.cpu_count
                    )
                })
                .collect();
            writeln!(
                out,
                "{}: hottest line {:#x} ({}), {} HITM: {}",
                r.design,
                line.address,
                line.region,
                line.hitm(),
                what.join("; ")
            )?;
        }
    }
    Ok(())
}
