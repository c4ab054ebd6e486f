//! perf's own statistics (tools/perf/util/stat.c), so a figure printed as
//! perf prints it means what perf's means. perf bench's `(+- x%)` is the
//! relative standard error of the mean: the sample standard deviation (n - 1
//! in the denominator) divided by sqrt(n), over the mean, in percent; it is
//! 0 for fewer than two samples. It is not the relative standard deviation
//! of the samples, which is sqrt(n) times larger.

/// Running mean and sum of squared deviations (Welford), as perf keeps them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Stats {
    pub fn of(samples: impl IntoIterator<Item = f64>) -> Stats {
        let mut stats = Stats::default();
        for sample in samples {
            stats.update(sample);
        }
        stats
    }

    pub fn update(&mut self, sample: f64) {
        self.n += 1;
        let delta = sample - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (sample - self.mean);
    }

    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The standard error of the mean: what perf calls `stddev_stats`.
    pub fn stddev_of_mean(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let variance = self.m2 / (self.n - 1) as f64;
        (variance / self.n as f64).sqrt()
    }
}

/// perf's `rel_stddev_stats`: `stddev` as a percentage of `avg`, 0 when
/// `avg` is 0.
pub fn rel_stddev_pct(stddev: f64, avg: f64) -> f64 {
    if avg == 0.0 {
        0.0
    } else {
        100.0 * stddev / avg
    }
}

/// perf bench's `(+- x%)` from the population relative standard deviation
/// of `n` samples (a record's `thread_rsd_pct`): the same samples' relative
/// standard error of the mean, sd * sqrt(n / (n - 1)) / sqrt(n) / mean.
pub fn rel_stderr_from_population_rsd(population_rsd_pct: f64, n: u64) -> f64 {
    if n < 2 {
        return 0.0;
    }
    population_rsd_pct / ((n - 1) as f64).sqrt()
}

/// perf bench futex hash's line for one thread: its number, the addresses
/// of its first and last futex (one address when it has one futex, as perf
/// prints it then), and its ops per second.
pub fn hash_thread_line(thread: usize, first_futex: u64, last_futex: u64, rate: u64) -> String {
    if first_futex == last_futex {
        format!("[thread {thread:2}] futex: {first_futex:#x} [ {rate} ops/sec ]")
    } else {
        format!(
            "[thread {thread:2}] futexes: {first_futex:#x} ... {last_futex:#x} [ {rate} ops/sec ]"
        )
    }
}

/// perf bench futex lock-pi's line for one thread: its number (three
/// wide, where hash prints two), its futex and its lock/unlock pairs per
/// second.
pub fn lock_pi_thread_line(thread: usize, futex: u64, rate: u64) -> String {
    format!("[thread {thread:3}] futex: {futex:#x} [ {rate} ops/sec ]")
}

/// The "Averaged" line perf bench futex hash and lock-pi end with, after a
/// blank line unless silent.
pub fn averaged_line(average: u64, pct: f64, total_secs: u64, silent: bool) -> String {
    format!(
        "{}Averaged {average} operations/sec (+- {pct:.2}%), total secs = {total_secs}",
        if silent { "" } else { "\n" }
    )
}

/// `[shared]` or `[private]`, as every futex benchmark names its futexes.
fn futex_kind(shared: bool) -> &'static str {
    if shared {
        "shared"
    } else {
        "private"
    }
}

/// A time in microseconds as perf prints it, in milliseconds to four places.
fn ms(us: f64) -> String {
    format!("{:.4}", us / 1000.0)
}

/// perf bench futex wake's first line (a blank line follows it).
pub fn wake_summary_line(pid: u32, threads: u32, shared: bool, futex: u64, nwakes: u32) -> String {
    format!(
        "Run summary [PID {pid}]: blocking on {threads} threads (at [{}] futex {futex:#x}), waking up {nwakes} at a time.",
        futex_kind(shared)
    )
}

/// perf bench futex wake's line for run `run` (from 1), its time in us.
pub fn wake_run_line(run: usize, woken: u64, threads: u32, us: f64) -> String {
    format!(
        "[Run {run}]: Wokeup {woken} of {threads} threads in {} ms",
        ms(us)
    )
}

/// perf bench futex wake's last line: the mean time over the runs and
/// its relative standard error.
pub fn wake_average_line(woken: u64, threads: u32, mean_us: f64, pct: f64) -> String {
    format!(
        "Wokeup {woken} of {threads} threads in {} ms (+-{pct:.2}%)",
        ms(mean_us)
    )
}

/// perf bench futex wake-parallel's first line: `wakers` threads each
/// waking `per_waker`.
pub fn wake_parallel_summary_line(
    pid: u32,
    threads: u32,
    shared: bool,
    futex: u64,
    wakers: u32,
    per_waker: u32,
) -> String {
    format!(
        "Run summary [PID {pid}]: blocking on {threads} threads (at [{}] futex {futex:#x}), {wakers} threads waking up {per_waker} at a time.",
        futex_kind(shared)
    )
}

/// perf bench futex wake-parallel's latency line: the wakers' mean time
/// and its relative standard error, after `[Run N]: ` for one run.
pub fn wake_parallel_line(
    run: Option<usize>,
    woken: u64,
    threads: u32,
    mean_us: f64,
    pct: f64,
) -> String {
    format!(
        "{}Avg per-thread latency (waking {woken}/{threads} threads) in {} ms (+-{pct:.2}%)",
        run.map_or(String::new(), |run| format!("[Run {run}]: ")),
        ms(mean_us)
    )
}

