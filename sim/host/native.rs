//! perf bench futex hash on this machine with real syscalls: each thread,
//! pinned to CPU i mod nCPU, loops FUTEX_WAIT on its own contiguous array of
//! futexes with a value that never matches, so every call hashes, takes the
//! bucket lock and returns EAGAIN. It counts and times as perf does: the
//! clock starts before the threads are created, a thread finishes its pass
//! over the array after the stop, and a thread's rate is its ops over the
//! whole seconds elapsed.

use super::sys::{futex_hash_slots, futex_wait, online_cpus, pin_to, set_futex_hash_slots};
use crate::perf_stat::{rel_stddev_pct, Stats};
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

/// One thread's count and the addresses of its first and last futex.
#[derive(Clone, Debug)]
pub struct ThreadFigures {
    pub ops: u64,
    pub first_futex: usize,
    pub last_futex: usize,
}

#[derive(Clone, Debug)]
pub struct HashFigures {
    pub threads: Vec<ThreadFigures>,
    /// From before the threads were created until the stop.
    pub runtime: Duration,
}

impl HashFigures {
    /// The mean of the per-thread rates over the exact runtime, for runs
    /// shorter than perf's whole seconds.
    pub fn mean(&self) -> f64 {
        let secs = self.runtime.as_secs_f64().max(f64::MIN_POSITIVE);
        Stats::of(self.threads.iter().map(|t| t.ops as f64 / secs)).mean()
    }

    /// Each thread's ops/sec as perf prints it: ops over the whole seconds
    /// elapsed, 0 under a second.
    pub fn perf_rate(&self, thread: &ThreadFigures) -> u64 {
        match self.runtime.as_secs() {
            0 => 0,
            secs => thread.ops / secs,
        }
    }

    /// perf's "Averaged N operations/sec (+- x%)": the mean of the
    /// per-thread rates (truncated, as perf's unsigned long) and its
    /// relative standard error in percent.
    pub fn perf_average(&self) -> (u64, f64) {
        let stats = Stats::of(self.threads.iter().map(|t| self.perf_rate(t) as f64));
        let avg = stats.mean() as u64;
        (avg, rel_stddev_pct(stats.stddev_of_mean(), avg as f64))
    }
}

/// The value perf passes; the words are zero, so every wait fails.
const NEVER: u32 = 1234;

impl HashBench {
    pub fn run(&self) -> Result<HashFigures, String> {
        if self.threads == 0 || self.futexes == 0 {
            return Err("threads and futexes must be at least 1".into());
        }
        let cpus = online_cpus();
        let stop = AtomicBool::new(false);
        let start = Barrier::new(self.threads as usize + 1);
        let began = Instant::now();
        let (threads, runtime) = std::thread::scope(|s| {
            let workers: Vec<_> = (0..self.threads as usize)
                .map(|i| {
                    let (stop, start) = (&stop, &start);
                    s.spawn(move || {
                        pin_to(i % cpus);
                        let words: Vec<AtomicU32> =
                            (0..self.futexes).map(|_| AtomicU32::new(0)).collect();
                        start.wait();
                        let mut ops: u64 = 0;
                        // As perf: a whole pass, then a look at the flag.
                        loop {
                            for word in &words {
                                futex_wait(word, NEVER, !self.shared);
                            }
                            ops += words.len() as u64;
                            if stop.load(Ordering::Relaxed) {
                                break;
                            }
                        }
                        ThreadFigures {
                            ops,
                            first_futex: words[0].as_ptr() as usize,
                            last_futex: words[words.len() - 1].as_ptr() as usize,
                        }
                    })
                })
                .collect();
            start.wait();
            std::thread::sleep(self.duration);
            stop.store(true, Ordering::Relaxed);
            let runtime = began.elapsed();
            let threads = workers
                .into_iter()
                .map(|w| w.join().expect("a bench thread does not panic"))
                .collect();
            (threads, runtime)
        });
        Ok(HashFigures { threads, runtime })
    }
}

/// perf's -b: a private futex hash of `buckets` slots for this process (0:
/// the global hash), set before the threads start.
pub fn request_hash_buckets(buckets: u32) -> Result<(), String> {
    set_futex_hash_slots(buckets).map_err(|e| {
        format!("requesting {buckets} hash buckets failed: {e} (PR_FUTEX_HASH needs Linux 6.16)")
    })
}

/// The line perf prints after its summary: which futex hash the process
/// used. With -b, the kernel must have kept the size asked for.
pub fn hashing_line(requested: Option<u32>) -> Result<String, String> {
    let in_use = futex_hash_slots();
    match requested {
        Some(asked) if in_use != Some(asked) => Err(format!(
            "requested {asked} hash buckets, but the kernel uses {}",
            in_use.map_or("an unknown number".into(), |n| n.to_string())
        )),
        Some(0) => Ok("Futex hashing: global hash".into()),
        Some(asked) => Ok(format!("Futex hashing: {asked} hash buckets")),
        None => Ok(match in_use {
            None | Some(0) => "Futex hashing: global hash".into(),
            Some(slots) => format!("Futex hashing: auto resized to {slots} buckets"),
        }),
    }
}

/// perf's -m: lock all current and future memory.
pub fn lock_all_memory() -> Result<(), String> {
    // SAFETY: mlockall takes flags only.
    match unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } {
        0 => Ok(()),
        _ => Err(format!("mlockall: {}", std::io::Error::last_os_error())),
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
        let thread = &figures.threads[0];
        assert_eq!(thread.ops % 64, 0, "whole passes over the array");
        assert_eq!(thread.last_futex - thread.first_futex, 63 * 4);
        // Under a whole second perf's integer rate is 0, and so its average.
        assert_eq!(figures.perf_average(), (0, 0.0));
    }

    #[test]
    fn perf_figures_divide_by_whole_seconds_and_spread_is_the_standard_error() {
        let thread = |ops| ThreadFigures {
            ops,
            first_futex: 0x1000,
            last_futex: 0x1ffc,
        };
        let figures = HashFigures {
            threads: vec![thread(2_000), thread(4_001), thread(6_000)],
            runtime: Duration::from_millis(2_900),
        };
        let rates: Vec<u64> = figures
            .threads
            .iter()
            .map(|t| figures.perf_rate(t))
            .collect();
        assert_eq!(rates, [1_000, 2_000, 3_000]);
        // Sample sd 1000, over sqrt(3), over the mean 2000.
        let (avg, pct) = figures.perf_average();
        assert_eq!(avg, 2_000);
        assert!(
            (pct - 100.0 * 1000.0 / 3f64.sqrt() / 2000.0).abs() < 1e-9,
            "{pct}"
        );
    }
}
