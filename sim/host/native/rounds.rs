//! perf bench futex wake, wake-parallel and requeue on this machine with
//! real syscalls. Each run (perf repeats 10) starts the threads, pinned to
//! CPU i mod nCPU, which block on one futex; once all have started the
//! main thread sleeps 100 ms, as perf's usleep(100000), and then does and
//! times what the benchmark measures; the woken threads exit and are
//! joined, and the next run starts new ones. Times are whole microseconds,
//! as perf takes them from gettimeofday.
//!
//! Where perf would wait forever (a thread that had not reached its wait
//! when woken, a wake that found fewer waiters than it asked for), the
//! loops here also end once every thread has exited, and the threads left
//! blocked at the end of a run are released: no run hangs.

use super::super::sys::{
    futex_cmp_requeue, futex_cmp_requeue_pi, futex_unlock_pi, futex_wait, futex_wait_requeue_pi,
    futex_wake, online_cpus, pin_to,
};
use super::NativeError;
use std::sync::atomic::{AtomicU32, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// perf's runs of each benchmark (bench_repeat).
pub const PERF_RUNS: u32 = 10;

/// perf's sleep between the threads' start and the timed part.
const SETTLE: Duration = Duration::from_millis(100);

/// Each thread's stack: it blocks in one syscall.
const STACK: usize = 64 << 10;

/// perf's two futexes, static words side by side: the threads block on
/// `futex1`; requeue moves them to `futex2`.
#[derive(Debug, Default)]
#[repr(C)]
struct PerfWords {
    futex2: AtomicU32,
    futex1: AtomicU32,
}

/// The benchmark's threads and futexes.
#[derive(Debug)]
pub struct RoundBench {
    pub threads: u32,
    pub shared: bool,
    pub runs: u32,
    words: PerfWords,
}

/// One run of perf bench futex wake.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WakeRun {
    pub woken: u64,
    pub us: u64,
}

/// One run of perf bench futex wake-parallel: each waker's share woken and
/// its time.
#[derive(Clone, Debug, PartialEq)]
pub struct ParallelRun {
    pub wakers: Vec<WakeRun>,
}

/// One run of perf bench futex requeue: the waiters moved (and, with -p,
/// the calls, each of which woke the top waiter) and the time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RequeueRun {
    pub requeued: u64,
    pub pi_wakeups: Option<u64>,
    pub us: u64,
}

/// How the threads of a run block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    /// FUTEX_WAIT on futex1 until woken (wake, wake-parallel, requeue).
    Wait,
    /// FUTEX_WAIT_REQUEUE_PI from futex1 to futex2, then unlocking futex2
    /// (requeue -p).
    WaitRequeuePi,
}

/// What the threads of a run have done, as the main thread sees it.
struct RunState {
    started: AtomicUsize,
    exited: AtomicUsize,
    threads: usize,
}

impl RunState {
    fn all_exited(&self) -> bool {
        self.exited.load(Ordering::Acquire) >= self.threads
    }
}

/// The wakers' start: waiting, released, or called off.
const WAITING: u8 = 0;
const GO: u8 = 1;
const CALLED_OFF: u8 = 2;

/// Spins until the wakers are released (true) or called off (false).
fn wait_for_go(start: &AtomicU8) -> bool {
    loop {
        match start.load(Ordering::Acquire) {
            WAITING => std::thread::yield_now(),
            state => return state == GO,
        }
    }
}

