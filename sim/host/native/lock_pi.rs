//! perf bench futex lock-pi on this machine with real syscalls: each
//! thread, pinned to CPU i mod nCPU, loops FUTEX_LOCK_PI, usleep(1),
//! FUTEX_UNLOCK_PI on one futex they all share (or, with -M, one of its
//! own), counting the pairs. It times as perf does: the clock starts before
//! the threads are created, and a thread's rate is its pairs over the whole
//! seconds elapsed.

use super::super::sys::{futex_lock_pi, futex_unlock_pi, online_cpus, pin_to};
use super::{CallOff, Gate, NativeError, PerThreadFigures, ThreadFigures};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct LockPiBench {
    pub threads: u32,
    /// -M: a futex per thread instead of one for all.
    pub multi: bool,
    pub shared: bool,
    pub duration: Duration,
}

/// Each thread's stack: its loop needs little.
const STACK: usize = 64 << 10;

/// perf's usleep(1) while holding the lock.
const HOLD: Duration = Duration::from_micros(1);

impl LockPiBench {
    /// Runs the bench; threads started before one fails to start are
    /// called off and joined, and the error says which.
    pub fn run(&self) -> Result<PerThreadFigures, NativeError> {
        if self.threads == 0 {
            return Err(NativeError::NoWork);
        }
        let threads = self.threads as usize;
        let one_for_all = AtomicU32::new(0);
        let own: Vec<AtomicU32> = if self.multi {
            (0..threads).map(|_| AtomicU32::new(0)).collect()
        } else {
            Vec::new()
        };
        let futex_of = |i: usize| own.get(i).unwrap_or(&one_for_all);
        let cpus = online_cpus();
        let private = !self.shared;
        let stop = AtomicBool::new(false);
        let gate = Gate::new();
        let began = Instant::now();
        let (figures, failed, runtime) = std::thread::scope(|s| {
            let mut workers = Vec::with_capacity(threads);
            let mut failed = None;
            for i in 0..threads {
                let (stop, gate, futex) = (&stop, &gate, futex_of(i));
                let worker = move || {
                    let leaving = CallOff(gate);
                    pin_to(i % cpus);
                    let go = gate.arrive();
                    std::mem::forget(leaving);
                    if !go {
                        return None;
                    }
                    let mut pairs: u64 = 0;
                    loop {
                        // As perf: a failed lock is tried again until the stop.
                        if futex_lock_pi(futex, private).is_err() {
                            if stop.load(Ordering::Relaxed) {
                                break;
                            }
                            continue;
                        }
                        std::thread::sleep(HOLD);
                        let _ = futex_unlock_pi(futex, private);
                        pairs += 1;
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                    let address = futex.as_ptr() as usize;
                    Some(ThreadFigures {
                        ops: pairs,
                        first_futex: address,
                        last_futex: address,
                    })
                };
                match std::thread::Builder::new()
                    .name(format!("futexsim-lock-pi-{i}"))
                    .stack_size(STACK)
                    .spawn_scoped(s, worker)
                {
                    Ok(handle) => workers.push(handle),
                    Err(error) => {
                        failed = Some(NativeError::Spawn {
                            thread: i,
                            threads,
                            error,
                        });
                        gate.open(false);
                        break;
                    }
                }
            }
            let (figures, runtime) = gate.run_for(workers, threads, self.duration, &stop, began);
            (figures, failed, runtime)
        });
        if let Some(why) = failed {
            return Err(why);
        }
        let threads: Option<Vec<ThreadFigures>> = figures.into_iter().collect();
        threads
            .map(|threads| PerThreadFigures { threads, runtime })
            .ok_or(NativeError::NoFigures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_threads_pair_pi_locks_on_one_futex_or_one_each() {
        for multi in [false, true] {
            let figures = LockPiBench {
                threads: 2,
                multi,
                shared: false,
                duration: Duration::from_millis(50),
            }
            .run()
            .unwrap();
            assert!(figures.threads.iter().all(|t| t.ops > 0), "{figures:?}");
            let (a, b) = (&figures.threads[0], &figures.threads[1]);
            assert_eq!(a.first_futex, a.last_futex);
            assert_eq!(a.first_futex != b.first_futex, multi);
        }
    }
}
