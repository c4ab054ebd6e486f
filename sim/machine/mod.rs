//! A machine profile: topology, the latency of moving a line between any two
//! CPUs or from memory, the coherence granularity, the spinlock the kernel
//! builds, and the cost of the kernel's non-memory work. Profiles are TOML
//! (configs/machines/); everything here is resolved to integer picoseconds.

pub mod import;
mod mitigations;
mod platform;
pub mod plausible;
pub mod presets;
mod profile;
pub mod tlb;

pub use mitigations::{CpuFacts, KernelVersion, MeasuredCore, Mitigation};
pub use platform::{Platform, PlatformError};

pub use profile::{
    CoherenceSpec, CompareExchange, CoreSpec, HomeRoutes, KernelCosts, KernelNs, LatencySpec,
    MachineSpec, MemoryModel, NodeGroup, RemoteSpec, SchedulerSpec, TaskPlacement, TopologySpec,
};

use crate::limits::{MAX_CPUS, MAX_IN_FLIGHT, MAX_LOCAL_BATCH, MAX_NODES, MAX_PAGE, MIN_PAGE};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Simulated time in picoseconds: integer, so runs are bit-reproducible.
pub type Ps = u64;

pub fn ns_to_ps(ns: f64) -> Ps {
    (ns * 1000.0).round() as Ps
}

/// The kernel's spinlock of the era (docs/kernel-facts.md §3.2).
// snake_case: a kind whose name has two words is named as the config's
// other values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockKind {
    /// 2.6.25-4.1: every waiter spins on the lock word.
    Ticket,
    /// 4.2+, the qspinlock: a pending waiter, then an MCS queue; only its
    /// head spins on the lock word, the rest on their own MCS node.
    Queued,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("machine '{machine}': {message}")]
pub struct MachineError {
    pub machine: String,
    pub message: String,
}

/// Where one CPU sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuPlace {
    /// Memory node as the kernel sees it (after NUMA emulation).
    pub node: u32,
    /// Physical node: what latencies depend on.
    pub phys_node: u32,
    pub socket: u32,
    pub llc: u32,
    pub core: u32,
    pub board: u32,
}

/// The level of the coherence hierarchy at which two CPUs meet: the lowest
/// structure they share resolves a request of one for a line the other has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// One core's caches, shared by its SMT siblings.
    Core,
    /// A last-level cache domain: an Intel socket (or SNC node), an AMD CCX.
    Complex,
    /// One node, across its complexes: the node's home agent or probe filter.
    Node,
    /// Another node: the interconnect, through the line's home where the
    /// machine routes so.
    Remote,
    /// Another board of a multi-board machine.
    Board,
}

/// The coherence hierarchy's parameters, resolved from `[coherence]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    /// A clean line served inside the requester's LLC domain.
    pub clean_hit_ps: Ps,
    /// How long a clean read of a line no core holds exclusively holds its
    /// line's server.
    pub read_occupancy_ps: Ps,
    /// How long an ownership transfer or a snoop of the holder holds its
    /// line's server within a node, and between nodes; None: the
    /// transfer's own latency.
    pub transfer_occupancy_ps: Option<Ps>,
    /// The same inside one LLC domain; None: `transfer_occupancy_ps`.
    pub llc_transfer_occupancy_ps: Option<Ps>,
    pub remote_transfer_occupancy_ps: Option<Ps>,
    /// How long after the line's server frees a queued snoop reaches the
    /// holder, which serves its own accesses until then.
    pub snoop_delay_ps: Ps,
    /// Grants in a row a contended line stays in its LLC domain while
    /// requests from elsewhere wait; 0 for oldest first.
    pub local_batch: u32,
    pub home_routes: HomeRoutes,
    /// Lines one LLC domain holds; `u32::MAX` for no limit.
    pub llc_lines: u32,
    pub adjacent_line_prefetch: bool,
    /// LLC domains with CPUs.
    pub llc_domains: u32,
}

