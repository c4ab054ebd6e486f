//! What every futex op shares (kernel/futex/core.c): the futex system's
//! state (the bucket chains with their queued futex_qs, the user words'
//! values, each task's op in flight, the PI states), the way in (key, hash,
//! the private hash's reference), queueing and unqueueing, and the way out.
//! Function only: what each step costs is the engine's. The ops themselves
//! are in syscalls.rs (dispatch), waitwake.rs, requeue.rs and pi.rs, which
//! build on this file alone.

use super::futex_hash::{Bucket, FutexHash, TableInstance, TableSel};
use super::key::{get_futex_key, FutexKey, FutexNode, KeyKind, KeySource};
use super::placement::{KernelObjects, KeyObjects, STRUCT_PAGE_BYTES};
use super::plist::PlistHead;
use super::script::{Cost, LockRef, Script, Step, WaitersWord};
use super::table::{FieldName, PrivateLookup, RefcountMode, SharedKeyPins, WakeBarrier};
use crate::coherence::AccessKind;
use crate::hash::word_hasher::WordMap;
use crate::machine::{MemoryModel, Ps};
use crate::memory::{LineId, Mem, MemoryMap, RegionId};
use crate::symbol::Symbol;

/// A futex syscall as a workload issues it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FutexOp {
    /// FUTEX_WAIT: sleep if `*uaddr == val`, else return EAGAIN at once.
    Wait { uaddr: Mem, val: u32, kind: KeyKind },
    /// FUTEX_WAKE: wake up to `nr` tasks waiting on `uaddr`.
    Wake { uaddr: Mem, nr: u32, kind: KeyKind },
    /// FUTEX_CMP_REQUEUE: if `*uaddr == cmpval`, wake up to `nr_wake` waiters
    /// of `uaddr` and move up to `nr_requeue` more to `uaddr2` (requeue.rs).
    CmpRequeue {
        uaddr: Mem,
        uaddr2: Mem,
        nr_wake: u32,
        nr_requeue: u32,
        cmpval: u32,
        kind: KeyKind,
    },
    /// FUTEX_LOCK_PI: take the PI lock at `uaddr`, sleeping while another
    /// task owns it (pi.rs).
    LockPi { uaddr: Mem, kind: KeyKind },
    /// FUTEX_UNLOCK_PI: release the PI lock at `uaddr`, handing it to the
    /// top waiter if there is one (pi.rs).
    UnlockPi { uaddr: Mem, kind: KeyKind },
}

impl FutexOp {
    /// The futex word the op names first, and how it is mapped.
    pub(super) fn uaddr(&self) -> (Mem, KeyKind) {
        match *self {
            FutexOp::Wait { uaddr, kind, .. }
            | FutexOp::Wake { uaddr, kind, .. }
            | FutexOp::CmpRequeue { uaddr, kind, .. }
            | FutexOp::LockPi { uaddr, kind }
            | FutexOp::UnlockPi { uaddr, kind } => (uaddr, kind),
        }
    }
}

/// What a failed futex_wait returns when the word has changed.
pub const EAGAIN: i64 = -11;

/// Who runs a task, as the kernel sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskInfo {
    pub process: u32,
    pub cpu: u32,
}

/// Each of `processes` processes' first task and its count of tasks, from
/// the tasks' processes in one pass: a search of every task per process
/// was quadratic, minutes at a million single-task processes.
pub fn first_task_and_count(
    task_process: impl IntoIterator<Item = u32>,
    processes: usize,
) -> Vec<(Option<usize>, u64)> {
    let mut out = vec![(None, 0); processes];
    for (t, p) in task_process.into_iter().enumerate() {
        if let Some((first, count)) = out.get_mut(p as usize) {
            first.get_or_insert(t);
            *count += 1;
        }
    }
    out
}

/// How this_cpu_inc and this_cpu_dec (6.17's private-hash reference) run
/// on the machine's architecture, told by its memory model: x86 is the one
/// TSO architecture futexsim has profiles of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerCpuOp {
    /// x86: one `incl`/`decl` of a %gs-relative address without a lock
    /// prefix (arch/x86/include/asm/percpu.h, percpu_add_op), atomic only
    /// against interrupts on its own CPU: a load and a plain store that
    /// retires into the store buffer, waiting for no drain.
    Plain,
    /// arm64: preemption disabled around an LL/SC loop (ldxr, add, stxr)
    /// or an LSE STADD with no barrier (arch/arm64/include/asm/percpu.h,
    /// _pcp_protect and the __percpu_add cases): an atomic that orders
    /// nothing. POWER and RISC-V take asm-generic's this_cpu_generic_to_op
    /// (interrupts off, a plain load and store), priced as this: on a
    /// weakly ordered core neither waits for the stores before it, and the
    /// two differ by the profile's `rmw` alone.
    RelaxedAtomic,
}

impl PerCpuOp {
    /// The form the architecture of a core of `model` takes.
    pub fn of(model: MemoryModel) -> PerCpuOp {
        match model {
            MemoryModel::Tso => PerCpuOp::Plain,
            MemoryModel::Weak => PerCpuOp::RelaxedAtomic,
        }
    }

