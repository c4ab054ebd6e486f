//! The per-node LRU lock under NUMA emulation (seed 003, 2023 "support NUMA
//! emulation for arm64"): will-it-scale tlb_flush1 in process mode. Each
//! process maps a private file mapping and, page after page, writes the
//! page (a copy-on-write fault that allocates an anonymous page and adds it
//! to the LRU), drops it with madvise(MADV_DONTNEED) (which drains the
//! CPU's LRU batch and frees the page, taking it off the LRU), and reads it
//! back (a read fault mapping the page-cache page). One page is one iteration.
//!
//! The LRU lists and their lock are per node (`lruvec->lru_lock`, in
//! `struct lruvec` of the node's `pglist_data` for the root memcg, 5.11+),
//! and a page's lruvec is its node's. Pages come from the faulting CPU's
//! node, so with numa=fake=2 each physical node's CPUs split between two
//! locks: the table of the report (threads 1, 12, 24, 48, 96; one node
//! against numa=fake=2).
//!
//! Modelled critical sections, both under the node's lru_lock:
//! - add: mm/swap.c `folio_batch_move_lru` -> `lru_add_fn`, reached from
//!   `lru_add_drain` at the start of `zap_page_range_single` (madvise): the
//!   batch holds the one page faulted since the last drain. list_add writes
//!   the list head and the folio that was first on the list, then the page's own struct page.
//! - remove: mm/swap.c `folios_put_refs` (release_pages) when the mmu_gather
//!   frees the page: `lruvec_del_folio` unlinks it, writing its neighbours.
//!   The neighbours are modelled as the list head's line and the folio
//!   first on the list (the one most recently added, by whichever CPU).
//!
//! Left out: the page allocator's per-CPU lists and zone lock (another
//! per-node lock, split the same way), memcg charging, the TLB flush
//! (local only in process mode), the page-cache lookup of the read fault,
//! and LRU batches larger than one page (the drain in every madvise empties
//! them). The fault and madvise costs are fixed estimates for an arm64 core.

use super::WorkloadError;
use super::objects::Objects;
use super::task_loop::{Action, Body, TaskLoop};
use super::{Setup, Size, Workload};
use crate::machine::Machine;
use crate::memory::{Home, MemoryMap};
use crate::task::{AccessKind, LockRef, Mem, Op, TaskSpec};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LruLock {
    /// Processes, one per CPU (will-it-scale -t); the machine's CPUs when absent.
    #[serde(default)]
    pub processes: Option<u32>,
}

/// Per-page costs outside the lock, in nanoseconds (estimates; the single
/// process rate in the report, 141 k pages/s, is about 7 us per page).
// Fixed nanoseconds that ignore the profile's clock: scaling them would move results.
const WRITE_FAULT_NS: u64 = 2_800;
const MADVISE_NS: u64 = 2_600;
const READ_FAULT_NS: u64 = 1_200;
/// Work under the lock besides the list's lines: LRU size counters, flags.
const LIST_OP_NS: u64 = 60;

/// One node's lruvec: its lock, list head and the folio first on the list.
#[derive(Clone, Copy)]
struct Lruvec {
    lock: LockRef,
    head: Mem,
    first_folio: Mem,
}

struct Process {
    lruvec: Lruvec,
    /// This process's page's struct page: it is freed and reallocated on the same CPU.
    page: Mem,
}

impl Body for Process {
    fn pass(&mut self, _: u64, actions: &mut VecDeque<Action>) {
        let l = self.lruvec;
        let list_op = [
            Op::SpinLock(l.lock),
            Op::Access(l.head, AccessKind::Write),
            Op::Access(l.first_folio, AccessKind::Write),
            Op::Access(self.page, AccessKind::Write),
            Op::Compute(LIST_OP_NS * 1000),
            Op::SpinUnlock(l.lock),
        ];
        actions.push_back(Action::Op(Op::Compute(WRITE_FAULT_NS * 1000)));
        actions.push_back(Action::Op(Op::Compute(MADVISE_NS * 1000 / 2)));
        actions.extend(list_op.map(Action::Op));
        actions.push_back(Action::Op(Op::Compute(MADVISE_NS * 1000 / 2)));
        actions.extend(list_op.map(Action::Op));
        actions.push_back(Action::Op(Op::Compute(READ_FAULT_NS * 1000)));
    }
}

impl Workload for LruLock {
    fn label(&self) -> String {
        match self.processes {
            Some(n) => format!("will-it-scale tlb_flush1 -t {n} (processes)"),
            None => "will-it-scale tlb_flush1 (processes, one per CPU)".into(),
        }
    }

    fn threads(&self, machine: &Machine) -> u32 {
        super::one_per_cpu_unless(self.processes, machine)
    }

    fn size(&self, machine: &Machine) -> Size {
        let processes = u64::from(self.threads(machine));
        Size {
            tasks: processes,
            processes,
            futexes: 0,
            // Each node's lruvec (two lines) and first folio, each
            // process's struct page.
            lines: u64::from(machine.nodes()) * 3 + processes,
            held_bytes: 0,
        }
    }

    fn validate(&self, _: &Machine) -> Result<(), WorkloadError> {
        super::at_least_one("lru-lock: processes", self.processes)
    }

    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let n = self.threads(machine);
        let mut o = Objects::default();
        let lruvecs: Vec<Lruvec> = (0..machine.nodes())
            .map(|node| {
                let home = Home::Node(node);
                // lists[NR_LRU_LISTS] (5 x 16 B) then lru_lock: the lock on the second line.
                let lruvec = o.object(memory, format!("node {node} lruvec"), 128, home);
                let first = o.object(memory, format!("node {node} first folio on LRU"), 64, home);
                Lruvec {
                    lock: o.lock_at(&format!("node {node} lru_lock"), lruvec.at(memory, 80)),
                    head: lruvec.at(memory, 0),
                    first_folio: first.at(memory, 0),
                }
            })
            .collect();
        let tasks = (0..n)
            .map(|p| {
                let cpu = p % machine.cpus();
                let node = machine.node_of(cpu);
                let page = o.object(
                    memory,
                    format!("process {p} page struct page"),
                    64,
                    Home::Node(node),
                );
                TaskSpec {
                    cpu,
                    program: Box::new(TaskLoop::new(
                        Process {
                            lruvec: lruvecs[node as usize],
                            page: page.at(memory, 0),
                        },
                        None,
                    )),
                }
            })
            .collect();
        Setup {
            tasks,
            task_process: (0..n).collect(),
            mms: super::user_memory::mm_addresses(n, rng),
            futexes: 0,
            lock_names: o.into_lock_names(),
            // Nothing beyond ops per second (pages per second, will-it-scale's total).
            readout: None,
            keys: None,
            thread_futexes: Vec::new(),
        }
    }
}
