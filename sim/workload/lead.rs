//! The figure each benchmark exists for, which way it is better, and the
//! figures that follow it: what every report, summary table, CSV and
//! `diff` leads with and judges by. A workload declares its kind
//! (`Workload::kind`), which a record read back has from its label; the
//! kind declares its figures here.

use super::time_exit;
use super::{fea_solver, perf_lock_pi, perf_requeue, perf_wake, perf_wake_parallel, schbench};
use crate::record::{RunRecord, WorkloadKind};

/// Which way a figure is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    /// "higher" or "lower", as CSV files and `diff --json` write it.
    pub fn word(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }
}

/// A figure a benchmark is read by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeadFigure {
    /// The mean of the per-thread rates of ops: what perf bench futex hash
    /// prints as "Averaged", and what will-it-scale reports per task.
    ThreadOpsPerSec,
    /// perf bench futex wake: the time to wake every thread.
    WakeTime,
    /// perf bench futex wake-parallel: a waker's time to wake its share.
    WakerLatency,
    /// perf bench futex requeue: the time to requeue every thread.
    RequeueTime,
    /// perf bench futex lock-pi: lock/unlock pairs per second per thread.
    LockPiPairs,
    /// schbench: requests served per second.
    RequestsPerSec,
    /// schbench: the 99th percentile of its workers' wake-up latency.
    WakeupP99,
    /// The FEA-style solver: the time until the last process finished.
    SolveTime,
    /// time_exit: the time from the release until the last child was reaped.
    TimeUntilAllExited,
}

impl LeadFigure {
    /// As tables and `diff` name it.
    pub const fn name(self) -> &'static str {
        match self {
            LeadFigure::ThreadOpsPerSec => "ops/s/thread",
            LeadFigure::WakeTime => "wake time",
            LeadFigure::WakerLatency => "per-thread latency",
            LeadFigure::RequeueTime => "requeue time",
            LeadFigure::LockPiPairs => "lock-pi ops/s per thread",
            LeadFigure::RequestsPerSec => "requests/s",
            LeadFigure::WakeupP99 => "wake-up latency p99",
            LeadFigure::SolveTime => "solve time",
            LeadFigure::TimeUntilAllExited => "time until all exited",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            LeadFigure::ThreadOpsPerSec | LeadFigure::LockPiPairs => "ops/s",
            LeadFigure::WakeTime
            | LeadFigure::WakerLatency
            | LeadFigure::RequeueTime
            | LeadFigure::SolveTime => "ms",
            LeadFigure::RequestsPerSec => "requests/s",
            LeadFigure::WakeupP99 => "us",
            LeadFigure::TimeUntilAllExited => "s",
        }
    }

    /// For a time or latency, the nanoseconds in one of its unit (a chart
    /// writes times in units read from their size); None for a rate.
    pub fn nanoseconds_per_unit(self) -> Option<f64> {
        match self {
            LeadFigure::ThreadOpsPerSec | LeadFigure::LockPiPairs | LeadFigure::RequestsPerSec => {
                None
            }
            LeadFigure::WakeTime
            | LeadFigure::WakerLatency
            | LeadFigure::RequeueTime
            | LeadFigure::SolveTime => Some(1e6),
            LeadFigure::WakeupP99 => Some(1e3),
            LeadFigure::TimeUntilAllExited => Some(1e9),
        }
    }

    /// As CSV columns and `diff --json` name it.
    pub fn column(self) -> &'static str {
        match self {
            LeadFigure::ThreadOpsPerSec => "thread_ops_per_sec",
            LeadFigure::WakeTime => "wake_time_ms",
            LeadFigure::WakerLatency => "per_thread_latency_ms",
            LeadFigure::RequeueTime => "requeue_time_ms",
            LeadFigure::LockPiPairs => "lock_pi_ops_per_sec",
            LeadFigure::RequestsPerSec => "requests_per_sec",
            LeadFigure::WakeupP99 => "wakeup_p99_us",
            LeadFigure::SolveTime => "solve_time_ms",
            LeadFigure::TimeUntilAllExited => "all_exited_s",
        }
    }

    pub fn better(self) -> Better {
        match self {
            LeadFigure::ThreadOpsPerSec | LeadFigure::LockPiPairs | LeadFigure::RequestsPerSec => {
                Better::Higher
            }
            LeadFigure::WakeTime
            | LeadFigure::WakerLatency
            | LeadFigure::RequeueTime
            | LeadFigure::WakeupP99
            | LeadFigure::SolveTime
            | LeadFigure::TimeUntilAllExited => Better::Lower,
        }
    }

    /// "wake time (ms, lower is better)", as a table's header says it.
    pub fn heading(self) -> String {
        format!(
            "{} ({}, {} is better)",
            self.name(),
            self.unit(),
            self.better().word()
        )
    }

    /// The figure of one run; NaN where its record lacks it (a time the
    /// run never reached).
    pub fn read(self, r: &RunRecord) -> f64 {
        let extra = |name: &str| {
            r.extra
                .iter()
                .find(|m| m.name == name)
                .map_or(f64::NAN, |m| m.value)
        };
        match self {
            LeadFigure::ThreadOpsPerSec => r.mean_thread_ops_per_sec,
            LeadFigure::WakeTime => extra(perf_wake::WAKE_TIME),
            LeadFigure::WakerLatency => extra(perf_wake_parallel::WAKER_LATENCY),
            LeadFigure::RequeueTime => extra(perf_requeue::REQUEUE_TIME),
            LeadFigure::LockPiPairs => extra(perf_lock_pi::AVERAGED_PAIRS),
            LeadFigure::RequestsPerSec => extra(schbench::REQUESTS_PER_SEC),
            LeadFigure::WakeupP99 => extra(schbench::WAKEUP_P99),
            LeadFigure::SolveTime => extra(fea_solver::SOLVE_TIME),
            LeadFigure::TimeUntilAllExited => extra(time_exit::ALL_EXITED),
        }
    }

    /// The run's total throughput in this figure's terms, which the
    /// Universal Scalability Law describes; None for a time or latency, to
    /// which the law does not apply.
    pub fn throughput(self, r: &RunRecord) -> Option<f64> {
        match self {
            LeadFigure::ThreadOpsPerSec => Some(r.ops_per_sec),
            LeadFigure::LockPiPairs => Some(self.read(r) * f64::from(r.threads)),
            LeadFigure::RequestsPerSec => Some(self.read(r)),
            LeadFigure::WakeTime
            | LeadFigure::WakerLatency
            | LeadFigure::RequeueTime
            | LeadFigure::WakeupP99
            | LeadFigure::SolveTime
            | LeadFigure::TimeUntilAllExited => None,
        }
    }
}

