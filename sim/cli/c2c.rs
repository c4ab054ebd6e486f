//! `futexsim c2c DIR [--point P] [--design D]`: one run's perf c2c tables, as
//! `perf c2c report --stdio` prints them, so a user can diff a simulated run
//! against a capture. Without --point, the point with the most threads (the
//! report's busiest point);
//! without --design, every design there, each after a `#` line naming it
//! (perf's comment mark, so the tables below still read as perf's).

use crate::cli::CliError;
use clap::Args;
use futexsim::echo::echo;
use futexsim::report::{self, c2c, summary};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct C2cArgs {
    /// A report directory holding results.json.
    dir: PathBuf,
    /// The point: its number (0 for the first, as in the report's appendix
    /// file names, points/point-N.md) or its label as the report writes it
    /// ("threads=64", "threads=64, line_size=128").
    #[arg(long)]
    point: Option<String>,
    /// The design, by name.
    #[arg(long)]
    design: Option<String>,
}

pub fn run(args: &C2cArgs, out: &mut impl Write) -> Result<(), CliError> {
    let (set, _) = report::read_locked(&args.dir)?;
    let cells = summary::cells(&set);
    let point = match &args.point {
        Some(wanted) => {
            let points: Vec<(usize, &str)> =
                cells.iter().map(|c| (c.point, c.label.as_str())).collect();
            crate::cli::choose_point(&args.dir.display().to_string(), wanted, &points)?
        }
        None => summary::busiest_point(&cells).ok_or_else(|| {
            CliError::Input(format!(
                "{}: the result set holds no runs",
                args.dir.display()
            ))
        })?,
    };
    if let Some(design) = &args.design {
        if !set.designs.contains(design) {
            return Err(CliError::Input(format!(
                "{}: no design '{}'; expected one of: {}",
                args.dir.display(),
                echo(design),
                set.designs.join(", ")
            )));
        }
    }
    let chosen: Vec<_> = cells
        .iter()
        .filter(|c| c.point == point)
        .filter(|c| args.design.as_deref().is_none_or(|d| d == c.design))
        .collect();
    let Some(only) = chosen.first() else {
        return Err(CliError::Input(format!(
            "{}: design '{}' has no run at point {point}",
            args.dir.display(),
            echo(args.design.as_deref().unwrap_or("-"))
        )));
    };
    if args.design.is_some() || chosen.len() == 1 {
        write!(out, "{}", c2c::stdio(only.runs[0]))?;
        return Ok(());
    }
    for (i, c) in chosen.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let r = c.runs[0];
        writeln!(
            out,
            "# futexsim: design {} at {} (seed {})",
            c.design, c.label, r.seed
        )?;
        write!(out, "{}", c2c::stdio(r))?;
    }
    Ok(())
}
