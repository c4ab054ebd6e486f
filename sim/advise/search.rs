//! The search itself, apart from any simulation: it asks an [`Evaluator`]
//! for the paired ratio (candidate over baseline) of a candidate at a
//! number of repetitions, and decides which candidate meets the target at
//! the least memory. A test drives it with a made-up evaluator whose answer
//! is known; `futexsim advise` drives it with campaigns (evaluate.rs).
//!
//! Two strategies, by the family's order:
//!
//! - monotone: the candidates are in the order of their memory, and the
//!   figure is assumed not to fall as memory grows. Both ends are measured
//!   first (the top end is the reference "best" under that assumption, and
//!   the ends check it), then bisection finds the first candidate that meets
//!   the target. Every measured candidate is checked against the assumption
//!   afterwards: one clearly above a larger one is reported.
//! - unordered: successive rounds over the candidates still in the race,
//!   each round at twice the repetitions of the one before (successive
//!   halving's budget schedule); a candidate leaves the race once it
//!   clearly fails the target, or once a candidate with less memory clearly
//!   meets it.
//!
//! Repetitions grow only where a candidate's seed interval spans the
//! target's threshold, up to the question's limit; a candidate still
//! spanning it there is "cannot tell", and the search treats it as not
//! meeting the target (it recommends nothing it cannot show meets it).

use crate::report::interval::SeedInterval;
use std::collections::BTreeMap;

/// The bytes a candidate's tables take, as its runs laid them out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Memory {
    /// Every instance of the global table together.
    pub global_bytes: u64,
    /// The largest private hash of one process, its header included; 0
    /// where the design has none.
    pub private_bytes_per_process: u64,
    /// Every table of the run: the global instances and each private hash.
    pub total_bytes: u64,
}

/// What one candidate's runs gave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// The paired ratio candidate / baseline (the mean of per-seed ratios)
    /// with its seed interval.
    pub ratio: SeedInterval,
    pub memory: Memory,
}

/// Something that can run a candidate: the campaigns of a question, or a
/// made-up figure in a test.
pub trait Evaluator {
    type Error;
    /// `candidate` (an index into the family's values) measured at
    /// `repetitions` seeds, each run against the baseline at the same seed.
    /// Asked for several candidates at once, so that their runs can go in
    /// parallel.
    fn measure(&mut self, asks: &[(usize, u32)]) -> Result<Vec<Measured>, Self::Error>;
}

/// How the family's candidates are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Memory grows with the index; the figure assumed not to fall.
    Monotone,
    /// No order assumed.
    Unordered,
}

/// What the answer must satisfy, every part at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Target {
    /// Within this share (0.05 for 5 %) of the best candidate's ratio.
    pub within_best: Option<f64>,
    /// At most this share slower than the baseline.
    pub slower_than_baseline: Option<f64>,
    /// At most this many bytes of private hash per process.
    pub max_bytes_per_process: Option<u64>,
}

impl Target {
    /// The least ratio to the baseline that meets the target, given the
    /// best ratio measured.
    pub fn threshold(&self, best: f64) -> f64 {
        let of_best = self
            .within_best
            .map_or(f64::NEG_INFINITY, |x| best * (1.0 - x));
        let of_baseline = self
            .slower_than_baseline
            .map_or(f64::NEG_INFINITY, |x| 1.0 - x);
        of_best.max(of_baseline)
    }

    fn fits(&self, memory: &Memory) -> bool {
        self.max_bytes_per_process
            .is_none_or(|most| memory.private_bytes_per_process <= most)
    }
}

/// How a candidate stands against the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    /// Its whole seed interval is at or above the threshold, and it fits the memory bound.
    Meets,
    /// Its whole seed interval is below the threshold, or it takes too much memory.
    Fails,
    /// Its seed interval spans the threshold.
    CannotTell,
}

/// The repetitions the search may spend on one candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Repetitions of a first measurement (at least 2: one has no interval).
    pub first: u32,
    /// The most repetitions any candidate gets.
    pub most: u32,
}