    /// The steps of this_cpu_inc or this_cpu_dec of the counter at
    /// `counter`, made by `by`.
    fn steps(self, counter: Mem, by: Symbol, s: &mut Script) {
        match self {
            PerCpuOp::Plain => s.extend([
                Step::access(counter, AccessKind::Read, by),
                Step::access(counter, AccessKind::Write, by),
            ]),
            PerCpuOp::RelaxedAtomic => s.push(Step::relaxed_rmw(counter, by)),
        }
    }
}

/// A queued `futex_q`: it lives on the waiter's kernel stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Waiter {
    pub(super) task: u32,
    pub(super) key: FutexKey,
}

/// Which half of a private hash reference an op's script takes: the
/// kernel orders the two differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reference {
    Get,
    Put,
}

/// The op a task is in the middle of.
#[derive(Clone, Copy, Debug)]
pub(super) struct InFlight {
    pub(super) op: FutexOp,
    pub(super) key: FutexKey,
    /// The bucket the task is queued on, or works under.
    pub(super) bucket: Bucket,
    /// That bucket's lock and `waiters` field (None where the design has
    /// none), resolved once: the op's steps name them again and again, and
    /// resolving one walks the table and its region.
    pub(super) lock: LockRef,
    /// `waiters` as its two halves, the line NO_FIELD where there is none:
    /// as an `Option<Mem>` it would take the op in flight past 128 bytes,
    /// the most the host copies inline, not through a call to memcpy.
    waiters_addr: u64,
    waiters_line: LineId,
}

/// The line of a bucket field the design does not have.
const NO_FIELD: LineId = LineId::MAX;

// Copied at every decision: the build fails if it outgrows an inline copy.
const _: () = assert!(std::mem::size_of::<Option<InFlight>>() <= 128);

impl InFlight {
    pub(super) fn new(
        op: FutexOp,
        key: FutexKey,
        bucket: Bucket,
        lock: LockRef,
        waiters: Option<Mem>,
    ) -> InFlight {
        let (waiters_addr, waiters_line) = halves(waiters);
        InFlight {
            op,
            key,
            bucket,
            lock,
            waiters_addr,
            waiters_line,
        }
    }

    /// The bucket's `waiters` field, where the design has one.
    #[inline]
    pub(super) fn waiters(&self) -> Option<Mem> {
        (self.waiters_line != NO_FIELD).then_some(Mem {
            addr: self.waiters_addr,
            line: self.waiters_line,
        })
    }

    pub(super) fn set_waiters(&mut self, waiters: Option<Mem>) {
        (self.waiters_addr, self.waiters_line) = halves(waiters);
    }
}

/// A field's address and line, the line NO_FIELD where there is none.
fn halves(field: Option<Mem>) -> (u64, LineId) {
    match field {
        Some(m) => {
            debug_assert_ne!(m.line, NO_FIELD, "a line id the memory map never makes");
            (m.addr, m.line)
        }
        None => (0, NO_FIELD),
    }
}

/// A held PI futex (pi.rs): its owner, and the `futex_pi_state` the first
/// waiter attached. Its waiters are the futex_qs with its key on the bucket
/// chain, in hand-over order.
#[derive(Clone, Debug)]
pub(super) struct PiState {
    pub(super) owner: u32,
    pub(super) object: Option<Mem>,
}

/// Dense lock id of each table's bucket 0, laid out global instances
/// first, then each process's private hash: looked up, not counted, at
/// every op.
struct LockBases {
    global: Vec<u32>,
    /// Per process; None where it has no private hash.
    private: Vec<Option<u32>>,
}

pub struct FutexSystem {
    pub hash: FutexHash,
    tasks: Vec<TaskInfo>,
    mms: Vec<u64>,
    lock_base: LockBases,
    lock_count: u32,
    pub(super) chains: WordMap<Bucket, Vec<Waiter>>,
    /// User words that are not zero, by the futex key that names them.
    values: WordMap<FutexKey, u32>,
    pub(super) in_flight: Vec<Option<InFlight>>,
    /// Each task's futex_q, on its kernel stack.
    pub(super) futex_q: Vec<Mem>,
    /// Each CPU's per-CPU line: MCS nodes at 0, the private-hash reference at 128.
    percpu: Vec<(RegionId, u64)>,
    /// How the architecture increments and decrements a per-CPU counter.
    percpu_op: PerCpuOp,
    /// The PI state of each contended PI futex (pi.rs).
    pub(super) pi: WordMap<FutexKey, PiState>,
    /// Each task's cached `futex_pi_state` (`current->pi_state_cache`): the
    /// first waiter of a PI futex attaches it.
    pub(super) pi_state_cache: Vec<Mem>,
    /// Tasks between their `waiters` increment and queueing (or giving up),
    /// per bucket: with the chain, what the bucket's `waiters` counts.
    in_transit: InTransit,
    /// The node a FUTEX2_NUMA word holds once the kernel wrote the current
    /// node into a FUTEX_NO_NODE word.
    numa_nodes: WordMap<FutexKey, u32>,
    /// What a shared key pins: the struct page and the mm or inode.
    pins: KeyObjects,
    /// Node of each CPU, for FUTEX_NO_NODE.
    cpu_nodes: Vec<u32>,
    /// The private hashes' growth where threads are created in the run
    /// (resize.rs); None where every thread exists from the start.
    pub(super) growth: Option<super::resize::Growth>,
    /// The simulated time of the op's way in or decision being written:
    /// what a resize's grace periods are measured against.
    pub(super) now: Ps,
}

