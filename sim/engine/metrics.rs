//! What a run measures, without allocating per event: per-task op counts, an
//! op-latency histogram, lock wait and hold times; and the run's recorder,
//! which owns them with the window that decides what counts.

use crate::machine::Ps;
use crate::task::{BatchMeans, RunWindow, Timeline};
use serde::{Deserialize, Serialize};

/// Log-linear histogram of nanoseconds: exact below 64 ns, then 32 buckets
/// per power of two (about 3% resolution), like HdrHistogram.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    max: u64,
    total: u64,
    sum: u128,
}

const SUB: u32 = 5;
const LINEAR: u64 = 64;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; 64 + 58 * (1 << SUB)],
            max: 0,
            total: 0,
            sum: 0,
        }
    }
}

impl Histogram {
    fn index(v: u64) -> usize {
        if v < LINEAR {
            return v as usize;
        }
        let exp = 63 - v.leading_zeros(); // >= 6
        let mantissa = (v >> (exp - SUB)) & ((1 << SUB) - 1);
        (LINEAR + u64::from(exp - 6) * (1 << SUB) + mantissa) as usize
    }

    /// The smallest value that falls in bucket `i`.
    fn lower(i: usize) -> u64 {
        let i = i as u64;
        if i < LINEAR {
            return i;
        }
        let exp = (i - LINEAR) / (1 << SUB) + 6;
        let mantissa = (i - LINEAR) % (1 << SUB);
        (1 << exp) | (mantissa << (exp - u64::from(SUB)))
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[Self::index(ns)] += 1;
        self.max = self.max.max(ns);
        self.total += 1;
        self.sum += u128::from(ns);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value below which a fraction `q` of samples fall (bucket lower bound).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::lower(i).min(self.max);
            }
        }
        self.max
    }
}

/// Lock statistics over all spinlocks of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LockStats {
    pub acquisitions: u64,
    /// Acquisitions that had to wait for another holder.
    pub contended: u64,
    pub wait_ps: u64,
    pub hold_ps: u64,
}

impl LockStats {
    pub fn acquired(&mut self, waited: Ps, contended: bool) {
        self.acquisitions += 1;
        self.wait_ps += waited;
        self.contended += u64::from(contended);
    }
}

#[derive(Clone, Debug, Default)]
pub struct Metrics {
    pub ops_per_task: Vec<u64>,
    pub latency: Histogram,
    pub locks: LockStats,
    /// The workload's own locks, by their id among the workload's locks.
    pub workload_locks: Vec<LockStats>,
    /// Acquisitions after a spin whose deciding read of the lock word was
    /// served before the lock's release: none, when spinners act on what
    /// they read.
    pub stale_acquisitions: u64,
}

impl Metrics {
    pub fn new(tasks: usize) -> Metrics {
        Metrics {
            ops_per_task: vec![0; tasks],
            ..Metrics::default()
        }
    }

    pub fn workload_lock(&mut self, lock: u32) -> &mut LockStats {
        let i = lock as usize;
        if self.workload_locks.len() <= i {
            self.workload_locks.resize(i + 1, LockStats::default());
        }
        &mut self.workload_locks[i]
    }

    #[inline]
    pub fn op_done(&mut self, task: u32, latency: Ps) {
        self.ops_per_task[task as usize] += 1;
        self.latency.record(latency / 1000);
    }
}

/// What the run records, and when it counts: the window, the metrics
/// counted inside it, and the timeline of every clock read and exit (kept
/// whatever the window: a workload that times itself needs them from time
/// zero). Its callers ask `counts` before they compute what they record,
/// so an uncounted event computes nothing.
pub(super) struct Recorder {
    window: RunWindow,
    metrics: Metrics,
    timeline: Timeline,
    /// Where the window may end early: the ops counted in each unit of it so far.
    batches: Option<Batches>,
}

/// The counts a stopping rule is checked on (task::batch_means).
struct Batches {
    rule: BatchMeans,
    /// The length of one unit.
    unit: Ps,
    /// Ops counted in each unit ended so far.
    per_unit: Vec<u64>,
    /// Ops counted when the last unit ended.
    counted: u64,
}

