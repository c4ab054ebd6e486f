//! The TOML form of a machine profile. Latencies are written in nanoseconds
//! as measured by the tools users run (core-to-core-latency, Intel MLC).

use super::mitigations::{CpuFacts, KernelVersion, Mitigation};
use super::plausible::Plausible;
use super::tlb::{BackgroundSpec, TlbSpec};
use super::{ns_to_ps, LockKind, Ps};
use crate::limits::{MAX_GHZ, MAX_NS, MAX_RETURNS, MIN_GHZ};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    pub name: String,
    /// Where the numbers come from, so a report can cite them.
    pub source: String,
    pub topology: TopologySpec,
    pub latency: LatencySpec,
    #[serde(default)]
    pub coherence: CoherenceSpec,
    #[serde(default)]
    pub kernel: KernelCosts,
    #[serde(default)]
    pub scheduler: SchedulerSpec,
    #[serde(default)]
    pub core: CoreSpec,
    /// The data TLBs and the kernel's page sizes; no translation is priced
    /// when absent.
    #[serde(default)]
    pub tlb: Option<TlbSpec>,
    #[serde(default)]
    pub background: BackgroundSpec,
    /// The plausible ranges of the parameters not measured on this part
    /// (sim/machine/plausible.rs). Only `--sensitivity` reads them. They are
    /// never serialized, so a resolved config, a run's scenario and its id
    /// are what they were without them; a config keeps its profile's
    /// (`Config::plausible`).
    #[serde(default, skip_serializing)]
    pub plausible: Plausible,
}

/// What one core can have in flight, and how SMT siblings share it: the
/// figures of the core's microarchitecture, cited in each profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CoreSpec {
    /// Store-buffer entries: plain stores retire into it at once and drain
    /// in order. 0: every store waits for its line, as on an in-order core.
    pub store_buffer: u32,
    /// L1D misses in flight at once (the fill buffers, or the miss address
    /// buffers): independent loads to different lines overlap up to it.
    pub outstanding_misses: u32,
    /// What two SMT siblings that both compute get done together, relative
    /// to one thread alone on the core (1 to 2). Each sibling's compute
    /// stretches by 2 / it while the other computes. 2: they do not slow
    /// each other.
    pub smt_throughput: f64,
    /// How a read-modify-write orders the core's own earlier stores.
    pub memory_model: MemoryModel,
    /// How the core makes a compare-and-exchange, and so what one whose
    /// compare fails does to its line. Left out of a profile's serialized
    /// form when locked, so a profile that does not set it reads as it did
    /// before the option.
    #[serde(skip_serializing_if = "CompareExchange::is_locked")]
    pub compare_exchange: CompareExchange,
}

/// A compare-and-exchange as the core's instructions make it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompareExchange {
    /// One locked instruction (x86's `lock cmpxchg`, Armv8.1 LSE's CAS):
    /// it takes the line for ownership whether the compare succeeds or
    /// not. x86 writes the old value back on a failed compare, so that a
    /// locked read never comes without a locked write (Intel SDM vol. 2A,
    /// CMPXCHG).
    #[default]
    Locked,
    /// A load-reserved / store-conditional loop (RISC-V's lr/sc without
    /// Zacas, POWER's lwarx/stwcx., Armv8.0's ldxr/stxr): a compare that
    /// fails branches out before the store-conditional, so the line is
    /// read and not taken for ownership (arch/riscv/include/asm/cmpxchg.h,
    /// arch/powerpc/include/asm/cmpxchg.h: `bne` past the conditional
    /// store).
    LoadReserved,
}

impl CompareExchange {
    /// Whether one whose compare fails still takes its line for ownership.
    pub fn failed_compare_writes(self) -> bool {
        self.is_locked()
    }

    fn is_locked(&self) -> bool {
        *self == CompareExchange::Locked
    }
}

/// Whether every locked read-modify-write waits for the store buffer to
/// drain, or only those whose ordering asks for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryModel {
    /// x86's total store order: a LOCK-prefixed instruction is a full
    /// barrier, whatever the kernel asked for (Intel SDM vol. 3A, 9.2.2).
    #[default]
    Tso,
    /// Arm, RISC-V, POWER: an acquire atomic (a queued spinlock's
    /// atomic_try_cmpxchg_acquire) orders only what comes after it, so the
    /// stores before it may still drain; a fully ordered one (a ticket
    /// lock's atomic_fetch_add) waits for them (the Arm ARM's Load-Acquire,
    /// the RISC-V AMOs' aq and rl bits, RVWMO).
    Weak,
}

impl Default for CoreSpec {
    /// A core no figure is cited for: the smallest out-of-order core the
    /// shipped profiles cite (Nehalem: 32 stores, 10 misses), and siblings
    /// that do not slow each other.
    fn default() -> Self {
        CoreSpec {
            store_buffer: 32,
            outstanding_misses: 10,
            smt_throughput: 2.0,
            memory_model: MemoryModel::Tso,
            compare_exchange: CompareExchange::Locked,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    pub sockets: u32,
    #[serde(default = "one")]
    pub nodes_per_socket: u32,
    pub cores_per_socket: u32,
    #[serde(default = "one")]
    pub threads_per_core: u32,
    /// Cores sharing one last-level cache (an AMD CCX; the whole socket on Intel).
    pub cores_per_llc: u32,
    /// Sockets per board of a multi-board machine (vSMP); all sockets when absent.
    #[serde(default)]
    pub sockets_per_board: Option<u32>,
    /// numa=fake=N: split each node's memory, and the CPUs with it, into N nodes.
    #[serde(default = "one")]
    pub numa_fake: u32,
    /// num_possible_cpus() when hot-pluggable slots exceed the online CPUs.
    #[serde(default)]
    pub possible_cpus: Option<u32>,
    /// The nr_cpus= boot parameter: only the first N CPUs (in the kernel's
    /// numbering, SMT siblings last) exist, online and possible. Sweeping it
    /// runs one machine at several sizes.
    #[serde(default)]
    pub nr_cpus: Option<u32>,
    /// The kernel's base page in bytes (64 KiB on ppc64le): it splits a
    /// futex address into the key's page and offset words.
    #[serde(default = "base_page")]
    pub page_size: u64,
}

fn base_page() -> u64 {
    crate::memory::PAGE_SIZE
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencySpec {
    pub l1_hit: f64,
    /// Line transfer between SMT siblings of one core.
    pub smt: f64,
    /// Between cores that share a last-level cache.
    pub llc: f64,
    /// Between cores of one node that do not share a last-level cache.
    pub node: f64,
    /// Between nodes.
    pub remote: RemoteSpec,
    pub dram_local: f64,
    /// Memory on another node; derived from `remote` when absent.
    #[serde(default)]
    pub dram_remote: Option<RemoteSpec>,
    /// Extra cost of a locked read-modify-write over a plain store.
    pub rmw: f64,
    /// Between boards of a multi-board machine (vSMP: over InfiniBand).
    #[serde(default)]
    pub board: Option<f64>,
}

/// Node-to-node latency: a measured matrix (may be asymmetric), or a
/// hierarchy of node groups for machines too large to write out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RemoteSpec {
    Matrix(Vec<Vec<f64>>),
    Groups(Vec<NodeGroup>),
}

/// Nodes whose index divided by `nodes` is equal are `ns` apart; the first
/// group that contains both nodes applies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGroup {
    pub nodes: u32,
    pub ns: f64,
}

/// A latency table that does not cover the machine's nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LatencyShapeError {
    #[error("a latency matrix must be {nodes} x {nodes} (one row and column per node)")]
    Matrix { nodes: u32 },
    #[error("the last latency group must span all {nodes} nodes")]
    Groups { nodes: u32 },
}

