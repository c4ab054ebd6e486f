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
    fn one_sample_or_a_zero_mean_has_no_spread() {
        assert_eq!(Stats::of([7.0]).stddev_of_mean(), 0.0);
        assert_eq!(rel_stddev_pct(3.0, 0.0), 0.0);
        assert_eq!(rel_stderr_from_population_rsd(10.0, 1), 0.0);
    }
}
