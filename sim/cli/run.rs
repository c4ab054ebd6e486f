//! `futexsim run [CONFIG...]`: the main job. Each config is a campaign in
//! its own directory: only its missing runs are simulated, in parallel, and
//! once all are there its results and report are written.

use crate::cli::CliError;
use clap::Args;
use futexsim::campaign::{Campaign, Run, Shard};
use futexsim::config::Config;
use futexsim::record::{RunRecord, Speed};
use futexsim::report::summary::figure;
use futexsim::results::{ResultSet, SpeedLog};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// Config files (TOML); the embedded default (configs/default.toml) when none.
    configs: Vec<PathBuf>,
    /// The campaign directory: reports/<config name> by default; with several
    /// configs, one subdirectory per config under it.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Simulations run at once (every core by default); results do not depend on it.
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Run only shard K of N (1-based); combine the shards with `futexsim merge`.
    #[arg(long)]
    shard: Option<Shard>,
    /// A candidate sizing rule, [DESIGN:]EXPR, added as a design beside the
    /// config's own (sizing DESIGN, the baseline by default); repeatable.
    #[arg(long = "rule", value_name = "RULE")]
    rules: Vec<String>,
    /// Start over when the directory holds a campaign of a different config.
    #[arg(long)]
    overwrite: bool,
    /// Print the result set as JSON on stdout instead of the summary table.
    #[arg(long)]
    json: bool,
    /// Run even when the runs at once are estimated to need more memory
    /// than the machine has available.
    #[arg(long)]
    force: bool,
}

/// Set by SIGINT or SIGTERM: start no new run, finish those in flight.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// The first SIGINT or SIGTERM sets [`STOP`]; a second one exits at once
/// (finished runs are on disk already, so only the runs in flight are lost).
fn stop_on_signals() {
    let handler = || {
        if STOP.swap(true, Ordering::Relaxed) {
            std::process::exit(130);
        }
        eprintln!("futexsim: stopping after the runs in flight; interrupt again to stop now");
    };
    // Without a handler the signal's default still ends the process, and a
    // campaign survives that too: keep going rather than refuse to run.
    if let Err(e) = ctrlc::set_handler(handler) {
        eprintln!(
            "futexsim: warning: cannot catch Ctrl-C ({e}); an interrupt loses the runs in flight"
        );
    }
}

pub fn run(args: &RunArgs, out: &mut impl Write) -> Result<(), CliError> {
    // Every config is checked before anything runs.
    let configs = if args.configs.is_empty() {
        vec![Config::default_config(&args.rules)?]
    } else {
        args.configs
            .iter()
            .map(|path| Config::load(path, &args.rules))
            .collect::<Result<Vec<_>, _>>()?
    };
    let dirs = campaign_dirs(&configs, &args.configs, args.out.as_deref())?;
    let jobs = match args.jobs {
        Some(0) => return Err(CliError::Input("--jobs must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let shard = args.shard.unwrap_or(Shard::ALL);
    stop_on_signals();
    for (config, dir) in configs.into_iter().zip(dirs) {
        let campaign = Campaign::plan(&dir, config, args.overwrite)?;
        // Checked before anything is written, then again under the lock,
        // where another futexsim may have finished some runs meanwhile.
        let estimate = check_memory(
            &campaign,
            &campaign.missing(shard, false)?,
            jobs,
            args.force,
        )?;
        let _lock = campaign.create(args.overwrite)?;
        let todo = campaign.missing(shard, true)?;
        futexsim::campaign::reset_peak_rss();
        simulate(&campaign, &todo, jobs)?;
        if STOP.load(Ordering::Relaxed) {
            let left = campaign.missing(shard, false)?.len();
            return Err(CliError::Interrupted(format!(
                "stopped with {left} of {} runs to go; {} holds every finished run; \
                 run the same command again to resume",
                campaign.runs.len(),
                dir.display()
            )));
        }
        if shard != Shard::ALL {
            eprintln!(
                "shard {shard} of '{}' is complete in {}; combine the shards with `futexsim merge`",
                campaign.config.name,
                dir.display()
            );
            continue;
        }
        let (set, speed) = campaign
            .results()?
            .expect("every run was simulated or already there");
        publish(&campaign.dir, &set, &speed)?;
        campaign.remove_stale_runs()?;
        if args.json {
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&set).expect("results serialize")
            )?;
        } else {
            print_summary(&set, &dir, out)?;
        }
        print_speed(&speed, todo.len(), estimate);
    }
    Ok(())
}

/// reports/<name>, or --out; one subdirectory per config when there are
/// several. A config's name is its file's stem, so it is checked to be one
/// plain directory name: `...toml` (stem `..`) must not write its campaign
/// above the directory it belongs in.
fn campaign_dirs(
    configs: &[Config],
    paths: &[PathBuf],
    out: Option<&Path>,
) -> Result<Vec<PathBuf>, CliError> {
    for (i, c) in configs.iter().enumerate() {
        if let Err(why) = futexsim::campaign::check_dir_name(&c.name) {
            let file = paths
                .get(i)
                .map_or("the config".into(), |p| p.display().to_string());
            return Err(CliError::Input(format!(
                "{file}:0:0: the config's name '{}' (its file name) cannot name its campaign \
                 directory: {why}; rename the file",
                c.name.escape_debug()
            )));
        }
    }
    if configs.len() == 1 {
        let default = Path::new("reports").join(&configs[0].name);
        return Ok(vec![out.map_or(default, Path::to_path_buf)]);
    }
    let root = out.unwrap_or(Path::new("reports"));
    let mut dirs: Vec<PathBuf> = Vec::new();
    for c in configs {
        let dir = root.join(&c.name);
        if dirs.contains(&dir) {
            return Err(CliError::Input(format!(
                "two configs are named '{}'; their campaigns would share {}",
                c.name,
                dir.display()
            )));
        }
        dirs.push(dir);
    }
    Ok(dirs)
}

/// Refuses a sweep whose runs at once would need more memory than the host
/// has available, unless forced. Returns the largest run's estimate.
fn check_memory(
    campaign: &Campaign,
    todo: &[&Run],
    jobs: usize,
    force: bool,
) -> Result<u64, CliError> {
    let Some((run, bytes)) = campaign.largest_run(todo)? else {
        return Ok(0);
    };
    let at_once = jobs.min(todo.len()) as u64;
    let need = bytes.saturating_mul(at_once);
    match futexsim::footprint::available_bytes() {
        Some(available) if need > available && !force => Err(CliError::Input(format!(
            "the largest run ({}) needs about {} MiB; {at_once} at once need {} MiB, more than the \
             {} MiB this machine has available: lower --jobs, shrink the sweep, or pass --force",
            run.describe(&campaign.config),
            mib(bytes),
            mib(need),
            mib(available)
        ))),
        _ => Ok(bytes),
    }
}

fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// Runs `todo` with a progress bar on a terminal: runs done, ETA and the
/// simulator's speed in simulated futex ops per second.
fn simulate(campaign: &Campaign, todo: &[&Run], jobs: usize) -> Result<(), CliError> {
    let bar = ProgressBar::new(todo.len() as u64).with_style(
        ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} runs, ETA {eta}, {msg}",
        )
        .expect("the template is valid"),
    );
    bar.set_prefix(campaign.config.name.clone());
    let started = Instant::now();
    let ops = AtomicU64::new(0);
    let done = |_: &Speed, run_ops: u64| {
        let total = ops.fetch_add(run_ops, Ordering::Relaxed) + run_ops;
        let rate = total as f64 / started.elapsed().as_secs_f64().max(1e-9);
        bar.set_message(format!("{:.2} M simulated ops/s", rate / 1e6));
        bar.inc(1);
    };
    let result = campaign.simulate(todo, jobs, &STOP, &done);
    bar.finish_and_clear();
    Ok(result?)
}