impl WorkloadKind {
    /// The figures the benchmark is read by, the one it exists for first.
    pub fn lead_figures(self) -> &'static [LeadFigure] {
        match self {
            WorkloadKind::PerfHash { .. } | WorkloadKind::Other => &[LeadFigure::ThreadOpsPerSec],
            WorkloadKind::PerfWake { .. } => &[LeadFigure::WakeTime],
            WorkloadKind::PerfWakeParallel { .. } => &[LeadFigure::WakerLatency],
            WorkloadKind::PerfRequeue { .. } => &[LeadFigure::RequeueTime],
            WorkloadKind::PerfLockPi { .. } => &[LeadFigure::LockPiPairs],
            WorkloadKind::Schbench => &[LeadFigure::RequestsPerSec, LeadFigure::WakeupP99],
            WorkloadKind::FeaSolver => &[LeadFigure::SolveTime],
            WorkloadKind::TimeExit => &[LeadFigure::TimeUntilAllExited],
        }
    }

    /// The figure the benchmark exists for.
    pub fn primary(self) -> LeadFigure {
        self.lead_figures()[0]
    }
}

#[cfg(test)]
mod tests {
    use super::super::WorkloadSpec;
    use super::*;
    use crate::record::WorkloadName;

    /// Every workload's record, read back from its label alone, leads with
    /// the figure the workload declares.
    #[test]
    fn each_workload_s_kind_is_read_back_from_its_label() {
        let specs = [
            ("name = \"perf-hash\"", LeadFigure::ThreadOpsPerSec),
            (
                "name = \"perf-wake\"\nnwakes = 3\nshared = true",
                LeadFigure::WakeTime,
            ),
            (
                "name = \"perf-wake-parallel\"\nwakers = 2",
                LeadFigure::WakerLatency,
            ),
            (
                "name = \"perf-requeue\"\nnrequeue = 4",
                LeadFigure::RequeueTime,
            ),
            (
                "name = \"perf-requeue\"\nall = true",
                LeadFigure::RequeueTime,
            ),
            (
                "name = \"perf-lock-pi\"\nshared = true",
                LeadFigure::LockPiPairs,
            ),
            ("name = \"schbench\"", LeadFigure::RequestsPerSec),
            ("name = \"time-exit\"", LeadFigure::TimeUntilAllExited),
            (
                "name = \"will-it-scale\"\ntest = 2\nmode = \"thread\"",
                LeadFigure::ThreadOpsPerSec,
            ),
        ];
        for (toml_text, primary) in specs {
            let spec: WorkloadSpec = toml::from_str(toml_text).unwrap();
            let workload = spec.workload();
            let read = WorkloadName::parse(&workload.label());
            assert_eq!(read.kind, workload.kind(), "{}", workload.label());
            assert_eq!(read.kind.primary(), primary, "{}", workload.label());
        }
        let fea =
            WorkloadName::parse("FEA-style solver: 4 processes x 8 threads, 16 mutexes, 100 steps");
        assert_eq!(fea.kind, WorkloadKind::FeaSolver);
        assert_eq!(fea.kind.primary().better(), Better::Lower);
    }

    #[test]
    fn times_are_better_lower_and_have_no_scalability_fit() {
        for figure in [
            LeadFigure::WakeTime,
            LeadFigure::WakerLatency,
            LeadFigure::RequeueTime,
            LeadFigure::SolveTime,
            LeadFigure::TimeUntilAllExited,
        ] {
            assert_eq!(figure.better(), Better::Lower, "{figure:?}");
            assert!(figure.heading().contains("lower is better"));
        }
        assert_eq!(LeadFigure::ThreadOpsPerSec.better(), Better::Higher);
        // A time's unit and its nanoseconds agree: a chart in nanoseconds
        // shows what the tables show in their unit.
        for figure in [
            LeadFigure::WakeTime,
            LeadFigure::WakeupP99,
            LeadFigure::TimeUntilAllExited,
        ] {
            let per_ns = match figure.unit() {
                "ms" => 1e6,
                "us" => 1e3,
                "s" => 1e9,
                other => panic!("{figure:?} is a time in {other}"),
            };
            assert_eq!(figure.nanoseconds_per_unit(), Some(per_ns), "{figure:?}");
        }
        assert_eq!(LeadFigure::RequestsPerSec.nanoseconds_per_unit(), None);
        assert_eq!(
            WorkloadKind::Schbench.lead_figures(),
            [LeadFigure::RequestsPerSec, LeadFigure::WakeupP99]
        );
    }
}
