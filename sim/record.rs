//! The record of one simulated run: everything a report shows, and nothing
//! that depends on the host (wall-clock speed is kept apart in `Speed`), so
//! the same scenario and seed give a byte-identical record.

use crate::coherence::{Class, LineStats, OffsetStats, Totals};
use crate::engine::metrics::LockStats;
use crate::kernel::futex_hash::PrivateLife;
use crate::kernel::table::FieldName;
use crate::symbol::Symbol;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

use crate::engine::attribution::TimeSpent;
use crate::engine::Outcome;
use crate::kernel::futex_hash::{FutexHash, TableSel};
use crate::machine::Machine;
use crate::memory::MemoryMap;

/// Lines listed in a record's c2c table.
pub const TOP_LINES: usize = 10;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub machine: String,
    pub design: String,
    pub workload: WorkloadName,
    pub seed: u64,
    pub cpus: u32,
    pub nodes: u32,
    pub threads: u32,
    pub processes: u32,
    pub line_size: u64,
    pub table: TableRecord,
    /// Simulated nanoseconds counted (the window after warm-up).
    pub sim_ns: u64,
    pub ops: u64,
    /// All threads' operations per simulated second.
    pub ops_per_sec: f64,
    /// The mean of per-thread rates: what `perf bench futex hash` prints as "Averaged".
    pub mean_thread_ops_per_sec: f64,
    /// Relative standard deviation of the per-thread rates, in percent.
    pub thread_rsd_pct: f64,
    pub min_thread_ops: u64,
    pub max_thread_ops: u64,
    pub latency_ns: Latency,
    pub locks: LockRecord,
    pub coherence: CoherenceRecord,
    /// None for a workload that makes its keys as it runs (time_exit, a TOML
    /// program...): no static analysis applies.
    pub load: Option<LoadRecord>,
    pub top_lines: Vec<LineRecord>,
    pub events: u64,
    pub asleep_at_end: u64,
    /// The workload's own kernel locks taken in the window (time_exit's
    /// tasklist_lock, a node's LRU lock...), so a reader sees which critical
    /// section dominates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workload_locks: Vec<NamedLockRecord>,
    /// What the workload measures itself, as its real benchmark prints it
    /// (wake-up times, requests per second, latency percentiles...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<Metric>,
    /// perf bench futex hash's threads, in thread order, for its `[thread N]`
    /// lines (absent for other workloads).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub perf_threads: Vec<PerfThreadRecord>,
    /// A mix's groups, each read apart (sim/workload/mix.rs); absent for
    /// any other workload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupRecord>,
    /// Where the counted ops' time went (`futexsim explain`); absent
    /// unless the run was asked to attribute it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_spent: Option<TimeSpent>,
}

/// A group of a run's tasks read apart in its record (`GroupRecord`): a
/// mix's group (sim/workload/mix.rs), its tasks the run's `tasks`, in
/// task order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskGroup {
    /// As the config names the group, in every table.
    pub label: String,
    /// The group's workload, as a record names one.
    pub workload: WorkloadName,
    pub tasks: std::ops::Range<usize>,
    pub processes: u32,
}

/// One group of a mix, read apart from the others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupRecord {
    /// As the config labels it.
    pub label: String,
    pub workload: WorkloadName,
    pub threads: u32,
    pub processes: u32,
    pub ops: u64,
    pub ops_per_sec: f64,
    /// The mean of its threads' rates: its lead figure, as both workloads
    /// a mix takes are read by it.
    pub mean_thread_ops_per_sec: f64,
}

impl GroupRecord {
    /// Its figures as the report's workload figures and a question's
    /// `figure` name them: `LABEL ops/s` and `LABEL ops/s/thread`, their
    /// names saying their unit.
    pub fn figures(&self) -> [Metric; 2] {
        [
            Metric::new(format!("{} ops/s", self.label), self.ops_per_sec, ""),
            Metric::new(
                format!("{} ops/s/thread", self.label),
                self.mean_thread_ops_per_sec,
                "",
            ),
        ]
    }
}

/// What a run's record is made of besides the engine's outcome: the
/// scenario's names, what was laid out for it (the memory map and the
/// tables its hottest lines are named by), and what the workload measured.
pub struct RunOrigin<'a> {
    pub machine: &'a Machine,
    pub design: &'a str,
    pub workload: WorkloadName,
    pub seed: u64,
    pub threads: u32,
    pub processes: u32,
    /// The tables as laid out; where threads were created in the run, the
    /// outcome tells what their private hashes reached.
    pub table: TableRecord,
    pub load: Option<LoadRecord>,
    /// The workload's own kernel locks, by id.
    pub lock_names: &'a [String],
    pub extra: Vec<Metric>,
    pub thread_futexes: &'a [ThreadFutexes],
    /// A mix's groups of tasks; none for any other workload.
    pub groups: &'a [TaskGroup],
    pub memory: &'a MemoryMap,
    pub hash: &'a FutexHash,
}