impl Recorder {
    pub(super) fn new(window: RunWindow, tasks: usize) -> Recorder {
        let batches = window.stop.and_then(|rule| {
            BatchMeans::unit(window.duration).map(|unit| Batches {
                rule,
                unit,
                per_unit: Vec::new(),
                counted: 0,
            })
        });
        Recorder {
            window,
            metrics: Metrics::new(tasks),
            timeline: Timeline {
                clock_reads: vec![Vec::new(); tasks],
                exits: vec![None; tasks],
            },
            batches,
        }
    }

    /// When the first unit of a window that may end early ends; None for
    /// a window of a fixed length.
    pub(super) fn first_unit_end(&self) -> Option<Ps> {
        self.batches.as_ref().map(|b| self.window.warmup + b.unit)
    }

    /// A unit of the window ended at `now`: its ops are kept and, where a
    /// check is due, the rule checked. Gives when the next unit ends, or
    /// None when the window ends here (the rule is met: the window is cut
    /// to `now`) or with the next unit.
    pub(super) fn unit_ended(&mut self, now: Ps) -> Option<Ps> {
        let batches = self.batches.as_mut()?;
        let counted: u64 = self.metrics.ops_per_task.iter().sum();
        batches.per_unit.push(counted - batches.counted);
        batches.counted = counted;
        if batches.rule.stops_after(&batches.per_unit) {
            self.window.duration = now - self.window.warmup;
            return None;
        }
        let next = now + batches.unit;
        (next < self.window.end()).then_some(next)
    }

    /// Whether something that happens at `at` is counted.
    #[inline]
    pub(super) fn counts(&self, at: Ps) -> bool {
        self.window.counts(at)
    }

    /// When the warm-up ends.
    pub(super) fn warmup_end(&self) -> Ps {
        self.window.warmup
    }

    /// When counting stops.
    pub(super) fn end(&self) -> Ps {
        self.window.end()
    }

    /// The warm-up is over: what was counted so far is dropped.
    pub(super) fn start_counting(&mut self) {
        self.metrics = Metrics::new(self.metrics.ops_per_task.len());
    }

    /// A counted op (or iteration) of `task` took `latency`.
    #[inline]
    pub(super) fn op_done(&mut self, task: u32, latency: Ps) {
        self.metrics.op_done(task, latency);
    }

    /// A counted acquisition of a kernel lock, or of the workload's lock
    /// `workload_lock`.
    #[inline]
    pub(super) fn acquired(&mut self, workload_lock: Option<u32>, waited: Ps, contended: bool) {
        self.metrics.locks.acquired(waited, contended);
        if let Some(l) = workload_lock {
            self.metrics.workload_lock(l).acquired(waited, contended);
        }
    }

    /// A counted hold of a kernel lock, or of the workload's lock
    /// `workload_lock`, that ended with its release's store.
    #[inline]
    pub(super) fn held(&mut self, workload_lock: Option<u32>, held: Ps) {
        self.metrics.locks.hold_ps += held;
        if let Some(l) = workload_lock {
            self.metrics.workload_lock(l).hold_ps += held;
        }
    }

    /// An acquisition decided by a read served before the lock's release.
    pub(super) fn stale_acquisition(&mut self) {
        self.metrics.stale_acquisitions += 1;
    }

    pub(super) fn clock_read(&mut self, task: u32, at: Ps) {
        self.timeline.clock_reads[task as usize].push(at);
    }

    pub(super) fn exited(&mut self, task: u32, at: Ps) {
        self.timeline.exits[task as usize] = Some(at);
    }

    /// When the last task exited, if every task did.
    pub(super) fn all_exited(&self) -> Option<Ps> {
        self.timeline.all_exited()
    }

    /// What the run's record takes: the metrics, the window, the timeline.
    pub(super) fn finish(self) -> (Metrics, RunWindow, Timeline) {
        (self.metrics, self.window, self.timeline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_bucket_resolution() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        for (q, want) in [(0.5, 5000.0), (0.9, 9000.0), (0.99, 9900.0)] {
            let got = h.quantile(q) as f64;
            assert!((got - want).abs() / want < 0.04, "q{q}: {got} vs {want}");
        }
        assert_eq!(h.max(), 10_000);
        assert_eq!(h.quantile(0.001), 10);
        assert!((h.mean() - 5000.5).abs() < 1e-9);
        for v in [0, 63, 64, 65, 1000, 1 << 40] {
            assert!(Histogram::lower(Histogram::index(v)) <= v);
        }
    }
}