/// A resolved machine profile.
#[derive(Clone, Debug)]
pub struct Machine {
    pub spec: MachineSpec,
    places: Vec<CpuPlace>,
    phys_nodes: u32,
    /// Nodes that have CPUs: all of them, unless nr_cpus leaves some out.
    nodes: u32,
    /// Node-to-node line transfer latency (physical nodes), row-major.
    remote_ps: Vec<Ps>,
    /// DRAM latency from a CPU's physical node to a memory's physical node.
    dram_ps: Vec<Ps>,
    pub smt_ps: Ps,
    pub llc_ps: Ps,
    pub node_ps: Ps,
    pub board_ps: Ps,
    pub l1_ps: Ps,
    pub rmw_ps: Ps,
    /// Store-buffer entries per CPU (0: stores wait for their line).
    pub store_buffer: u32,
    /// L1D misses a CPU has in flight at once (at least 1).
    pub outstanding_misses: u32,
    /// Whether every locked RMW waits for the store buffer (x86), or only
    /// a fully ordered one (Arm, RISC-V, POWER).
    pub memory_model: MemoryModel,
    /// What a compare-and-exchange whose compare fails does to its line.
    pub compare_exchange: CompareExchange,
    /// Per mille: how long a compute step takes while the CPU's SMT
    /// sibling computes too, against alone (1000 when they do not slow
    /// each other).
    pub smt_stretch_permille: u64,
    pub line_shift: u32,
    /// The coherence unit between boards, where it is larger than a line
    /// (vSMP keeps boards coherent by the 4 KiB page): a request that
    /// crosses boards moves and invalidates the whole unit
    /// (`coherence::Directory`).
    board_line_shift: Option<u32>,
    pub hierarchy: Hierarchy,
    /// What reaching a table's page costs (`[tlb]`); None: nothing.
    pub translation: Option<tlb::Translation>,
    pub costs: ResolvedCosts,
    pub sched: SchedCosts,
}

/// Kernel work that is not a memory access, in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedCosts {
    pub syscall: Ps,
    pub futex_key_private: Ps,
    pub futex_key_shared: Ps,
    pub jhash2: Ps,
    pub schedule: Ps,
}

/// The scheduler's timing, in picoseconds, and how its wake-ups reach an
/// idle or a distant CPU (profile.rs SchedulerSpec).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedCosts {
    pub placement: TaskPlacement,
    pub tick: Ps,
    pub slice: Ps,
    pub ipi_send: Ps,
    pub ipi: Ps,
    /// An idle target's time in the IPI's handler, after it leaves idle.
    pub ipi_handler: Ps,
    /// An idle CPU polls its need-resched flag: waking it sends no IPI.
    pub idle_polls: bool,
    /// TTWU_QUEUE: a wake-up across LLCs, or onto an idle CPU, goes to the
    /// target's wake list and the target takes its own runqueue lock.
    pub ttwu_queue: bool,
    pub idle_exit: Ps,
    pub deep_idle_exit: Ps,
    pub deep_idle_after: Ps,
}

impl Machine {
    /// The longest an access in a CPU's own cache takes: an L1 hit plus a
    /// locked RMW's extra. A lock acquired within it did not wait for
    /// another holder; an access within it needs no event of its own.
    #[inline]
    pub fn own_cache_ps(&self) -> Ps {
        self.l1_ps + self.rmw_ps
    }