impl RunRecord {
    /// The record of a run that ended as `out`.
    pub fn assemble(origin: RunOrigin, mut out: Outcome) -> RunRecord {
        let RunOrigin {
            machine,
            memory,
            hash,
            mut table,
            ..
        } = origin;
        // The window as the run ended it: shorter than asked where its
        // stopping rule was met.
        let window = out.window;
        // Where threads were created in the run: the slots and resizes it reached.
        for (life, reached) in table.private_hashes.iter_mut().zip(&out.resizes) {
            if let Some((slots, resizes)) = reached {
                life.slots = *slots;
                life.resizes = resizes.published;
                life.in_run = Some(*resizes);
            }
        }
        let m = &out.metrics;
        let ops: u64 = m.ops_per_task.iter().sum();
        // A run whose tasks all exit ends early: its counted time ends with the last exit.
        let counted_ps = out.timeline.all_exited().map_or(window.duration, |t| {
            t.saturating_sub(window.warmup).clamp(1000, window.duration)
        });
        let sim_ns = counted_ps / 1000;
        let secs = sim_ns as f64 / 1e9;
        let rates: Vec<f64> = m.ops_per_task.iter().map(|&n| n as f64 / secs).collect();
        let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
        let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / rates.len().max(1) as f64;
        let top_lines = out
            .directory
            .hottest_lines(TOP_LINES)
            .into_iter()
            .map(|s| {
                let region = memory.region(memory.region_of_line(s.line));
                let address = memory.line_addr(s.line);
                let what = |offset: u16| describe(hash, &region.name, address + u64::from(offset));
                let node = memory.home_of_line(s.line);
                LineRecord::from_stats(&s, address, node, region.name.clone(), what, |c| {
                    machine.node_of(c)
                })
            })
            .collect();
        RunRecord {
            machine: machine.name().to_string(),
            design: origin.design.to_string(),
            workload: origin.workload,
            seed: origin.seed,
            cpus: machine.cpus(),
            nodes: machine.nodes(),
            threads: origin.threads,
            processes: origin.processes,
            line_size: machine.line_size(),
            table,
            sim_ns,
            ops,
            ops_per_sec: ops as f64 / secs,
            mean_thread_ops_per_sec: mean,
            thread_rsd_pct: if mean > 0.0 {
                100.0 * var.sqrt() / mean
            } else {
                0.0
            },
            min_thread_ops: m.ops_per_task.iter().copied().min().unwrap_or(0),
            max_thread_ops: m.ops_per_task.iter().copied().max().unwrap_or(0),
            latency_ns: Latency {
                mean: m.latency.mean(),
                p50: m.latency.quantile(0.50),
                p90: m.latency.quantile(0.90),
                p99: m.latency.quantile(0.99),
                max: m.latency.max(),
            },
            locks: LockRecord::from_stats(&m.locks),
            coherence: CoherenceRecord::from_totals(&out.directory.totals, ops),
            load: origin.load,
            top_lines,
            events: out.events,
            asleep_at_end: out.asleep_at_end as u64,
            workload_locks: origin
                .lock_names
                .iter()
                .zip(
                    m.workload_locks
                        .iter()
                        .chain(std::iter::repeat(&Default::default())),
                )
                .filter(|(_, stats)| stats.acquisitions > 0)
                .map(|(name, stats)| NamedLockRecord::from_stats(name, stats))
                .collect(),
            extra: origin.extra,
            perf_threads: origin
                .thread_futexes
                .iter()
                .zip(&m.ops_per_task)
                .map(|(futexes, &ops)| PerfThreadRecord {
                    first_futex: futexes.first,
                    last_futex: futexes.last,
                    ops,
                })
                .collect(),
            groups: origin
                .groups
                .iter()
                .map(|g| {
                    let ops_each = m.ops_per_task.get(g.tasks.clone()).unwrap_or_default();
                    let rates_each = rates.get(g.tasks.clone()).unwrap_or_default();
                    let ops: u64 = ops_each.iter().sum();
                    GroupRecord {
                        label: g.label.clone(),
                        workload: g.workload.clone(),
                        threads: ops_each.len() as u32,
                        processes: g.processes,
                        ops,
                        ops_per_sec: ops as f64 / secs,
                        mean_thread_ops_per_sec: rates_each.iter().sum::<f64>()
                            / rates_each.len().max(1) as f64,
                    }
                })
                .collect(),
            time_spent: out.breakdown.map(|b| {
                b.named(|addr| {
                    let region = memory
                        .regions()
                        .iter()
                        .find(|r| addr >= r.base && addr < r.base + r.len.max(1))
                        .map_or("", |r| r.name.as_str());
                    field_label(&describe(hash, region, addr))
                })
            }),
        }
    }

    /// What the workload measured itself (`extra`), then each group's
    /// figures for a mix (`GroupRecord::figures`): what the report's
    /// workload figures show, and a question's `figure` may name.
    pub fn workload_figures(&self) -> impl Iterator<Item = Metric> + '_ {
        self.extra
            .iter()
            .cloned()
            .chain(self.groups.iter().flat_map(GroupRecord::figures))
    }
}

