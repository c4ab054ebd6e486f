//! The command line: one module per command. Each parses its arguments and
//! calls the library; none simulates anything itself.

pub mod run;

use std::fmt;

/// A failure to report to the user: bad input exits 2.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: i32,
}

impl CliError {
    pub fn input(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: 2,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A number in decimal or 0x-hex, `_` separators allowed.
pub fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| format!("'{s}' is not a number (decimal or 0x-hex)"))
}
