//! `futexsim native hash`: perf bench futex hash on this machine with real
//! futex syscalls, printed as perf prints it.

use crate::cli::CliError;
use clap::{Args, Subcommand};
use futexsim::host::native::HashBench;
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
    Hash {
        /// -t: threads (every online CPU by default).
        #[arg(short, long)]
        threads: Option<u32>,
        /// -f: futexes per thread.
        #[arg(short, long, default_value_t = 1024)]
        futexes: u32,
        /// -S: shared futexes.
        #[arg(short = 'S', long)]
        shared: bool,
        /// -r: seconds to run (fractions allowed).
        #[arg(short, long, default_value_t = 1.0)]
        runtime: f64,
    },
}

pub fn run(args: &NativeArgs, out: &mut impl Write) -> Result<(), CliError> {
    let NativeBench::Hash {
        threads,
        futexes,
        shared,
        runtime,
    } = args.bench;
    if !(runtime > 0.0 && runtime <= 3600.0) {
        return Err(CliError::Input(format!(
            "--runtime {runtime} must be above 0 and at most 3600 seconds"
        )));
    }
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let figures = HashBench {
        threads,
        futexes,
        shared,
        duration: Duration::from_secs_f64(runtime),
    }
    .run()
    .map_err(CliError::Input)?;
    writeln!(
        out,
        "Run summary [PID {}]: {threads} threads, each operating on {futexes} [{}] futexes for {runtime} secs.",
        std::process::id(),
        if shared { "shared" } else { "private" }
    )?;
    writeln!(
        out,
        "Averaged {:.0} operations/sec (+- {:.2}%), total {:.0} operations/sec",
        figures.mean(),
        figures.rsd_pct() / (threads as f64).sqrt(),
        figures.total()
    )?;
    Ok(())
}