    pub fn new(spec: MachineSpec) -> Result<Machine, MachineError> {
        let err = |message: String| MachineError {
            machine: spec.name.clone(),
            message,
        };
        let t = &spec.topology;
        for (what, v) in [
            ("sockets", t.sockets),
            ("nodes_per_socket", t.nodes_per_socket),
            ("cores_per_socket", t.cores_per_socket),
            ("threads_per_core", t.threads_per_core),
            ("cores_per_llc", t.cores_per_llc),
            ("sockets_per_board", t.sockets_per_board.unwrap_or(1)),
            ("numa_fake", t.numa_fake),
        ] {
            if v == 0 {
                return Err(err(format!("topology.{what} must be at least 1")));
            }
        }
        if !(MIN_PAGE..=MAX_PAGE).contains(&t.page_size) || !t.page_size.is_power_of_two() {
            return Err(err(format!(
                "topology.page_size = {}: must be a power of two from {MIN_PAGE} to {MAX_PAGE}",
                t.page_size
            )));
        }
        if !t.cores_per_socket.is_multiple_of(t.nodes_per_socket) {
            return Err(err(format!(
                "topology.cores_per_socket ({}) must divide evenly into nodes_per_socket ({})",
                t.cores_per_socket, t.nodes_per_socket
            )));
        }
        if !t.cores_per_socket.is_multiple_of(t.cores_per_llc) {
            return Err(err(format!(
                "topology.cores_per_socket ({}) must be a multiple of cores_per_llc ({})",
                t.cores_per_socket, t.cores_per_llc
            )));
        }
        let sockets_per_board = t.sockets_per_board.unwrap_or(t.sockets);
        if !t.sockets.is_multiple_of(sockets_per_board) {
            return Err(err(format!(
                "topology.sockets ({}) must be a multiple of sockets_per_board ({sockets_per_board})",
                t.sockets
            )));
        }
        // In u64 first: sockets x cores x threads overflows u32 long
        // before it is refused.
        let cpus =
            u64::from(t.sockets) * u64::from(t.cores_per_socket) * u64::from(t.threads_per_core);
        if cpus > MAX_CPUS {
            return Err(err(format!(
                "{cpus} CPUs is more than the {MAX_CPUS} futexsim supports"
            )));
        }
        let cores = t.sockets * t.cores_per_socket;
        let cores_per_node = t.cores_per_socket / t.nodes_per_socket;
        if !cores_per_node.is_multiple_of(t.numa_fake) {
            return Err(err(format!(
                "numa_fake = {} must divide the {cores_per_node} cores of each node",
                t.numa_fake
            )));
        }
        let phys_nodes = t.sockets * t.nodes_per_socket;
        // Linux's MAX_NUMNODES (NODES_SHIFT = 10); the latency matrices
        // have a row and a column per node, so this bounds them too.
        if u64::from(phys_nodes) * u64::from(t.numa_fake) > u64::from(MAX_NODES) {
            return Err(err(format!(
                "{phys_nodes} nodes x numa_fake = {} is more than the {MAX_NODES} nodes Linux supports",
                t.numa_fake
            )));
        }
        spec.check_times().map_err(|e| err(e.to_string()))?;
        let booted = match t.nr_cpus {
            None => cpus as u32,
            Some(n) if n >= 1 && u64::from(n) <= cpus => n,
            Some(n) => {
                return Err(err(format!(
                    "topology.nr_cpus = {n} must be from 1 to the topology's {cpus} CPUs"
                )))
            }
        };
        // Linux on x86 numbers one thread of every core first, then the SMT siblings.
        let places: Vec<CpuPlace> = (0..booted)
            .map(|cpu| {
                let core = cpu % cores;
                let socket = core / t.cores_per_socket;
                let in_socket = core % t.cores_per_socket;
                let phys_node = socket * t.nodes_per_socket + in_socket / cores_per_node;
                // NUMA emulation deals a physical node's CPUs out to its fake
                // nodes in turn (the round robin of x86's numa_init_array, which
                // the arm64 port keeps; not re-read line by line). Seed 003 needs
                // it: 24 processes on CPUs 0-23 double their rate with numa=fake=2,
                // so both fake nodes are among the first CPUs.
                let fake = (in_socket % cores_per_node) % t.numa_fake;
                CpuPlace {
                    node: phys_node * t.numa_fake + fake,
                    phys_node,
                    socket,
                    llc: core / t.cores_per_llc,
                    core,
                    board: socket / sockets_per_board,
                }
            })
            .collect();
        let nodes = places.iter().map(|p| p.node + 1).max().unwrap_or(1);
        let lat = &spec.latency;
        let shape = |e: profile::LatencyShapeError| err(e.to_string());
        let remote_ps = lat.remote.matrix(phys_nodes, lat.node).map_err(shape)?;
        let node_ps = ns_to_ps(lat.node);
        let dram_local = ns_to_ps(lat.dram_local);
        let dram_ps = match &lat.dram_remote {
            Some(spec) => spec.matrix(phys_nodes, lat.dram_local).map_err(shape)?,
            // Without a measured matrix, remote memory costs what a remote transfer adds.
            None => remote_ps
                .iter()
                .map(|&r| dram_local + r.saturating_sub(node_ps))
                .collect(),
        };
        let line = spec.coherence.line;
        // Allocations are kept a page apart, so no two share a line of up to a page.
        if !line.is_power_of_two() || !(8..=4096).contains(&line) {
            return Err(err(format!(
                "coherence.line = {line} must be a power of two from 8 to 4096 (a page)"
            )));
        }
        let board_line_shift = match (t.sockets / sockets_per_board, spec.coherence.board_line) {
            (1, _) | (_, None) => None,
            (_, Some(b)) if b.is_power_of_two() && b >= line && b <= 4096 => {
                Some(b.trailing_zeros())
            }
            (_, Some(b)) => {
                return Err(err(format!(
                "coherence.board_line = {b} must be a power of two from line ({line}) to 4096 (a page)"
            )))
            }
        };
        let hierarchy = resolve_hierarchy(&spec, &places, line).map_err(err)?;
        let translation = spec
            .tlb
            .as_ref()
            .map(|tl| tlb::Translation::resolve(tl, &spec.background, t.page_size))
            .transpose()
            .map_err(err)?;
        let core = &spec.core;
        if core.outstanding_misses == 0 || core.outstanding_misses > MAX_IN_FLIGHT {
            return Err(err(format!(
                "core.outstanding_misses = {} must be from 1 to {MAX_IN_FLIGHT}",
                core.outstanding_misses
            )));
        }
        if core.store_buffer > MAX_IN_FLIGHT {
            return Err(err(format!(
                "core.store_buffer = {} must be from 0 to {MAX_IN_FLIGHT}",
                core.store_buffer
            )));
        }
        if !(1.0..=2.0).contains(&core.smt_throughput) {
            return Err(err(format!(
                "core.smt_throughput = {} must lie between 1 (siblings share the core's whole throughput) and 2 (they do not slow each other)",
                core.smt_throughput
            )));
        }
        let smt_stretch_permille = (2000.0 / core.smt_throughput).round() as u64;
        let k = &spec.kernel;
        let kernel_ns = k.ns();
        Ok(Machine {
            places,
            phys_nodes,
            nodes,
            remote_ps,
            dram_ps,
            smt_ps: ns_to_ps(lat.smt),
            llc_ps: ns_to_ps(lat.llc),
            node_ps,
            board_ps: ns_to_ps(lat.board.unwrap_or(0.0)),
            l1_ps: ns_to_ps(lat.l1_hit),
            rmw_ps: ns_to_ps(lat.rmw),
            store_buffer: core.store_buffer,
            outstanding_misses: core.outstanding_misses,
            memory_model: core.memory_model,
            compare_exchange: core.compare_exchange,
            smt_stretch_permille,
            line_shift: line.trailing_zeros(),
            board_line_shift,
            translation,
            hierarchy,
            costs: ResolvedCosts {
                syscall: ns_to_ps(kernel_ns.syscall),
                futex_key_private: ns_to_ps(kernel_ns.futex_key_private),
                futex_key_shared: ns_to_ps(kernel_ns.futex_key_shared),
                jhash2: ns_to_ps(kernel_ns.jhash2),
                schedule: ns_to_ps(k.schedule),
            },
            sched: SchedCosts {
                placement: spec.scheduler.placement,
                tick: 1_000_000_000_000 / u64::from(spec.scheduler.tick_hz),
                slice: ns_to_ps(spec.scheduler.slice),
                ipi_send: ns_to_ps(spec.scheduler.ipi_send),
                ipi: ns_to_ps(spec.scheduler.ipi),
                ipi_handler: ns_to_ps(spec.scheduler.ipi_handler),
                idle_polls: spec.scheduler.idle_polls,
                ttwu_queue: spec.scheduler.ttwu_queue,
                idle_exit: ns_to_ps(spec.scheduler.idle_exit),
                deep_idle_exit: ns_to_ps(spec.scheduler.deep_idle_exit),
                deep_idle_after: ns_to_ps(spec.scheduler.deep_idle_after),
            },
            spec,
        })
    }

