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
    };
    cli::exit_status(result.and_then(|()| Ok(out.flush()?)))
}