/// perf bench futex requeue's first line; `pi` for its -p.
pub fn requeue_summary_line(
    pid: u32,
    threads: u32,
    shared: bool,
    from: u64,
    to: u64,
    pi: bool,
    nrequeue: u32,
) -> String {
    format!(
        "Run summary [PID {pid}]: Requeuing {threads} threads (from [{}] {from:#x} to {}{to:#x}), {nrequeue} at a time.",
        futex_kind(shared),
        if pi { "PI " } else { "" }
    )
}

/// perf bench futex requeue's line for run `run` (from 1): with -p, the
/// waiters the kernel woke (one a call) and those it requeued.
pub fn requeue_run_line(
    run: usize,
    requeued: u64,
    pi_wakeups: Option<u64>,
    threads: u32,
    us: f64,
) -> String {
    match pi_wakeups {
        None => format!(
            "[Run {run}]: Requeued {requeued} of {threads} threads in {} ms",
            ms(us)
        ),
        Some(woken) => format!(
            "[Run {run}]: Awoke and Requeued ({woken}+{}) of {threads} threads in {} ms",
            requeued.saturating_sub(woken),
            ms(us)
        ),
    }
}

/// perf bench futex requeue's last line: the mean time over the runs and
/// its relative standard error.
pub fn requeue_average_line(requeued: u64, threads: u32, mean_us: f64, pct: f64) -> String {
    format!(
        "Requeued {requeued} of {threads} threads in {} ms (+-{pct:.2}%)",
        ms(mean_us)
    )
}

/// perf bench futex lock-pi's first line (a blank line follows it).
pub fn lock_pi_summary_line(pid: u32, threads: u32, secs: u64) -> String {
    format!(
        "Run summary [PID {pid}]: {threads} threads doing pi lock/unlock pairing for {secs} secs."
    )
}

/// perf's mean of samples and its `(+- x%)`: the relative standard error.
pub fn mean_and_spread(samples: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let stats = Stats::of(samples);
    (
        stats.mean(),
        rel_stddev_pct(stats.stddev_of_mean(), stats.mean()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_error_of_the_mean_uses_n_minus_1_and_sqrt_n() {
        // Samples 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squares 32, sample
        // variance 32/7, standard error sqrt(32/7/8).
        let stats = Stats::of([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(stats.mean(), 5.0);
        let sem = (32.0_f64 / 7.0 / 8.0).sqrt();
        assert!((stats.stddev_of_mean() - sem).abs() < 1e-12);
        assert!((rel_stddev_pct(stats.stddev_of_mean(), 5.0) - 100.0 * sem / 5.0).abs() < 1e-12);
        // From the population deviation, sqrt(32/8) = 2, the same figure.
        let from_rsd = rel_stderr_from_population_rsd(100.0 * 2.0 / 5.0, 8);
        assert!((from_rsd - 100.0 * sem / 5.0).abs() < 1e-12);
    }

    #[test]
    fn every_line_reads_as_perf_6_1_prints_it() {
        assert_eq!(
            wake_summary_line(7, 4, false, 0x55d2_8fb4_6b58, 1),
            "Run summary [PID 7]: blocking on 4 threads (at [private] futex 0x55d28fb46b58), waking up 1 at a time."
        );
        assert_eq!(
            wake_run_line(1, 4, 4, 264.0),
            "[Run 1]: Wokeup 4 of 4 threads in 0.2640 ms"
        );
        assert_eq!(
            wake_average_line(4, 4, 146.4, 11.28),
            "Wokeup 4 of 4 threads in 0.1464 ms (+-11.28%)"
        );
        assert_eq!(
            wake_parallel_summary_line(7, 4, true, 0x10, 2, 2),
            "Run summary [PID 7]: blocking on 4 threads (at [shared] futex 0x10), 2 threads waking up 2 at a time."
        );
        assert_eq!(
            wake_parallel_line(Some(3), 2, 4, 11.5, 47.826),
            "[Run 3]: Avg per-thread latency (waking 2/4 threads) in 0.0115 ms (+-47.83%)"
        );
        assert_eq!(
            requeue_summary_line(7, 4, false, 0x5c, 0x58, true, 2),
            "Run summary [PID 7]: Requeuing 4 threads (from [private] 0x5c to PI 0x58), 2 at a time."
        );
        assert_eq!(
            requeue_run_line(1, 4, Some(2), 4, 14.0),
            "[Run 1]: Awoke and Requeued (2+2) of 4 threads in 0.0140 ms"
        );
        assert_eq!(
            requeue_run_line(10, 4, None, 4, 6.0),
            "[Run 10]: Requeued 4 of 4 threads in 0.0060 ms"
        );
        assert_eq!(
            lock_pi_thread_line(0, 0x55bc_6122_5f58, 1589),
            "[thread   0] futex: 0x55bc61225f58 [ 1589 ops/sec ]"
        );
        assert_eq!(
            averaged_line(1597, 0.53, 2, false),
            "\nAveraged 1597 operations/sec (+- 0.53%), total secs = 2"
        );
    }

    #[test]
    fn one_sample_or_a_zero_mean_has_no_spread() {
        assert_eq!(Stats::of([7.0]).stddev_of_mean(), 0.0);
        assert_eq!(rel_stddev_pct(3.0, 0.0), 0.0);
        assert_eq!(rel_stderr_from_population_rsd(10.0, 1), 0.0);
    }
}