/// Offsets in `struct page` (x86-64): `flags` (lock_page's bit) at 0,
/// `_refcount` at 52; both in the page's one 64-byte line.
const PAGE_FLAGS: u64 = 0;
const PAGE_REFCOUNT: u64 = 52;
/// The per-CPU futex reference count's offset in a CPU's per-CPU area.
const PERCPU_REF_OFFSET: u64 = 128;
/// Offsets in `struct futex_private_hash`'s header: the reference (6.16-rc's
/// rcuref `users`, 6.17's `state`) at 0, `hash_mask` at 4, `mm` at 24,
/// 6.16-rc's `immutable` at 33.
pub const HEADER_REF: u64 = 0;
pub const HEADER_MASK: u64 = 4;
pub const HEADER_MM: u64 = 24;
pub const HEADER_IMMUTABLE: u64 = 33;

impl FutexSystem {
    /// Adds each task's kernel stack, each CPU's per-CPU area and the
    /// objects shared keys pin to `memory`; keys take offsets within pages
    /// of `page_size` bytes; per-CPU counters change as `percpu_op` says.
    pub fn new(
        hash: FutexHash,
        tasks: Vec<TaskInfo>,
        mms: Vec<u64>,
        cpu_nodes: &[u32],
        page_size: u64,
        percpu_op: PerCpuOp,
        memory: &mut MemoryMap,
    ) -> FutexSystem {
        let mut next = 0u32;
        let mut base_of = |t: &TableInstance| {
            let base = next;
            next += t.slots as u32;
            base
        };
        let lock_base = LockBases {
            global: hash.global.iter().map(&mut base_of).collect(),
            private: hash
                .private
                .iter()
                .map(|t| t.as_ref().map(&mut base_of))
                .collect(),
        };
        let tables: Vec<RegionId> = hash
            .global
            .iter()
            .chain(hash.private.iter().flatten())
            .map(|t| t.region)
            .collect();
        let KernelObjects {
            futex_q,
            percpu,
            pi_state_cache,
            pins,
        } = KernelObjects::place(&tasks, &mms, cpu_nodes, page_size, &tables, memory);
        let n = tasks.len();
        FutexSystem {
            hash,
            tasks,
            mms,
            lock_base,
            lock_count: next,
            chains: WordMap::default(),
            values: WordMap::default(),
            in_flight: vec![None; n],
            futex_q,
            percpu,
            percpu_op,
            pi: WordMap::default(),
            pi_state_cache,
            in_transit: InTransit::default(),
            numa_nodes: WordMap::default(),
            pins,
            cpu_nodes: cpu_nodes.to_vec(),
            growth: None,
            now: 0,
        }
    }

    /// Locks the tables hold; other locks of a workload get ids after these.
    pub fn lock_count(&self) -> u32 {
        self.lock_count
    }

    /// The tables' locks now end at `count` (resize.rs adds its own).
    pub(super) fn set_lock_count(&mut self, count: u32) {
        self.lock_count = count;
    }

    pub(super) fn process_of(&self, task: u32) -> u32 {
        self.tasks[task as usize].process
    }

    /// The node of the process's first task.
    pub(super) fn process_node(&self, process: u32) -> u32 {
        self.tasks
            .iter()
            .find(|t| t.process == process)
            .map_or(0, |t| self.cpu_nodes[t.cpu as usize])
    }

    /// The MCS node a CPU spins on while queued for any spinlock.
    pub fn mcs_node(&self, memory: &MemoryMap, cpu: u32) -> Mem {
        let (region, base) = self.percpu[cpu as usize];
        Mem {
            addr: base,
            line: memory.line_in(region, base),
        }
    }

    /// Sets a user word (the workload's own stores, which need no timing here).
    pub fn set_value(&mut self, task: u32, uaddr: u64, kind: KeyKind, value: u32) {
        let key = self.key(task, uaddr, kind);
        if value == 0 {
            self.values.remove(&key);
        } else {
            self.values.insert(key, value);
        }
    }

    /// A user word's value as `task` sees it (zero until something stores to it).
    pub fn value(&self, task: u32, uaddr: u64, kind: KeyKind) -> u32 {
        self.value_of(&self.key(task, uaddr, kind))
    }

    /// The user word named by `key`, as the kernel reads it.
    pub(super) fn value_of(&self, key: &FutexKey) -> u32 {
        self.values.get(key).copied().unwrap_or(0)
    }

    /// The key of a task's futex word, as get_futex_key makes it. Always
    /// inlined, as are the other helpers every op's way in calls
    /// once (the node, the lock, the waiters count): as calls, their
    /// prologues cost more than their bodies.
    #[inline(always)]
    pub(super) fn key(&self, task: u32, uaddr: u64, kind: KeyKind) -> FutexKey {
        let mm = self.mms[self.tasks[task as usize].process as usize];
        let page = self.pins.page_size;
        get_futex_key(
            uaddr,
            KeySource::of(kind, mm, uaddr, page),
            self.hash.design.word_size,
            page,
        )
        .expect("workloads use aligned futex words")
    }

    /// The node a FUTEX2_NUMA key goes to: the word's, or the one the
    /// kernel wrote into a FUTEX_NO_NODE word (None: not FUTEX2_NUMA).
    // Inlined, as `key` is: see there.
    #[inline(always)]
    fn numa_node(&self, task: u32, key: &FutexKey, kind: KeyKind) -> Option<u32> {
        let KeyKind::PrivateNuma(node) = kind else {
            return None;
        };
        Some(match node {
            FutexNode::Node(n) => n,
            FutexNode::NoNode => self
                .numa_nodes
                .get(key)
                .copied()
                .unwrap_or_else(|| self.cpu_nodes[self.tasks[task as usize].cpu as usize]),
        })
    }