impl RunRecord {
    /// Why the record is not one a run gives, naming the field by its path
    /// under the record (`coherence.hitm_nodes: ...`): what the reports
    /// index or subtract by. Its numbers are checked apart, as JSON
    /// (results::from_json).
    pub fn check(&self) -> Result<(), RecordError> {
        let nodes = self.nodes as usize;
        let matrix = &self.coherence.hitm_nodes;
        if matrix.len() != nodes {
            return Err(RecordError::HitmRows {
                rows: matrix.len(),
                nodes,
            });
        }
        if let Some(row) = matrix.iter().position(|r| r.len() != nodes) {
            return Err(RecordError::HitmColumns {
                row,
                columns: matrix[row].len(),
                nodes,
            });
        }
        for (line, record) in self.top_lines.iter().enumerate() {
            // What perf calls Core Load Hit L1 is the loads no other class took.
            let classes = [
                record.lcl_hitm,
                record.rmt_hitm,
                record.lcl_hit,
                record.rmt_hit,
                record.dram_lcl,
                record.dram_rmt,
            ]
            .into_iter()
            .try_fold(0u64, u64::checked_add);
            if classes.is_none_or(|c| c > record.loads) {
                return Err(RecordError::FewerLoadsThanClasses {
                    line,
                    loads: record.loads,
                });
            }
        }
        if let Some(load) = &self.load {
            if load.max_load > load.keys {
                return Err(RecordError::MaxLoadOverKeys {
                    max_load: load.max_load,
                    keys: load.keys,
                });
            }
            let measured: Vec<u64> = load.histogram.iter().map(|c| c.load).collect();
            let expected: Vec<u64> = load.uniform.histogram.iter().map(|c| c.load).collect();
            for (histogram, loads) in [("histogram", measured), ("uniform.histogram", expected)] {
                if let Some((bucket, &l)) = loads.iter().enumerate().find(|&(_, &l)| l > load.keys)
                {
                    return Err(RecordError::HistogramLoadOverKeys {
                        histogram,
                        bucket,
                        load: l,
                        keys: load.keys,
                    });
                }
            }
        }
        Ok(())
    }
}

/// Why a record is not one a run gives: the field, by its path under the
/// record, and the figures that disagree.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("coherence.hitm_nodes: {rows} rows, but nodes is {nodes}")]
    HitmRows { rows: usize, nodes: usize },
    #[error("coherence.hitm_nodes[{row}]: {columns} columns, but nodes is {nodes}")]
    HitmColumns {
        row: usize,
        columns: usize,
        nodes: usize,
    },
    #[error("top_lines[{line}].loads: {loads} is fewer than its HITMs, hits and DRAM loads")]
    FewerLoadsThanClasses { line: usize, loads: u64 },
    #[error("load.max_load: {max_load} is more than its {keys} keys")]
    MaxLoadOverKeys { max_load: u64, keys: u64 },
    /// `histogram` is the measured histogram's path or the uniform one's.
    #[error("load.{histogram}[{bucket}].load: {load} is more than its {keys} keys")]
    HistogramLoadOverKeys {
        histogram: &'static str,
        bucket: usize,
        load: u64,
        keys: u64,
    },
}

/// One thread of perf bench futex hash: the addresses of its first and
/// last futex, and the ops it counted in the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerfThreadRecord {
    pub first_futex: u64,
    pub last_futex: u64,
    pub ops: u64,
}

/// The futexes one thread of a workload operates on, first to last: what
/// perf bench futex hash prints for each thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadFutexes {
    pub first: u64,
    pub last: u64,
}

/// How perf bench futex hash's label begins (`Workload::label`), which is
/// how a record read back knows it as that benchmark's.
pub const PERF_HASH_LABEL: &str = "perf bench futex hash";

/// What a report tells apart among workloads: the benchmarks whose output
/// it prints again as they do, or whose own figure it leads with
/// (workload::lead), and every other benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    PerfHash {
        /// `-S`: the futexes are shared, not process-private.
        shared: bool,
    },
    /// The options its output line shows: `-w` and `-S`.
    PerfWake {
        nwakes: u32,
        shared: bool,
    },
    /// `-w` (absent: a waker per thread) and `-S`.
    PerfWakeParallel {
        wakers: Option<u32>,
        shared: bool,
    },
    /// `-q` (None: `-B`, all at once) and `-S`.
    PerfRequeue {
        nrequeue: Option<u32>,
        shared: bool,
    },
    PerfLockPi {
        shared: bool,
    },
    Schbench,
    FeaSolver,
    TimeExit,
    Other,
}

impl WorkloadKind {
    /// The kind a label names, as the workloads write their labels: the
    /// benchmark's name then its options, `-S` among perf bench futex
    /// hash's when shared, before any note in parentheses.
    fn of_label(label: &str) -> WorkloadKind {
        let benchmark = benchmark_of(label);
        let flags: Vec<&str> = label[benchmark.len()..]
            .split(" (")
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        let shared = flags.contains(&"-S");
        let value = |flag: &str| {
            let at = flags.iter().position(|word| *word == flag)?;
            flags.get(at + 1)?.parse::<u32>().ok()
        };
        match benchmark {
            PERF_HASH_LABEL => WorkloadKind::PerfHash { shared },
            "perf bench futex wake" => WorkloadKind::PerfWake {
                nwakes: value("-w").unwrap_or(1),
                shared,
            },
            "perf bench futex wake-parallel" => WorkloadKind::PerfWakeParallel {
                wakers: value("-w"),
                shared,
            },
            "perf bench futex requeue" => WorkloadKind::PerfRequeue {
                nrequeue: value("-q"),
                shared,
            },
            "perf bench futex lock-pi" => WorkloadKind::PerfLockPi { shared },
            "schbench" => WorkloadKind::Schbench,
            "FEA-style solver" => WorkloadKind::FeaSolver,
            "time_exit" => WorkloadKind::TimeExit,
            _ => WorkloadKind::Other,
        }
    }
}