/// Why a profile's latencies, costs or scheduler figures are not ones
/// futexsim can use: the field, its value, and the bound it breaks.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProfileError {
    #[error("{what} = {ns} must be a number of nanoseconds from 0 to {MAX_NS:e}")]
    NotADuration { what: String, ns: f64 },
    #[error("kernel.clock_ghz = {ghz} must be a clock from {MIN_GHZ} to {MAX_GHZ} GHz")]
    Clock { ghz: f64 },
    #[error(
        "kernel.returns = {returns} must be a count of kernel returns from 0 to {MAX_RETURNS}"
    )]
    Returns { returns: f64 },
    #[error("scheduler.tick_hz = {hz} must be from 100 to 1000 (CONFIG_HZ)")]
    TickHz { hz: u32 },
    #[error("{what}: a group of nodes = 0; it must be at least 1")]
    EmptyNodeGroup { what: &'static str },
    /// Below what hardware can do (see the floors' constants).
    #[error("{what} = {ns} ns is below the floor of {floor} ns: {why}")]
    BelowFloor {
        what: &'static str,
        ns: f64,
        floor: f64,
        why: &'static str,
    },
    /// A kernel field that cannot be priced or chosen without another.
    #[error("kernel.{what} needs kernel.{needs}: {why}")]
    Needs {
        what: &'static str,
        needs: &'static str,
        why: &'static str,
    },
    /// Below another figure of the profile that it includes.
    #[error("{what} = {ns} ns is below {other} = {floor} ns: {why}")]
    BelowOther {
        what: &'static str,
        ns: f64,
        other: &'static str,
        floor: f64,
        why: &'static str,
    },
    /// A cost not written, its calibrated cycles at the profile's clock
    /// below the floor: the clock is what to fix.
    #[error(
        "{what}, its calibrated cycles at kernel.clock_ghz = {clock_ghz}, is {resolved:.3} ns, \
         below the floor of {floor} ns: {why}"
    )]
    CalibratedBelowFloor {
        what: &'static str,
        clock_ghz: f64,
        resolved: f64,
        floor: f64,
        why: &'static str,
    },
}

/// Why `ns` (the time `what` takes) is not a duration futexsim can use.
fn check_ns(what: impl Into<String>, ns: f64) -> Result<(), ProfileError> {
    if ns.is_finite() && (0.0..=MAX_NS).contains(&ns) {
        Ok(())
    } else {
        Err(ProfileError::NotADuration {
            what: what.into(),
            ns,
        })
    }
}

impl MachineSpec {
    /// Every latency and kernel cost is a finite, non-negative, sane number
    /// of nanoseconds.
    pub(super) fn check_times(&self) -> Result<(), ProfileError> {
        let l = &self.latency;
        for (what, ns) in [
            ("latency.l1_hit", l.l1_hit),
            ("latency.smt", l.smt),
            ("latency.llc", l.llc),
            ("latency.node", l.node),
            ("latency.dram_local", l.dram_local),
            ("latency.rmw", l.rmw),
            ("latency.board", l.board.unwrap_or(0.0)),
            (
                "coherence.clean_hit",
                self.coherence.clean_hit.unwrap_or(0.0),
            ),
            (
                "coherence.read_occupancy",
                self.coherence.read_occupancy.unwrap_or(0.0),
            ),
            (
                "coherence.transfer_occupancy",
                self.coherence.transfer_occupancy.unwrap_or(0.0),
            ),
            (
                "coherence.llc_transfer_occupancy",
                self.coherence.llc_transfer_occupancy.unwrap_or(0.0),
            ),
            (
                "coherence.remote_transfer_occupancy",
                self.coherence.remote_transfer_occupancy.unwrap_or(0.0),
            ),
            (
                "coherence.snoop_delay",
                self.coherence.snoop_delay.unwrap_or(0.0),
            ),
        ] {
            check_ns(what, ns)?;
        }
        l.remote.check("latency.remote")?;
        if let Some(d) = &l.dram_remote {
            d.check("latency.dram_remote")?;
        }
        let k = &self.kernel;
        for (what, ns) in [
            ("kernel.syscall", k.syscall),
            ("kernel.futex_key_private", k.futex_key_private),
            ("kernel.futex_key_shared", k.futex_key_shared),
            ("kernel.jhash2", k.jhash2),
            ("kernel.schedule", Some(k.schedule)),
        ] {
            if let Some(ns) = ns {
                check_ns(what, ns)?;
            }
        }
        if !(k.clock_ghz.is_finite() && (MIN_GHZ..=MAX_GHZ).contains(&k.clock_ghz)) {
            return Err(ProfileError::Clock { ghz: k.clock_ghz });
        }
        if let Some(ns) = k.fitted_ibrs {
            check_ns("kernel.fitted_ibrs", ns)?;
        }
        if let Some(returns) = k.returns {
            if !(returns.is_finite() && (0.0..=MAX_RETURNS).contains(&returns)) {
                return Err(ProfileError::Returns { returns });
            }
        }
        let stated = k.kpti || k.mitigations.as_ref().is_some_and(|m| !m.is_empty());
        if stated && k.cpu.is_none() && k.syscall.is_none() {
            return Err(ProfileError::Needs {
                what: "mitigations",
                needs: "cpu",
                why:
                    "each defence is priced in the cycles of the measured core the CPU's facts name",
            });
        }
        if k.cpu.is_some() && k.version.is_none() && k.mitigations.is_none() {
            return Err(ProfileError::Needs {
                what: "cpu",
                needs: "version",
                why: "the kernel release decides which defences run on the part",
            });
        }
        self.scheduler.check()?;
        self.check_floors()
    }