    /// The op `task` has in flight, copied once from its entry: moving it
    /// out of the `Option` copies it twice, the second copy reading across
    /// the first one's stores, which the host cannot forward.
    pub(super) fn op_in_flight(&self, task: u32) -> InFlight {
        *self.in_flight[task as usize]
            .as_ref()
            .expect("begin set the op in flight")
    }

    /// `waiters` of a bucket as the kernel counts it: the queued futex_qs
    /// and the tasks on their way in.
    pub(super) fn waiters_pending(&self, bucket: Bucket, lock: LockRef) -> bool {
        self.in_transit.any(lock.id) || self.chains.get(&bucket).is_some_and(|c| !c.is_empty())
    }
}

/// The tasks in transit on each bucket, by the bucket's dense lock id: a
/// byte each, so that the counts stay in the host's caches (a million
/// buckets at 4096 CPUs take 1 MiB, not 4), and what a byte cannot hold
/// counted apart. Every futex_wait counts here twice: an index, not a hash
/// lookup, for all but the tasks past the 255th on their way into one
/// bucket.
#[derive(Default)]
struct InTransit {
    counts: Vec<u8>,
    /// Each count past a full byte, less the byte's 255.
    beyond: WordMap<u32, u32>,
}

impl InTransit {
    #[inline]
    fn inc(&mut self, id: u32) {
        let at = id as usize;
        if at >= self.counts.len() {
            // Locks a resize added since: the counts grow with them.
            self.counts.resize(at + 1, 0);
        }
        match self.counts[at] {
            u8::MAX => self.inc_beyond(id),
            n => self.counts[at] = n + 1,
        }
    }

    /// One fewer, where there is one.
    #[inline]
    fn dec(&mut self, id: u32) {
        let at = id as usize;
        let Some(&n) = self.counts.get(at) else {
            return;
        };
        // Only a full byte has a count beyond it: that goes first.
        if n == u8::MAX && self.dec_beyond(id) {
            return;
        }
        self.counts[at] = n.saturating_sub(1);
    }

    #[cold]
    fn inc_beyond(&mut self, id: u32) {
        *self.beyond.entry(id).or_default() += 1;
    }

    /// False where the full byte is the whole count.
    #[cold]
    fn dec_beyond(&mut self, id: u32) -> bool {
        let Some(more) = self.beyond.get_mut(&id) else {
            return false;
        };
        *more -= 1;
        if *more == 0 {
            self.beyond.remove(&id);
        }
        true
    }

    fn any(&self, id: u32) -> bool {
        self.counts.get(id as usize).is_some_and(|&n| n > 0)
    }
}

/// futex_hb_waiters_inc's RMW of a bucket's `waiters`: atomic_inc then
/// smp_mb__after_atomic, fully ordered on every core.
pub(super) fn waiters_inc_step(waiters: Mem) -> Step {
    Step::access(waiters, AccessKind::Rmw, Symbol::FutexHbWaitersInc)
}

/// futex_hb_waiters_dec's: a bare atomic_dec, which orders nothing.
pub(super) fn waiters_dec_step(waiters: Mem) -> Step {
    Step::relaxed_rmw(waiters, Symbol::FutexHbWaitersDec)
}

impl FutexSystem {
    /// futex_hb_waiters_inc before the bucket lock: once its line serves
    /// it ([`Self::waiter_counted`]) the task counts as a waiter until it
    /// queues or gives up ([`Self::waiters_arrived`]). `waiters` is the
    /// bucket's field, where the design has it; without one nobody reads
    /// the count.
    // Inlined, as `key` is: see there.
    #[inline(always)]
    pub(super) fn waiters_inc(&self, lock: LockRef, waiters: Option<Mem>, s: &mut Script) {
        s.extend(waiters.map(|w| Step::WaitersInc(WaitersWord::new(lock.id, w))));
    }

    /// The line served a task's futex_hb_waiters_inc on the bucket of lock
    /// `lock`: `waiters` counts it from now.
    #[inline]
    pub fn waiter_counted(&mut self, lock: u32) {
        self.in_transit.inc(lock);
    }

    /// The task that incremented `waiters` has queued, or dropped the count
    /// again (its RMW scripted by the caller).
    // Inlined, as `key` is: see there.
    #[inline(always)]
    pub(super) fn waiters_arrived(&mut self, lock: LockRef) {
        self.in_transit.dec(lock.id);
    }

    /// futex_q_unlock on a path that queued nothing: `waiters` dropped and
    /// the lock released, in the era's order.
    // Inlined, as `key` is: see there.
    #[inline(always)]
    pub(super) fn unlock_and_drop_waiter(&mut self, f: &InFlight, s: &mut Script) {
        self.waiters_arrived(f.lock);
        let unlock = Step::Unlock(f.lock);
        let dec = f.waiters().map(waiters_dec_step);
        if self.hash.design.path.waiters_dec_before_unlock {
            s.extend(dec);
            s.push(unlock);
        } else {
            s.push(unlock);
            s.extend(dec);
        }
    }

