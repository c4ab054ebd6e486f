//! perf bench futex hash on this machine with real syscalls: each thread,
//! pinned to CPU i mod nCPU, loops FUTEX_WAIT on its own contiguous array of
//! futexes with a value that never matches, so every call hashes, takes the
//! bucket lock and returns EAGAIN. It counts and times as perf does: the
//! clock starts before the threads are created, a thread finishes its pass
//! over the array after the stop, and a thread's rate is its ops over the
//! whole seconds elapsed.

pub mod lock_pi;
pub mod rounds;

use super::sys::{futex_hash_slots, futex_wait, online_cpus, pin_to, set_futex_hash_slots};
use crate::footprint::{MemoryLimit, ThreadLimit};
use crate::perf_stat::{rel_stddev_pct, Stats};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Barrier, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct HashBench {
    pub threads: u32,
    pub futexes: u32,
    pub shared: bool,
    pub duration: Duration,
}

/// One thread's count and the addresses of its first and last futex (the
/// same address for a thread of one futex).
#[derive(Clone, Debug)]
pub struct ThreadFigures {
    pub ops: u64,
    pub first_futex: usize,
    pub last_futex: usize,
}

/// What the benchmarks that count per thread (hash, lock-pi) print from.
#[derive(Clone, Debug)]
pub struct PerThreadFigures {
    pub threads: Vec<ThreadFigures>,
    /// From before the threads were created until the stop.
    pub runtime: Duration,
}

