//! `futexsim native hash|wake|wake-parallel|requeue|lock-pi`: perf bench
//! futex's benchmarks on this machine with real futex syscalls, with perf's
//! options and printed line for line as perf prints them, so that scripts
//! written for perf's output read them unchanged. The one option perf 6.1
//! lacks, `--runs`, has no short letter, so no perf command line means
//! something else here.

use crate::cli::CliError;
use clap::{Args, Subcommand};
use futexsim::footprint::{memory_limit, thread_limit};
use futexsim::host::native::lock_pi::LockPiBench;
use futexsim::host::native::rounds::{over_runs, RoundBench, PERF_RUNS};
use futexsim::host::native::{
    check_threads, hashing_line, lock_all_memory, request_hash_buckets, HashBench, NativeError,
    PerThreadFigures,
};
use futexsim::perf_stat::{
    averaged_line, hash_thread_line, lock_pi_summary_line, lock_pi_thread_line, mean_and_spread,
    requeue_average_line, requeue_run_line, requeue_summary_line, wake_average_line,
    wake_parallel_line, wake_parallel_summary_line, wake_run_line, wake_summary_line,
};
use std::io::Write;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct NativeArgs {
    #[command(subcommand)]
    bench: NativeBench,
}

#[derive(Subcommand, Debug)]
enum NativeBench {
    /// perf bench futex hash: every thread loops failed FUTEX_WAITs on its own futexes.
    Hash(HashOptions),
    /// perf bench futex wake: threads block on one futex; the main thread
    /// wakes them, -w at a time, and times it.
    Wake(WakeOptions),
    /// perf bench futex wake-parallel: threads block on one futex; -w
    /// waker threads each wake an equal share at once and time it.
    WakeParallel(WakeParallelOptions),
    /// perf bench futex requeue: threads block on one futex; the main
    /// thread requeues them to another, -q at a time, and times it.
    Requeue(RequeueOptions),
    /// perf bench futex lock-pi: every thread loops FUTEX_LOCK_PI,
    /// usleep(1), FUTEX_UNLOCK_PI.
    LockPi(LockPiOptions),
}

/// The options every perf bench futex benchmark has, with perf's letters.
#[derive(Args, Debug)]
struct CommonOptions {
    /// Threads (every online CPU by default, or with 0, as perf takes it).
    #[arg(short, long)]
    threads: Option<u32>,
    /// Silent: no per-thread or per-run lines.
    #[arg(short, long)]
    silent: bool,
    /// Shared futexes instead of private ones.
    #[arg(short = 'S', long)]
    shared: bool,
    /// Lock all current and future memory.
    #[arg(short, long)]
    mlockall: bool,
}

/// perf bench futex hash's options, with perf's letters and defaults.
#[derive(Args, Debug)]
struct HashOptions {
    #[command(flatten)]
    common: CommonOptions,
    /// Seconds to run.
    #[arg(short, long, default_value_t = 10)]
    runtime: u32,
    /// Futexes per thread.
    #[arg(short, long, default_value_t = 1024)]
    futexes: u32,
    /// Private futex hash buckets for the process (PR_FUTEX_HASH, Linux
    /// 6.16+); 0 for the global hash.
    #[arg(short, long)]
    buckets: Option<u32>,
}

/// perf's runs of wake, wake-parallel and requeue: 10, fixed in perf 6.1.
#[derive(Args, Debug)]
struct RunsOption {
    /// Runs to time (perf 6.1 always runs 10; futexsim's own option, with
    /// no short letter).
    #[arg(long, default_value_t = PERF_RUNS)]
    runs: u32,
}

#[derive(Args, Debug)]
struct WakeOptions {
    #[command(flatten)]
    common: CommonOptions,
    /// Threads woken per FUTEX_WAKE (0 wakes one, as the kernel takes it).
    #[arg(short = 'w', long, default_value_t = 1)]
    nwakes: u32,
    #[command(flatten)]
    runs: RunsOption,
}

#[derive(Args, Debug)]
struct WakeParallelOptions {
    #[command(flatten)]
    common: CommonOptions,
    /// Waking threads; they must divide the threads evenly (0, or more
    /// than the threads: one per thread, as perf takes it).
    #[arg(short = 'w', long, default_value_t = 1)]
    nwakers: u32,
    #[command(flatten)]
    runs: RunsOption,
}

#[derive(Args, Debug)]
struct RequeueOptions {
    #[command(flatten)]
    common: CommonOptions,
    /// Threads requeued per call (more than the threads: all of them).
    #[arg(short = 'q', long, default_value_t = 1)]
    nrequeue: u32,
    /// Requeue all threads at once.
    #[arg(short = 'B', long)]
    broadcast: bool,
    /// PI-aware requeue: FUTEX_WAIT_REQUEUE_PI and FUTEX_CMP_REQUEUE_PI.
    #[arg(short, long)]
    pi: bool,
    #[command(flatten)]
    runs: RunsOption,
}