/// The benchmark a label names, without its options: the words before the
/// first option (`-f`), parenthesis, `key=value`, number or colon ("perf
/// bench futex hash", "will-it-scale futex4", "schbench").
fn benchmark_of(label: &str) -> &str {
    let mut end = 0;
    for word in label.split_whitespace() {
        let is_option = word.starts_with(['-', '('])
            || word.contains('=')
            || word.starts_with(|c: char| c.is_ascii_digit());
        if is_option {
            break;
        }
        // The word's place in the label: split_whitespace yields slices of it.
        let at = word.as_ptr() as usize - label.as_ptr() as usize;
        if let Some(last) = word.strip_suffix(':') {
            end = at + last.len();
            break;
        }
        end = at + word.len();
    }
    &label[..end]
}

/// How a record names its workload: its label, as a reader sees it
/// ("perf bench futex hash -f 1024 -S"), and its kind. results.json writes
/// the label alone and the kind is read back from it, so a record re-read
/// writes the same bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadName {
    pub label: String,
    pub kind: WorkloadKind,
}

impl WorkloadName {
    /// Reads the text `Display` writes.
    pub fn parse(label: &str) -> WorkloadName {
        WorkloadName {
            label: label.to_string(),
            kind: WorkloadKind::of_label(label),
        }
    }

    /// The benchmark the label names, without its options.
    pub fn benchmark(&self) -> &str {
        benchmark_of(&self.label)
    }
}

impl fmt::Display for WorkloadName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

impl Serialize for WorkloadName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.label)
    }
}

impl<'de> Deserialize<'de> for WorkloadName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<WorkloadName, D::Error> {
        String::deserialize(deserializer).map(|label| WorkloadName::parse(&label))
    }
}

/// One figure a workload reports beyond ops and op latency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

impl Metric {
    pub fn new(name: impl Into<String>, value: f64, unit: impl Into<String>) -> Metric {
        Metric {
            name: name.into(),
            value,
            unit: unit.into(),
        }
    }
}

/// One of a workload's kernel locks: how often it was taken and the time
/// spent waiting for it and holding it, over all tasks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedLockRecord {
    pub name: String,
    pub lock: LockRecord,
    pub total_wait_ns: f64,
    pub total_hold_ns: f64,
}