    /// No latency or cost is below what hardware can do: each floor is a
    /// bound a hardware engineer would call impossible to beat, far below
    /// every machine measured, so that a profile of zeros (which simulates
    /// billions of futex calls a second per thread) is refused, not run.
    fn check_floors(&self) -> Result<(), ProfileError> {
        let l = &self.latency;
        let below = |what: &'static str, ns: f64, floor: f64, why: &'static str| {
            if ns < floor {
                Err(ProfileError::BelowFloor {
                    what,
                    ns,
                    floor,
                    why,
                })
            } else {
                Ok(())
            }
        };
        let under =
            |what: &'static str, ns: f64, other: &'static str, floor: f64, why: &'static str| {
                if ns < floor {
                    Err(ProfileError::BelowOther {
                        what,
                        ns,
                        other,
                        floor,
                        why,
                    })
                } else {
                    Ok(())
                }
            };
        below("latency.l1_hit", l.l1_hit, L1_HIT_FLOOR_NS, L1_HIT_WHY)?;
        under("latency.smt", l.smt, "latency.l1_hit", l.l1_hit, SMT_WHY)?;
        under("latency.llc", l.llc, "latency.l1_hit", l.l1_hit, LLC_WHY)?;
        under("latency.node", l.node, "latency.llc", l.llc, NODE_WHY)?;
        for ns in l.remote.between_nodes() {
            under(
                "latency.remote (an entry)",
                ns,
                "latency.llc",
                l.llc,
                REMOTE_WHY,
            )?;
        }
        if let Some(board) = l.board {
            under("latency.board", board, "latency.llc", l.llc, REMOTE_WHY)?;
        }
        below("latency.dram_local", l.dram_local, DRAM_FLOOR_NS, DRAM_WHY)?;
        for ns in l.dram_remote.iter().flat_map(RemoteSpec::between_nodes) {
            below(
                "latency.dram_remote (an entry)",
                ns,
                DRAM_FLOOR_NS,
                DRAM_WHY,
            )?;
        }
        below("latency.rmw", l.rmw, CYCLE_FLOOR_NS, RMW_WHY)?;
        let c = &self.coherence;
        if let Some(hit) = c.clean_hit {
            under(
                "coherence.clean_hit",
                hit,
                "latency.l1_hit",
                l.l1_hit,
                LLC_WHY,
            )?;
        }
        for (what, occupancy) in [
            ("coherence.read_occupancy", c.read_occupancy),
            ("coherence.transfer_occupancy", c.transfer_occupancy),
            ("coherence.llc_transfer_occupancy", c.llc_transfer_occupancy),
            (
                "coherence.remote_transfer_occupancy",
                c.remote_transfer_occupancy,
            ),
        ] {
            if let Some(occupancy) = occupancy {
                below(what, occupancy, OCCUPANCY_FLOOR_NS, OCCUPANCY_WHY)?;
            }
        }
        let k = &self.kernel;
        let ns = k.ns();
        // A cost not written is the calibrated cycles at the profile's
        // clock: the error says so, as the clock is what to fix then.
        let cost = |what: &'static str,
                    written: Option<f64>,
                    resolved: f64,
                    floor: f64,
                    why: &'static str| match written {
            Some(ns) => below(what, ns, floor, why),
            None if resolved < floor => Err(ProfileError::CalibratedBelowFloor {
                what,
                clock_ghz: k.clock_ghz,
                resolved,
                floor,
                why,
            }),
            None => Ok(()),
        };
        cost(
            "kernel.syscall",
            k.syscall,
            ns.syscall,
            SYSCALL_FLOOR_NS,
            SYSCALL_WHY,
        )?;
        for (what, written, resolved) in [
            (
                "kernel.futex_key_private",
                k.futex_key_private,
                ns.futex_key_private,
            ),
            (
                "kernel.futex_key_shared",
                k.futex_key_shared,
                ns.futex_key_shared,
            ),
            ("kernel.jhash2", k.jhash2, ns.jhash2),
        ] {
            cost(
                what,
                written,
                resolved,
                KERNEL_STEP_FLOOR_NS,
                KERNEL_STEP_WHY,
            )?;
        }
        below(
            "kernel.schedule",
            k.schedule,
            SCHEDULE_FLOOR_NS,
            SCHEDULE_WHY,
        )
    }
}

// The physical floors of a profile's latencies and costs (docs/machines.md,
// "Floors"). Each is far below the fastest part measured, so that only a
// figure no hardware can have is refused; the relative floors (an LLC
// transfer at least an L1 hit...) need no number.

/// One cycle of a 5 GHz clock: no load returns its data in less than a
/// cycle (L1 load-to-use is 3-5 cycles, 0.6 ns and more, on every core).
const L1_HIT_FLOOR_NS: f64 = 0.2;
const L1_HIT_WHY: &str = "no load returns in less than one cycle of a 5 GHz clock";
/// SMT siblings share their core's L1: a line between them is an L1 access at least.
const SMT_WHY: &str =
    "SMT siblings share the L1, so a line between them takes an L1 access at least";
/// A line another core holds is sought only once the requester's L1 missed.
const LLC_WHY: &str = "a line from outside the core is sought only after the core's L1 missed";
/// A line from another LLC domain is sought there only after the requester's own LLC missed.
const NODE_WHY: &str =
    "a line from another LLC domain is sought only after the requester's LLC missed";
/// A line from another node or board also leaves the requester's LLC first, then crosses a link.
const REMOTE_WHY: &str =
    "a line from another node or board leaves the requester's LLC and crosses a link";
/// DRAM's column access alone (CL) is 9-15 ns on every DDR generation, before the row
/// is opened or the request crosses the caches and the memory controller.
const DRAM_FLOOR_NS: f64 = 10.0;
const DRAM_WHY: &str = "DRAM's column access alone takes 10 ns or more, before the request has \
     crossed the caches and the memory controller";
/// One cycle of a 5 GHz clock, the least any step of hardware takes.
const CYCLE_FLOOR_NS: f64 = 0.2;
/// A locked read-modify-write reads and writes its line: a cycle more than a store at least.
const RMW_WHY: &str = "a locked read-modify-write takes a cycle of a 5 GHz clock more than a \
     store at least";
/// Reads of a Shared line pipeline, but not without end: 20 reads of one line a
/// nanosecond is beyond any cache's ports. (It is no cycle: host calibration fits
/// the occupancy of pipelined reads from 0.05 ns up.)
const OCCUPANCY_FLOOR_NS: f64 = 0.05;
const OCCUPANCY_WHY: &str = "a line's server takes at most 20 requests a nanosecond";
/// SYSCALL and SYSRET (SVC and ERET) each serialize the core, tens of cycles apiece:
/// 50 cycles at 5 GHz; the fastest null syscall measured takes some 40-70 ns.
const SYSCALL_FLOOR_NS: f64 = 10.0;
const SYSCALL_WHY: &str = "entering and leaving the kernel serializes the core twice, 50 cycles \
     of a 5 GHz clock at least";