/// What the search found at one point.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Every candidate measured, at the most repetitions it got.
    pub measured: BTreeMap<usize, Measured>,
    /// The least ratio that meets the target, from the best measured.
    pub threshold: f64,
    /// The candidate measured best (highest mean ratio).
    pub best: usize,
    /// The candidate that meets the target at the least memory; None when
    /// none is shown to.
    pub chosen: Option<usize>,
    /// Candidates with less memory than the chosen one (or than any, when
    /// none is chosen) whose interval still spans the threshold: where the
    /// model cannot tell.
    pub cannot_tell: Vec<usize>,
    /// For a monotone family: measured pairs (smaller, larger) where the
    /// smaller candidate's ratio interval lies wholly above the larger's,
    /// against the assumption.
    pub against_order: Vec<(usize, usize)>,
    /// For a monotone family: measured pairs (smaller, larger) where the
    /// smaller candidate's tables take more memory than the larger's, which
    /// the family's order says cannot happen.
    pub memory_against_order: Vec<(usize, usize)>,
}

impl Outcome {
    pub fn standing(&self, candidate: usize, target: &Target) -> Option<Standing> {
        self.measured
            .get(&candidate)
            .map(|m| standing(m, self.threshold, target))
    }
}

fn standing(m: &Measured, threshold: f64, target: &Target) -> Standing {
    if !target.fits(&m.memory) {
        return Standing::Fails;
    }
    // One repetition has no interval: its mean alone decides nothing.
    let (Some(low), Some(high)) = (m.ratio.low, m.ratio.high) else {
        return Standing::CannotTell;
    };
    if low >= threshold {
        Standing::Meets
    } else if high < threshold {
        Standing::Fails
    } else {
        Standing::CannotTell
    }
}

/// Searches `count` candidates for the one that meets `target` at the least memory.
pub fn search<E: Evaluator>(
    evaluator: &mut E,
    count: usize,
    order: Order,
    target: &Target,
    budget: Budget,
) -> Result<Outcome, E::Error> {
    let mut state = State {
        evaluator,
        target: *target,
        budget,
        measured: BTreeMap::new(),
    };
    match order {
        Order::Monotone => state.bisect(count)?,
        Order::Unordered => state.race(count)?,
    }
    Ok(state.outcome(order))
}

struct State<'e, E: Evaluator> {
    evaluator: &'e mut E,
    target: Target,
    budget: Budget,
    measured: BTreeMap<usize, Measured>,
}