#[derive(Args, Debug)]
struct LockPiOptions {
    #[command(flatten)]
    common: CommonOptions,
    /// Seconds to run.
    #[arg(short, long, default_value_t = 10)]
    runtime: u32,
    /// A futex per thread instead of one for all.
    #[arg(short = 'M', long)]
    multi: bool,
}

pub fn run(args: &NativeArgs, out: &mut impl Write) -> Result<(), CliError> {
    match &args.bench {
        NativeBench::Hash(options) => hash(options, out),
        NativeBench::Wake(options) => wake(options, out),
        NativeBench::WakeParallel(options) => wake_parallel(options, out),
        NativeBench::Requeue(options) => requeue(options, out),
        NativeBench::LockPi(options) => lock_pi(options, out),
    }
}

impl CommonOptions {
    /// perf reads -t 0 as its default: every online CPU.
    fn threads(&self) -> u32 {
        self.threads
            .filter(|&threads| threads > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32))
    }

    /// What is refused before anything starts (threads past the limits),
    /// then perf's -m.
    fn prepare(&self) -> Result<u32, CliError> {
        let threads = self.threads();
        check_threads(threads, thread_limit().as_ref()).map_err(input)?;
        if self.mlockall {
            lock_all_memory().map_err(failed)?;
        }
        Ok(threads)
    }
}

fn input(e: NativeError) -> CliError {
    CliError::Input(e.to_string())
}

fn failed(e: NativeError) -> CliError {
    CliError::Failed(e.to_string())
}

fn check_runtime(runtime: u32) -> Result<Duration, CliError> {
    if !(1..=3600).contains(&runtime) {
        return Err(CliError::Input(format!(
            "--runtime {runtime} must be between 1 and 3600 seconds"
        )));
    }
    Ok(Duration::from_secs(runtime.into()))
}

impl RunsOption {
    fn check(&self) -> Result<u32, CliError> {
        if !(1..=1000).contains(&self.runs) {
            return Err(CliError::Input(format!(
                "--runs {} must be between 1 and 1000",
                self.runs
            )));
        }
        Ok(self.runs)
    }
}

fn hash(options: &HashOptions, out: &mut impl Write) -> Result<(), CliError> {
    let duration = check_runtime(options.runtime)?;
    let common = &options.common;
    let threads = common.threads();
    let bench = HashBench {
        threads,
        futexes: options.futexes,
        shared: common.shared,
        duration,
    };
    // Before anything starts or changes: threads and memory for them.
    bench
        .check(memory_limit().as_ref(), thread_limit().as_ref())
        .map_err(input)?;
    if common.mlockall {
        lock_all_memory().map_err(failed)?;
    }
    if let Some(buckets) = options.buckets {
        request_hash_buckets(buckets).map_err(|e| match e {
            NativeError::HashBucketsSize { .. } => input(e),
            _ => failed(e),
        })?;
    }
    writeln!(
        out,
        "Run summary [PID {}]: {threads} threads, each operating on {} [{}] futexes for {} secs.\n",
        std::process::id(),
        options.futexes,
        if common.shared { "shared" } else { "private" },
        options.runtime
    )?;
    out.flush()?;
    let figures = bench.run().map_err(failed)?;
    print_per_thread(&figures, common.silent, out, |tid, thread, rate| {
        hash_thread_line(
            tid,
            thread.first_futex as u64,
            thread.last_futex as u64,
            rate,
        )
    })?;
    let hashing = hashing_line(options.buckets).map_err(failed)?;
    writeln!(out, "{hashing}")?;
    Ok(())
}

/// perf's per-thread lines, as `line` writes one (unless silent), and its
/// "Averaged" line.
fn print_per_thread(
    figures: &PerThreadFigures,
    silent: bool,
    out: &mut impl Write,
    line: impl Fn(usize, &futexsim::host::native::ThreadFigures, u64) -> String,
) -> Result<(), CliError> {
    if !silent {
        for (tid, thread) in figures.threads.iter().enumerate() {
            writeln!(out, "{}", line(tid, thread, figures.perf_rate(thread)))?;
        }
    }
    let (avg, pct) = figures.perf_average();
    writeln!(
        out,
        "{}",
        averaged_line(avg, pct, figures.runtime.as_secs(), silent)
    )?;
    Ok(())
}

/// Writes each run's line as it ends, unless silent; the first write
/// error is kept for after the runs.
struct RunLines<'a, W: Write> {
    out: &'a mut W,
    silent: bool,
    written: std::io::Result<()>,
}

impl<'a, W: Write> RunLines<'a, W> {
    fn new(out: &'a mut W, silent: bool) -> Self {
        RunLines {
            out,
            silent,
            written: Ok(()),
        }
    }

    fn line(&mut self, text: String) {
        if !self.silent && self.written.is_ok() {
            self.written = writeln!(self.out, "{text}").and_then(|()| self.out.flush());
        }
    }
}

/// The summary line and the blank line after it, before the runs.
fn header(out: &mut impl Write, summary: String) -> Result<(), CliError> {
    writeln!(out, "{summary}\n")?;
    out.flush()?;
    Ok(())
}