/// The key and hash steps run kernel instructions: half a cycle of a 5 GHz clock is less
/// than any of them takes (the calibrated ones are 4-60 ns at 2.9 GHz).
const KERNEL_STEP_FLOOR_NS: f64 = 0.1;
const KERNEL_STEP_WHY: &str = "the kernel's step runs instructions, which take a cycle or more";
/// A context switch saves and restores a task's registers and runs __schedule(): hundreds
/// of instructions (lmbench's lat_ctx: 1-5 us on servers).
const SCHEDULE_FLOOR_NS: f64 = 20.0;
const SCHEDULE_WHY: &str = "a context switch runs hundreds of instructions of __schedule() and \
     switch_to()";

impl RemoteSpec {
    /// The longest transfer between two nodes: what an ownership transfer
    /// between the farthest nodes holds its line for when no occupancy is
    /// written.
    pub fn farthest(&self) -> f64 {
        match self {
            RemoteSpec::Matrix(rows) => rows.iter().flatten().copied().fold(0.0, f64::max),
            RemoteSpec::Groups(groups) => groups.iter().map(|g| g.ns).fold(0.0, f64::max),
        }
    }

    fn check(&self, what: &'static str) -> Result<(), ProfileError> {
        match self {
            RemoteSpec::Matrix(rows) => rows
                .iter()
                .flatten()
                .try_for_each(|&ns| check_ns(format!("{what} (an entry)"), ns)),
            RemoteSpec::Groups(groups) => groups.iter().try_for_each(|g| {
                if g.nodes == 0 {
                    return Err(ProfileError::EmptyNodeGroup { what });
                }
                check_ns(format!("{what} (a group's ns)"), g.ns)
            }),
        }
    }

    /// Every latency it gives between two different nodes: a matrix's
    /// entries off its diagonal (the diagonal is the node's own figure), a
    /// hierarchy's groups.
    pub fn between_nodes(&self) -> Vec<f64> {
        match self {
            RemoteSpec::Matrix(rows) => rows
                .iter()
                .enumerate()
                .flat_map(|(i, row)| {
                    row.iter()
                        .enumerate()
                        .filter(move |&(j, _)| j != i)
                        .map(|(_, &ns)| ns)
                })
                .collect(),
            RemoteSpec::Groups(groups) => groups.iter().map(|g| g.ns).collect(),
        }
    }