impl<E: Evaluator> State<'_, E> {
    fn repetitions(&self, candidate: usize) -> u32 {
        self.measured
            .get(&candidate)
            .map_or(0, |m| m.ratio.repetitions as u32)
    }

    /// Measures each of `candidates` at `repetitions` at least.
    fn measure(&mut self, candidates: &[usize], repetitions: u32) -> Result<(), E::Error> {
        let asks: Vec<(usize, u32)> = candidates
            .iter()
            .filter(|&&c| self.repetitions(c) < repetitions)
            .map(|&c| (c, repetitions))
            .collect();
        if asks.is_empty() {
            return Ok(());
        }
        let results = self.evaluator.measure(&asks)?;
        for ((candidate, _), m) in asks.into_iter().zip(results) {
            self.measured.insert(candidate, m);
        }
        Ok(())
    }

    fn best(&self) -> Option<usize> {
        self.measured
            .iter()
            .max_by(|a, b| a.1.ratio.mean.total_cmp(&b.1.ratio.mean))
            .map(|(&c, _)| c)
    }

    fn threshold(&self) -> f64 {
        let best = self.best().map_or(1.0, |b| self.measured[&b].ratio.mean);
        self.target.threshold(best)
    }

    fn standing(&self, candidate: usize) -> Standing {
        standing(&self.measured[&candidate], self.threshold(), &self.target)
    }

    /// Measures `candidate`, adding repetitions (doubling, up to the
    /// budget) while its interval spans the threshold, and the best
    /// candidate's with it when the threshold is set by the best.
    fn settle(&mut self, candidate: usize) -> Result<Standing, E::Error> {
        self.measure(&[candidate], self.budget.first)?;
        loop {
            let standing = self.standing(candidate);
            let now = self.repetitions(candidate);
            if standing != Standing::CannotTell || now >= self.budget.most {
                return Ok(standing);
            }
            let more = (now * 2).min(self.budget.most);
            let mut both = vec![candidate];
            if let (Some(best), Some(_)) = (self.best(), self.target.within_best) {
                if best != candidate {
                    both.push(best);
                }
            }
            self.measure(&both, more)?;
        }
    }

    /// Bisection over candidates in the order of their memory: the first
    /// that meets the target, assuming all after it do too.
    fn bisect(&mut self, count: usize) -> Result<(), E::Error> {
        if count == 0 {
            return Ok(());
        }
        let top = count - 1;
        // The ends first: the top is the best the assumption allows, the
        // bottom checks whether any search is needed.
        self.measure(&[0, top], self.budget.first)?;
        if self.settle(top)? != Standing::Meets {
            // Nothing is shown to meet the target at the largest; smaller
            // ones, if the assumption holds, do no better. Settle the
            // bottom too so that the order can be checked.
            self.settle(0)?;
            return Ok(());
        }
        if self.settle(0)? == Standing::Meets {
            return Ok(());
        }
        // Invariant: `low` does not meet the target, `high` does.
        let (mut low, mut high) = (0, top);
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            match self.settle(mid)? {
                Standing::Meets => high = mid,
                // Cannot tell counts as not shown to meet it.
                Standing::Fails | Standing::CannotTell => low = mid,
            }
        }
        Ok(())
    }

    /// Rounds over the candidates still in the race, the repetitions
    /// doubling each round.
    fn race(&mut self, count: usize) -> Result<(), E::Error> {
        let mut alive: Vec<usize> = (0..count).collect();
        let mut repetitions = self.budget.first;
        loop {
            self.measure(&alive, repetitions)?;
            let threshold = self.threshold();
            let least_meeting = alive
                .iter()
                .copied()
                .filter(|&c| {
                    standing(&self.measured[&c], threshold, &self.target) == Standing::Meets
                })
                .min_by_key(|c| (self.measured[c].memory.total_bytes, *c));
            let best = self.best();
            alive.retain(|&c| {
                let m = &self.measured[&c];
                let standing = standing(m, threshold, &self.target);
                let beaten = least_meeting.is_some_and(|l| {
                    l != c && (self.measured[&l].memory.total_bytes, l) < (m.memory.total_bytes, c)
                });
                // The best stays while the threshold is set by it.
                let sets_threshold = Some(c) == best && self.target.within_best.is_some();
                sets_threshold || (standing != Standing::Fails && !beaten)
            });
            let open = alive.iter().any(|&c| {
                standing(&self.measured[&c], threshold, &self.target) == Standing::CannotTell
            });
            if !open || repetitions >= self.budget.most {
                return Ok(());
            }
            repetitions = (repetitions * 2).min(self.budget.most);
        }
    }

    fn outcome(self, order: Order) -> Outcome {
        let threshold = self.threshold();
        let best = self.best().unwrap_or(0);
        let stand = |c: &usize| standing(&self.measured[c], threshold, &self.target);
        // Least memory first; the index breaks ties (a monotone family's order).
        let mut by_memory: Vec<usize> = self.measured.keys().copied().collect();
        by_memory.sort_by_key(|c| (self.measured[c].memory.total_bytes, *c));
        let chosen = by_memory
            .iter()
            .copied()
            .find(|c| stand(c) == Standing::Meets);
        let chosen_key = chosen.map(|c| (self.measured[&c].memory.total_bytes, c));
        let cannot_tell = by_memory
            .iter()
            .copied()
            .filter(|c| stand(c) == Standing::CannotTell)
            .filter(|c| chosen_key.is_none_or(|k| (self.measured[c].memory.total_bytes, *c) < k))
            .collect();
        let (mut against_order, mut memory_against_order) = (Vec::new(), Vec::new());
        if order == Order::Monotone {
            for (&small, s) in &self.measured {
                for (&large, l) in self.measured.range(small + 1..) {
                    if let (Some(s_low), Some(l_high)) = (s.ratio.low, l.ratio.high) {
                        if s_low > l_high {
                            against_order.push((small, large));
                        }
                    }
                    if s.memory.total_bytes > l.memory.total_bytes {
                        memory_against_order.push((small, large));
                    }
                }
            }
        }
        Outcome {
            measured: self.measured,
            threshold,
            best,
            chosen,
            cannot_tell,
            against_order,
            memory_against_order,
        }
    }
}
