//! `futexsim explain CONFIG [--point P] [--design D] [--json]`: where each
//! design's op spends its time at one point of a config. Each design runs
//! once there (the first repetition's seed) with its time attributed
//! (sim/engine/attribution.rs), and its table prints as the report's
//! "Where the time goes" prints it; --json prints the rows.

use crate::cli::CliError;
use clap::Args;
use futexsim::config::Config;
use futexsim::echo::echo;
use futexsim::machine::Machine;
use futexsim::record::RunRecord;
use futexsim::report::summary::point_label;
use futexsim::report::time_spent::{self, Explained, Format};
use futexsim::scenario::RunOptions;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// A config file (TOML).
    config: PathBuf,
    /// The point: its number (0 for the first, the default) or its label as
    /// the report writes it ("threads=64", "threads=64, line_size=128").
    #[arg(long)]
    point: Option<String>,
    /// The design, by name; every design of the config when absent.
    #[arg(long)]
    design: Option<String>,
    /// Print the rows as JSON: per design, its point, seed, ops, mean
    /// latency and each row (part, symbol, served, field, ps, count,
    /// ns_per_op, count_per_op).
    #[arg(long)]
    json: bool,
}

pub fn run(args: &ExplainArgs, out: &mut impl Write) -> Result<(), CliError> {
    let config = Config::load(&args.config, &[])?;
    let source = args.config.display().to_string();
    let labels: Vec<String> = config
        .points
        .iter()
        .map(|p| point_label(&config.axes, &p.axis_values))
        .collect();
    let point = match &args.point {
        Some(wanted) => {
            let points: Vec<(usize, &str)> =
                labels.iter().map(String::as_str).enumerate().collect();
            crate::cli::choose_point(&source, wanted, &points)?
        }
        None => 0,
    };
    let at = &config.points[point];
    let designs: Vec<_> = at
        .designs
        .iter()
        .filter(|d| args.design.as_deref().is_none_or(|name| name == d.name))
        .collect();
    if designs.is_empty() {
        return Err(CliError::Input(format!(
            "{source}: no design '{}'; expected one of: {}",
            echo(args.design.as_deref().unwrap_or("")),
            config.designs.join(", ")
        )));
    }
    let machine = Machine::new(at.machine.clone())
        .map_err(|e| CliError::Input(format!("{source}: point {point}: {e}")))?;
    let records = designs
        .iter()
        .map(|design| {
            let scenario = at.scenario(design, 0);
            scenario
                .prepare(&machine)
                .map_err(Into::into)
                .and_then(|prepared| prepared.simulate_with(RunOptions { explain: true }))
                .map(|(record, _)| record)
                .map_err(|e| {
                    CliError::Input(format!(
                        "{source}: design {} at {}: {e}",
                        design.name, labels[point]
                    ))
                })
        })
        .collect::<Result<Vec<RunRecord>, CliError>>()?;
    let explained: Vec<Explained> = records
        .iter()
        .filter_map(|r| {
            let spent = r.time_spent.as_ref()?;
            Some(Explained::new(
                labels[point].clone(),
                &r.design,
                r.seed,
                spent,
            ))
        })
        .collect();
    if args.json {
        write!(out, "{}", time_spent::render(&explained, Format::Json))?;
    } else {
        writeln!(out, "{}", time_spent::INTRO)?;
        write!(out, "{}", time_spent::render(&explained, Format::Markdown))?;
    }
    Ok(())
}
