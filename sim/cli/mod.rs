//! The command-line commands, one module each. A command takes its parsed
//! arguments and a writer for its output, and fails with a [`CliError`].

pub mod advise;
pub mod c2c;
pub mod calibrate;
pub mod design;
pub mod diff;
pub mod explain;
pub mod hash;
pub mod layout;
pub mod machine;
pub mod merge;
pub mod native;
pub mod report;
pub mod run;
pub mod validate;

use futexsim::campaign::CampaignError;
use futexsim::config::ConfigError;
use futexsim::files::{self, FileError, Signature, TOML_SIGNATURE};
use futexsim::report::ReadError;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The arguments make no sense together, or a value is out of range.
    #[error("{0}")]
    Input(String),
    #[error("writing output: {0}")]
    Output(#[from] std::io::Error),
    /// The work could not be done or kept (a file system error, a run that failed).
    #[error("{0}")]
    Failed(String),
    /// Stopped by SIGINT or SIGTERM; what was finished is kept. The message
    /// says where, and how to resume.
    #[error("{0}")]
    Interrupted(String),
}

impl CliError {
    fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) => 2,
            CliError::Output(_) | CliError::Failed(_) => 1,
            CliError::Interrupted(_) => 130,
        }
    }
}

/// A report directory that does not hold a result set is the input to fix.
impl From<ReadError> for CliError {
    fn from(e: ReadError) -> CliError {
        match e {
            ReadError::File(e) => e.into(),
            _ => CliError::Input(e.to_string()),
        }
    }
}

impl From<ConfigError> for CliError {
    fn from(e: ConfigError) -> CliError {
        CliError::Input(e.to_string())
    }
}

/// A path futexsim may not read or write, or that is not there, is the
/// user's input to fix (2); a filesystem that fails is a failure at run
/// time (1).
impl From<FileError> for CliError {
    fn from(e: FileError) -> CliError {
        if e.is_users_to_fix() {
            CliError::Input(e.to_string())
        } else {
            CliError::Failed(e.to_string())
        }
    }
}

impl From<CampaignError> for CliError {
    fn from(e: CampaignError) -> CliError {
        match e {
            CampaignError::File(e) => e.into(),
            CampaignError::Report(e) => e.into(),
            CampaignError::ConfigChanged { .. }
            | CampaignError::NotACampaign { .. }
            // A run fails only for what its config asks (a run that stalls).
            | CampaignError::Run { .. }
            | CampaignError::Config(_)
            // A file in the directory that is not what futexsim writes.
            | CampaignError::Corrupt { .. }
            | CampaignError::DamagedRun { .. }
            | CampaignError::Merge(_) => CliError::Input(e.to_string()),
            CampaignError::Io { ref source, .. } if futexsim::files::is_users_to_fix(source) => {
                CliError::Input(e.to_string())
            }
            _ => CliError::Failed(e.to_string()),
        }
    }
}

/// Refuses an --out directory that cannot be one, before anything runs: a
/// file where it would be, or where a directory above it would be. What
/// only writing can tell (a directory without permission, a full disk) is
/// left to the writing.
pub fn check_out_dir(dir: &Path) -> Result<(), CliError> {
    for at in dir.ancestors().filter(|a| !a.as_os_str().is_empty()) {
        match std::fs::metadata(at) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(CliError::Input(format!(
                    "--out {}: {} is a file, not a directory; choose another --out",
                    dir.display(),
                    at.display()
                )))
            }
            // Not there (it will be made), or below a file: look further up.
            Err(_) => continue,
        }
    }
    Ok(())
}

/// Refuses an --out file that cannot be written as one, before anything
/// runs: a directory there, or a file where a directory above it would be.
pub fn check_out_file(path: &Path) -> Result<(), CliError> {
    if path.is_dir() {
        return Err(CliError::Input(format!(
            "--out {}: is a directory, not a file; name the file to write",
            path.display()
        )));
    }
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => check_out_dir(dir).map_err(|_| {
            CliError::Input(format!(
                "--out {}: a file is where a directory of its path would be; choose another --out",
                path.display()
            ))
        }),
        None => Ok(()),
    }
}