    /// The full row-major matrix; `diagonal_ns` fills same-node entries.
    pub(super) fn matrix(
        &self,
        nodes: u32,
        diagonal_ns: f64,
    ) -> Result<Vec<Ps>, LatencyShapeError> {
        let n = nodes as usize;
        if let RemoteSpec::Matrix(rows) = self {
            if rows.len() != n || rows.iter().any(|r| r.len() != n) {
                return Err(LatencyShapeError::Matrix { nodes });
            }
        }
        let mut out = vec![0; n * n];
        match self {
            RemoteSpec::Matrix(rows) => {
                for (i, row) in rows.iter().enumerate() {
                    for (j, &ns) in row.iter().enumerate() {
                        out[i * n + j] = ns_to_ps(if i == j { diagonal_ns } else { ns });
                    }
                }
            }
            RemoteSpec::Groups(groups) => {
                if groups.is_empty() || groups.last().map(|g| g.nodes) < Some(nodes) {
                    return Err(LatencyShapeError::Groups { nodes });
                }
                for i in 0..nodes {
                    for j in 0..nodes {
                        let ns = if i == j {
                            diagonal_ns
                        } else {
                            groups
                                .iter()
                                .find(|g| i / g.nodes == j / g.nodes)
                                .map_or(0.0, |g| g.ns)
                        };
                        out[(i * nodes + j) as usize] = ns_to_ps(ns);
                    }
                }
            }
        }
        Ok(out)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoherenceSpec {
    /// Bytes moved and invalidated together: the machine's cache line (64 on
    /// x86, 128 on POWER and Apple cores). A 128-byte line is a line of that
    /// size, not a stand-in for the adjacent-line prefetcher
    /// (`adjacent_line_prefetch`).
    pub line: u64,
    /// Coherence unit between boards (vSMP: 4096, a page): a request that
    /// crosses boards moves the whole unit, and invalidates every line of
    /// it the other boards hold (a write), or downgrades their modified
    /// ones (a read). Absent: boards exchange single lines.
    #[serde(default)]
    pub board_line: Option<u64>,
    /// A clean line served inside the requester's last-level cache domain:
    /// an L3 hit where the LLC is inclusive or holds the line, a clean
    /// forward from a neighbour's L2 through the snoop filter otherwise
    /// (MLC's local L2-to-L2 HIT). `latency.llc` when absent.
    #[serde(default)]
    pub clean_hit: Option<f64>,
    /// How long a clean read of a line no core holds exclusively holds its
    /// line's server: the LLC, the CHA's snoop filter or the probe filter
    /// forwards a Shared copy without taking it from anyone, so such reads
    /// pipeline, each taking this much of the server, inclusive LLC or
    /// not. `latency.l1_hit` (one cache access) when absent.
    #[serde(default)]
    pub read_occupancy: Option<f64>,
    /// How long an ownership transfer or a snoop of the holder (a write, an
    /// RMW, a read of an Exclusive or Modified line) holds its line's
    /// server when the requester and the line's source share a node: the
    /// home agent's or CHA's occupancy for one such transaction, so how far
    /// apart queued hand-offs are. The transfer's own latency (one
    /// migration of the line each) when absent.
    #[serde(default)]
    pub transfer_occupancy: Option<f64>,
    /// The same when the requester and the line's source share a
    /// last-level cache domain (an AMD CCX, an Apple cluster), where the
    /// node holds several: a transfer inside one is shorter than one across
    /// the node, and a core-to-core round trip measures each.
    /// `transfer_occupancy` when absent.
    #[serde(default)]
    pub llc_transfer_occupancy: Option<f64>,
    /// The same between nodes (or boards). The transfer's own latency when
    /// absent.
    #[serde(default)]
    pub remote_transfer_occupancy: Option<f64>,
    /// How long after the line's server frees a queued request's snoop
    /// takes to reach the line's holder: until it arrives the holder keeps
    /// serving its own accesses (its burst), then the line goes. 0 when
    /// absent: the holder yields the line with the access it has.
    #[serde(default)]
    pub snoop_delay: Option<f64>,
    /// How many grants in a row the LLC domain holding a contended line
    /// keeps it for while requests from elsewhere wait: its own waiting
    /// requests go first for up to this many, then the oldest request from
    /// another domain. 0 (when absent): the oldest request first, whatever
    /// its domain.
    #[serde(default)]
    pub local_batch: Option<u32>,
    /// The lowest level whose requests go through the line's home (home
    /// agent, probe filter, hub) and pay the detour when the home is
    /// elsewhere: none when absent.
    #[serde(default)]
    pub home_routes: HomeRoutes,
    /// What one last-level cache domain (an Intel socket or SNC node, an AMD
    /// CCX) holds, in MiB: its LLC, and on a non-inclusive LLC its cores'
    /// L2s too, which the snoop filter covers. A line its domain has not
    /// touched while this much else came in has left its caches and comes
    /// from memory. Unbounded when absent.
    #[serde(default)]
    pub llc_mib: Option<f64>,
    /// The L2 spatial ("adjacent line") prefetcher: a miss also brings the
    /// other line of its 128-byte pair into the core, shared.
    #[serde(default)]
    pub adjacent_line_prefetch: bool,
}

/// Where a machine's coherence goes through the home of the line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HomeRoutes {
    /// Requests are resolved where the line is (a broadcast or a
    /// requester-side snoop filter).
    #[default]
    None,
    /// Requests that leave their node go to the home node's directory
    /// (Intel's UPI home snoop; the SGI UV hub).
    Remote,
    /// Requests that leave their core complex go to the home's probe filter
    /// (AMD: between CCXs, even on one socket).
    Complex,
}

impl Default for CoherenceSpec {
    fn default() -> Self {
        CoherenceSpec {
            line: 64,
            board_line: None,
            clean_hit: None,
            read_occupancy: None,
            transfer_occupancy: None,
            llc_transfer_occupancy: None,
            remote_transfer_occupancy: None,
            snoop_delay: None,
            local_batch: None,
            home_routes: HomeRoutes::None,
            llc_mib: None,
            adjacent_line_prefetch: false,
        }
    }
}

/// Costs of the kernel's own work around the memory accesses.
///
/// The syscall, key and hash costs are cycles at the profile's clock
/// (`clock_ghz`), so each machine gets its own; `syscall`,
/// `futex_key_private`, `futex_key_shared` and `jhash2`, in ns, replace
/// them where a machine was measured (`futexsim calibrate` writes them).
/// The cycle counts are calibrated once, on one published figure: LKP's
/// will-it-scale futex4 in process mode on Cooper Lake at 2.9 GHz runs
/// 8.37 M failed private FUTEX_WAITs per second per process
/// (202310081429.a30c99f2-oliver.sang), about 120 ns per call with every
/// line in L1; the syscall's share is what is left of that once the
/// modelled steps are taken out (85 ns, 247 cycles). musl's note that a
/// failed wait "typically takes 1000 cycles or less" bounds it from above.
/// Cooper Lake's kernel pays no mitigation on entry and exit that costs a
/// syscall more than a few cycles (it is not open to Meltdown, and its
/// enhanced IBRS is set once at boot); a CPU whose kernel does pays each of
/// its `mitigations` on top.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KernelCosts {
    /// The core clock the cycle counts run at, in GHz.
    pub clock_ghz: f64,
    /// The kernel isolates its page tables on every entry and exit: the
    /// same as listing `pti` in `mitigations`, kept for profiles that say so.
    pub kpti: bool,
    /// The kernel release the profile's cases ran: with `cpu`, it decides
    /// which defences run on every syscall. A config of another era sets
    /// its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<KernelVersion>,
    /// The CPU's facts as the kernel's speculation code reads them, and the
    /// measured core that prices its defences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuFacts>,
    /// The defences run on every syscall entry and exit, when stated
    /// outright: this list replaces what `version` selects on `cpu`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mitigations: Option<Vec<Mitigation>>,
    /// IBRS toggled on entry and exit, in ns, where fitted to this
    /// machine's own uncontended figure (docs/machines.md §2.2): the one
    /// defence whose measurement names no clock to scale it by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fitted_ibrs: Option<f64>,
    /// How many kernel functions return in one futex syscall: what the
    /// safe return (`safe-ret`) prices per return. Unmeasured; 16 when not
    /// written (docs/machines.md §2.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returns: Option<f64>,
    /// Entry and exit of one syscall, mitigations included, in ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syscall: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub futex_key_private: Option<f64>,
    /// get_user_pages_fast and the page lookup of a shared key, in ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub futex_key_shared: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jhash2: Option<f64>,
    /// One context switch: schedule() putting a task to sleep or switching
    /// the next one in, as a blocking wait, a preemption or a CPU leaving
    /// idle pays it, in ns.
    pub schedule: f64,
    pub lock: LockKind,
}

/// The clock of the calibration machine (Cooper Lake, Xeon Platinum 8380H).
const CALIBRATION_GHZ: f64 = 2.9;
/// Syscall entry and exit on it, with its mitigations (no page-table isolation).
const SYSCALL_CYCLES: f64 = 85.0 * CALIBRATION_GHZ;
const FUTEX_KEY_PRIVATE_CYCLES: f64 = 8.0 * CALIBRATION_GHZ;
const FUTEX_KEY_SHARED_CYCLES: f64 = 60.0 * CALIBRATION_GHZ;
const JHASH2_CYCLES: f64 = 4.0 * CALIBRATION_GHZ;
/// The kernel functions that return in one futex syscall, counted on the
/// call chain of a FUTEX_WAIT that finds the word changed in 6.x (do_syscall_64,
/// x64_sys_call, __x64_sys_futex, do_futex, futex_wait, __futex_wait,
/// futex_wait_setup, get_futex_key, futex_q_lock, futex_hash, the lock and
/// unlock, futex_q_unlock, the user read, and the entry and exit work):
/// about 16. Not measured (the return counters ex_ret_near_ret:k would
/// give it): plausibly 10-40.
const RETURNS_PER_SYSCALL: f64 = 16.0;

/// The kernel's own costs of one machine, in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelNs {
    pub syscall: f64,
    pub futex_key_private: f64,
    pub futex_key_shared: f64,
    pub jhash2: f64,
}

impl KernelCosts {
    /// The defences the kernel runs on every syscall, each once however
    /// often it is listed: the stated list, or what the version selects on
    /// the CPU (`kpti = true` adds `pti` to either).
    pub fn applied(&self) -> Vec<Mitigation> {
        let mut applied = match (&self.mitigations, self.cpu, self.version) {
            (Some(stated), _, _) => stated.clone(),
            (None, Some(cpu), Some(version)) => cpu.selected(version),
            (None, _, _) => Vec::new(),
        };
        if self.kpti {
            applied.push(Mitigation::Pti);
        }
        applied.sort();
        applied.dedup();
        applied
    }