    pub fn name(&self) -> &str {
        &self.spec.name
    }
    pub fn cpus(&self) -> u32 {
        self.places.len() as u32
    }
    /// num_possible_cpus(): nr_cpus caps it; hot-plug slots may raise it.
    pub fn possible_cpus(&self) -> u32 {
        let t = &self.spec.topology;
        match t.nr_cpus {
            Some(n) => n,
            None => t.possible_cpus.unwrap_or(self.cpus()).max(self.cpus()),
        }
    }
    /// Memory nodes with CPUs as the kernel counts them (emulated nodes
    /// included); nodes that nr_cpus leaves without CPUs are not counted.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }
    pub fn place(&self, cpu: u32) -> CpuPlace {
        self.places[cpu as usize]
    }
    /// The core whose caches `cpu` uses, named by its first thread's CPU
    /// id (Linux numbers one thread of every core first): SMT siblings
    /// share the core's L1 and L2.
    #[inline]
    pub fn core_of(&self, cpu: u32) -> u32 {
        self.places[cpu as usize].core
    }
    /// The CPU's SMT sibling (the next thread of its core, in the kernel's
    /// numbering), if the core has another booted thread.
    pub fn sibling_of(&self, cpu: u32) -> Option<u32> {
        let cores = self.spec.topology.sockets * self.spec.topology.cores_per_socket;
        let threads = cores * self.spec.topology.threads_per_core;
        let next = (cpu + cores) % threads;
        (next != cpu && next < self.cpus()).then_some(next)
    }
    pub fn node_of(&self, cpu: u32) -> u32 {
        self.places[cpu as usize].node
    }
    /// The board a CPU (or a core, named by its first CPU) sits on.
    #[inline]
    pub fn board_of(&self, cpu: u32) -> u32 {
        self.places[cpu as usize].board
    }
    /// How many lines one coherence unit between boards holds, as a shift:
    /// None where boards keep coherence by the line (or there is one board).
    pub fn board_unit_lines_shift(&self) -> Option<u32> {
        self.board_line_shift
            .map(|shift| shift - self.line_shift)
            .filter(|&lines| lines > 0)
    }
    pub fn lock_kind(&self) -> LockKind {
        self.spec.kernel.lock
    }
    pub fn line_size(&self) -> u64 {
        1 << self.line_shift
    }
    /// What the kernel's futex tables are sized and laid out from.
    pub fn platform(&self) -> Platform {
        Platform {
            cpus: self.cpus().into(),
            possible_cpus: self.possible_cpus().into(),
            nodes: self.nodes(),
            line_size: self.line_size(),
            page_size: self.page_size(),
        }
    }
    /// The kernel's base page: what the futex key splits an address by.
    pub fn page_size(&self) -> u64 {
        self.spec.topology.page_size
    }
    fn phys(&self, node: u32) -> u32 {
        node / self.spec.topology.numa_fake
    }

