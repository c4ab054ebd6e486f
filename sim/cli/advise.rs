//! `futexsim advise QUESTION`: the design of a family that meets a target
//! at the least memory, found by a search over campaigns (sim/advise),
//! with its cost, its gain and how sure that is.

use crate::cli::CliError;
use clap::Args;
use futexsim::advise::evaluate::AdviseError;
use futexsim::advise::question::Question;
use futexsim::files::{self, MARKDOWN_SIGNATURE};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct AdviseArgs {
    /// The question (TOML; docs/advise.md).
    question: PathBuf,
    /// Where its runs are kept, one campaign per asked point: out/advise-<question name> by
    /// default. A re-run finds its runs there; an extended question runs only what is new.
    #[arg(long)]
    store: Option<PathBuf>,
    /// Write the answer to DIR/advice.md instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the answer as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Also run each recommendation over the plausible ranges of its machine
    /// profile's unmeasured parameters (as `futexsim run --sensitivity`), and
    /// give its ratio's model interval; where it reaches below the
    /// threshold, the answer says the model cannot tell.
    #[arg(long)]
    sensitivity: bool,
    /// Simulations run at once (every core by default); the answer does not depend on it.
    #[arg(long, short)]
    jobs: Option<usize>,
}

const ADVICE_MD: &str = "advice.md";

pub fn run(args: &AdviseArgs, out: &mut impl Write) -> Result<(), CliError> {
    let question = Question::load(&args.question)?;
    let store = args
        .store
        .clone()
        .unwrap_or_else(|| Path::new("out").join(format!("advise-{}", question.name)));
    crate::cli::check_out_dir(&store)?;
    if let Some(dir) = &args.out {
        crate::cli::check_out_dir(dir)?;
        files::check_replaceable(&dir.join(ADVICE_MD), &|old| {
            MARKDOWN_SIGNATURE.verifies(old)
        })?;
    }
    let jobs = match args.jobs {
        Some(0) => return Err(CliError::Input("--jobs must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    crate::cli::run::stop_on_signals();
    let command = format!(
        "futexsim advise {} --store {}{}",
        args.question.display(),
        store.display(),
        if args.sensitivity {
            " --sensitivity"
        } else {
            ""
        }
    );
    let advice = futexsim::advise::advise(
        &question,
        &store,
        jobs,
        &crate::cli::run::STOP,
        args.sensitivity,
        command,
    )
    .map_err(|e| match e {
        AdviseError::Config(e) => e.into(),
        AdviseError::Campaign(e) => e.into(),
        AdviseError::Interrupted { .. } => CliError::Interrupted(e.to_string()),
        AdviseError::NoRatio { .. } | AdviseError::Sensitivity { .. } => {
            CliError::Failed(e.to_string())
        }
    })?;
    eprintln!(
        "advise: {} runs used, {} simulated now; an exhaustive grid takes {}",
        advice.runs_used,
        advice.runs_simulated,
        advice.grid_runs()
    );
    if args.json {
        let json = serde_json::to_string_pretty(&advice.json())
            .map_err(|e| CliError::Failed(format!("the answer as JSON: {e}")))?;
        writeln!(out, "{json}")?;
        return Ok(());
    }
    match &args.out {
        Some(dir) => {
            let path = dir.join(ADVICE_MD);
            crate::cli::write_signed(&path, &advice.markdown(), MARKDOWN_SIGNATURE)?;
            writeln!(out, "advice: {}", path.display())?;
        }
        None => write!(out, "{}", advice.markdown())?,
    }
    Ok(())
}
