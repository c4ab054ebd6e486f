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
}

pub fn run(args: &ReportArgs, out: &mut impl Write) -> Result<(), CliError> {
    let (set, speed) = report::read(&args.dir).map_err(|e| CliError::Input(e.to_string()))?;
    let _lock = futexsim::campaign::lock(&args.dir)
        .map_err(|e| CliError::Failed(format!("{}: {e}", args.dir.display())))?;
    report::write(&args.dir, &set, &speed)?;
    writeln!(out, "{}", args.dir.join(report::REPORT_MD).display())?;
    Ok(())
}