/// Writes the result set and the speed log beside it (the caller holds the lock).
fn publish(dir: &Path, set: &ResultSet, speed: &SpeedLog) -> Result<(), CliError> {
    futexsim::report::write(dir, set, speed)
        .map_err(|e| CliError::Failed(format!("writing the report in {}: {e}", dir.display())))
}

/// One row per point, one column per design: the workload's headline figure
/// (its first own figure, else averaged ops/s per thread as perf bench prints
/// it), mean over repetitions, and the ratio to the baseline.
fn print_summary(set: &ResultSet, dir: &Path, out: &mut impl Write) -> Result<(), CliError> {
    let first = &set.runs[0].record;
    let (what, headline): (String, fn(&RunRecord) -> f64) = match first.extra.first() {
        Some(m) if m.unit.is_empty() => (m.name.clone(), |r| r.extra[0].value),
        Some(m) => (format!("{} ({})", m.name, m.unit), |r| r.extra[0].value),
        None => ("averaged ops/s per thread".into(), |r| {
            r.mean_thread_ops_per_sec
        }),
    };
    writeln!(
        out,
        "{}: {} on {}; {what}, and the ratio to {}",
        set.provenance.config_name, first.workload, first.machine, set.baseline
    )?;
    let mut header: Vec<String> = set.axes.clone();
    header.extend(set.designs.iter().cloned());
    writeln!(out, "| {} |", header.join(" | "))?;
    writeln!(
        out,
        "|{}",
        header.iter().map(|_| "---:|").collect::<String>()
    )?;
    for point in 0..set.points() {
        let mean = |design: &str| {
            let runs: Vec<f64> = set
                .runs_of(point, design)
                .map(|r| headline(&r.record))
                .collect();
            runs.iter().sum::<f64>() / runs.len().max(1) as f64
        };
        let base = mean(&set.baseline);
        let mut row: Vec<String> = set
            .runs
            .iter()
            .find(|r| r.point == point)
            .map(|r| r.axis_values.clone())
            .unwrap_or_default();
        for design in &set.designs {
            let m = mean(design);
            row.push(if *design == set.baseline {
                figure(m)
            } else {
                format!("{} ({:.2}x)", figure(m), m / base)
            });
        }
        writeln!(out, "| {} |", row.join(" | "))?;
    }
    writeln!(out, "report: {}", dir.join("report.md").display())?;
    Ok(())
}

/// The simulator's own speed, on stderr: it is not part of the results.
fn print_speed(speed: &SpeedLog, simulated_now: usize, estimate: u64) {
    let total = speed.total();
    // The estimate beside the measured peak keeps the memory model honest.
    let estimated = if estimate > 0 {
        format!(" (the largest run estimated at {} MiB)", mib(estimate))
    } else {
        String::new()
    };
    eprintln!(
        "simulator: {simulated_now} runs simulated now, {} in all; {} events, {:.2} M events/s and {:.2} M simulated ops/s per core; peak memory {:.0} MiB{estimated}",
        speed.runs.len(),
        total.events,
        total.events_per_sec / 1e6,
        total.sim_ops_per_sec / 1e6,
        speed.peak_rss_bytes as f64 / (1024.0 * 1024.0),
    );
}
