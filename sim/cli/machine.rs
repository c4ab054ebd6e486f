//! `futexsim machine import`: measurements a user already has (a
//! core-to-core-latency CSV, Intel MLC's output) read into a profile file a
//! config names with `preset = "path"`. Also the two steps every command
//! that writes a profile shares: the base profile the unmeasured figures
//! come from, and writing the file so that it loads as written.

use crate::cli::{check_signed_toml_out, write_signed_toml, CliError};
use clap::{Args, Subcommand};
use futexsim::config::profile;
use futexsim::echo::echo;
use futexsim::files::TOML_SIGNATURE;
use futexsim::machine::import::{self, Shape};
use futexsim::machine::{presets, Machine, MachineSpec};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct MachineArgs {
    #[command(subcommand)]
    command: MachineCommand,
}

#[derive(Subcommand, Debug)]
enum MachineCommand {
    /// Read core-to-core-latency CSV matrices and Intel MLC outputs
    /// (--c2c_latency, --latency_matrix) into a profile; each file sets
    /// what it measures, in the order given, over the base profile.
    Import(ImportArgs),
}

#[derive(Args, Debug)]
struct ImportArgs {
    /// The measurement files: `core-to-core-latency --csv` output, or MLC's.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The profile (a shipped name or a file) the figures not measured come from.
    #[arg(long, default_value = "icx-2s")]
    base: String,
    /// The profile's name.
    #[arg(long, default_value = "imported")]
    name: String,
    /// Sockets of the measured machine, as lscpu says (a CSV is read against it).
    #[arg(long, default_value_t = 1)]
    sockets: u32,
    /// NUMA nodes per socket (sub-NUMA clustering, NPS).
    #[arg(long, default_value_t = 1)]
    nodes_per_socket: u32,
    /// SMT threads per core; Linux numbers siblings after every core's first thread.
    #[arg(long, default_value_t = 1)]
    threads_per_core: u32,
    /// Where the profile is written.
    #[arg(long, default_value = "configs/machines/imported.toml")]
    out: PathBuf,
}

pub fn run(args: &MachineArgs, out: &mut impl Write) -> Result<(), CliError> {
    let MachineCommand::Import(args) = &args.command;
    check_signed_toml_out(&args.out)?;
    let mut spec = base_profile(&args.base)?;
    spec.name = args.name.clone();
    let shape = Shape {
        sockets: args.sockets,
        nodes_per_socket: args.nodes_per_socket,
        threads_per_core: args.threads_per_core,
    };
    let mut said = Vec::new();
    let mut siblings_from_a_matrix = false;
    for path in &args.files {
        let file = path.display().to_string();
        let text = futexsim::files::read_text(path, futexsim::limits::MEASUREMENTS_CAP)
            .map_err(|e| CliError::Input(format!("{file}: cannot read it: {}", e.reason())))?;
        let measurement =
            import::read(&text).map_err(|e| CliError::Input(format!("{file}:{e}")))?;
        if matches!(measurement, import::Measurement::CoreToCore { .. }) {
            siblings_from_a_matrix = shape.threads_per_core > 1;
        }
        said.push(
            import::apply(&mut spec, &measurement, &file, shape)
                .map_err(|e| CliError::Input(e.to_string()))?,
        );
    }
    // What the files measured, over the base, is checked as a machine here,
    // so that a figure no machine has is blamed on the files it came from,
    // not on the profile that would have been written.
    let files: Vec<String> = args.files.iter().map(|p| p.display().to_string()).collect();
    let files = files.join(", ");
    Machine::new(spec.clone()).map_err(|e| {
        CliError::Input(format!(
            "{files}: the measured figures do not make a machine: {}",
            e.message
        ))
    })?;
    for warning in import::implausible(&spec, siblings_from_a_matrix) {
        eprintln!("futexsim: warning: {files}: {warning}");
    }
    spec.source = format!(
        "futexsim machine import: {}; everything else from {}",
        said.join("; "),
        args.base
    );
    writeln!(out, "{}", spec.source)?;
    write_profile(
        &spec,
        &args.out,
        "Written by futexsim machine import from the measurements its source names.",
    )?;
    writeln!(out, "profile: {}", args.out.display())?;
    Ok(())
}

/// A shipped profile by name, or a profile file by path.
pub fn base_profile(base: &str) -> Result<MachineSpec, CliError> {
    if profile::is_profile_path(base) {
        return profile::load(Path::new(base), |message| futexsim::config::ConfigError {
            file: "--base".into(),
            line: 1,
            column: 1,
            message,
        })
        .map_err(CliError::from);
    }
    presets::preset(base).ok_or_else(|| {
        let names: Vec<&str> = presets::names().collect();
        CliError::Input(format!(
            "--base {}: no such profile; expected a profile file's path or one of {}",
            echo(base),
            names.join(", ")
        ))
    })
}

/// Writes `spec` to `path` under a comment, and reads it back as a config
/// would: a profile that would not load is never left behind.
pub fn write_profile(spec: &MachineSpec, path: &Path, header: &str) -> Result<(), CliError> {
    let body = toml::to_string(spec)
        .map_err(|e| CliError::Failed(format!("the profile does not serialize: {e}")))?;
    let text = TOML_SIGNATURE.sign(&format!("# {header}\n{body}"));
    profile::parse(&path.display().to_string(), &text)
        .map_err(|e| CliError::Input(format!("the measured figures do not make a machine: {e}")))?;
    write_signed_toml(path, &text)
}
