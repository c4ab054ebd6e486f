//! `futexsim run [CONFIG...]`: the main job. Each config is a campaign in
//! its own directory: only its missing runs are simulated, in parallel, and
//! once all are there its results and report are written.

use crate::cli::CliError;
use clap::Args;
use futexsim::campaign::{Campaign, Run, Shard};
use futexsim::config::Config;
use futexsim::record::{RunRecord, Speed};
use futexsim::report::interval::{SeedInterval, CONFIDENCE};
use futexsim::report::sensitivity::CANNOT_TELL;
use futexsim::report::summary::{self, figure};
use futexsim::report::Layout;
use futexsim::results::{total_speed, ResultSet, SpeedLog};
use futexsim::sensitivity::spans::{self, Judged, Sensitivity};
use futexsim::sensitivity::Plan;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// Config files (TOML); the embedded default (configs/default.toml) when none.
    configs: Vec<PathBuf>,
    /// The campaign directory: out/<config name> by default; with several
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
    /// Print the result set as JSON on stdout instead of the summary table:
    /// one config's result set as an object, several configs' as one array
    /// of them in the order given.
    #[arg(long)]
    json: bool,
    /// Run even when the runs at once are estimated to need more memory
    /// than the machine has available.
    #[arg(long)]
    force: bool,
    /// Publish the report as plain files, each replaced in place, instead of
    /// a generation behind links: for reports kept in a repository, where
    /// `git diff` then shows what moved. A directory published plain stays
    /// plain.
    #[arg(long)]
    plain: bool,
    /// Also re-run each config over the plausible ranges of its machine
    /// profile's unmeasured parameters (the profile's [plausible]), and
    /// publish the model interval of every figure and ratio beside the
    /// report (sensitivity.md, sensitivity.json); the samples are a
    /// campaign of their own in DIR/sensitivity.
    #[arg(long)]
    sensitivity: bool,
}

/// Set by SIGINT or SIGTERM: start no new run, finish those in flight.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// The progress bar being drawn, so that a message printed meanwhile gets
/// its own line instead of landing after the bar.
static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// The first SIGINT or SIGTERM sets [`STOP`]; a second one exits at once
/// (finished runs are on disk already, so only the runs in flight are lost).
pub fn stop_on_signals() {
    let handler = || {
        if STOP.swap(true, Ordering::Relaxed) {
            std::process::exit(130);
        }
        let say = || {
            eprintln!("futexsim: stopping after the runs in flight; interrupt again to stop now")
        };
        match BAR.lock().ok().and_then(|bar| bar.clone()) {
            Some(bar) => bar.suspend(say),
            None => say(),
        }
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
    if args.sensitivity && shard != Shard::ALL {
        return Err(CliError::Input(
            "--sensitivity runs its samples once every run of the config is there: run it \
             without --shard, after `futexsim merge`"
                .into(),
        ));
    }
    stop_on_signals();
    let several = configs.len() > 1;
    let mut sets = Vec::new();
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
        futexsim::footprint::release_freed();
        futexsim::campaign::reset_peak_rss();
        let measured = simulate(&campaign, &todo, jobs)?;
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
        let interval = match args.sensitivity {
            true => Some(model_interval(&campaign, &set, jobs, args)?),
            false => None,
        };
        publish(
            &campaign.dir,
            &set,
            &speed,
            interval.as_ref(),
            Layout::asked(args.plain),
        )?;
        campaign.remove_stale_runs()?;
        if args.json {
            sets.push(set);
        } else {
            print_summary(&set, &dir, out)?;
            if let Some(interval) = &interval {
                print_interval(interval, &dir, out)?;
            }
        }
        print_speed(&measured, speed.runs.len(), &dir, estimate);
    }
    // One JSON document whatever the number of configs.
    let json = match (args.json, several) {
        (false, _) => return Ok(()),
        (true, false) => sets.first().map(serde_json::to_string_pretty),
        (true, true) => Some(serde_json::to_string_pretty(&sets)),
    };
    if let Some(json) = json {
        writeln!(out, "{}", json.expect("results serialize"))?;
    }
    Ok(())
}

/// Where campaigns go without --out: a directory of their own, never the
/// committed reports/ (which `--out reports` regenerates), so that a run
/// simulates rather than finds another build's runs there.
const DEFAULT_ROOT: &str = "out";

