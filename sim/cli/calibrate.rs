//! `futexsim calibrate`: measures this machine and writes its profile.

use crate::cli::CliError;
use clap::Args;
use futexsim::campaign::write_atomic;
use futexsim::host::calibrate::{measure, profile};
use futexsim::machine::MachineSpec;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// The profile the figures not measured come from.
    #[arg(long, default_value = "icx-2s")]
    pub base: String,
    /// Where the profile is written.
    #[arg(long, default_value = "configs/machines/host.toml")]
    pub out: PathBuf,
}

pub fn run(args: &CalibrateArgs, out: &mut impl Write) -> Result<(), CliError> {
    calibrate(&args.base, &args.out, out).map(|_| ())
}

/// Measures, writes the profile to `path`, reports the figures, and returns it.
pub fn calibrate(base: &str, path: &Path, out: &mut impl Write) -> Result<MachineSpec, CliError> {
    let figures = measure();
    let spec = profile(&figures, base).map_err(CliError::Input)?;
    writeln!(out, "{}", spec.source)?;
    let text = format!(
        "# Written by futexsim calibrate; measure again rather than edit.\n{}",
        toml::to_string(&spec).expect("a profile serializes")
    );
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Failed(format!("{}: {e}", dir.display())))?;
    }
    write_atomic(path, text.as_bytes())
        .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
    writeln!(out, "profile: {}", path.display())?;
    Ok(spec)
}