fn whole_us(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

impl RoundBench {
    pub fn new(threads: u32, shared: bool, runs: u32) -> RoundBench {
        RoundBench {
            threads,
            shared,
            runs,
            words: PerfWords::default(),
        }
    }

    /// The address of the futex the threads block on, as perf prints it.
    pub fn futex1(&self) -> u64 {
        self.words.futex1.as_ptr() as u64
    }

    /// The address requeue moves the threads to.
    pub fn futex2(&self) -> u64 {
        self.words.futex2.as_ptr() as u64
    }

    fn private(&self) -> bool {
        !self.shared
    }

    /// perf bench futex wake: the main thread calls FUTEX_WAKE for `nwakes`
    /// at a time until all are woken; `each` sees every run as it ends.
    pub fn wake(
        &self,
        nwakes: u32,
        mut each: impl FnMut(usize, &WakeRun),
    ) -> Result<Vec<WakeRun>, NativeError> {
        let futex = &self.words.futex1;
        let threads = u64::from(self.threads);
        self.repeat(&mut each, Block::Wait, |state| {
            let start = Instant::now();
            let mut woken = 0;
            while woken < threads && !state.all_exited() {
                woken += futex_wake(futex, nwakes, self.private()).map_err(NativeError::Futex)?;
            }
            Ok(WakeRun {
                woken,
                us: whole_us(start),
            })
        })
    }

    /// perf bench futex wake-parallel: `wakers` threads, released at once,
    /// each wake an equal share of the blocked threads and time it.
    pub fn wake_parallel(
        &self,
        wakers: u32,
        mut each: impl FnMut(usize, &ParallelRun),
    ) -> Result<Vec<ParallelRun>, NativeError> {
        let futex = &self.words.futex1;
        let share = u64::from(self.threads / wakers.max(1));
        let private = self.private();
        self.repeat(&mut each, Block::Wait, |state| {
            // perf's barrier: the wakers go at once, after the last has
            // started; here none goes where one could not start.
            let start = AtomicU8::new(WAITING);
            let (each_waker, failed) = std::thread::scope(|s| {
                let mut handles = Vec::with_capacity(wakers as usize);
                let mut failed = None;
                for i in 0..wakers {
                    let start = &start;
                    let spawned = std::thread::Builder::new()
                        .name(format!("futexsim-waker-{i}"))
                        .stack_size(STACK)
                        .spawn_scoped(s, move || {
                            if !wait_for_go(start) {
                                return Err(NativeError::NoFigures);
                            }
                            let began = Instant::now();
                            let mut woken = 0;
                            while woken < share && !state.all_exited() {
                                woken += futex_wake(futex, share as u32, private)
                                    .map_err(NativeError::Futex)?;
                            }
                            Ok(WakeRun {
                                woken,
                                us: whole_us(began),
                            })
                        });
                    match spawned {
                        Ok(handle) => handles.push(handle),
                        Err(error) => {
                            failed = Some(NativeError::Spawn {
                                thread: i as usize,
                                threads: wakers as usize,
                                error,
                            });
                            break;
                        }
                    }
                }
                start.store(
                    if failed.is_none() { GO } else { CALLED_OFF },
                    Ordering::Release,
                );
                let each: Vec<Result<WakeRun, NativeError>> = handles
                    .into_iter()
                    .map(|handle| handle.join().unwrap_or(Err(NativeError::NoFigures)))
                    .collect();
                (each, failed)
            });
            if let Some(why) = failed {
                return Err(why);
            }
            Ok(ParallelRun {
                wakers: each_waker.into_iter().collect::<Result<_, _>>()?,
            })
        })
    }

    /// perf bench futex requeue: the main thread moves the blocked threads
    /// from futex1 to futex2, `nrequeue` a call, waking none (FUTEX_CMP_
    /// REQUEUE) or, with `pi`, the top waiter each call (FUTEX_CMP_
    /// REQUEUE_PI, the threads in FUTEX_WAIT_REQUEUE_PI); then wakes them.
    pub fn requeue(
        &self,
        nrequeue: u32,
        pi: bool,
        mut each: impl FnMut(usize, &RequeueRun),
    ) -> Result<Vec<RequeueRun>, NativeError> {
        let (from, to) = (&self.words.futex1, &self.words.futex2);
        let threads = u64::from(self.threads);
        let private = self.private();
        let block = if pi {
            Block::WaitRequeuePi
        } else {
            Block::Wait
        };
        self.repeat(&mut each, block, |state| {
            let start = Instant::now();
            let (mut requeued, mut calls) = (0, 0);
            while requeued < threads && !state.all_exited() {
                let moved = if pi {
                    futex_cmp_requeue_pi(from, 0, to, nrequeue, private)
                } else {
                    futex_cmp_requeue(from, 0, to, 0, nrequeue, private)
                };
                requeued += moved.map_err(|error| NativeError::Requeue {
                    from: from.as_ptr() as u64,
                    to: to.as_ptr() as u64,
                    error,
                })?;
                calls += 1;
            }
            Ok(RequeueRun {
                requeued,
                pi_wakeups: pi.then_some(calls),
                us: whole_us(start),
            })
        })
    }

    /// `runs` runs of `timed`, each handed to `each` as it ends.
    fn repeat<T>(
        &self,
        each: &mut impl FnMut(usize, &T),
        block: Block,
        timed: impl Fn(&RunState) -> Result<T, NativeError>,
    ) -> Result<Vec<T>, NativeError> {
        let mut runs = Vec::with_capacity(self.runs as usize);
        for run in 0..self.runs as usize {
            let figures = self.run(block, &timed)?;
            each(run, &figures);
            runs.push(figures);
        }
        Ok(runs)
    }

    /// One run: the threads start and block, the main thread settles and
    /// runs `timed`, then releases whatever is still blocked and joins.
    fn run<T>(
        &self,
        block: Block,
        timed: &impl Fn(&RunState) -> Result<T, NativeError>,
    ) -> Result<T, NativeError> {
        if self.threads == 0 {
            return Err(NativeError::NoWork);
        }
        let threads = self.threads as usize;
        let cpus = online_cpus();
        let state = RunState {
            started: AtomicUsize::new(0),
            exited: AtomicUsize::new(0),
            threads,
        };
        std::thread::scope(|s| {
            let mut spawned = 0;
            let mut failed = None;
            for i in 0..threads {
                let state = &state;
                let worker = move || {
                    pin_to(i % cpus);
                    state.started.fetch_add(1, Ordering::AcqRel);
                    self.block(block);
                    state.exited.fetch_add(1, Ordering::AcqRel);
                };
                match std::thread::Builder::new()
                    .name(format!("futexsim-blocked-{i}"))
                    .stack_size(STACK)
                    .spawn_scoped(s, worker)
                {
                    Ok(_) => spawned += 1,
                    Err(error) => {
                        failed = Some(NativeError::Spawn {
                            thread: i,
                            threads,
                            error,
                        });
                        break;
                    }
                }
            }
            let result = match failed {
                Some(why) => Err(why),
                None => {
                    while state.started.load(Ordering::Acquire) < threads {
                        std::thread::sleep(Duration::from_micros(100));
                    }
                    std::thread::sleep(SETTLE);
                    timed(&state)
                }
            };
            self.release(block, &state, spawned);
            result
        })
    }

    /// One thread's wait, as perf's worker loops it: again after EINTR or
    /// EAGAIN, out once woken (and, for PI, once it has unlocked the futex
    /// it was given) or on any other error.
    fn block(&self, block: Block) {
        let (from, to) = (&self.words.futex1, &self.words.futex2);
        loop {
            let waited = match block {
                Block::Wait => futex_wait(from, 0, self.private()),
                Block::WaitRequeuePi => futex_wait_requeue_pi(from, 0, to, self.private()),
            };
            match waited {
                Ok(_) => {
                    if block == Block::WaitRequeuePi {
                        // Its holder unlocks it: the next waiter takes it.
                        let _ = futex_unlock_pi(to, self.private());
                    }
                    return;
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) => {}
                Err(_) => return,
            }
        }
    }

    /// Wakes (or, for PI, requeues) until the `spawned` threads have all
    /// exited: what perf's wake of futex2 after a requeue does, and what
    /// frees threads a failed run left blocked.
    fn release(&self, block: Block, state: &RunState, spawned: usize) {
        let (from, to) = (&self.words.futex1, &self.words.futex2);
        while state.exited.load(Ordering::Acquire) < spawned {
            match block {
                Block::Wait => {
                    let _ = futex_wake(from, i32::MAX as u32, self.private());
                    let _ = futex_wake(to, i32::MAX as u32, self.private());
                }
                Block::WaitRequeuePi => {
                    let _ = futex_cmp_requeue_pi(from, 0, to, i32::MAX as u32, self.private());
                }
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

/// The mean and perf's `(+- x%)` of a figure over runs.
pub fn over_runs<T>(runs: &[T], figure: impl Fn(&T) -> f64) -> (f64, f64) {
    crate::perf_stat::mean_and_spread(runs.iter().map(figure))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_of_each_wakes_or_requeues_every_thread() {
        let bench = RoundBench::new(2, false, 1);
        let mut seen = 0;
        let wake = bench.wake(1, |run, _| seen += run + 1).unwrap();
        assert_eq!(seen, 1);
        assert_eq!(wake[0].woken, 2);
        let parallel = bench.wake_parallel(2, |_, _| {}).unwrap();
        assert_eq!(parallel[0].wakers.len(), 2);
        assert!(parallel[0].wakers.iter().all(|w| w.woken == 1));
        let requeue = bench.requeue(1, false, |_, _| {}).unwrap();
        assert_eq!((requeue[0].requeued, requeue[0].pi_wakeups), (2, None));
        assert_eq!(bench.futex1() - bench.futex2(), 4, "perf's adjacent words");
    }

    #[test]
    fn a_pi_requeue_counts_the_calls_that_each_woke_the_top_waiter() {
        let bench = RoundBench::new(2, false, 1);
        let requeue = bench.requeue(2, true, |_, _| {}).unwrap();
        assert_eq!(requeue[0].requeued, 2);
        let calls = requeue[0].pi_wakeups.unwrap();
        assert!((1..=2).contains(&calls), "{calls}");
    }
}
