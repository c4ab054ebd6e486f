//! `futexsim report DIR`: rebuild report.md, results.csv and the charts of a
//! report directory from its results.json, without simulating again.

use crate::cli::CliError;
use clap::Args;
use futexsim::report;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A report directory holding results.json (and speed.json).
    dir: PathBuf,
    /// Publish plain files instead of a generation behind links (see `run --plain`).
    #[arg(long)]
    plain: bool,
}

pub fn run(args: &ReportArgs, out: &mut impl Write) -> Result<(), CliError> {
    // Locked before anything is read: a `run` at work in DIR finishes first,
    // and its results are the ones published again.
    let _lock = futexsim::dir_lock::lock(&args.dir)?;
    let (set, speed) = report::read(&args.dir)?;
    report::write(&args.dir, &set, &speed, report::Layout::asked(args.plain))?;
    writeln!(out, "{}", args.dir.join(report::REPORT_MD).display())?;
    Ok(())
}
