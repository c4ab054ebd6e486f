//! The rounds of perf bench futex wake, wake-parallel and requeue
//! (docs/kernel-facts.md §6.2): each round creates the threads, which block on a
//! futex; the main thread waits until all have blocked, sleeps
//! `usleep(100000)`, then does what the benchmark times; the woken threads
//! exit and are joined, and the next round creates new ones.
//!
//! The model keeps the threads: a woken thread sleeps until the next round
//! starts and blocks again. A round lasts twice the settle time: the settle
//! before the timed part, and as long again for the timed part, the joins
//! and the thread creation of the next round (none of which is modelled).

use super::{Readout, WorkloadError};
use crate::machine::{Machine, Ps};
use crate::perf_stat::mean_and_spread;
use crate::record::Metric;
use crate::task::{Done, FutexOp, KeyKind, Mem, Op, Program, TaskSpec};
use std::sync::{Arc, Mutex};

/// perf's sleep before each round's timed part: usleep(100000).
pub const PERF_SETTLE_US: u64 = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rounds {
    settle: Ps,
}

impl Rounds {
    pub fn new(settle_us: u64) -> Rounds {
        Rounds {
            settle: settle_us * 1_000_000,
        }
    }

    fn period(&self) -> Ps {
        2 * self.settle
    }

    /// When the round after the one running at `now` starts: its threads block.
    fn next_start(&self, now: Ps) -> Ps {
        (now / self.period() + 1) * self.period()
    }

    /// The first moment after `now` at which a round's timed part begins.
    fn next_timed(&self, now: Ps) -> Ps {
        let in_round = now % self.period();
        let round = now - in_round;
        if in_round < self.settle {
            round + self.settle
        } else {
            round + self.period() + self.settle
        }
    }

    /// The sleep from `now` to the next round's timed part: how a main
    /// thread waits for it.
    pub fn sleep_until_timed(&self, now: Ps) -> Op {
        Op::Sleep(self.next_timed(now) - now)
    }

    /// The sleep from `now` to the next round's start: how a thread done
    /// with its round waits to be created again.
    pub fn sleep_until_next(&self, now: Ps) -> Op {
        Op::Sleep(self.next_start(now) - now)
    }
}

/// The longest settle a run may ask for: 10 s, a hundred times perf's.
const MAX_SETTLE_US: u64 = 10_000_000;

/// A settle time the simulated clock can hold many rounds of.
pub fn validate_settle(bench: &str, settle_us: u64) -> Result<(), WorkloadError> {
    if settle_us == 0 || settle_us > MAX_SETTLE_US {
        return Err(format!(
            "{bench}: settle_us must be between 1 and {MAX_SETTLE_US} (perf sleeps {PERF_SETTLE_US})"
        ).into());
    }
    Ok(())
}

/// `usleep(100000)` and the other settle times, as a TOML field.
pub fn default_settle_us() -> u64 {
    PERF_SETTLE_US
}

/// A thread of a round that blocks on a futex until woken (its
/// `while (futex_wait(...) == EINTR)` loop), then exits; the model blocks it
/// again when the next round starts.
pub struct Blocked {
    futex: Mem,
    kind: KeyKind,
    rounds: Rounds,
    now: Ps,
    woken: bool,
}

impl Blocked {
    pub fn new(futex: Mem, kind: KeyKind, rounds: Rounds) -> Blocked {
        Blocked {
            futex,
            kind,
            rounds,
            now: 0,
            woken: false,
        }
    }
}

impl Program for Blocked {
    fn next_op(&mut self) -> Op {
        if self.woken {
            self.rounds.sleep_until_next(self.now)
        } else {
            Op::Futex(FutexOp::Wait {
                uaddr: self.futex,
                val: 0,
                kind: self.kind,
            })
        }
    }

    fn op_returned(&mut self, done: Done) {
        self.now = done.now;
        // A wait returns 0 when woken; after the sleep, block again.
        self.woken = !self.woken && done.ret == 0;
    }
}

/// The `-t` threads of a round, pinned to CPU i mod nCPU as perf pins
/// them, each blocking on `futex`: wake, wake-parallel and requeue start
/// theirs alike.
pub fn blocked_threads(
    threads: u32,
    futex: Mem,
    kind: KeyKind,
    rounds: Rounds,
    machine: &Machine,
) -> impl Iterator<Item = TaskSpec> {
    let cpus = machine.cpus();
    (0..threads).map(move |i| TaskSpec {
        cpu: i % cpus,
        program: Box::new(Blocked::new(futex, kind, rounds)),
    })
}

/// What a benchmark's threads time, one sample per round or call, kept for
/// its readout once the run is over. Only samples that ended in the counted
/// window are kept, as only they are reported.
pub struct Samples<T>(Arc<Mutex<Vec<T>>>);

impl<T> Default for Samples<T> {
    fn default() -> Self {
        Samples(Arc::new(Mutex::new(Vec::new())))
    }
}

impl<T> Clone for Samples<T> {
    fn clone(&self) -> Self {
        Samples(self.0.clone())
    }
}

impl<T: 'static> Samples<T> {
    /// Keeps `sample` if the run counted it.
    pub fn keep(&self, counted: bool, sample: T) {
        if counted {
            self.0
                .lock()
                .expect("one thread runs programs")
                .push(sample);
        }
    }

    /// The benchmark's figures, from the counted samples once the run is over.
    pub fn readout(self, figures: impl FnOnce(&[T]) -> Vec<Metric> + 'static) -> Readout {
        Box::new(move |_, _| figures(&self.0.lock().expect("the run is over")))
    }
}

/// The mean of one figure over the samples a run counted (0 without any).
pub fn mean<T>(samples: &[T], figure: impl Fn(&T) -> f64) -> f64 {
    samples.iter().map(figure).sum::<f64>() / samples.len().max(1) as f64
}

/// perf's `(+-x%)` of one figure over the samples a run counted: its
/// relative standard error (perf_stat).
pub fn spread<T>(samples: &[T], figure: impl Fn(&T) -> f64) -> f64 {
    mean_and_spread(samples.iter().map(figure)).1
}

/// Simulated picoseconds in milliseconds, as perf prints its times.
pub fn ms(ps: Ps) -> f64 {
    ps as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Ps = 1_000_000;

    #[test]
    fn timed_parts_start_one_settle_into_each_round() {
        let r = Rounds::new(10);
        assert_eq!(r.next_timed(0), 10 * US);
        assert_eq!(r.next_timed(10 * US - 1), 10 * US);
        assert_eq!(r.next_timed(10 * US), 30 * US);
        assert_eq!(r.next_timed(25 * US), 30 * US);
        assert_eq!(r.next_start(0), 20 * US);
        assert_eq!(r.next_start(31 * US), 40 * US);
    }
}