    /// Transfer latency between two physical nodes.
    #[inline]
    pub fn remote_latency_ps(&self, from_node: u32, to_node: u32) -> Ps {
        self.remote_ps[(to_node * self.phys_nodes + from_node) as usize]
    }

    /// Time for CPU `to` to obtain a line that CPU `from` holds.
    #[inline]
    pub fn transfer_ps(&self, from: u32, to: u32) -> Ps {
        let (a, b) = (&self.places[from as usize], &self.places[to as usize]);
        if a.board != b.board {
            self.board_ps
        } else if a.core == b.core {
            self.smt_ps
        } else if a.llc == b.llc {
            self.llc_ps
        } else if a.phys_node == b.phys_node {
            self.node_ps
        } else {
            self.remote_ps[(b.phys_node * self.phys_nodes + a.phys_node) as usize]
        }
    }

    /// The lowest level of the hierarchy that CPUs `a` and `b` share.
    #[inline]
    pub fn level(&self, a: u32, b: u32) -> Level {
        let (a, b) = (&self.places[a as usize], &self.places[b as usize]);
        if a.board != b.board {
            Level::Board
        } else if a.core == b.core {
            Level::Core
        } else if a.llc == b.llc {
            Level::Complex
        } else if a.phys_node == b.phys_node {
            Level::Node
        } else {
            Level::Remote
        }
    }