    /// What the applied defences add to one syscall. `check_times` refuses
    /// defences on a profile without CPU facts, which price them.
    fn mitigations_ns(&self) -> f64 {
        let Some(cpu) = self.cpu else {
            return 0.0;
        };
        let returns = self.returns.unwrap_or(RETURNS_PER_SYSCALL);
        let price = |m: Mitigation| match (m, self.fitted_ibrs) {
            (Mitigation::Ibrs, Some(fitted)) => fitted,
            _ => cpu.syscall_ns(m, self.clock_ghz, returns),
        };
        self.applied().into_iter().map(price).sum()
    }

    /// The syscall, key and hash costs at this machine's clock, or as measured.
    pub fn ns(&self) -> KernelNs {
        let at_clock = |cycles: f64| cycles / self.clock_ghz;
        KernelNs {
            syscall: self
                .syscall
                .unwrap_or_else(|| at_clock(SYSCALL_CYCLES) + self.mitigations_ns()),
            futex_key_private: self
                .futex_key_private
                .unwrap_or_else(|| at_clock(FUTEX_KEY_PRIVATE_CYCLES)),
            futex_key_shared: self
                .futex_key_shared
                .unwrap_or_else(|| at_clock(FUTEX_KEY_SHARED_CYCLES)),
            jhash2: self.jhash2.unwrap_or_else(|| at_clock(JHASH2_CYCLES)),
        }
    }
}

impl Default for KernelCosts {
    fn default() -> Self {
        KernelCosts {
            clock_ghz: CALIBRATION_GHZ,
            kpti: false,
            version: None,
            cpu: None,
            mitigations: None,
            fitted_ibrs: None,
            returns: None,
            syscall: None,
            futex_key_private: None,
            futex_key_shared: None,
            jhash2: None,
            schedule: 1000.0,
            lock: LockKind::Queued,
        }
    }
}

/// The scheduler's timing (sim/engine/sched.rs), in ns except the tick.
/// Every default is a published figure for a server of the 2010s:
///
/// - `tick_hz`: CONFIG_HZ's default, 250 (kernel/Kconfig.hz, HZ_250).
/// - `slice`: CFS/EEVDF's slice before the tick preempts, 0.75 ms
///   (sysctl_sched_base_slice, kernel/sched/fair.c, v6.6; min_granularity
///   before it) scaled by 1 + ilog2(min(CPUs, 8)) = 4 for 8 CPUs or more
///   (SCHED_TUNABLESCALING_LOG): 3 ms.
/// - `ipi_send`: the waker's cost of sending a reschedule or call-function
///   IPI (smp_send_reschedule, send_call_function_single_ipi): one write of
///   the x2APIC ICR, MSR 0x830 (Intel SDM vol. 3A, 10.12.9: "a single MSR
///   write to the Interrupt Command Register is required for dispatching an
///   interrupt in x2APIC mode"; the mode has no delivery-status bit to wait
///   on). Unmeasured: no published figure of that write alone was found, so
///   100 ns, plausibly 50-300 ns (a serialising WRMSR of a few hundred
///   cycles). The 1600-2000 cycles V. Pallipadi measured on Westmere ("Extend
///   mwait idle to optimize away IPIs when possible", LKML 2012-02-06), this
///   default's 700 ns before, are smp_call_function_single's synchronous
///   round trip, the waker waiting for the target to run the function.
/// - `ipi`: from the IPI's send to the target CPU taking it, 1 us (an IPI's
///   round trip is 1-3 us on x86: sgx-step's APIC IPI measurements and the
///   kernel's own smp_call_function figures above).
/// - `ipi_handler`: the target's time in the handler of a reschedule or
///   call-function IPI that woke it from idle, beside the accesses the
///   model makes there (the wake list's): the interrupt's entry and exit,
///   irq_enter/irq_exit and the handler's dispatch (sysvec_reschedule_ipi,
///   sysvec_call_function_single; on arm64 and RISC-V the IPI domain's
///   handler). Unmeasured: no published figure of the handler alone was
///   found, so 500 ns, plausibly 200-2000 ns (an interrupt's entry and
///   exit, a few hundred to a few thousand cycles with the defences).
/// - `idle_polls`: whether an idle CPU keeps TIF_POLLING_NRFLAG set, so a
///   wake-up sets TIF_NEED_RESCHED on its idle task (set_nr_if_polling,
///   set_nr_and_not_polling) and sends no IPI: true where the idle states
///   poll or wait in MWAIT on the thread_info flags (poll_idle;
///   mwait_idle_with_hints, arch/x86/include/asm/mwait.h, which intel_idle
///   and acpi_idle's FFH states use); false where they halt and need the
///   interrupt (WFI on arm64 and RISC-V, HLT in a guest, POWER's cede after
///   its snooze loop). true by default: x86 on bare metal.
/// - `ttwu_queue`: sched_feat(TTWU_QUEUE), on by default: ttwu_queue_cond
///   hands a wake-up to the target CPU's wake list (ttwu_queue_wakelist)
///   when the target shares no LLC with the waker (518cd6234178), or is
///   idle (f3dd3f674555, v6.0), and the target takes its own runqueue lock
///   (sched_ttwu_pending) instead of the waker taking it.
/// - `idle_exit`, `deep_idle_exit`, `deep_idle_after`: intel_idle's
///   Skylake-SP table as `cpupower idle-info` prints it: C1 exits in 2 us;
///   C6 exits in 133 us and pays off after 400 us (its target residency),
///   so a CPU idle that long is taken to be in C6.
/// - `placement`: `pinned` (every task stays on the CPU its workload gives
///   it, as the benchmarks pin) or `placed` (a task whose benchmark sets no
///   single-CPU affinity is placed at fork and at each wake-up, as
///   select_task_rq_fair does: docs/scheduler.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulerSpec {
    /// Left out of a profile's serialized form when pinned, so a profile
    /// that does not ask for placement reads as it did before the option.
    #[serde(skip_serializing_if = "TaskPlacement::is_pinned")]
    pub placement: TaskPlacement,
    pub tick_hz: u32,
    pub slice: f64,
    pub ipi_send: f64,
    pub ipi: f64,
    pub ipi_handler: f64,
    pub idle_polls: bool,
    pub ttwu_queue: bool,
    pub idle_exit: f64,
    pub deep_idle_exit: f64,
    pub deep_idle_after: f64,
}

/// Where the scheduler runs the tasks that are not pinned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskPlacement {
    /// On the CPU the workload gives each task, for good.
    #[default]
    Pinned,
    /// By the wake-affine and least-loaded policy of sim/engine/sched.rs.
    Placed,
}

impl TaskPlacement {
    fn is_pinned(&self) -> bool {
        *self == TaskPlacement::Pinned
    }
}