/// out/<name>, or --out; one subdirectory per config when there are
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
        let default = Path::new(DEFAULT_ROOT).join(&configs[0].name);
        let dir = out.map_or(default, Path::to_path_buf);
        crate::cli::check_out_dir(&dir)?;
        return Ok(vec![dir]);
    }
    let root = out.unwrap_or(Path::new(DEFAULT_ROOT));
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
        crate::cli::check_out_dir(&dir)?;
        dirs.push(dir);
    }
    Ok(dirs)
}

/// Stack a job's threads may take: the pool's thread that runs it and the
/// one that analyses its keys beside it (scenario.rs), each with the
/// default 2 MiB.
const STACK_BYTES_PER_JOB: u64 = 2 * (2 << 20);

/// Threads a job starts: see [`STACK_BYTES_PER_JOB`].
const THREADS_PER_JOB: u64 = 2;

/// Refuses a sweep whose runs at once would need more memory than the
/// process may use (the least of MemAvailable, RLIMIT_AS and its cgroup's
/// limit), their threads' stacks counted, unless forced; and one whose
/// runs at once would start more threads than the process may (--force
/// does not start them). Returns the largest run's estimate, counted from
/// each scenario's numbers, none laid out.
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
    if let Some(limit) = futexsim::footprint::thread_limit() {
        let threads = at_once.saturating_mul(THREADS_PER_JOB);
        if threads > limit.count {
            return Err(CliError::Input(format!(
                "{at_once} runs at once start {threads} threads, more than the {} {} allows: \
                 lower --jobs",
                limit.count, limit.what
            )));
        }
    }
    let need = bytes
        .saturating_add(STACK_BYTES_PER_JOB)
        .saturating_mul(at_once);
    match futexsim::footprint::memory_limit() {
        Some(limit) if need > limit.bytes && !force => Err(CliError::Input(format!(
            "the largest run ({}) needs about {} MiB; {at_once} at once need {} MiB with their \
             threads' stacks, more than the {} MiB {} allows: lower --jobs, shrink the sweep, or \
             pass --force",
            run.describe(&campaign.config),
            mib(bytes),
            mib(need),
            limit.mib(),
            limit.what
        ))),
        _ => Ok(bytes),
    }
}

fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// Runs `todo` with a progress bar on a terminal: runs done (moving with
/// the simulated time of the runs in flight), ETA and the simulator's speed
/// in simulated futex ops per second. Returns the speed of these runs and
/// the process's peak memory: what this process measured.
fn simulate(campaign: &Campaign, todo: &[&Run], jobs: usize) -> Result<Measured, CliError> {
    let per_run = futexsim::progress::PER_RUN;
    // Nothing to simulate, nothing to show.
    let bar = if todo.is_empty() {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(todo.len() as u64 * per_run)
    };
    let bar = bar.with_style(
        ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {bar:30} {msg}, ETA {eta}, {percent}%",
        )
        .expect("the template is valid"),
    );
    bar.set_prefix(campaign.config.name.clone());
    bar.set_message(format!("0/{} runs", todo.len()));
    let started = Instant::now();
    let base = futexsim::progress::done();
    let speeds: Mutex<Vec<(Speed, u64)>> = Mutex::new(Vec::new());
    let done = |speed: &Speed, run_ops: u64| {
        let mut speeds = speeds.lock().expect("no panics hold it");
        speeds.push((speed.clone(), run_ops));
        let total: u64 = speeds.iter().map(|(_, ops)| ops).sum();
        let rate = total as f64 / started.elapsed().as_secs_f64().max(1e-9);
        bar.set_message(format!(
            "{}/{} runs, {:.2} M simulated ops/s",
            speeds.len(),
            todo.len(),
            rate / 1e6
        ));
    };
    *BAR.lock().expect("no panics hold it") = Some(bar.clone());
    // The bar ticks ten times a second until the runs are over (the sender
    // is dropped), so it moves inside a long run.
    let (over, ticks) = std::sync::mpsc::channel::<()>();
    let result = std::thread::scope(|s| {
        let bar = &bar;
        s.spawn(move || {
            while let Err(RecvTimeoutError::Timeout) =
                ticks.recv_timeout(Duration::from_millis(100))
            {
                bar.set_position(futexsim::progress::done().saturating_sub(base));
            }
        });
        let result = campaign.simulate(todo, jobs, &STOP, &done);
        drop(over);
        result
    });
    *BAR.lock().expect("no panics hold it") = None;
    bar.finish_and_clear();
    result?;
    let speeds = speeds.into_inner().expect("no panics hold it");
    Ok(Measured {
        runs: speeds.len(),
        speed: total_speed(speeds.iter().map(|(s, _)| s)),
        peak_rss_bytes: futexsim::campaign::peak_rss_bytes(),
    })
}