fn wake(options: &WakeOptions, out: &mut impl Write) -> Result<(), CliError> {
    let runs = options.runs.check()?;
    let common = &options.common;
    let threads = common.prepare()?;
    let bench = RoundBench::new(threads, common.shared, runs);
    let pid = std::process::id();
    header(
        out,
        wake_summary_line(pid, threads, common.shared, bench.futex1(), options.nwakes),
    )?;
    let mut lines = RunLines::new(out, common.silent);
    let result = bench.wake(options.nwakes, |run, figures| {
        lines.line(wake_run_line(
            run + 1,
            figures.woken,
            threads,
            figures.us as f64,
        ))
    });
    lines.written?;
    let done = result.map_err(failed)?;
    let (mean_us, pct) = over_runs(&done, |r| r.us as f64);
    // perf prints the last run's count.
    let woken = done.last().map_or(0, |r| r.woken);
    writeln!(out, "{}", wake_average_line(woken, threads, mean_us, pct))?;
    Ok(())
}

fn wake_parallel(options: &WakeParallelOptions, out: &mut impl Write) -> Result<(), CliError> {
    let runs = options.runs.check()?;
    let common = &options.common;
    let threads = common.threads();
    // As perf: none, or more wakers than threads, is a waker per thread.
    let wakers = match options.nwakers {
        0 => threads,
        n => n.min(threads),
    };
    if !threads.is_multiple_of(wakers) {
        return Err(CliError::Input(format!(
            "--nwakers {wakers}: {threads} threads do not divide evenly among {wakers} wakers \
             (perf: \"Must be perfectly divisible\")"
        )));
    }
    let threads = common.prepare()?;
    let bench = RoundBench::new(threads, common.shared, runs);
    header(
        out,
        wake_parallel_summary_line(
            std::process::id(),
            threads,
            common.shared,
            bench.futex1(),
            wakers,
            threads / wakers,
        ),
    )?;
    let mut lines = RunLines::new(out, common.silent);
    let result = bench.wake_parallel(wakers, |run, figures| {
        let (mean_us, pct) = over_runs(&figures.wakers, |w| w.us as f64);
        let (woken, _) = over_runs(&figures.wakers, |w| w.woken as f64);
        lines.line(wake_parallel_line(
            Some(run + 1),
            woken as u64,
            threads,
            mean_us,
            pct,
        ))
    });
    lines.written?;
    let done = result.map_err(failed)?;
    // perf's summary is over every waker of every run.
    let every = || done.iter().flat_map(|run| &run.wakers);
    let (mean_us, pct) = mean_and_spread(every().map(|w| w.us as f64));
    let (woken, _) = mean_and_spread(every().map(|w| w.woken as f64));
    writeln!(
        out,
        "{}",
        wake_parallel_line(None, woken as u64, threads, mean_us, pct)
    )?;
    Ok(())
}

fn requeue(options: &RequeueOptions, out: &mut impl Write) -> Result<(), CliError> {
    let runs = options.runs.check()?;
    if options.nrequeue == 0 && !options.broadcast {
        return Err(CliError::Input(
            "--nrequeue 0: a requeue of none never ends; requeue at least 1 at a time (or -B, \
             all at once)"
                .into(),
        ));
    }
    let common = &options.common;
    let threads = common.prepare()?;
    let nrequeue = if options.broadcast {
        threads
    } else {
        options.nrequeue.min(threads)
    };
    let bench = RoundBench::new(threads, common.shared, runs);
    header(
        out,
        requeue_summary_line(
            std::process::id(),
            threads,
            common.shared,
            bench.futex1(),
            bench.futex2(),
            options.pi,
            nrequeue,
        ),
    )?;
    let mut lines = RunLines::new(out, common.silent);
    let result = bench.requeue(nrequeue, options.pi, |run, figures| {
        lines.line(requeue_run_line(
            run + 1,
            figures.requeued,
            figures.pi_wakeups,
            threads,
            figures.us as f64,
        ))
    });
    lines.written?;
    let done = result.map_err(failed)?;
    let (mean_us, pct) = over_runs(&done, |r| r.us as f64);
    let (requeued, _) = over_runs(&done, |r| r.requeued as f64);
    writeln!(
        out,
        "{}",
        requeue_average_line(requeued as u64, threads, mean_us, pct)
    )?;
    Ok(())
}

fn lock_pi(options: &LockPiOptions, out: &mut impl Write) -> Result<(), CliError> {
    let duration = check_runtime(options.runtime)?;
    let common = &options.common;
    let threads = common.prepare()?;
    let bench = LockPiBench {
        threads,
        multi: options.multi,
        shared: common.shared,
        duration,
    };
    header(
        out,
        lock_pi_summary_line(std::process::id(), threads, options.runtime.into()),
    )?;
    let figures = bench.run().map_err(failed)?;
    print_per_thread(&figures, common.silent, out, |tid, thread, rate| {
        lock_pi_thread_line(tid, thread.first_futex as u64, rate)
    })
}