impl PerThreadFigures {
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

/// Each bench thread's stack: the loop needs little, and a stack of known
/// size is what the memory check counts.
pub const THREAD_STACK: u64 = 256 << 10;

/// Where the bench threads wait until all have their futexes: the clock
/// runs from before they start, so none begins its loop before the last is
/// ready; or, where one could not start, they all give up.
struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

struct GateState {
    ready: usize,
    open: Option<bool>,
}

impl Gate {
    fn new() -> Gate {
        Gate {
            state: Mutex::new(GateState {
                ready: 0,
                open: None,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A thread is ready; waits until the gate opens (true) or the bench
    /// is called off (false).
    fn arrive(&self) -> bool {
        let mut state = self.lock();
        state.ready += 1;
        self.changed.notify_all();
        loop {
            if let Some(go) = state.open {
                return go;
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Waits until `threads` are ready or the bench is called off; true
    /// when all are ready.
    fn all_ready(&self, threads: usize) -> bool {
        let mut state = self.lock();
        loop {
            match state.open {
                Some(false) => return false,
                _ if state.ready >= threads => return true,
                _ => {}
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Once all of `workers` are ready, lets them go for `duration`
    /// (nothing, where the bench was called off), tells them to stop, and
    /// gathers what each measured, with the time since `began`.
    fn run_for<'s>(
        &self,
        workers: Vec<std::thread::ScopedJoinHandle<'s, Option<ThreadFigures>>>,
        threads: usize,
        duration: Duration,
        stop: &AtomicBool,
        began: Instant,
    ) -> (Vec<Option<ThreadFigures>>, Duration) {
        if self.all_ready(threads) {
            self.open(true);
            std::thread::sleep(duration);
        }
        stop.store(true, Ordering::Relaxed);
        let runtime = began.elapsed();
        let figures = workers
            .into_iter()
            .map(|w| w.join().unwrap_or(None))
            .collect();
        (figures, runtime)
    }

    /// Lets every thread go (true) or calls the bench off (false).
    fn open(&self, go: bool) {
        let mut state = self.lock();
        if state.open.is_none() {
            state.open = Some(go);
        }
        self.changed.notify_all();
    }
}

/// Calls the bench off when dropped: held by a thread until it is ready.
struct CallOff<'a>(&'a Gate);

impl Drop for CallOff<'_> {
    fn drop(&mut self) {
        self.0.open(false);
    }
}

impl HashBench {
    /// Why the bench cannot run here: no threads or futexes, more threads
    /// than the process may start (`threads`), or more memory for their
    /// futexes and stacks than it may use (`memory`). Checked before any
    /// thread starts.
    pub fn check(
        &self,
        memory: Option<&MemoryLimit>,
        threads: Option<&ThreadLimit>,
    ) -> Result<(), NativeError> {
        if self.threads == 0 || self.futexes == 0 {
            return Err(NativeError::NoWork);
        }
        check_threads(self.threads, threads)?;
        let per_thread = (u64::from(self.futexes) * 4).saturating_add(THREAD_STACK);
        let need = per_thread.saturating_mul(self.threads.into());
        if let Some(limit) = memory.filter(|l| need > l.bytes) {
            return Err(NativeError::TooMuchMemory {
                threads: self.threads,
                futexes: self.futexes,
                need,
                limit: limit.clone(),
            });
        }
        Ok(())
    }

    /// Runs the bench. Threads that start before one fails to (or fails to
    /// get its futexes) are called off and joined: the error says which.
    pub fn run(&self) -> Result<PerThreadFigures, NativeError> {
        self.run_failing_at(None)
    }

    /// `run`, where `fail_at` (for tests) is a thread whose start fails.
    fn run_failing_at(&self, fail_at: Option<usize>) -> Result<PerThreadFigures, NativeError> {
        if self.threads == 0 || self.futexes == 0 {
            return Err(NativeError::NoWork);
        }
        let cpus = online_cpus();
        let stop = AtomicBool::new(false);
        let gate = Gate::new();
        let failed: Mutex<Option<NativeError>> = Mutex::new(None);
        let fail = |why: NativeError| {
            failed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(why);
            gate.open(false);
        };
        let threads = self.threads as usize;
        let futexes = self.futexes as usize;
        let began = Instant::now();
        let (figures, runtime) = std::thread::scope(|s| {
            let mut workers = Vec::with_capacity(threads);
            for i in 0..threads {
                let (stop, gate, fail) = (&stop, &gate, &fail);
                let worker = move || {
                    // Whatever ends this thread before it is ready (a
                    // panic included) calls the bench off: none waits on
                    // it forever.
                    let leaving = CallOff(gate);
                    pin_to(i % cpus);
                    let mut words: Vec<AtomicU32> = Vec::new();
                    if words.try_reserve_exact(futexes).is_err() {
                        fail(NativeError::Allocation { thread: i, futexes });
                        return None;
                    }
                    words.extend((0..futexes).map(|_| AtomicU32::new(0)));
                    let go = gate.arrive();
                    std::mem::forget(leaving);
                    if !go {
                        return None;
                    }
                    let mut ops: u64 = 0;
                    // As perf: a whole pass, then a look at the flag.
                    loop {
                        for word in &words {
                            let _ = futex_wait(word, NEVER, !self.shared);
                        }
                        ops += words.len() as u64;
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                    Some(ThreadFigures {
                        ops,
                        first_futex: words.first().map_or(0, |w| w.as_ptr() as usize),
                        last_futex: words.last().map_or(0, |w| w.as_ptr() as usize),
                    })
                };
                let spawned = if fail_at == Some(i) {
                    Err(std::io::Error::other("refused for the test"))
                } else {
                    std::thread::Builder::new()
                        .name(format!("futexsim-hash-{i}"))
                        .stack_size(THREAD_STACK as usize)
                        .spawn_scoped(s, worker)
                };
                match spawned {
                    Ok(handle) => workers.push(handle),
                    Err(e) => {
                        fail(NativeError::Spawn {
                            thread: i,
                            threads,
                            error: e,
                        });
                        break;
                    }
                }
            }
            gate.run_for(workers, threads, self.duration, &stop, began)
        });
        if let Some(why) = failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
            return Err(why);
        }
        let threads: Option<Vec<ThreadFigures>> = figures.into_iter().collect();
        match threads {
            Some(threads) => Ok(PerThreadFigures { threads, runtime }),
            None => Err(NativeError::NoFigures),
        }
    }
}

/// Why `threads` bench threads and the main one cannot start here: more
/// than the process may start (`limit`). Checked before any starts.
pub fn check_threads(threads: u32, limit: Option<&ThreadLimit>) -> Result<(), NativeError> {
    let started = u64::from(threads) + 1;
    match limit.filter(|l| started > l.count) {
        Some(limit) => Err(NativeError::TooManyThreads {
            threads,
            limit: limit.clone(),
        }),
        None => Ok(()),
    }
}

/// perf's -b: a private futex hash of `buckets` slots for this process (0:
/// the global hash), set before the threads start. A size the kernel
/// refuses whatever its version (1, or not a power of two: EINVAL from
/// PR_FUTEX_HASH_SET_SLOTS, as 6.18 answers 1 and 3) is refused here, so
/// that a kernel that has the call is not blamed for lacking it.
pub fn request_hash_buckets(buckets: u32) -> Result<(), NativeError> {
    if buckets == 1 || !(buckets == 0 || buckets.is_power_of_two()) {
        return Err(NativeError::HashBucketsSize { buckets });
    }
    set_futex_hash_slots(buckets).map_err(|error| NativeError::HashBuckets { buckets, error })
}

/// The line perf prints after its summary: which futex hash the process
/// used. With -b, the kernel must have kept the size asked for.
pub fn hashing_line(requested: Option<u32>) -> Result<String, NativeError> {
    let in_use = futex_hash_slots();
    match requested {
        Some(asked) if in_use != Some(asked) => Err(NativeError::HashNotKept { asked, in_use }),
        Some(0) => Ok("Futex hashing: global hash".into()),
        Some(asked) => Ok(format!("Futex hashing: {asked} hash buckets")),
        None => Ok(match in_use {
            None | Some(0) => "Futex hashing: global hash".into(),
            Some(slots) => format!("Futex hashing: auto resized to {slots} buckets"),
        }),
    }
}

/// perf's -m: lock all current and future memory.
pub fn lock_all_memory() -> Result<(), NativeError> {
    // SAFETY: mlockall takes flags only.
    match unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } {
        0 => Ok(()),
        _ => Err(NativeError::LockMemory(std::io::Error::last_os_error())),
    }
}

/// Why a native bench could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error("threads and futexes must be at least 1")]
    NoWork,
    #[error("thread {thread} could not allocate its {futexes} futexes")]
    Allocation { thread: usize, futexes: usize },
    #[error(
        "starting thread {thread} of {threads} failed: {error}; {thread} started were stopped"
    )]
    Spawn {
        thread: usize,
        threads: usize,
        error: std::io::Error,
    },
    /// The bench threads and the main one, past what the process may start.
    #[error(
        "--threads {threads}: {} threads with the main one, more than the {} {} allows",
        u64::from(*threads) + 1,
        limit.count,
        limit.what
    )]
    TooManyThreads { threads: u32, limit: ThreadLimit },
    /// `need` bytes of futexes and stacks, past the memory the process may use.
    #[error(
        "--threads {threads} of --futexes {futexes} need about {} MiB ({} bytes of futexes and a \
         {} KiB stack each), more than the {} MiB {} allows",
        need.div_ceil(1 << 20),
        u64::from(*futexes) * 4,
        THREAD_STACK >> 10,
        limit.mib(),
        limit.what
    )]
    TooMuchMemory {
        threads: u32,
        futexes: u32,
        need: u64,
        limit: MemoryLimit,
    },
    #[error("a bench thread stopped without its figures")]
    NoFigures,
    #[error("-b {buckets}: a private futex hash takes a power of two of at least 2 slots (0: the global hash)")]
    HashBucketsSize { buckets: u32 },
    #[error("requesting {buckets} hash buckets failed: {error} (PR_FUTEX_HASH needs Linux 6.16)")]
    HashBuckets { buckets: u32, error: std::io::Error },
    #[error("requested {asked} hash buckets, but the kernel uses {}", in_use.map_or("an unknown number".into(), |n| n.to_string()))]
    HashNotKept { asked: u32, in_use: Option<u32> },
    #[error("mlockall: {0}")]
    LockMemory(std::io::Error),
    #[error("a futex call failed: {0}")]
    Futex(std::io::Error),
    /// perf's "couldn't requeue from %p to %p".
    #[error("couldn't requeue from {from:#x} to {to:#x}: {error}")]
    Requeue {
        from: u64,
        to: u64,
        error: std::io::Error,
    },
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
    fn a_hash_size_no_kernel_takes_is_refused_before_the_kernel_is_asked() {
        for buckets in [1, 3, 1000] {
            let refused = request_hash_buckets(buckets).unwrap_err();
            assert!(
                matches!(refused, NativeError::HashBucketsSize { buckets: b } if b == buckets),
                "{refused}"
            );
            assert!(!refused.to_string().contains("needs Linux"), "{refused}");
        }
    }

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

