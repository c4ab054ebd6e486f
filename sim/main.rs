//! futexsim's command line: parses the arguments and hands them to the
//! command's module under cli/.

mod cli;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "futexsim", version, about)]
struct Cli {
    /// Without a command, futexsim runs the embedded default config.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Compute the kernel's Jenkins hashes, or place one futex key in a table design.
    Hash(cli::hash::HashArgs),
    /// Hash a benchmark's futex keys into table designs and compare bucket and
    /// cache-line sharing with a uniform hash.
    Layout(cli::layout::LayoutArgs),
    /// Simulate the sweeps of TOML configs (the embedded default when none)
    /// and write their results and reports.
    Run(cli::run::RunArgs),
    /// Combine the shard directories of one campaign into its results and report.
    Merge(cli::merge::MergeArgs),
    /// Rebuild a report directory's report.md, results.csv and charts from
    /// its results.json, without simulating again.
    Report(cli::report::ReportArgs),
    /// Print a run's perf c2c tables as `perf c2c report --stdio` prints them.
    C2c(cli::c2c::C2cArgs),
    /// Print where each design's op spends its time at one point of a
    /// config: part by part (syscall, key, hash, each access and how it was
    /// served, lock wait, sleep, wake-up), like perf annotate.
    Explain(cli::explain::ExplainArgs),
    /// Compare two result sets point by point (for example before and after
    /// a layout change).
    Diff(cli::diff::DiffArgs),
    /// Run the validation suite against published results (with --host,
    /// against this machine) and write its report.
    Validate(cli::validate::ValidateArgs),
    /// Measure this machine (line transfers, failed FUTEX_WAIT) and write its profile.
    Calibrate(cli::calibrate::CalibrateArgs),
    /// Run a benchmark natively on this machine with real futex syscalls.
    Native(cli::native::NativeArgs),
    /// Machine profiles: `import` reads core-to-core-latency and Intel MLC
    /// measurements into one.
    Machine(cli::machine::MachineArgs),
    /// Table designs from a kernel: `from-btf` reads a kernel's bucket
    /// layout from its BTF into a `[[table]]`.
    Design(cli::design::DesignArgs),
    /// Answer a sizing or layout question (TOML): the design of a family
    /// that meets a target at the least memory, found by a search.
    Advise(Box<cli::advise::AdviseArgs>),
}

fn main() -> ExitCode {
    let mut out = std::io::stdout().lock();
    let command = Cli::parse()
        .command
        .unwrap_or_else(|| Command::Run(Default::default()));
    let result = match command {
        Command::Hash(args) => cli::hash::run(&args, &mut out),
        Command::Layout(args) => cli::layout::run(&args, &mut out),
        Command::Run(args) => cli::run::run(&args, &mut out),
        Command::Merge(args) => cli::merge::run(&args),
        Command::Report(args) => cli::report::run(&args, &mut out),
        Command::C2c(args) => cli::c2c::run(&args, &mut out),
        Command::Explain(args) => cli::explain::run(&args, &mut out),
        Command::Diff(args) => cli::diff::run(&args, &mut out),
        Command::Validate(args) => cli::validate::run(&args, &mut out),
        Command::Calibrate(args) => cli::calibrate::run(&args, &mut out),
        Command::Native(args) => cli::native::run(&args, &mut out),
        Command::Machine(args) => cli::machine::run(&args, &mut out),
        Command::Design(args) => cli::design::run(&args, &mut out),
        Command::Advise(args) => cli::advise::run(&args, &mut out),
    };
    cli::exit_status(result.and_then(|()| Ok(out.flush()?)))
}
