//! `futexsim calibrate`: measures this machine and writes its profile, one
//! that a config names with `preset = "path"` and runs as written. The
//! profile goes where `--out` says, or to the user's configuration
//! directory (`$XDG_CONFIG_HOME/futexsim/machines/host.toml`, else
//! `~/.config/...`): never into whatever directory calibrate runs in, which
//! may be a checkout of the project.

use crate::cli::check_signed_toml_out;
use crate::cli::machine::{base_profile, write_profile};
use crate::cli::CliError;
use clap::Args;
use futexsim::host::calibrate::{profile, ticket_check, Calibrated};
use futexsim::host::measure::{measure, Effort};
use futexsim::machine::MachineSpec;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// The profile (a shipped name or a file) the figures not measured come from.
    #[arg(long, default_value = "icx-2s")]
    pub base: String,
    /// Where the profile is written ($XDG_CONFIG_HOME/futexsim/machines/host.toml,
    /// else ~/.config/futexsim/machines/host.toml, by default).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Measure briefly (a second or two; the figures are noisier).
    #[arg(long)]
    pub quick: bool,
    /// Write the profile even when a figure's samples spread too widely or
    /// an ordering is one no machine shows (a busy or shared machine).
    #[arg(long)]
    pub force: bool,
}

/// The profile's default path: the user's configuration directory.
fn default_out() -> Result<PathBuf, CliError> {
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|home| PathBuf::from(home).join(".config"))
        })
        .ok_or_else(|| {
            CliError::Input(
                "neither XDG_CONFIG_HOME nor HOME is set: say where the profile goes with --out"
                    .into(),
            )
        })?;
    Ok(config_home.join("futexsim/machines/host.toml"))
}

pub fn run(args: &CalibrateArgs, out: &mut impl Write) -> Result<(), CliError> {
    let effort = if args.quick {
        Effort::QUICK
    } else {
        Effort::FULL
    };
    let path = match &args.out {
        Some(path) => path.clone(),
        None => default_out()?,
    };
    calibrate(&args.base, &path, effort, args.force, out).map(|_| ())
}

/// Measures, writes the profile to `path`, reports the figures, and returns
/// it. Implausible figures are warned of, and refuse the write unless `force`.
pub fn calibrate(
    base: &str,
    path: &Path,
    effort: Effort,
    force: bool,
    out: &mut impl Write,
) -> Result<MachineSpec, CliError> {
    let base_spec = base_profile(base)?;
    check_signed_toml_out(path)?;
    writeln!(out, "measuring this machine for {}", path.display())?;
    let figures = measure(effort);
    for line in figures.lines() {
        writeln!(out, "{line}")?;
    }
    let implausible = figures.implausible();
    for why in &implausible {
        eprintln!("futexsim: warning: {why}");
    }
    if !implausible.is_empty() && !force {
        return Err(CliError::Input(format!(
            "{} figure(s) are implausible (a busy or shared machine?); {} was not written: \
             measure again on a quiet machine, or pass --force to write it anyway",
            implausible.len(),
            path.display()
        )));
    }
    let Calibrated { spec, fits } =
        profile(&figures, &base_spec, base).map_err(|e| CliError::Input(e.to_string()))?;
    for fit in &fits {
        writeln!(out, "{fit}")?;
    }
    // The fit's own check: a hand-off the fitted occupancies do not
    // reproduce is the model's limit on this machine, not a bad figure, so
    // it is said and the profile still written.
    let checks = ticket_check(&spec, &figures).map_err(|e| CliError::Failed(e.to_string()))?;
    for check in &checks {
        writeln!(out, "{check}")?;
        if check.off() {
            eprintln!(
                "futexsim: warning: the fitted profile hands the ticket lock on {:.2}x as fast as \
                 this machine on {} CPUs: its arbitration does not reproduce this host's",
                1.0 / check.factor(),
                check.cpus
            );
        }
    }
    write_profile(
        &spec,
        path,
        "Written by futexsim calibrate; measure again rather than edit.",
    )?;
    writeln!(out, "profile: {}", path.display())?;
    Ok(spec)
}
