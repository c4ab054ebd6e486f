//! `futexsim merge DIR... --out OUT`: combines the shard directories of one
//! campaign into one, and writes its results and report: the same bytes the
//! unsharded run writes.

use crate::cli::CliError;
use clap::Args;
use futexsim::campaign::Campaign;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard directories (`futexsim run --shard K/N --out DIR`).
    #[arg(required = true)]
    shards: Vec<PathBuf>,
    /// The merged campaign; may be one of the shards.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: &MergeArgs) -> Result<(), CliError> {
    let campaign = Campaign::reopen(&args.shards[0])?;
    let (merged, _lock) = Campaign::open(&args.out, campaign.config, false)?;
    for shard in &args.shards {
        merged.absorb(shard)?;
    }
    let missing = merged.missing(futexsim::campaign::Shard::ALL, true)?;
    if let Some(first) = missing.first() {
        return Err(CliError::Input(format!(
            "{} of {} runs are in none of the shards (the first: {}); run the missing shards and merge again",
            missing.len(),
            merged.runs.len(),
            first.describe(&merged.config)
        )));
    }
    let (set, speed) = merged.results()?.expect("no run is missing");
    futexsim::report::write(
        &merged.dir,
        &set,
        &speed,
        futexsim::report::Layout::Generations,
    )?;
    eprintln!(
        "merged {} shards: {} runs in {}",
        args.shards.len(),
        merged.runs.len(),
        args.out.display()
    );
    Ok(())
}
