//! How far the simulations in flight have come, for a progress bar that
//! moves inside a long run rather than only when a run finishes. Every
//! engine adds its progress, in thousandths of its simulated span, to one
//! process-wide counter; a finished run has added exactly [`PER_RUN`]. The
//! counter is only read for display: no result depends on it.

use crate::machine::Ps;
use std::sync::atomic::{AtomicU64, Ordering};

/// What one whole run adds to [`done`].
pub const PER_RUN: u64 = 1000;

/// Events between two updates: a few per millisecond of wall time, too few
/// to cost anything.
pub const EVERY_EVENTS: u64 = 1 << 14;

static DONE: AtomicU64 = AtomicU64::new(0);

/// The thousandths of runs done so far by every engine in this process.
pub fn done() -> u64 {
    DONE.load(Ordering::Relaxed)
}

/// One engine's share of the counter: what it has added so far.
#[derive(Debug, Default)]
pub struct RunProgress {
    added: u64,
}

impl RunProgress {
    /// The run has reached simulated time `now` of `end`.
    pub fn reached(&mut self, now: Ps, end: Ps) {
        let share = (u128::from(now) * u128::from(PER_RUN) / u128::from(end.max(1))) as u64;
        self.add_up_to(share.min(PER_RUN));
    }

    /// The run is over, whether or not it reached its end (its tasks may
    /// all have exited early).
    pub fn finish(mut self) {
        self.add_up_to(PER_RUN);
    }

    fn add_up_to(&mut self, share: u64) {
        if share > self.added {
            DONE.fetch_add(share - self.added, Ordering::Relaxed);
            self.added = share;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_adds_its_share_as_it_goes_and_exactly_one_run_in_all() {
        let before = done();
        let mut run = RunProgress::default();
        run.reached(250, 1000);
        run.reached(100, 1000); // never backwards
        assert_eq!(run.added, 250);
        run.reached(2000, 1000); // never past the end
        assert_eq!(run.added, PER_RUN);
        run.finish();
        // Other tests' engines may add to the counter at the same time.
        assert!(done() - before >= PER_RUN);
    }
}