/// What this process measured of its own runs.
struct Measured {
    runs: usize,
    speed: Speed,
    peak_rss_bytes: u64,
}

/// Where a campaign's `--sensitivity` samples are kept, a campaign of their own.
const SAMPLES_DIR: &str = "sensitivity";

/// Runs the `--sensitivity` samples of `campaign` (whose results are `set`)
/// in DIR/sensitivity, resuming as any campaign does, and gives the model
/// interval.
fn model_interval(
    campaign: &Campaign,
    set: &ResultSet,
    jobs: usize,
    args: &RunArgs,
) -> Result<Sensitivity, CliError> {
    let plan = Plan::new(&campaign.config);
    let judged = Judged::lead(summary::kind(set).primary());
    if plan.samples.is_empty() {
        // Nothing varies: every span is the nominal value alone.
        return Ok(spans::sensitivity(&plan, set, set, &judged));
    }
    let config = plan
        .sample_config(&campaign.config)
        .map_err(CliError::Input)?;
    let dir = campaign.dir.join(SAMPLES_DIR);
    let samples = Campaign::plan(&dir, config, args.overwrite)?;
    let estimate = check_memory(
        &samples,
        &samples.missing(Shard::ALL, false)?,
        jobs,
        args.force,
    )?;
    let _lock = samples.create(args.overwrite)?;
    let todo = samples.missing(Shard::ALL, true)?;
    let measured = simulate(&samples, &todo, jobs)?;
    if STOP.load(Ordering::Relaxed) {
        let left = samples.missing(Shard::ALL, false)?.len();
        return Err(CliError::Interrupted(format!(
            "stopped with {left} of {} sensitivity runs to go; {} holds every finished run; \
             run the same command again to resume",
            samples.runs.len(),
            dir.display()
        )));
    }
    let (sample_set, speed) = samples
        .results()?
        .expect("every sample run was simulated or already there");
    samples.remove_stale_runs()?;
    print_speed(&measured, speed.runs.len(), &dir, estimate);
    Ok(spans::sensitivity(&plan, set, &sample_set, &judged))
}

/// One line under the summary: where the model interval is, and what it
/// leaves undecided.
fn print_interval(
    interval: &Sensitivity,
    dir: &Path,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let unsure = interval.ratios.iter().filter(|r| r.cannot_tell).count();
    let winners = interval.fastest.iter().filter(|f| f.cannot_tell).count();
    writeln!(
        out,
        "model interval: {} ({} samples over {} parameters); {CANNOT_TELL} at {unsure} of {} \
         ratios ({}) and at {winners} of {} points' best design",
        dir.join(futexsim::report::sensitivity::MARKDOWN).display(),
        interval.samples.len(),
        interval.parameters.len(),
        interval.ratios.len(),
        interval.ratio_definition,
        interval.fastest.len()
    )?;
    Ok(())
}

/// Writes the result set and the speed log beside it, with the model
/// interval when there is one (the caller holds the lock).
fn publish(
    dir: &Path,
    set: &ResultSet,
    speed: &SpeedLog,
    interval: Option<&Sensitivity>,
    layout: Layout,
) -> Result<(), CliError> {
    futexsim::report::write_with(dir, set, speed, interval, layout).map_err(
        |e| match CliError::from(e) {
            CliError::Failed(e) => {
                CliError::Failed(format!("writing the report in {}: {e}", dir.display()))
            }
            refused => refused,
        },
    )
}

