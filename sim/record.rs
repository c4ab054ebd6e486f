//! The record of one simulated run: everything a report shows, and nothing
//! that depends on the host (wall-clock speed is kept apart in `Speed`), so
//! the same scenario and seed give a byte-identical record.

use crate::coherence::{Class, LineStats, Totals};
use crate::engine::metrics::LockStats;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub machine: String,
    pub design: String,
    pub workload: String,
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
    pub top_lines: Vec<LineRecord>,
    pub events: u64,
    pub asleep_at_end: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableRecord {
    /// Slots of one global table instance.
    pub slots: u64,
    pub instances: u32,
    /// Slots of each process's private hash (empty when none).
    pub private_slots: Vec<u64>,
    pub bytes: u64,
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoherenceRecord {
    pub loads: u64,
    pub stores: u64,
    pub l1_hit: u64,
    pub lcl_hit: u64,
    pub rmt_hit: u64,
    pub lcl_hitm: u64,
    pub rmt_hitm: u64,
    pub dram_lcl: u64,
    pub dram_rmt: u64,
    pub transfers: u64,
    pub transfers_per_op: f64,
    pub hitm_per_op: f64,
    pub true_sharing: u64,
    pub false_sharing: u64,
}

impl CoherenceRecord {
    pub fn from_totals(t: &Totals, ops: u64) -> CoherenceRecord {
        let per_op = |n: u64| if ops == 0 { 0.0 } else { n as f64 / ops as f64 };
        let hitm = t.class(Class::LclHitm) + t.class(Class::RmtHitm);
        CoherenceRecord {
            loads: t.loads,
            stores: t.stores,
            l1_hit: t.class(Class::L1Hit),
            lcl_hit: t.class(Class::LclHit),
            rmt_hit: t.class(Class::RmtHit),
            lcl_hitm: t.class(Class::LclHitm),
            rmt_hitm: t.class(Class::RmtHitm),
            dram_lcl: t.class(Class::DramLcl),
            dram_rmt: t.class(Class::DramRmt),
            transfers: t.transfers(),
            transfers_per_op: per_op(t.transfers()),
            hitm_per_op: per_op(hitm),
            true_sharing: t.true_sharing,
            false_sharing: t.false_sharing,
        }
    }
}

/// One line in perf c2c's Shared Data Cache Line Table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineRecord {
    pub address: u64,
    /// The allocation the line belongs to.
    pub region: String,
    pub lcl_hitm: u64,
    pub rmt_hitm: u64,
    pub lcl_hit: u64,
    pub rmt_hit: u64,
    pub dram_lcl: u64,
    pub dram_rmt: u64,
    pub loads: u64,
    pub stores: u64,
    pub offsets: Vec<OffsetRecord>,
}

/// One offset in perf c2c's Pareto table, named by what lives there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OffsetRecord {
    pub offset: u16,
    /// What the byte is: "bucket 69 lock", "private hash header"...
    pub what: String,
    pub lcl_hitm: u64,
    pub rmt_hitm: u64,
    pub loads: u64,
    pub stores: u64,
    pub store_l1_hit: u64,
    pub store_l1_miss: u64,
    pub mean_hitm_ns: f64,
    pub cpu_count: u32,
    pub nodes: Vec<u32>,
}

impl LineRecord {
    pub fn hitm(&self) -> u64 {
        self.lcl_hitm + self.rmt_hitm
    }

    pub fn from_stats(
        s: &LineStats,
        address: u64,
        region: String,
        what: impl Fn(u16) -> String,
        node_of: impl Fn(u32) -> u32,
    ) -> LineRecord {
        LineRecord {
            address,
            region,
            lcl_hitm: s.lcl_hitm,
            rmt_hitm: s.rmt_hitm,
            lcl_hit: s.lcl_hit,
            rmt_hit: s.rmt_hit,
            dram_lcl: s.dram_lcl,
            dram_rmt: s.dram_rmt,
            loads: s.loads,
            stores: s.stores,
            offsets: s
                .offsets()
                .iter()
                .map(|o| {
                    let hitm = o.lcl_hitm + o.rmt_hitm;
                    let mut nodes = Vec::new();
                    o.cpus.for_each(|c| nodes.push(node_of(c.into())));
                    nodes.sort_unstable();
                    nodes.dedup();
                    OffsetRecord {
                        offset: o.offset,
                        what: what(o.offset),
                        lcl_hitm: o.lcl_hitm,
                        rmt_hitm: o.rmt_hitm,
                        loads: o.loads,
                        stores: o.stores,
                        store_l1_hit: o.store_l1_hit,
                        store_l1_miss: o.store_l1_miss,
                        mean_hitm_ns: if hitm == 0 {
                            0.0
                        } else {
                            o.hitm_ps as f64 / 1000.0 / hitm as f64
                        },
                        cpu_count: o.cpus.len() as u32,
                        nodes,
                    }
                })
                .collect(),
        }
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