    fn bench(threads: u32, futexes: u32) -> HashBench {
        HashBench {
            threads,
            futexes,
            shared: false,
            duration: Duration::from_secs(60),
        }
    }

    #[test]
    fn threads_past_the_limits_or_their_memory_are_refused_before_any_starts() {
        let threads = ThreadLimit {
            count: 1000,
            what: "RLIMIT_NPROC (ulimit -u)".into(),
        };
        let memory = MemoryLimit {
            bytes: 1 << 30,
            what: "RLIMIT_AS (ulimit -v)".into(),
        };
        let check = |b: HashBench| b.check(Some(&memory), Some(&threads));
        assert!(check(bench(999, 1024)).is_ok());
        let err = check(bench(1000, 1)).unwrap_err();
        assert!(
            matches!(err, NativeError::TooManyThreads { threads: 1000, .. }),
            "{err}"
        );
        let err = err.to_string();
        assert!(
            err.contains("1001 threads") && err.contains("RLIMIT_NPROC"),
            "{err}"
        );
        // 4e9 futexes are 16 GB.
        let err = check(bench(1, 4_000_000_000)).unwrap_err().to_string();
        assert!(err.contains("RLIMIT_AS") && err.contains("MiB"), "{err}");
        // 900 threads' stacks alone are 225 MiB: with 1 MiB of futexes each, too much.
        let err = check(bench(900, 1 << 18)).unwrap_err();
        assert!(
            matches!(err, NativeError::TooMuchMemory { threads: 900, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("1024 MiB"), "{err}");
        assert!(matches!(
            bench(0, 1).check(None, None),
            Err(NativeError::NoWork)
        ));
        assert!(bench(u32::MAX, u32::MAX).check(None, None).is_ok());
    }

    #[test]
    fn a_thread_that_cannot_start_stops_those_started_and_says_which() {
        let (sent, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sent.send(bench(8, 16).run_failing_at(Some(5)));
        });
        let result = received
            .recv_timeout(Duration::from_secs(30))
            .expect("the threads started were stopped, not left waiting");
        let err = result.unwrap_err().to_string();
        assert!(err.contains("starting thread 5 of 8 failed"), "{err}");
    }

    #[test]
    fn perf_figures_divide_by_whole_seconds_and_spread_is_the_standard_error() {
        let thread = |ops| ThreadFigures {
            ops,
            first_futex: 0x1000,
            last_futex: 0x1ffc,
        };
        let figures = PerThreadFigures {
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