impl Default for SchedulerSpec {
    fn default() -> Self {
        SchedulerSpec {
            placement: TaskPlacement::Pinned,
            tick_hz: 250,
            slice: 3_000_000.0,
            ipi_send: 100.0,
            ipi: 1000.0,
            ipi_handler: 500.0,
            idle_polls: true,
            ttwu_queue: true,
            idle_exit: 2000.0,
            deep_idle_exit: 133_000.0,
            deep_idle_after: 400_000.0,
        }
    }
}

impl SchedulerSpec {
    fn check(&self) -> Result<(), ProfileError> {
        if !(100..=1000).contains(&self.tick_hz) {
            return Err(ProfileError::TickHz { hz: self.tick_hz });
        }
        for (what, ns) in [
            ("scheduler.slice", self.slice),
            ("scheduler.ipi_send", self.ipi_send),
            ("scheduler.ipi", self.ipi),
            ("scheduler.ipi_handler", self.ipi_handler),
            ("scheduler.idle_exit", self.idle_exit),
            ("scheduler.deep_idle_exit", self.deep_idle_exit),
            ("scheduler.deep_idle_after", self.deep_idle_after),
        ] {
            check_ns(what, ns)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheduler_defaults_load_and_a_tick_outside_config_hz_does_not() {
        assert_eq!(SchedulerSpec::default().check(), Ok(()));
        let slow = SchedulerSpec {
            tick_hz: 10,
            ..SchedulerSpec::default()
        };
        assert_eq!(slow.check(), Err(ProfileError::TickHz { hz: 10 }));
        assert!(slow
            .check()
            .unwrap_err()
            .to_string()
            .contains("tick_hz = 10"));
        let negative = SchedulerSpec {
            ipi: -1.0,
            ..SchedulerSpec::default()
        };
        assert!(negative
            .check()
            .unwrap_err()
            .to_string()
            .contains("scheduler.ipi"));
    }

    #[test]
    fn a_figure_below_its_floor_is_refused_by_name() {
        let icx = crate::machine::presets::preset("icx-2s").unwrap();
        assert_eq!(icx.check_times(), Ok(()));
        let refused = |change: &dyn Fn(&mut MachineSpec), says: &str| {
            let mut spec = icx.clone();
            change(&mut spec);
            let e = spec.check_times().unwrap_err().to_string();
            assert!(e.starts_with(says), "{e}");
        };
        refused(
            &|s| s.latency.l1_hit = 0.0,
            "latency.l1_hit = 0 ns is below the floor",
        );
        refused(
            &|s| s.latency.smt = 1.0,
            "latency.smt = 1 ns is below latency.l1_hit",
        );
        refused(
            &|s| s.latency.llc = 1.0,
            "latency.llc = 1 ns is below latency.l1_hit",
        );
        refused(
            &|s| s.latency.node = 50.0,
            "latency.node = 50 ns is below latency.llc",
        );
        refused(
            &|s| s.latency.remote = RemoteSpec::Groups(vec![NodeGroup { nodes: 2, ns: 60.0 }]),
            "latency.remote (an entry) = 60 ns is below latency.llc",
        );
        refused(&|s| s.latency.board = Some(1.0), "latency.board = 1 ns");
        refused(&|s| s.latency.dram_local = 9.0, "latency.dram_local = 9 ns");
        refused(&|s| s.latency.rmw = 0.0, "latency.rmw = 0 ns");
        refused(
            &|s| s.coherence.clean_hit = Some(1.0),
            "coherence.clean_hit = 1 ns",
        );
        refused(
            &|s| s.coherence.read_occupancy = Some(0.0),
            "coherence.read_occupancy",
        );
        refused(
            &|s| s.coherence.transfer_occupancy = Some(0.0),
            "coherence.transfer_occupancy",
        );
        refused(
            &|s| s.coherence.snoop_delay = Some(-1.0),
            "coherence.snoop_delay",
        );
        refused(&|s| s.kernel.syscall = Some(0.0), "kernel.syscall = 0 ns");
        refused(&|s| s.kernel.jhash2 = Some(0.0), "kernel.jhash2 = 0 ns");
        refused(&|s| s.kernel.schedule = 0.0, "kernel.schedule = 0 ns");
        // A cost not written is its calibrated cycles at the clock.
        refused(
            &|s| s.kernel.clock_ghz = 50.0,
            "kernel.syscall, its calibrated cycles at kernel.clock_ghz = 50",
        );
        // The diagonal of a matrix is the node's own figure, not a transfer.
        let mut spec = icx.clone();
        spec.latency.remote = RemoteSpec::Matrix(vec![vec![0.0, 127.0], vec![127.0, 0.0]]);
        assert_eq!(spec.check_times(), Ok(()));
    }

    /// Sandy Bridge-EP's facts, priced as the measured Broadwell.
    fn sandy_bridge_ep() -> KernelCosts {
        toml::from_str(
            "clock_ghz = 2.0\nversion = \"6.15\"\n[cpu]\npriced_as = \"broadwell\"\n\
             pcid = true\nmeltdown = true\nmds = true\neibrs = false\nretbleed = false\n\
             bhi_ctrl = false",
        )
        .unwrap()
    }

    #[test]
    fn the_kernel_version_selects_the_defences_and_the_measured_core_prices_them() {
        let k = sandy_bridge_ep();
        assert_eq!(k.applied(), vec![Mitigation::Pti, Mitigation::Mds]);
        let bare = KernelCosts {
            mitigations: Some(Vec::new()),
            ..k.clone()
        };
        // Two CR3 writes of 206 cycles and a VERW of 610, at 2 GHz.
        assert_eq!(k.ns().syscall - bare.ns().syscall, 206.0 + 305.0);
        // A config of a kernel before the MDS clear (5.1) pays no VERW,
        // and the syscall table's retpoline instead.
        let v5_0 = KernelCosts {
            version: Some(KernelVersion::new(5, 0)),
            ..k.clone()
        };
        assert_eq!(v5_0.applied(), vec![Mitigation::Pti, Mitigation::Retpoline]);
        assert_eq!(v5_0.ns().syscall - bare.ns().syscall, 206.0 + 14.0);
        // Only the syscall pays: the key and hash costs do not move.
        assert_eq!(k.ns().futex_key_private, bare.ns().futex_key_private);
    }

    #[test]
    fn a_stated_list_replaces_the_selection_and_a_measured_syscall_holds_everything() {
        let k = sandy_bridge_ep();
        let pti_only = KernelCosts {
            mitigations: Some(vec![Mitigation::Pti, Mitigation::Pti]),
            ..k.clone()
        };
        assert_eq!(pti_only.applied(), vec![Mitigation::Pti]);
        let alias = KernelCosts {
            kpti: true,
            mitigations: Some(Vec::new()),
            ..k.clone()
        };
        assert_eq!(alias.ns(), pti_only.ns());
        let measured = KernelCosts {
            syscall: Some(300.0),
            ..k.clone()
        };
        assert_eq!(measured.ns().syscall, 300.0);
        // A fitted IBRS replaces the measured 488 ns where IBRS runs, and
        // moves nothing where it does not.
        let skylake = KernelCosts {
            cpu: k.cpu.map(|c| CpuFacts {
                retbleed: true,
                ..c
            }),
            ..k.clone()
        };
        assert!(skylake.applied().contains(&Mitigation::Ibrs));
        let fitted = |k: &KernelCosts| KernelCosts {
            fitted_ibrs: Some(100.0),
            ..k.clone()
        };
        assert_eq!(skylake.ns().syscall - fitted(&skylake).ns().syscall, 388.0);
        assert_eq!(fitted(&k).ns(), k.ns());
    }

    #[test]
    fn defences_need_the_cpus_facts_and_the_facts_need_a_kernel_version() {
        // A profile that states neither facts nor a kernel.
        let bare = || {
            let mut spec = crate::machine::presets::preset("icx-2s").unwrap();
            spec.kernel.cpu = None;
            spec.kernel.version = None;
            spec
        };
        let mut spec = bare();
        spec.kernel.mitigations = Some(vec![Mitigation::Pti]);
        let e = spec.check_times().unwrap_err().to_string();
        assert!(e.contains("kernel.mitigations needs kernel.cpu"), "{e}");
        let mut spec = bare();
        spec.kernel.cpu = sandy_bridge_ep().cpu;
        let e = spec.check_times().unwrap_err().to_string();
        assert!(e.contains("kernel.cpu needs kernel.version"), "{e}");
    }

    #[test]
    fn the_amd_profiles_pay_the_safe_return_their_kernels_select_and_intels_do_not() {
        let syscall = |spec: &MachineSpec| spec.kernel.ns().syscall;
        let off = |spec: &MachineSpec| {
            let mut bare = spec.clone();
            bare.kernel.mitigations = Some(Vec::new());
            bare
        };
        for name in ["milan-2s", "genoa-2s-384", "bergamo-1s-256"] {
            let spec = crate::machine::presets::preset(name).unwrap();
            assert!(
                spec.kernel.applied().contains(&Mitigation::SafeRet),
                "{name}"
            );
            assert!(syscall(&spec) > syscall(&off(&spec)), "{name}");
            // Each kernel return more is one more forced miss.
            let mut longer = spec.clone();
            longer.kernel.returns = Some(17.0);
            let miss = 13.0 / spec.kernel.clock_ghz;
            assert!(
                (syscall(&longer) - syscall(&spec) - miss).abs() < 1e-9,
                "{name}"
            );
            // A kernel before SRSO's safe return (6.5) does not pay it.
            let mut before = spec.clone();
            before.kernel.version = Some(KernelVersion::new(6, 4));
            assert!(
                !before.kernel.applied().contains(&Mitigation::SafeRet),
                "{name}"
            );
        }
        // Milan's 6.16 runs no retpoline on the syscall path and no branch
        // history clear: the safe return alone.
        let milan = crate::machine::presets::preset("milan-2s").unwrap();
        assert_eq!(milan.kernel.applied(), vec![Mitigation::SafeRet]);
        // An Intel part's returns cost nothing more: none goes through a thunk.
        let mut icx = crate::machine::presets::preset("icx-2s").unwrap();
        let before = syscall(&icx);
        icx.kernel.returns = Some(40.0);
        assert_eq!(syscall(&icx), before);
    }

    #[test]
    fn an_amd_profile_pays_the_tsa_clear_only_where_its_kernel_has_it() {
        for name in ["milan-2s", "genoa-2s-384", "bergamo-1s-256"] {
            let stated = crate::machine::presets::preset(name).unwrap();
            // Each profile's kernel (6.16-rc1, 6.6) predates 6.16-rc6.
            assert!(
                !stated.kernel.applied().contains(&Mitigation::Tsa),
                "{name}"
            );
            let mut later = stated.clone();
            later.kernel.version = Some(KernelVersion::new(6, 16));
            assert!(later.kernel.applied().contains(&Mitigation::Tsa), "{name}");
            // One VERW a syscall, Cascade Lake's 458 cycles standing in.
            let added = later.kernel.ns().syscall - stated.kernel.ns().syscall;
            let verw = 458.0 / stated.kernel.clock_ghz;
            assert!((added - verw).abs() < 1e-9, "{name}: {added}");
        }
    }

    #[test]
    fn a_count_of_returns_that_is_no_count_is_refused() {
        let mut spec = crate::machine::presets::preset("milan-2s").unwrap();
        spec.kernel.returns = Some(-1.0);
        let e = spec.check_times().unwrap_err().to_string();
        assert!(e.contains("kernel.returns = -1"), "{e}");
    }

    #[test]
    fn an_unknown_mitigation_is_refused_with_the_known_ones() {
        let e = toml::from_str::<KernelCosts>("mitigations = [\"pti\", \"srso\"]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown variant `srso`"), "{e}");
        for known in [
            "`pti`",
            "`ibrs`",
            "`retpoline`",
            "`mds`",
            "`bhi`",
            "`retpoline-lfence`",
            "`untrain-ret`",
            "`safe-ret`",
            "`ibpb-entry`",
            "`tsa`",
        ] {
            assert!(e.contains(known), "{e}");
        }
    }

    #[test]
    fn a_latency_table_must_cover_every_node() {
        let one_row = RemoteSpec::Matrix(vec![vec![0.0, 100.0]]);
        assert_eq!(
            one_row.matrix(2, 5.0),
            Err(LatencyShapeError::Matrix { nodes: 2 })
        );
        let square = RemoteSpec::Matrix(vec![vec![0.0, 100.0], vec![120.0, 0.0]]);
        assert_eq!(
            square.matrix(2, 5.0),
            Ok(vec![5000, 100_000, 120_000, 5000])
        );
        let socket_pairs = RemoteSpec::Groups(vec![NodeGroup { nodes: 2, ns: 50.0 }]);
        assert_eq!(
            socket_pairs.matrix(4, 5.0),
            Err(LatencyShapeError::Groups { nodes: 4 })
        );
        assert_eq!(
            RemoteSpec::Groups(Vec::new()).matrix(1, 5.0),
            Err(LatencyShapeError::Groups { nodes: 1 })
        );
        assert_eq!(
            socket_pairs.matrix(2, 5.0),
            Ok(vec![5000, 50_000, 50_000, 5000])
        );
    }
}