    pub(super) fn field(
        &self,
        memory: &MemoryMap,
        bucket: Bucket,
        field: FieldName,
    ) -> Option<Mem> {
        let (addr, region) = self.hash.field_in(bucket, field)?;
        Some(Mem {
            addr,
            line: memory.line_in(region, addr),
        })
    }

    // Inlined, as `key` is: see there.
    #[inline(always)]
    pub(super) fn lock_of(&self, memory: &MemoryMap, bucket: Bucket) -> LockRef {
        let base = match bucket.table {
            TableSel::Global(n) => self.lock_base.global[n as usize],
            TableSel::Private(p) => self.lock_base.private[p as usize]
                .expect("a bucket of a private hash the process has"),
            TableSel::Outgrown {
                process,
                generation,
            } => self.outgrown_lock_base(process, generation),
        };
        let word = self
            .field(memory, bucket, FieldName::Lock)
            .expect("validated designs have a lock");
        LockRef::new(base + bucket.index, word)
    }

    /// A byte of the header of process `process`'s private table `table`
    /// (its last, or an outgrown one); the last one's is also a SET_SLOTS 0
    /// table's, which has no buckets.
    pub(super) fn header_in(
        &self,
        memory: &MemoryMap,
        process: u32,
        table: TableSel,
        offset: u64,
    ) -> Option<Mem> {
        let (base, region) = match table {
            TableSel::Outgrown { .. } => {
                let t = self.hash.instance(table);
                (t.header?, t.region)
            }
            _ => self.hash.header_of(process)?,
        };
        Some(Mem {
            addr: base + offset,
            line: memory.line_in(region, base + offset),
        })
    }

    /// smp_mb() on `task`'s CPU: on x86 `lock addl $0,-4(%rsp)` (since
    /// 4.15, 450cbdd0125c; mfence before), a locked RMW of a line of the
    /// task's kernel stack (its futex_q's, which it holds) that waits for
    /// the store buffer to drain; on arm64 `dmb ish`, as fully ordered.
    pub(super) fn full_barrier(&self, task: u32, by: Symbol) -> Step {
        Step::access(self.futex_q[task as usize], AccessKind::Rmw, by)
    }

    /// The per-CPU counter 6.17 takes its reference on.
    pub(super) fn percpu_ref(&self, memory: &MemoryMap, task: u32) -> Mem {
        self.percpu_ref_of_cpu(memory, self.tasks[task as usize].cpu)
    }

    /// this_cpu_inc or this_cpu_dec of `task`'s CPU's counter, as the
    /// architecture runs it.
    pub(super) fn this_cpu_ref_step(
        &self,
        memory: &MemoryMap,
        task: u32,
        by: Symbol,
        s: &mut Script,
    ) {
        self.percpu_op.steps(self.percpu_ref(memory, task), by, s);
    }

    /// How many CPUs have a per-CPU area: every possible CPU.
    pub(super) fn possible_cpus(&self) -> u32 {
        self.percpu.len() as u32
    }

    /// `cpu`'s counter of the per-CPU reference.
    pub(super) fn percpu_ref_of_cpu(&self, memory: &MemoryMap, cpu: u32) -> Mem {
        let (region, base) = self.percpu[cpu as usize];
        let addr = base + PERCPU_REF_OFFSET;
        Mem {
            addr,
            line: memory.line_in(region, addr),
        }
    }

    /// futex_private_hash_get or put on the private hash `bucket` is in:
    /// the header reads and the reference's RMW of the era, ordered as the
    /// era orders it. Inline, so that an op on the global hash (every op
    /// of most runs) only asks which table it is on.
    #[inline(always)]
    fn private_reference(
        &self,
        memory: &MemoryMap,
        task: u32,
        bucket: Bucket,
        reference: Reference,
        s: &mut Script,
    ) {
        if let TableSel::Private(process) | TableSel::Outgrown { process, .. } = bucket.table {
            self.private_reference_steps(memory, task, process, bucket, reference, s);
        }
    }

    /// `private_reference` on a private table, of `process`.
    #[inline(never)]
    fn private_reference_steps(
        &self,
        memory: &MemoryMap,
        task: u32,
        process: u32,
        bucket: Bucket,
        reference: Reference,
        s: &mut Script,
    ) {
        let Some(ph) = self.hash.design.private.as_ref() else {
            return;
        };
        let by = match reference {
            Reference::Get => Symbol::FutexPrivateHashGet,
            Reference::Put => Symbol::FutexPrivateHashPut,
        };
        let header = |offset| self.header_in(memory, process, bucket.table, offset);
        let read = |m: Option<Mem>, s: &mut Script| {
            s.extend(m.map(|m| Step::access(m, AccessKind::Read, by)));
        };
        if ph.immutable_flag {
            read(header(HEADER_IMMUTABLE), s);
            if self.hash.immutable(process) {
                return;
            }
        }
        match ph.refcount {
            RefcountMode::None => {}
            RefcountMode::Shared => {
                // rcuref_get is atomic_add_negative_relaxed; rcuref_put is
                // atomic_add_negative_release, whose earlier stores drain first.
                s.extend(header(HEADER_REF).map(|m| match reference {
                    Reference::Get => Step::relaxed_rmw(m, by),
                    Reference::Put => Step::access(m, AccessKind::Rmw, by),
                }));
            }
            RefcountMode::PerCpu => {
                // futex_ref_get/put: fph->mm, then fph->state, then this CPU's counter.
                read(header(HEADER_MM), s);
                read(header(HEADER_REF), s);
                // this_cpu_inc/dec, as the architecture runs them. During a
                // resize's drain the count is mm->futex_atomic (resize.rs),
                // taken by atomic_long_inc_not_zero and dropped by
                // atomic_long_dec_and_test, both fully ordered.
                match self.atomic_reference(process) {
                    Some(atomic) => s.push(Step::access(atomic, AccessKind::Rmw, by)),
                    None => self.this_cpu_ref_step(memory, task, by, s),
                }
            }
        }
    }