impl NamedLockRecord {
    pub fn from_stats(name: &str, s: &LockStats) -> NamedLockRecord {
        NamedLockRecord {
            name: name.to_string(),
            lock: LockRecord::from_stats(s),
            total_wait_ns: s.wait_ps as f64 / 1000.0,
            total_hold_ns: s.hold_ps as f64 / 1000.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableRecord {
    /// Slots of one global table instance.
    pub slots: u64,
    pub instances: u32,
    /// Slots of each process's private hash (empty when none): the table
    /// its growth ends with by the kernel's rule.
    pub private_slots: Vec<u64>,
    pub bytes: u64,
    /// How each process's private hash ended (its slots, 0 for the global
    /// hash; its resizes; what set it), where the design has one; where
    /// threads were created in the run, what the run reached and what its
    /// resizes cost (`in_run`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private_hashes: Vec<PrivateLife>,
}

impl TableRecord {
    /// The tables of `hash` as laid out, their private hashes' lives where
    /// the design has them (`private`).
    pub fn laid_out(hash: &FutexHash, private: bool) -> TableRecord {
        TableRecord {
            slots: hash.global_slots(),
            instances: hash.global.len() as u32,
            private_slots: hash.private.iter().flatten().map(|t| t.slots).collect(),
            bytes: hash.memory_bytes(),
            private_hashes: if private {
                hash.lives.clone()
            } else {
                Vec::new()
            },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LockRecord {
    pub acquisitions: u64,
    pub contended: u64,
    pub mean_wait_ns: f64,
    pub mean_hold_ns: f64,
}

impl LockRecord {
    pub fn from_stats(s: &LockStats) -> LockRecord {
        let per = |ps: u64| {
            if s.acquisitions == 0 {
                0.0
            } else {
                ps as f64 / 1000.0 / s.acquisitions as f64
            }
        };
        LockRecord {
            acquisitions: s.acquisitions,
            contended: s.contended,
            mean_wait_ns: per(s.wait_ps),
            mean_hold_ns: per(s.hold_ps),
        }
    }
}

/// Every access by class. The classes partition the accesses: `l1_hit`,
/// `lcl_hit`, `rmt_hit`, `dram_lcl` and `dram_rmt` count loads and stores
/// alike, while a line found Modified in another cache is a HITM for a
/// load (perf c2c's meaning) and an RFO from Modified for a store or RMW.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoherenceRecord {
    pub loads: u64,
    pub stores: u64,
    pub l1_hit: u64,
    pub lcl_hit: u64,
    pub rmt_hit: u64,
    pub lcl_hitm: u64,
    pub rmt_hitm: u64,
    pub lcl_rfo_modified: u64,
    pub rmt_rfo_modified: u64,
    pub dram_lcl: u64,
    pub dram_rmt: u64,
    pub transfers: u64,
    pub transfers_per_op: f64,
    /// HITM loads per op.
    pub hitm_per_op: f64,
    pub true_sharing: u64,
    pub false_sharing: u64,
    /// HITMs by requesting node (rows) and the node whose cache held the
    /// line Modified (columns).
    pub hitm_nodes: Vec<Vec<u64>>,
}

impl CoherenceRecord {
    pub fn from_totals(t: &Totals, ops: u64) -> CoherenceRecord {
        let per_op = |n: u64| if ops == 0 { 0.0 } else { n as f64 / ops as f64 };
        let hitm = t.lcl_hitm + t.rmt_hitm;
        CoherenceRecord {
            loads: t.loads,
            stores: t.stores,
            l1_hit: t.class(Class::L1Hit),
            lcl_hit: t.class(Class::LclHit),
            rmt_hit: t.class(Class::RmtHit),
            lcl_hitm: t.lcl_hitm,
            rmt_hitm: t.rmt_hitm,
            lcl_rfo_modified: t.lcl_rfo_modified,
            rmt_rfo_modified: t.rmt_rfo_modified,
            dram_lcl: t.class(Class::DramLcl),
            dram_rmt: t.class(Class::DramRmt),
            transfers: t.transfers(),
            transfers_per_op: per_op(t.transfers()),
            hitm_per_op: per_op(hitm),
            true_sharing: t.true_sharing,
            false_sharing: t.false_sharing,
            hitm_nodes: (0..t.nodes)
                .map(|r| (0..t.nodes).map(|h| t.hitm_between(r, h)).collect())
                .collect(),
        }
    }
}

/// How the workload's futex keys spread over the design's buckets and lines
/// (static layout analysis), beside what a uniform hash would give.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadRecord {
    pub keys: u64,
    /// Buckets the keys can reach.
    pub buckets: u64,
    pub max_load: u64,
    /// Keys per occupied bucket.
    pub mean_load: f64,
    /// Keys in buckets holding two or more keys.
    pub keys_sharing_bucket: u64,
    /// Keys whose bucket touches a line with another occupied bucket's lock word.
    pub keys_sharing_line: u64,
    pub colliding_pairs: u64,
    /// Buckets by load, loads in increasing order.
    pub histogram: Vec<LoadCount>,
    pub uniform: UniformLoad,
}

/// The balls-into-bins figures for the same keys and buckets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UniformLoad {
    pub max_load: f64,
    pub mean_load: f64,
    pub keys_sharing_bucket: f64,
    pub keys_sharing_bucket_sd: f64,
    pub keys_sharing_line: f64,
    pub colliding_pairs: f64,
    pub colliding_pairs_sd: f64,
    pub histogram: Vec<ExpectedLoadCount>,
}

/// How many buckets hold a given number of keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadCount {
    pub load: u64,
    pub buckets: u64,
}

/// How many buckets a uniform hash would leave with a given number of keys.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpectedLoadCount {
    pub load: u64,
    pub buckets: f64,
}

/// One line in perf c2c's Shared Data Cache Line Table: the load classes
/// count loads only, as perf's do, and the stores are L1 hits or misses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineRecord {
    pub address: u64,
    /// The allocation the line belongs to.
    pub region: String,
    /// The node whose memory holds the line (perf c2c's Node).
    pub node: u32,
    pub lcl_hitm: u64,
    pub rmt_hitm: u64,
    pub lcl_hit: u64,
    pub rmt_hit: u64,
    pub dram_lcl: u64,
    pub dram_rmt: u64,
    pub loads: u64,
    pub stores: u64,
    pub store_l1_hit: u64,
    pub store_l1_miss: u64,
    /// Stores and RMWs that took the line from a cache holding it Modified.
    pub lcl_rfo_modified: u64,
    pub rmt_rfo_modified: u64,
    pub offsets: Vec<OffsetRecord>,
}

/// One offset in perf c2c's Pareto table, named by what lives there: its
/// counts over every function, then each function's (perf's rows of one
/// offset, one a symbol).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OffsetRecord {
    pub offset: u16,
    /// What the byte is: a bucket's field, a private hash header, a region.
    pub what: Occupant,
    #[serde(flatten)]
    pub counts: AccessCounts,
    /// The offset's counts by the function that made the accesses, in
    /// `Symbol` order (absent from a record written before they were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<SymbolRecord>,
}

/// The accesses one function made to one offset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SymbolRecord {
    pub symbol: Symbol,
    #[serde(flatten)]
    pub counts: AccessCounts,
}

/// perf c2c's counts of a set of accesses (an offset's, or one function's
/// there): loads, HITM among them, stores as L1 hits and misses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccessCounts {
    pub lcl_hitm: u64,
    pub rmt_hitm: u64,
    pub loads: u64,
    pub stores: u64,
    pub store_l1_hit: u64,
    pub store_l1_miss: u64,
    pub lcl_rfo_modified: u64,
    pub rmt_rfo_modified: u64,
    /// Mean latency of the remote HITM loads, the local ones, and the
    /// other loads, queueing behind other requests on the line included.
    pub mean_rmt_hitm_ns: f64,
    pub mean_lcl_hitm_ns: f64,
    pub mean_load_ns: f64,
    pub cpu_count: u32,
    pub nodes: Vec<u32>,
}

