//! `futexsim validate`: the validation suite against published results (the
//! one compiled in, or a cases file given), and with `--host`, the model
//! against this machine. A failing case makes the command fail once the
//! report is written, so a script or CI notices; `--no-fail` only reports.

use crate::cli::CliError;
use clap::Args;
use futexsim::files::{self, MARKDOWN_SIGNATURE, TOML_SIGNATURE};
use futexsim::report::track_record;
use futexsim::validate::coverage::Coverage;
use futexsim::validate::verdict::short;
use futexsim::validate::{self, report};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// A cases file to run instead of the suite compiled in
    /// (configs/validation/cases.toml and the configs it names).
    #[arg(long)]
    cases: Option<PathBuf>,
    /// Where report.md and track-record.toml (the model cases' errors, which
    /// the binary embeds from reports/validation/) are written.
    #[arg(long, default_value = "out/validation")]
    out: PathBuf,
    /// Simulations run at once (every core by default).
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Calibrate this machine, then compare simulated and native figures.
    #[arg(long)]
    host: bool,
    /// Exit 0 even when cases fail or coverage fails (the report says which).
    #[arg(long)]
    no_fail: bool,
    /// Run each config only as it is, not also over its machine profile's
    /// plausible ranges: about a twentieth of the runs, and no stated
    /// intervals or coverage.
    #[arg(long)]
    no_coverage: bool,
}

pub fn run(args: &ValidateArgs, out: &mut impl Write) -> Result<(), CliError> {
    let jobs = match args.jobs {
        Some(0) => return Err(CliError::Input("--jobs must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    // Where the report goes is checked with everything else, before any run.
    crate::cli::check_out_dir(&args.out)?;
    for (file, signature) in [
        ("report.md", MARKDOWN_SIGNATURE),
        ("host.md", MARKDOWN_SIGNATURE),
        (track_record::FILE_NAME, TOML_SIGNATURE),
    ] {
        files::check_replaceable(&args.out.join(file), &|old| signature.verifies(old))?;
    }
    if args.host {
        return host(&args.out, out);
    }
    let (cases, configs) = match &args.cases {
        Some(path) => validate::load(path),
        None => validate::load_embedded(),
    }
    .map_err(|e| CliError::Input(e.to_string()))?;
    // The cases were checked against their configs as they loaded; a run
    // fails only for what its config asks (one that stalls), as under
    // `futexsim run`.
    let intervals = if args.no_coverage {
        validate::Intervals::Seed
    } else {
        validate::Intervals::SeedAndModel
    };
    let outcomes = validate::run(cases, &configs, jobs, intervals)
        .map_err(|e| CliError::Input(e.to_string()))?;
    for o in &outcomes {
        writeln!(out, "{}", report::summary_line(o))?;
    }
    let record = validate::track_record(&outcomes)
        .to_toml()
        .map_err(|e| CliError::Failed(format!("the track record: {e}")))?;
    crate::cli::write_signed(
        &args.out.join(track_record::FILE_NAME),
        &record,
        TOML_SIGNATURE,
    )?;
    let path = args.out.join("report.md");
    crate::cli::write_signed(&path, &report::markdown(&outcomes), MARKDOWN_SIGNATURE)?;
    writeln!(
        out,
        "{}; report: {}",
        report::headline(&outcomes),
        path.display()
    )?;
    let failed = outcomes.iter().filter(|o| !o.verdict.passed()).count();
    let coverage_failed = Coverage::of(&outcomes).is_some_and(|c| !c.passed());
    if (failed > 0 || coverage_failed) && !args.no_fail {
        let coverage = if coverage_failed {
            "; coverage fails"
        } else {
            ""
        };
        return Err(CliError::Failed(format!(
            "{failed} of {} cases fail{coverage} (see {}; --no-fail to exit 0)",
            outcomes.len(),
            path.display()
        )));
    }
    Ok(())
}

/// Calibrates this machine, then sets the simulated figures on its profile
/// against the same benchmarks run natively.
fn host(dir: &std::path::Path, out: &mut impl Write) -> Result<(), CliError> {
    let spec = crate::cli::calibrate::calibrate(
        "icx-2s",
        &dir.join("host.toml"),
        futexsim::host::measure::Effort::FULL,
        // The comparison is what validate is for: implausible figures are
        // warned of, and the report still sets the model beside this
        // machine's native runs.
        true,
        out,
    )?;
    let rows = futexsim::host::compare::compare(&spec, 300)
        .map_err(|e| CliError::Failed(e.to_string()))?;
    let mut md = format!(
        "# The model against this machine\n\nProfile: {}\n\n| figure | simulated | native | simulated / native |\n|---|---:|---:|---:|\n",
        spec.source
    );
    for r in &rows {
        let line = format!(
            "| {} | {} | {} | {} |",
            r.what,
            short(r.simulated),
            short(r.native),
            short(r.simulated / r.native)
        );
        writeln!(out, "{line}")?;
        md.push_str(&line);
        md.push('\n');
    }
    let path = dir.join("host.md");
    crate::cli::write_signed(&path, &md, MARKDOWN_SIGNATURE)?;
    writeln!(out, "report: {}", path.display())?;
    Ok(())
}
