//! `futexsim calibrate`: measures this machine and writes its profile, one
//! that a config names with `preset = "path"` and runs as written.

use crate::cli::machine::{base_profile, check_profile_path, write_profile};
use crate::cli::CliError;
use clap::Args;
use futexsim::host::calibrate::profile;
use futexsim::host::measure::{measure, Effort};
use futexsim::machine::MachineSpec;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// The profile (a shipped name or a file) the figures not measured come from.
    #[arg(long, default_value = "icx-2s")]
    pub base: String,
    /// Where the profile is written.
    #[arg(long, default_value = "configs/machines/host.toml")]
    pub out: PathBuf,
    /// Measure briefly (a second or two; the figures are noisier).
    #[arg(long)]
    pub quick: bool,
}

pub fn run(args: &CalibrateArgs, out: &mut impl Write) -> Result<(), CliError> {
    let effort = if args.quick {
        Effort::QUICK
    } else {
        Effort::FULL
    };
    calibrate(&args.base, &args.out, effort, out).map(|_| ())
}

/// Measures, writes the profile to `path`, reports the figures, and returns it.
pub fn calibrate(
    base: &str,
    path: &Path,
    effort: Effort,
    out: &mut impl Write,
) -> Result<MachineSpec, CliError> {
    let base_spec = base_profile(base)?;
    check_profile_path(path)?;
    let figures = measure(effort);
    for line in figures.lines() {
        writeln!(out, "{line}")?;
    }
    let spec = profile(&figures, &base_spec, base).map_err(|e| CliError::Input(e.to_string()))?;
    write_profile(
        &spec,
        path,
        "Written by futexsim calibrate; measure again rather than edit.",
    )?;
    writeln!(out, "profile: {}", path.display())?;
    Ok(spec)
}