    /// futex_hash's or futex_hash_put's (`by`) read of `hb->priv`, where
    /// the era reaches the table back through the bucket.
    // Forced: on a global hash only its check runs; the ten forced save 8%.
    #[inline(always)]
    fn read_priv(&self, memory: &MemoryMap, bucket: Bucket, by: Symbol, s: &mut Script) {
        let through_bucket = self
            .hash
            .design
            .private
            .as_ref()
            .is_some_and(|p| p.lookup == PrivateLookup::BucketPriv);
        if through_bucket {
            if let Some(p) = self.field(memory, bucket, FieldName::Priv) {
                s.push(Step::access(p, AccessKind::Read, by));
            }
        }
    }

    /// The way in, common to every op: the syscall, the key, the hash and
    /// the private hash's reference. Returns the key and its bucket.
    pub(super) fn enter(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        uaddr: Mem,
        kind: KeyKind,
        s: &mut Script,
    ) -> (FutexKey, Bucket) {
        s.push(Step::Compute(Cost::SyscallHalf));
        self.pivot_if_due(memory, task, kind, s);
        let (key, bucket) = self.hash_key(memory, task, uaddr, kind, s);
        self.private_reference(memory, task, bucket, Reference::Get, s);
        self.reference_taken(bucket.table);
        (key, bucket)
    }

    /// The key of a task's futex word and the bucket it hashes to.
    // Forced, as `hash_key` is: the key and bucket come back in registers.
    #[inline(always)]
    pub(super) fn locate(&self, task: u32, uaddr: u64, kind: KeyKind) -> (FutexKey, Bucket) {
        let key = self.key(task, uaddr, kind);
        // The real hash, every op: the key must land where the kernel would put it.
        let process = self.tasks[task as usize].process;
        let bucket = self
            .hash
            .futex_hash_in(
                &key,
                self.numa_node(task, &key, kind),
                self.private_in_use(process),
            )
            .bucket;
        (key, bucket)
    }

    /// The struct page of the user word `uaddr`: of the page its line is
    /// in, as the region lays it out (a process-mode workload's words share
    /// virtual addresses and are told apart by their lines).
    fn struct_page(&self, memory: &MemoryMap, uaddr: Mem) -> Option<Mem> {
        let region = memory.region_of_line(uaddr.line);
        let (pages, base) = self
            .pins
            .struct_pages
            .get(region as usize)
            .copied()
            .flatten()?;
        let page = self.pins.page_size;
        let start = memory.region(region).base;
        let at = memory.line_addr(uaddr.line).max(start);
        let addr = base + (at / page - start / page) * STRUCT_PAGE_BYTES;
        Some(Mem {
            addr,
            line: memory.line_in(pages, addr),
        })
    }

    /// What a shared key of `task` holds for the op: the mm's mm_count, or
    /// the inode's i_count.
    fn pinned_object(&self, task: u32, kind: KeyKind) -> Mem {
        match kind {
            KeyKind::SharedFile => self.pins.inode_count,
            _ => self.pins.mm_count[self.tasks[task as usize].process as usize],
        }
    }

    /// get_futex_key of a shared word: get_user_pages_fast takes a page
    /// reference, the era locks the page and pins the mm or inode, then the
    /// page goes back.
    fn shared_key_steps(
        &self,
        memory: &MemoryMap,
        task: u32,
        uaddr: Mem,
        kind: KeyKind,
        s: &mut Script,
    ) {
        let pins = self.hash.design.path.shared_key;
        let page = self.struct_page(memory, uaddr);
        let at = |offset: u64| {
            page.map(|p| Mem {
                addr: p.addr + offset,
                line: p.line,
            })
        };
        let by = Symbol::GetFutexKey;
        let rmw = |m: Option<Mem>, s: &mut Script| {
            s.extend(m.map(|m| Step::access(m, AccessKind::Rmw, by)));
        };
        rmw(at(PAGE_REFCOUNT), s);
        let locks_page = pins == SharedKeyPins::LockPageAndRefs;
        if locks_page {
            // trylock_page's test_and_set_bit_lock is an acquire; unlock_page's
            // clear_bit_unlock is followed by smp_mb__after_atomic: fully ordered.
            s.extend(at(PAGE_FLAGS).map(|m| Step::acquire_rmw(m, by)));
        }
        if pins != SharedKeyPins::PageOnly {
            rmw(Some(self.pinned_object(task, kind)), s);
        }
        if locks_page {
            rmw(at(PAGE_FLAGS), s);
        }
        rmw(at(PAGE_REFCOUNT), s);
    }

