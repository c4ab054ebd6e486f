//! perf bench futex hash on this machine with real syscalls: each thread,
//! pinned to CPU i mod nCPU, loops FUTEX_WAIT on its own contiguous array of
//! futexes with a value that never matches, so every call hashes, takes the
//! bucket lock and returns EAGAIN. Figures as perf prints them: the mean of
//! the per-thread rates ("Averaged"), and their spread.

use super::sys::{futex_wait, online_cpus, pin_to};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct HashBench {
    pub threads: u32,
    pub futexes: u32,
    pub shared: bool,
    pub duration: Duration,
}

#[derive(Clone, Debug)]
pub struct HashFigures {
    pub per_thread_ops_per_sec: Vec<f64>,
}

impl HashFigures {
    pub fn mean(&self) -> f64 {
        self.per_thread_ops_per_sec.iter().sum::<f64>() / self.per_thread_ops_per_sec.len() as f64
    }

    pub fn total(&self) -> f64 {
        self.per_thread_ops_per_sec.iter().sum()
    }

    /// Relative standard deviation of the per-thread rates, in percent.
    pub fn rsd_pct(&self) -> f64 {
        let mean = self.mean();
        let n = self.per_thread_ops_per_sec.len() as f64;
        let var = self
            .per_thread_ops_per_sec
            .iter()
            .map(|r| (r - mean).powi(2))
            .sum::<f64>()
            / n;
        100.0 * var.sqrt() / mean.max(f64::MIN_POSITIVE)
    }
}

/// A value no futex word ever holds, so every wait fails at once.
const NEVER: u32 = 1;

impl HashBench {
    pub fn run(&self) -> Result<HashFigures, String> {
        if self.threads == 0 || self.futexes == 0 {
            return Err("threads and futexes must be at least 1".into());
        }
        let cpus = online_cpus();
        let stop = AtomicBool::new(false);
        let start = Barrier::new(self.threads as usize + 1);
        let rates = std::thread::scope(|s| {
            let workers: Vec<_> = (0..self.threads as usize)
                .map(|i| {
                    let (stop, start) = (&stop, &start);
                    s.spawn(move || {
                        pin_to(i % cpus);
                        let words: Vec<AtomicU32> =
                            (0..self.futexes).map(|_| AtomicU32::new(0)).collect();
                        start.wait();
                        let began = Instant::now();
                        let mut ops: u64 = 0;
                        while !stop.load(Ordering::Relaxed) {
                            for word in &words {
                                futex_wait(word, NEVER, !self.shared);
                            }
                            ops += words.len() as u64;
                        }
                        ops as f64 / began.elapsed().as_secs_f64()
                    })
                })
                .collect();
            start.wait();
            std::thread::sleep(self.duration);
            stop.store(true, Ordering::Relaxed);
            workers
                .into_iter()
                .map(|w| w.join().expect("a bench thread does not panic"))
                .collect()
        });
        Ok(HashFigures {
            per_thread_ops_per_sec: rates,
        })
    }
}

/// Per-thread atomic adds per second of two threads pinned to CPUs 0 and 1,
/// their words in one cache line or in two.
pub fn false_sharing(one_line: bool, duration: Duration) -> f64 {
    #[repr(align(128))]
    struct Lines([AtomicU32; 64]);
    let lines = Lines(std::array::from_fn(|_| AtomicU32::new(0)));
    let stride = if one_line { 1 } else { 32 };
    let stop = AtomicBool::new(false);
    let start = Barrier::new(3);
    let cpus = online_cpus();
    let rates: Vec<f64> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|t| {
                let (word, stop, start) = (&lines.0[t * stride], &stop, &start);
                s.spawn(move || {
                    pin_to(t % cpus);
                    start.wait();
                    let began = Instant::now();
                    let mut adds: u64 = 0;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..256 {
                            word.fetch_add(1, Ordering::SeqCst);
                        }
                        adds += 256;
                    }
                    adds as f64 / began.elapsed().as_secs_f64()
                })
            })
            .collect();
        start.wait();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        workers
            .into_iter()
            .map(|w| w.join().expect("an adding thread does not panic"))
            .collect()
    });
    rates.iter().sum::<f64>() / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_runs_failed_waits_at_a_plausible_rate() {
        let figures = HashBench {
            threads: 1,
            futexes: 64,
            shared: false,
            duration: Duration::from_millis(50),
        }
        .run()
        .unwrap();
        let rate = figures.mean();
        // A failed FUTEX_WAIT is a real syscall: between 20 ns and 100 us.
        assert!((1e4..5e7).contains(&rate), "{rate} ops/s");
        assert_eq!(figures.total(), rate);
        assert_eq!(figures.rsd_pct(), 0.0);
    }
}
