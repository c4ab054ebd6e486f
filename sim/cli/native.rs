//! `futexsim native hash`: perf bench futex hash on this machine with real
//! futex syscalls, with perf's options and printed line for line as perf
//! prints it, so that scripts written for perf's output read it unchanged.

use crate::cli::CliError;
use clap::{Args, Subcommand};
use futexsim::footprint::{memory_limit, thread_limit};
use futexsim::host::native::{
    hashing_line, lock_all_memory, request_hash_buckets, HashBench, HashFigures, NativeError,
};
use futexsim::perf_stat::hash_thread_line;
use std::io::Write;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct NativeArgs {
    #[command(subcommand)]
    bench: NativeBench,
}

#[derive(Subcommand, Debug)]
enum NativeBench {
    /// perf bench futex hash: every thread loops failed FUTEX_WAITs on its own futexes.
    Hash(HashOptions),
}

/// perf bench futex hash's options, with perf's letters and defaults.
#[derive(Args, Debug)]
struct HashOptions {
    /// Threads (every online CPU by default, or with 0, as perf takes it).
    #[arg(short, long)]
    threads: Option<u32>,
    /// Seconds to run.
    #[arg(short, long, default_value_t = 10)]
    runtime: u32,
    /// Futexes per thread.
    #[arg(short, long, default_value_t = 1024)]
    futexes: u32,
    /// Private futex hash buckets for the process (PR_FUTEX_HASH, Linux
    /// 6.16+); 0 for the global hash.
    #[arg(short, long)]
    buckets: Option<u32>,
    /// Silent: no per-thread lines.
    #[arg(short, long)]
    silent: bool,
    /// Shared futexes instead of private ones.
    #[arg(short = 'S', long)]
    shared: bool,
    /// Lock all current and future memory.
    #[arg(short, long)]
    mlockall: bool,
}

pub fn run(args: &NativeArgs, out: &mut impl Write) -> Result<(), CliError> {
    let NativeBench::Hash(options) = &args.bench;
    if !(1..=3600).contains(&options.runtime) {
        return Err(CliError::Input(format!(
            "--runtime {} must be between 1 and 3600 seconds",
            options.runtime
        )));
    }
    // perf bench futex hash reads -t 0 as its default: every online CPU.
    let threads = options
        .threads
        .filter(|&threads| threads > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let bench = HashBench {
        threads,
        futexes: options.futexes,
        shared: options.shared,
        duration: Duration::from_secs(options.runtime.into()),
    };
    // Before anything starts or changes: threads and memory for them.
    bench
        .check(memory_limit().as_ref(), thread_limit().as_ref())
        .map_err(|e| CliError::Input(e.to_string()))?;
    if options.mlockall {
        lock_all_memory().map_err(|e| CliError::Failed(e.to_string()))?;
    }
    if let Some(buckets) = options.buckets {
        request_hash_buckets(buckets).map_err(|e| match e {
            NativeError::HashBucketsSize { .. } => CliError::Input(e.to_string()),
            _ => CliError::Failed(e.to_string()),
        })?;
    }
    writeln!(
        out,
        "Run summary [PID {}]: {threads} threads, each operating on {} [{}] futexes for {} secs.\n",
        std::process::id(),
        options.futexes,
        if options.shared { "shared" } else { "private" },
        options.runtime
    )?;
    out.flush()?;
    let figures = bench.run().map_err(|e| CliError::Failed(e.to_string()))?;
    print_figures(&figures, options.silent, out)?;
    let hashing = hashing_line(options.buckets).map_err(|e| CliError::Failed(e.to_string()))?;
    writeln!(out, "{hashing}")?;
    Ok(())
}

/// perf's per-thread lines (unless silent) and its "Averaged" line.
fn print_figures(
    figures: &HashFigures,
    silent: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    if !silent {
        for (tid, thread) in figures.threads.iter().enumerate() {
            let rate = figures.perf_rate(thread);
            writeln!(
                out,
                "{}",
                hash_thread_line(
                    tid,
                    thread.first_futex as u64,
                    thread.last_futex as u64,
                    rate
                )
            )?;
        }
    }
    let (avg, pct) = figures.perf_average();
    writeln!(
        out,
        "{}Averaged {avg} operations/sec (+- {pct:.2}%), total secs = {}",
        if silent { "" } else { "\n" },
        figures.runtime.as_secs()
    )?;
    Ok(())
}