impl LineRecord {
    pub fn hitm(&self) -> u64 {
        self.lcl_hitm + self.rmt_hitm
    }

    /// Loads that neither another cache nor DRAM served: perf's "Core Load Hit L1".
    pub fn load_l1_hit(&self) -> u64 {
        self.loads - (self.hitm() + self.lcl_hit + self.rmt_hit + self.dram_lcl + self.dram_rmt)
    }

    pub fn from_stats(
        s: &LineStats<u64>,
        address: u64,
        node: u32,
        region: String,
        what: impl Fn(u16) -> Occupant,
        node_of: impl Fn(u32) -> u32,
    ) -> LineRecord {
        LineRecord {
            address,
            region,
            node,
            lcl_hitm: s.lcl_hitm(),
            rmt_hitm: s.rmt_hitm(),
            lcl_hit: s.lcl_hit,
            rmt_hit: s.rmt_hit,
            dram_lcl: s.dram_lcl,
            dram_rmt: s.dram_rmt,
            loads: s.loads(),
            stores: s.stores(),
            store_l1_hit: s.store_l1_hit(),
            store_l1_miss: s.store_l1_miss(),
            lcl_rfo_modified: s.lcl_rfo_modified(),
            rmt_rfo_modified: s.rmt_rfo_modified(),
            offsets: s
                .offsets()
                .chunk_by(|a, b| a.offset == b.offset)
                .map(|rows| OffsetRecord {
                    offset: rows[0].offset,
                    what: what(rows[0].offset),
                    counts: AccessCounts::of(rows, &node_of),
                    symbols: rows
                        .iter()
                        .map(|row| SymbolRecord {
                            symbol: row.by,
                            counts: AccessCounts::of(std::slice::from_ref(row), &node_of),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

impl AccessCounts {
    /// The counts of `rows` together (rows of one offset), their CPUs' nodes
    /// by `node_of`.
    fn of(rows: &[OffsetStats<u64>], node_of: impl Fn(u32) -> u32) -> AccessCounts {
        let sum = |field: fn(&OffsetStats<u64>) -> u64| rows.iter().map(field).sum::<u64>();
        let mean_ns = |ps: u64, n: u64| {
            if n == 0 {
                0.0
            } else {
                ps as f64 / 1000.0 / n as f64
            }
        };
        let mut cpus = Vec::new();
        for row in rows {
            row.cpus.for_each(|c| cpus.push(c));
        }
        cpus.sort_unstable();
        cpus.dedup();
        let mut nodes: Vec<u32> = cpus.iter().map(|&c| node_of(c.into())).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let (lcl_hitm, rmt_hitm, loads) =
            (sum(|o| o.lcl_hitm), sum(|o| o.rmt_hitm), sum(|o| o.loads));
        AccessCounts {
            lcl_hitm,
            rmt_hitm,
            loads,
            stores: sum(OffsetStats::stores),
            store_l1_hit: sum(|o| o.store_l1_hit),
            store_l1_miss: sum(|o| o.store_l1_miss),
            lcl_rfo_modified: sum(|o| o.lcl_rfo_modified),
            rmt_rfo_modified: sum(|o| o.rmt_rfo_modified),
            mean_rmt_hitm_ns: mean_ns(sum(|o| o.rmt_hitm_ps), rmt_hitm),
            mean_lcl_hitm_ns: mean_ns(sum(|o| o.lcl_hitm_ps), lcl_hitm),
            mean_load_ns: mean_ns(sum(|o| o.other_load_ps), loads - lcl_hitm - rmt_hitm),
            cpu_count: cpus.len() as u32,
            nodes,
        }
    }
}

/// What lives at one offset of a line: a field of a hash bucket, a private
/// hash's header, or (outside both) the allocation the line belongs to.
/// results.json writes it as the text a reader sees ("bucket 53 lock",
/// "process 0 bucket 7 chain", "private hash header", a region's name) and
/// reads it back from that text, so a record re-read writes the same bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Occupant {
    /// A bucket's field, or None for its padding.
    Bucket {
        bucket: BucketRef,
        field: Option<FieldName>,
    },
    PrivateHashHeader,
    /// A byte outside every table: the region's name.
    Region(String),
}

/// One hash bucket: its table and its index there. A global table's
/// instances (one per node) are not told apart, as perf c2c's symbol does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BucketRef {
    pub table: BucketTable,
    pub index: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BucketTable {
    Global,
    /// The private hash of process `process`.
    Private {
        process: u32,
    },
}

const PRIVATE_HASH_HEADER: &str = "private hash header";
/// A bucket's bytes that no field covers.
const PADDING: &str = "padding";

impl Occupant {
    /// The bucket whose lock word this byte is.
    pub fn bucket_lock(&self) -> Option<BucketRef> {
        match self {
            Occupant::Bucket {
                bucket,
                field: Some(FieldName::Lock),
            } => Some(*bucket),
            _ => None,
        }
    }

    /// Reads the text `Display` writes. Any text reads as something: what
    /// is neither a bucket's byte nor the header is a region's name, and
    /// writing what was read gives the text back exactly.
    pub fn parse(text: &str) -> Occupant {
        if text == PRIVATE_HASH_HEADER {
            return Occupant::PrivateHashHeader;
        }
        Occupant::parse_bucket(text).unwrap_or_else(|| Occupant::Region(text.to_string()))
    }

    fn parse_bucket(text: &str) -> Option<Occupant> {
        let (bucket, field) = text.rsplit_once(' ')?;
        let field = match field {
            PADDING => None,
            name => Some(FieldName::ALL.into_iter().find(|f| f.as_str() == name)?),
        };
        Some(Occupant::Bucket {
            bucket: BucketRef::parse(bucket)?,
            field,
        })
    }
}

impl BucketRef {
    fn parse(text: &str) -> Option<BucketRef> {
        let (table, index) = match text.strip_prefix("process ") {
            Some(rest) => {
                let (process, index) = rest.split_once(" bucket ")?;
                let process = canonical_number(process)?;
                (BucketTable::Private { process }, index)
            }
            None => (BucketTable::Global, text.strip_prefix("bucket ")?),
        };
        Some(BucketRef {
            table,
            index: canonical_number(index)?,
        })
    }
}

/// A number written as `Display` writes it (no sign, no leading zero), so
/// that reading and writing it again gives the same text.
fn canonical_number(text: &str) -> Option<u32> {
    let n: u32 = text.parse().ok()?;
    (n.to_string() == text).then_some(n)
}

impl fmt::Display for BucketRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.table {
            BucketTable::Global => write!(f, "bucket {}", self.index),
            BucketTable::Private { process } => {
                write!(f, "process {process} bucket {}", self.index)
            }
        }
    }
}

impl fmt::Display for Occupant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Occupant::Bucket { bucket, field } => {
                write!(f, "{bucket} {}", field.map_or(PADDING, FieldName::as_str))
            }
            Occupant::PrivateHashHeader => f.write_str(PRIVATE_HASH_HEADER),
            Occupant::Region(name) => f.write_str(name),
        }
    }
}

/// What an access touched, for the rows of a run's time: a bucket's
/// field (a private hash's bucket's apart), a private hash header, or the
/// region; never which bucket, so that one field's accesses make one row.
fn field_label(occupant: &Occupant) -> String {
    match occupant {
        Occupant::Bucket { bucket, field } => {
            let table = match bucket.table {
                BucketTable::Global => "bucket",
                BucketTable::Private { .. } => "private bucket",
            };
            format!("{table} {}", field.map_or(PADDING, FieldName::as_str))
        }
        other => without_indices(&other.to_string()),
    }
}

/// A region's name with each CPU, process or table number in it as `N`
/// ("cpu N per-cpu"): every CPU's copy of a per-CPU line is one row.
fn without_indices(name: &str) -> String {
    name.split(' ')
        .map(|word| {
            let number = word.trim_end_matches(',');
            match !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
                true => word.replacen(number, "N", 1),
                false => word.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Names the byte at `addr`: a bucket's field, a private hash header, or the region.
fn describe(hash: &FutexHash, region: &str, addr: u64) -> Occupant {
    // A process's outgrown tables are named as its private hash's.
    let tables = (0..hash.global.len() as u32)
        .map(TableSel::Global)
        .chain(
            (0..hash.private.len() as u32)
                .filter(|&p| hash.private[p as usize].is_some())
                .map(TableSel::Private),
        )
        .chain(hash.outgrown.iter().enumerate().flat_map(|(p, tables)| {
            (0..tables.len() as u32).map(move |generation| TableSel::Outgrown {
                process: p as u32,
                generation,
            })
        }));
    for table in tables {
        if let Some((index, field)) = hash.locate(table, addr) {
            let table = match table {
                TableSel::Global(_) => BucketTable::Global,
                TableSel::Private(process) | TableSel::Outgrown { process, .. } => {
                    BucketTable::Private { process }
                }
            };
            let bucket = BucketRef { table, index };
            return Occupant::Bucket { bucket, field };
        }
        if hash
            .instance(table)
            .header
            .is_some_and(|h| addr >= h && addr < hash.instance(table).base)
        {
            return Occupant::PrivateHashHeader;
        }
    }
    Occupant::Region(region.to_string())
}

impl Serialize for Occupant {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Occupant {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Occupant, D::Error> {
        String::deserialize(deserializer).map(|text| Occupant::parse(&text))
    }
}

/// How fast the simulator ran: host-dependent, so never part of a record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    pub events: u64,
    pub wall_s: f64,
    pub events_per_sec: f64,
    pub sim_ops_per_sec: f64,
}

impl Speed {
    /// How fast the run of `record` went in `wall_s` seconds.
    pub fn of(record: &RunRecord, wall_s: f64) -> Speed {
        Speed {
            events: record.events,
            wall_s,
            events_per_sec: record.events as f64 / wall_s.max(1e-9),
            sim_ops_per_sec: record.ops as f64 / wall_s.max(1e-9),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workloads_benchmark_is_its_label_without_the_options() {
        for (label, benchmark) in [
            ("perf bench futex hash -f 1024 -S", "perf bench futex hash"),
            (
                "perf bench futex wake-parallel",
                "perf bench futex wake-parallel",
            ),
            ("will-it-scale futex4 mode=thread", "will-it-scale futex4"),
            ("schbench -m 4 -t 256 (work 0 ns)", "schbench"),
            ("time_exit (one child per CPU)", "time_exit"),
            (
                "FEA-style solver: 4 processes x 8 threads",
                "FEA-style solver",
            ),
            ("program of 4 steps, 8 threads", "program of"),
        ] {
            assert_eq!(WorkloadName::parse(label).benchmark(), benchmark, "{label}");
        }
    }

    /// Written to JSON and read back, an occupant is the same value and
    /// its JSON is the text a reader sees.
    fn round_trip(occupant: Occupant, text: &str) {
        let json = serde_json::to_string(&occupant).unwrap();
        assert_eq!(json, serde_json::to_string(text).unwrap());
        let back: Occupant = serde_json::from_str(&json).unwrap();
        assert_eq!(back, occupant);
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }

    #[test]
    fn every_kind_of_occupant_round_trips_through_its_text() {
        let global = BucketRef {
            table: BucketTable::Global,
            index: 53,
        };
        for field in FieldName::ALL {
            round_trip(
                Occupant::Bucket {
                    bucket: global,
                    field: Some(field),
                },
                &format!("bucket 53 {}", field.as_str()),
            );
        }
        round_trip(
            Occupant::Bucket {
                bucket: global,
                field: None,
            },
            "bucket 53 padding",
        );
        round_trip(
            Occupant::Bucket {
                bucket: BucketRef {
                    table: BucketTable::Private { process: 0 },
                    index: 7,
                },
                field: Some(FieldName::Chain),
            },
            "process 0 bucket 7 chain",
        );
        round_trip(Occupant::PrivateHashHeader, "private hash header");
        round_trip(
            Occupant::Region("perf bench futex arrays".into()),
            "perf bench futex arrays",
        );
    }

    /// Text that only looks like a bucket's byte is a region's name, and
    /// reading then writing any text gives it back byte for byte.
    #[test]
    fn near_misses_read_as_regions_and_write_back_unchanged() {
        for text in [
            "bucket 03 lock",
            "bucket +3 lock",
            "bucket 3 locks",
            "bucket 3",
            "table t bucket 3",
            "process 1 bucket 2 bucket 3 lock",
            "process x bucket 2 lock",
            "futex_queues[node 1]",
            "",
        ] {
            assert_eq!(Occupant::parse(text), Occupant::Region(text.into()));
            assert_eq!(Occupant::parse(text).to_string(), text);
        }
    }

    #[test]
    fn a_region_s_cpu_process_and_table_numbers_read_as_n() {
        assert_eq!(without_indices("cpu 17 per-cpu"), "cpu N per-cpu");
        assert_eq!(
            without_indices("process 3 private hash, table 12"),
            "process N private hash, table N"
        );
        assert_eq!(without_indices("heap"), "heap");
    }

    #[test]
    fn only_a_lock_field_names_its_bucket_as_a_lock() {
        let bucket = BucketRef {
            table: BucketTable::Private { process: 2 },
            index: 9,
        };
        let lock = Occupant::Bucket {
            bucket,
            field: Some(FieldName::Lock),
        };
        assert_eq!(lock.bucket_lock(), Some(bucket));
        let waiters = Occupant::Bucket {
            bucket,
            field: Some(FieldName::Waiters),
        };
        assert_eq!(waiters.bucket_lock(), None);
        assert_eq!(Occupant::PrivateHashHeader.bucket_lock(), None);
    }

    /// Only a benchmark's own labels read as its kind, `-S` a word of its
    /// options and not of a note, its other options read as numbers, and a
    /// name read back writes the label it was read from.
    #[test]
    fn only_each_benchmark_s_own_labels_read_as_its_kind() {
        let private = WorkloadKind::PerfHash { shared: false };
        let shared = WorkloadKind::PerfHash { shared: true };
        for (label, kind) in [
            ("perf bench futex hash", private),
            ("perf bench futex hash -f 1024", private),
            ("perf bench futex hash -f 1024 -S", shared),
            ("perf bench futex hash -f 8 -t 2 -S -b 64 -I", shared),
            (
                "perf bench futex hash -f 8 (a thread created every 2000 ns)",
                private,
            ),
            ("perf bench futex hashes -f 8 -S", WorkloadKind::Other),
            (
                "perf bench futex wake -w 3 -t 8 -S",
                WorkloadKind::PerfWake {
                    nwakes: 3,
                    shared: true,
                },
            ),
            (
                "perf bench futex wake-parallel -t 8",
                WorkloadKind::PerfWakeParallel {
                    wakers: None,
                    shared: false,
                },
            ),
            (
                "perf bench futex requeue -B -S",
                WorkloadKind::PerfRequeue {
                    nrequeue: None,
                    shared: true,
                },
            ),
            (
                "perf bench futex requeue -q 4",
                WorkloadKind::PerfRequeue {
                    nrequeue: Some(4),
                    shared: false,
                },
            ),
            ("perf bench futex wakes -w 1", WorkloadKind::Other),
            ("will-it-scale futex1 mode=thread", WorkloadKind::Other),
            ("", WorkloadKind::Other),
        ] {
            let name = WorkloadName::parse(label);
            assert_eq!(name.kind, kind, "{label}");
            let json = serde_json::to_string(&name).unwrap();
            assert_eq!(json, serde_json::to_string(label).unwrap());
            assert_eq!(serde_json::from_str::<WorkloadName>(&json).unwrap(), name);
        }
    }
}