    /// get_futex_key and futex_hash for one word, as script steps.
    // Forced: the key and hash inline in the op's entry; the ten forced save 8%.
    #[inline(always)]
    pub(super) fn hash_key(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        uaddr: Mem,
        kind: KeyKind,
        s: &mut Script,
    ) -> (FutexKey, Bucket) {
        let (key, bucket) = self.locate(task, uaddr.addr, kind);
        let shared = !key.is_private();
        s.push(Step::Compute(if shared {
            Cost::FutexKeyShared
        } else {
            Cost::FutexKeyPrivate
        }));
        if shared {
            self.shared_key_steps(memory, task, uaddr, kind, s);
        } else if self.hash.design.path.wake_barrier == WakeBarrier::InKeyRefs {
            // get_futex_key_refs of a private key: "explicit smp_mb(); (B)".
            s.push(self.full_barrier(task, Symbol::GetFutexKeyRefs));
        }
        if let KeyKind::PrivateNuma(node) = kind {
            // The word's second half: read, and where it says FUTEX_NO_NODE
            // the current node is written back for good.
            let node_word = Mem {
                addr: uaddr.addr + 4,
                line: uaddr.line,
            };
            s.push(Step::access(
                node_word,
                AccessKind::Read,
                Symbol::GetFutexKey,
            ));
            if node == FutexNode::NoNode && !self.numa_nodes.contains_key(&key) {
                let cpu_node = self.cpu_nodes[self.tasks[task as usize].cpu as usize];
                self.numa_nodes.insert(key, cpu_node);
                s.push(Step::access(
                    node_word,
                    AccessKind::Write,
                    Symbol::GetFutexKey,
                ));
            }
        }
        s.push(Step::Compute(Cost::Jhash2));
        // __futex_hash_private reads the mask of a private key's table,
        // even one of no slots (SET_SLOTS 0), which sends it to the global one.
        let process = self.tasks[task as usize].process;
        if key.is_private() && kind == KeyKind::Private && !self.before_first_table(process) {
            s.extend(
                self.header_in(memory, process, bucket.table, HEADER_MASK)
                    .map(|m| Step::access(m, AccessKind::Read, Symbol::FutexHash)),
            );
        }
        // futex_hash: `fph = hb->priv`, to take the reference.
        self.read_priv(memory, bucket, Symbol::FutexHash, s);
        (key, bucket)
    }

    /// futex_queue: plist_node_init of the task's futex_q, then plist_add
    /// at the tail of the bucket's chain.
    pub(super) fn queue(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        bucket: Bucket,
        key: FutexKey,
        s: &mut Script,
    ) {
        let head = self.plist_head(memory, bucket);
        let chain = self.chains.entry(bucket).or_default();
        let ends = chain.first().zip(chain.last()).map(|(first, last)| {
            (
                self.futex_q[first.task as usize],
                self.futex_q[last.task as usize],
            )
        });
        chain.push(Waiter { task, key });
        let node = self.futex_q[task as usize];
        s.push(Step::access(node, AccessKind::Write, Symbol::FutexQueue));
        if let Some(h) = head {
            s.extend(h.add(ends, node));
        }
    }

    /// The bucket's chain head, where the design has a chain.
    pub(super) fn plist_head(&self, memory: &MemoryMap, bucket: Bucket) -> Option<PlistHead> {
        let (addr, region) = self.hash.field_in(bucket, FieldName::Chain)?;
        let size = self.hash.design.bucket.field(FieldName::Chain)?.size;
        Some(PlistHead::new(size, |offset| Mem {
            addr: addr + offset,
            line: memory.line_in(region, addr + offset),
        }))
    }

    /// plist_del of the futex_q at `at` of `chain` on `head`, from its
    /// neighbours as they are now; the caller then removes it.
    pub(super) fn unlink_steps(
        futex_q: &[Mem],
        head: Option<PlistHead>,
        chain: &[Waiter],
        at: usize,
    ) -> impl Iterator<Item = Step> {
        let node = |w: &Waiter| futex_q[w.task as usize];
        let prev = at.checked_sub(1).and_then(|p| chain.get(p)).map(node);
        let next = chain.get(at + 1).map(node);
        let own = node(&chain[at]);
        head.into_iter().flat_map(move |h| h.del(prev, own, next))
    }

    /// Walks a bucket's chain under its lock (plist_for_each_entry_safe,
    /// from the head's first link, in `by`) and unqueues up to `nr`
    /// waiters on `key` (__futex_unqueue: plist_del, then the waiter
    /// count). Returns them in chain order.
    pub(super) fn unqueue_matches(
        &mut self,
        memory: &MemoryMap,
        bucket: Bucket,
        key: &FutexKey,
        nr: u32,
        by: Symbol,
        s: &mut Script,
    ) -> Vec<u32> {
        let head = self.plist_head(memory, bucket);
        let waiters = self.field(memory, bucket, FieldName::Waiters);
        let mut woken = Vec::new();
        s.extend(head.map(|h| h.walk_start(by)));
        let Some(chain) = self.chains.get_mut(&bucket) else {
            return woken;
        };
        let mut i = 0;
        while i < chain.len() && (woken.len() as u32) < nr {
            let w = chain[i];
            s.push(Step::access(
                self.futex_q[w.task as usize],
                AccessKind::Read,
                by,
            ));
            if w.key == *key {
                s.extend(Self::unlink_steps(&self.futex_q, head, chain, i));
                chain.remove(i);
                s.extend(waiters.map(waiters_dec_step));
                woken.push(w.task);
            } else {
                i += 1;
            }
        }
        woken
    }