/// Refuses, before anything is measured or read, a path a signed TOML file
/// (a machine profile, a design) cannot be written to: a directory, a link,
/// a FIFO or device, a file that futexsim did not write.
pub fn check_signed_toml_out(path: &Path) -> Result<(), CliError> {
    check_out_file(path)?;
    Ok(files::check_replaceable(path, &|old| {
        TOML_SIGNATURE.verifies(old)
    })?)
}

/// Writes `signed` (text [`TOML_SIGNATURE`] signed) to `path`, making its
/// directory; only a file futexsim wrote, unedited, is replaced.
pub fn write_signed_toml(path: &Path, signed: &str) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        files::create_user_dir(dir)?;
    }
    Ok(files::write(path, signed.as_bytes(), &|old| {
        TOML_SIGNATURE.verifies(old)
    })?)
}

/// Writes a file, signed: one futexsim wrote and nobody edited is replaced,
/// anything else at the path is refused.
pub fn write_signed(path: &Path, text: &str, signature: Signature) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        files::create_user_dir(dir)?;
    }
    let signed = signature.sign(text);
    Ok(files::write(path, signed.as_bytes(), &|old| {
        signature.verifies(old)
    })?)
}

/// The point `wanted` names among `points` (each its number and its label,
/// as a report writes them): its number (0 for the first) or its label;
/// refused, with every point listed, when it names none. `source` is the
/// config or directory the points are of.
pub fn choose_point(
    source: &str,
    wanted: &str,
    points: &[(usize, &str)],
) -> Result<usize, CliError> {
    let by_number = wanted.parse::<usize>().ok();
    points
        .iter()
        .find(|(point, label)| Some(*point) == by_number || *label == wanted)
        .map(|(point, _)| *point)
        .ok_or_else(|| {
            let mut labels: Vec<String> = Vec::new();
            for (point, label) in points {
                let known = format!("{point} ({label})");
                if !labels.contains(&known) {
                    labels.push(known);
                }
            }
            CliError::Input(format!(
                "{source}: no point '{}'; expected a number or label of: {}",
                futexsim::echo::echo(wanted),
                labels.join("; ")
            ))
        })
}

/// Reports a command's failure on stderr in one line and turns it into the
/// process's exit status.
pub fn exit_status(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader has what it wanted (`futexsim ... | head`).
        Err(CliError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            // Nothing more can be done if stderr is gone too.
            let _ = writeln!(std::io::stderr(), "futexsim: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// A number as users write addresses and sizes: decimal, or hex after `0x`,
/// with optional `_` separators. Every numeric argument goes through here.
pub fn parse_u64(text: &str) -> Result<u64, NumberError> {
    let digits = text.trim().replace('_', "");
    let parsed = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => digits.parse(),
    };
    parsed.map_err(|error| NumberError::NotANumber {
        text: text.to_string(),
        error,
    })
}

pub fn parse_u32(text: &str) -> Result<u32, NumberError> {
    let value = parse_u64(text)?;
    u32::try_from(value).map_err(|_| NumberError::Beyond32Bits(text.to_string()))
}

/// A numeric argument that is not a number of its width; clap prints it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NumberError {
    #[error("'{text}' is not a 64-bit number (decimal or 0x hex): {error}")]
    NotANumber {
        text: String,
        error: std::num::ParseIntError,
    },
    #[error("'{0}' does not fit in 32 bits")]
    Beyond32Bits(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_decimal_and_hex() {
        assert_eq!(parse_u64("4096"), Ok(4096));
        assert_eq!(parse_u64("0x7f12_3456_7abc"), Ok(0x7f12_3456_7abc));
        assert_eq!(parse_u64("0XFF"), Ok(255));
        assert_eq!(parse_u32("0xffffffff"), Ok(u32::MAX));
        assert_eq!(
            parse_u32("0x100000000"),
            Err(NumberError::Beyond32Bits("0x100000000".into()))
        );
        let not_a_number = parse_u64("12k").unwrap_err();
        assert!(matches!(&not_a_number, NumberError::NotANumber { text, .. } if text == "12k"));
        assert!(not_a_number
            .to_string()
            .starts_with("'12k' is not a 64-bit number"));
        assert!(parse_u64("0x").is_err());
        assert!(parse_u64("").is_err());
    }
}