    /// Time for CPU `to` to obtain a line that CPU `from` holds, when the
    /// line's memory is on `home_node`: the direct transfer, or where the
    /// machine sends the request through the home, three legs (to the home,
    /// from the home to the holder, from the holder back), each half the
    /// round trip between its ends; legs inside one node cost nothing
    /// beyond what the direct transfer already measures.
    #[inline]
    pub fn routed_transfer_ps(&self, from: u32, to: u32, home_node: u32) -> Ps {
        let direct = self.transfer_ps(from, to);
        let through_home = match self.hierarchy.home_routes {
            HomeRoutes::None => false,
            HomeRoutes::Remote => self.level(from, to) == Level::Remote,
            HomeRoutes::Complex => matches!(self.level(from, to), Level::Node | Level::Remote),
        };
        if !through_home {
            return direct;
        }
        let home = self.phys(home_node);
        let (holder, requester) = (
            self.places[from as usize].phys_node,
            self.places[to as usize].phys_node,
        );
        let hop = |a: u32, b: u32| {
            if a == b {
                0
            } else {
                self.remote_latency_ps(a, b)
            }
        };
        direct.max((hop(requester, home) + hop(home, holder) + direct) / 2)
    }

    /// The last-level cache domain of a CPU.
    #[inline]
    pub fn llc_of(&self, cpu: u32) -> u32 {
        self.places[cpu as usize].llc
    }

    /// Whether a transfer between the two CPUs crosses a node (perf c2c's remote HITM).
    #[inline]
    pub fn is_remote(&self, a: u32, b: u32) -> bool {
        self.places[a as usize].phys_node != self.places[b as usize].phys_node
    }

    /// Time for CPU `cpu` to read a line from memory homed on `home_node`.
    #[inline]
    pub fn dram_ps(&self, cpu: u32, home_node: u32) -> Ps {
        let from = self.places[cpu as usize].phys_node;
        let base = self.dram_ps[(from * self.phys_nodes + self.phys(home_node)) as usize];
        if self.places[cpu as usize].board != self.phys(home_node) / self.nodes_per_board() {
            base.max(self.board_ps)
        } else {
            base
        }
    }

    #[inline]
    pub fn is_remote_memory(&self, cpu: u32, home_node: u32) -> bool {
        self.places[cpu as usize].phys_node != self.phys(home_node)
    }

    fn nodes_per_board(&self) -> u32 {
        let t = &self.spec.topology;
        t.sockets_per_board.unwrap_or(t.sockets) * t.nodes_per_socket
    }
}

/// The hierarchy's parameters from `[coherence]`, each absent one derived
/// from the latencies.
fn resolve_hierarchy(
    spec: &MachineSpec,
    places: &[CpuPlace],
    line: u64,
) -> Result<Hierarchy, String> {
    let c = &spec.coherence;
    let lat = &spec.latency;
    let local_batch = c.local_batch.unwrap_or(0);
    if local_batch > MAX_LOCAL_BATCH {
        return Err(format!(
            "coherence.local_batch = {local_batch} must be a count of grants from 0 to {MAX_LOCAL_BATCH}"
        ));
    }
    let background = spec.background.llc_mib;
    if !background.is_finite() || !(0.0..=1e6).contains(&background) {
        return Err(format!(
            "background.llc_mib = {background} must be a size in MiB from 0 to 1e6"
        ));
    }
    let llc_lines = match c.llc_mib {
        None => u32::MAX,
        Some(mib) if mib.is_finite() && mib > 0.0 && mib <= 1e6 => {
            // The background keeps its share of the domain; the modelled
            // lines keep at least one.
            let ours = (mib - background).max(0.0);
            ((ours * 1024.0 * 1024.0 / line as f64) as u64).clamp(1, u64::from(u32::MAX - 1)) as u32
        }
        Some(mib) => {
            return Err(format!(
                "coherence.llc_mib = {mib} must be a size in MiB above 0 and at most 1e6"
            ))
        }
    };
    Ok(Hierarchy {
        clean_hit_ps: ns_to_ps(c.clean_hit.unwrap_or(lat.llc)),
        read_occupancy_ps: ns_to_ps(c.read_occupancy.unwrap_or(lat.l1_hit)),
        transfer_occupancy_ps: c.transfer_occupancy.map(ns_to_ps),
        llc_transfer_occupancy_ps: c.llc_transfer_occupancy.map(ns_to_ps),
        remote_transfer_occupancy_ps: c.remote_transfer_occupancy.map(ns_to_ps),
        snoop_delay_ps: ns_to_ps(c.snoop_delay.unwrap_or(0.0)),
        local_batch,
        home_routes: c.home_routes,
        llc_lines,
        adjacent_line_prefetch: c.adjacent_line_prefetch,
        llc_domains: places.iter().map(|p| p.llc + 1).max().unwrap_or(1),
    })
}