/// One row per point, one column per design: the figure the workload's
/// benchmark exists for, with which way is better (workload::lead), mean
/// over repetitions ± half its seed interval, and the paired ratio to the
/// baseline (the mean of per-seed ratios) with its interval.
fn print_summary(set: &ResultSet, dir: &Path, out: &mut impl Write) -> Result<(), CliError> {
    let first = &set.runs[0].record;
    let lead = summary::kind(set).primary();
    let what = lead.heading();
    // A run file edited with its checksum made anew may lack the figure: NaN.
    let headline = |r: &RunRecord| lead.read(r);
    writeln!(
        out,
        "{}: {} on {}; {what}, and the paired ratio to {} (mean of per-seed ratios)",
        set.provenance.config_name, first.workload, first.machine, set.baseline
    )?;
    let intervals = match set.provenance.repetitions {
        0 | 1 => "one repetition: no seed interval".to_string(),
        n => format!(
            "± and low..high: the {}% Student-t interval over {n} seeds",
            CONFIDENCE * 100.0
        ),
    };
    writeln!(
        out,
        "{intervals}; bimodal: the seeds split into two groups, see report.md"
    )?;
    let mut header: Vec<String> = set.axes.clone();
    header.extend(set.designs.iter().cloned());
    writeln!(out, "| {} |", header.join(" | "))?;
    writeln!(
        out,
        "|{}",
        header.iter().map(|_| "---:|").collect::<String>()
    )?;
    let cells = summary::cells(set);
    for point in 0..set.points() {
        let cell = |design: &str| {
            cells
                .iter()
                .find(|c| c.point == point && c.design == design)
        };
        let base = cell(&set.baseline);
        let mut row: Vec<String> = set
            .runs
            .iter()
            .find(|r| r.point == point)
            .map(|r| r.axis_values.clone())
            .unwrap_or_default();
        for design in &set.designs {
            let Some(c) = cell(design) else {
                row.push("-".into());
                continue;
            };
            let shown = c.interval(headline).map_or("-".into(), |i| i.show(figure));
            let ratio = base
                .filter(|_| *design != set.baseline)
                .map(|b| match c.against(b, headline) {
                    // No ratio to a baseline that made no progress.
                    Some(change) if b.mean(headline) > 0.0 => {
                        format!(" ({})", ratio_text(&change.ratio))
                    }
                    _ => " (-)".into(),
                })
                .unwrap_or_default();
            row.push(format!("{shown}{ratio}"));
        }
        writeln!(out, "| {} |", row.join(" | "))?;
    }
    writeln!(out, "report: {}", dir.join("report.md").display())?;
    Ok(())
}

/// "4.46x, 3.10..5.82": a paired ratio with its interval, to the two
/// decimals a summary is read to; ", bimodal" after a flagged one.
fn ratio_text(ratio: &SeedInterval) -> String {
    let interval = match (ratio.low, ratio.high) {
        (Some(low), Some(high)) => format!(", {low:.2}..{high:.2}"),
        _ => String::new(),
    };
    let flag = if ratio.bimodal { ", bimodal" } else { "" };
    format!("{:.2}x{interval}{flag}", ratio.mean)
}

/// The simulator's own speed, on stderr: it is not part of the results.
/// Only what this process measured: runs found on disk were timed by
/// another process, whose figures are in the directory's speed.json.
fn print_speed(measured: &Measured, in_all: usize, dir: &Path, estimate: u64) {
    if measured.runs == 0 {
        eprintln!(
            "simulator: 0 runs simulated now: all {in_all} were in {} already, so nothing was \
             measured (delete it, or choose another --out, to simulate again)",
            dir.display()
        );
        return;
    }
    // The estimate beside the measured peak keeps the memory model honest.
    let estimated = if estimate > 0 {
        format!(" (the largest run estimated at {} MiB)", mib(estimate))
    } else {
        String::new()
    };
    let speed = &measured.speed;
    eprintln!(
        "simulator: {} runs simulated now, {in_all} in all; {} events, {:.2} M events/s and \
         {:.2} M simulated ops/s of run time; peak memory {:.0} MiB in this process{estimated}",
        measured.runs,
        speed.events,
        speed.events_per_sec / 1e6,
        speed.sim_ops_per_sec / 1e6,
        measured.peak_rss_bytes as f64 / (1024.0 * 1024.0),
    );
}