    /// The way out: drop the private hash reference (futex_hash_put), drop
    /// what the era's shared keys pinned, leave the syscall with `ret`.
    pub(super) fn end(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        f: &InFlight,
        ret: i64,
        s: &mut Script,
    ) {
        self.read_priv(memory, f.bucket, Symbol::FutexHashPut, s);
        self.private_reference(memory, task, f.bucket, Reference::Put, s);
        self.reference_dropped(f.bucket.table);
        if self.hash.design.path.shared_key != SharedKeyPins::PageOnly {
            // put_futex_key: mmdrop or iput, for each shared key of the op.
            let (_, kind) = f.op.uaddr();
            let keys = 1 + u32::from(matches!(f.op, FutexOp::CmpRequeue { .. }));
            if !f.key.is_private() {
                for _ in 0..keys {
                    s.push(Step::access(
                        self.pinned_object(task, kind),
                        AccessKind::Rmw,
                        Symbol::PutFutexKey,
                    ));
                }
            }
        }
        s.push(Step::Compute(Cost::SyscallHalf));
        s.push(Step::Returns(ret));
        s.push(Step::OpDone);
    }

    /// Tasks asleep on a futex right now.
    pub fn sleeping(&self) -> usize {
        self.chains.values().map(Vec::len).sum()
    }
}

#[cfg(test)]
impl FutexSystem {
    /// Names the field a script's access touches, for the era tests: a
    /// bucket field, a header field, a key's pinned object, the user word.
    pub(super) fn field_name(
        &self,
        memory: &MemoryMap,
        task: u32,
        uaddr: u64,
        addr: u64,
    ) -> String {
        let process = self.tasks[task as usize].process;
        if let Some((base, _)) = self.hash.header_of(process) {
            for (offset, name) in [
                (HEADER_REF, "fph->users/state"),
                (HEADER_MASK, "fph->hash_mask"),
                (HEADER_MM, "fph->mm"),
                (HEADER_IMMUTABLE, "fph->immutable"),
            ] {
                if addr == base + offset {
                    return name.into();
                }
            }
        }
        if addr == self.percpu_ref(memory, task).addr {
            return "percpu futex_ref".into();
        }
        if addr == self.pins.mm_count[process as usize].addr {
            return "mm->mm_count".into();
        }
        if addr == self.pins.inode_count.addr {
            return "inode->i_count".into();
        }
        if addr == uaddr {
            return "uaddr".into();
        }
        if addr == uaddr + 4 {
            return "uaddr node".into();
        }
        if addr == self.futex_q[task as usize].addr {
            return "futex_q".into();
        }
        if let Some(other) = self.futex_q.iter().position(|q| q.addr == addr) {
            return format!("futex_q of task {other}");
        }
        let pages = memory.regions().iter().find(|r| {
            r.name.starts_with("struct pages") && (r.base..r.base + r.len).contains(&addr)
        });
        if let Some(r) = pages {
            return match (addr - r.base) % STRUCT_PAGE_BYTES {
                PAGE_FLAGS => "page->flags".into(),
                PAGE_REFCOUNT => "page->_refcount".into(),
                other => format!("struct page +{other}"),
            };
        }
        let tables = (0..self.hash.global.len() as u32)
            .map(TableSel::Global)
            .chain(
                (0..self.hash.private.len() as u32)
                    .filter(|&p| self.hash.private[p as usize].is_some())
                    .map(TableSel::Private),
            );
        for table in tables {
            match self.hash.locate(table, addr) {
                Some((index, Some(FieldName::Chain))) => {
                    let (start, _) = self
                        .hash
                        .field_in(Bucket { table, index }, FieldName::Chain)
                        .expect("the field just located");
                    let size = self
                        .hash
                        .design
                        .bucket
                        .field(FieldName::Chain)
                        .map_or(0, |f| f.size);
                    return format!("hb->chain{}", super::plist::word_name(size, addr - start));
                }
                Some((_, Some(field))) => return format!("hb->{}", field.as_str()),
                _ => {}
            }
        }
        format!("{addr:#x}")
    }
}

#[cfg(test)]
mod first_task_tests {
    use super::first_task_and_count;

    /// Tasks listed out of process order: each process gets the first of
    /// its own and their number; a process without tasks gets none.
    #[test]
    fn each_process_gets_its_first_task_and_count() {
        let got = first_task_and_count([2, 0, 2, 2, 0], 4);
        assert_eq!(got, [(Some(1), 2), (None, 0), (Some(0), 3), (None, 0)]);
    }
}

#[cfg(test)]
mod in_transit_tests {
    use super::InTransit;

    /// A bucket's count goes past what a byte holds and back, exactly: it
    /// is pending until the last of its tasks has arrived, and another
    /// bucket's count does not move with it.
    #[test]
    fn counts_past_a_byte_and_back_exactly() {
        let mut t = InTransit::default();
        for _ in 0..600 {
            t.inc(7);
        }
        t.inc(3);
        for arrived in 0..600 {
            assert!(t.any(7), "{arrived} of 600 arrived");
            t.dec(7);
        }
        assert!(!t.any(7));
        assert!(t.any(3));
        // An arrival with nobody counted leaves the count at zero.
        t.dec(7);
        assert!(!t.any(7));
        t.inc(7);
        assert!(t.any(7));
    }
}
