//! `futexsim advise QUESTION`: the design of a family that meets a target
//! at the least memory, found by a search over campaigns (sim/advise),
//! with its cost, its gain and how sure that is. A quick question can be
//! asked with flags instead of a file (sim/advise/quick.rs).

use crate::cli::CliError;
use clap::Args;
use futexsim::advise::evaluate::AdviseError;
use futexsim::advise::question::Question;
use futexsim::advise::quick::QuickQuestion;
use futexsim::advise::search::Order;
use futexsim::campaign::Shard;
use futexsim::files::{self, MARKDOWN_SIGNATURE};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct AdviseArgs {
    /// The question (TOML; docs/advise.md); or ask it with the flags below.
    #[arg(required_unless_present = "machine")]
    question: Option<PathBuf>,
    #[command(flatten)]
    quick: QuickArgs,
    /// Print the question file the flags stand for, and stop: to keep it and edit it.
    #[arg(long, requires = "machine")]
    print_question: bool,
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
    /// Simulate only shard K of N (1-based) of the search's next measurement the store lacks,
    /// and stop; shards may share one store and run at once. Once every shard has run, the
    /// question without --shard (or every shard again) goes on.
    #[arg(long, conflicts_with = "sensitivity")]
    shard: Option<Shard>,
}

/// A quick question's flags: each is the question file's key of the same
/// name (docs/advise.md, "Asking with flags").
#[derive(Args, Debug)]
#[group(id = "quick", multiple = true, conflicts_with = "question")]
pub struct QuickArgs {
    /// A shipped machine or a profile file; repeatable.
    #[arg(long, requires_all = ["workload", "at", "baseline", "vary", "value"])]
    machine: Vec<String>,
    /// The workload and its options: NAME[,KEY=VALUE...] (perf-hash,futexes=1024).
    #[arg(long)]
    workload: Option<String>,
    /// A point to answer at: KEY=VALUE[,KEY=VALUE...] (cpus=32,threads=32); repeatable.
    #[arg(long)]
    at: Vec<String>,
    /// The baseline design's preset (today's kernel).
    #[arg(long)]
    baseline: Option<String>,
    /// The family's base design's preset: the baseline's when absent.
    #[arg(long)]
    base: Option<String>,
    /// The parameter the family varies, dotted inside a [[table]] (private.slots).
    #[arg(long)]
    vary: Option<String>,
    /// One of the family's values, in order: [LABEL:]VALUE; repeatable.
    #[arg(long)]
    value: Vec<String>,
    /// The values are in no order (the search races them instead of bisecting).
    #[arg(long)]
    unordered: bool,
    /// Target: within this percentage of the best candidate.
    #[arg(long)]
    within_best: Option<f64>,
    /// Target: at most this percentage slower than the baseline.
    #[arg(long)]
    slower_than_baseline: Option<f64>,
    /// Target: at most this many bytes of tables per process.
    #[arg(long)]
    max_bytes_per_process: Option<u64>,
    /// The figure compared (ops/s by default; ops/s/thread, or a workload's own).
    #[arg(long)]
    figure: Option<String>,
    /// Simulated time of each run, in microseconds.
    #[arg(long)]
    duration_us: Option<u64>,
    /// Simulated time before counting starts, in microseconds.
    #[arg(long)]
    warmup_us: Option<u64>,
    /// Stop each run once its throughput's batch-means interval is within this percentage
    /// of its mean ([run] half_width_pct; 1 by default): larger is quicker and rougher.
    #[arg(long)]
    half_width_pct: Option<f64>,
}

impl QuickArgs {
    fn question(&self) -> QuickQuestion {
        QuickQuestion {
            machines: self.machine.clone(),
            workload: self.workload.clone().unwrap_or_default(),
            at: self.at.clone(),
            baseline: self.baseline.clone().unwrap_or_default(),
            base: self.base.clone(),
            parameter: self.vary.clone().unwrap_or_default(),
            values: self.value.clone(),
            order: self.unordered.then_some(Order::Unordered),
            within_best_pct: self.within_best,
            slower_than_baseline_pct: self.slower_than_baseline,
            max_bytes_per_process: self.max_bytes_per_process,
            figure: self.figure.clone(),
            duration_us: self.duration_us,
            warmup_us: self.warmup_us,
            half_width_pct: self.half_width_pct,
        }
    }
}

/// The file name a question asked with flags is read as, in its errors.
const FLAGS_FILE: &str = "(the question the flags ask)";

/// The question, from its file or from the flags; with `--print-question`,
/// None once the flags' question file is printed.
fn question(args: &AdviseArgs, out: &mut impl Write) -> Result<Option<Question>, CliError> {
    if let Some(path) = &args.question {
        return Ok(Some(Question::load(path)?));
    }
    let quick = args.quick.question();
    let text = quick
        .to_toml()
        .map_err(|e| CliError::Input(e.to_string()))?;
    if args.print_question {
        write!(out, "{text}")?;
        return Ok(None);
    }
    match Question::parse(FLAGS_FILE, &QuickQuestion::name(&text), &text) {
        Ok(q) => Ok(Some(q)),
        Err(e) => {
            // The error's line and column are the text's: show it.
            eprintln!("the question the flags ask:");
            for (i, line) in text.lines().enumerate() {
                eprintln!("{:4} | {line}", i + 1);
            }
            Err(e.into())
        }
    }
}

const ADVICE_MD: &str = "advice.md";

pub fn run(args: &AdviseArgs, out: &mut impl Write) -> Result<(), CliError> {
    let Some(question) = question(args, out)? else {
        return Ok(());
    };
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
    let asked = match &args.question {
        Some(path) => format!("futexsim advise {}", path.display()),
        None => question.asks.clone(),
    };
    let command = format!(
        "{asked} --store {}{}",
        store.display(),
        if args.sensitivity {
            " --sensitivity"
        } else {
            ""
        }
    );
    let answered = futexsim::advise::advise(
        &question,
        &store,
        jobs,
        args.shard.unwrap_or(Shard::ALL),
        &crate::cli::run::STOP,
        args.sensitivity,
        command,
    );
    let advice = match answered {
        Ok(advice) => advice,
        // A shard's share is done: not an answer, and not a failure.
        Err(done @ AdviseError::ShardDone { .. }) => {
            writeln!(out, "advise: {done}")?;
            return Ok(());
        }
        Err(e) => return Err(advise_error(e)),
    };
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

fn advise_error(e: AdviseError) -> CliError {
    match e {
        AdviseError::Config(e) => e.into(),
        AdviseError::Campaign(e) => e.into(),
        AdviseError::Interrupted { .. } => CliError::Interrupted(e.to_string()),
        AdviseError::NoRatio { .. }
        | AdviseError::Sensitivity { .. }
        | AdviseError::ShardDone { .. } => CliError::Failed(e.to_string()),
    }
}
