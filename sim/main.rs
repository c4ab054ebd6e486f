//! The `futexsim` binary: parses arguments and calls the library.

mod cli;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "futexsim",
    version,
    about = "Simulates futex hash-bucket contention and false sharing"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate perf bench futex hash for one or more table designs.
    Run(cli::run::RunArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => cli::run::run(args),
    };
    if let Err(e) = result {
        eprintln!("futexsim: error: {e}");
        std::process::exit(e.code);
    }
}
