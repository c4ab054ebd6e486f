//! What every futex op shares (kernel/futex/core.c): the futex system's
//! state (the bucket chains with their queued futex_qs, the user words'
//! values, each task's op in flight, the PI states), the way in (key, hash,
//! the private hash's reference), queueing and unqueueing, and the way out.
//! Function only: what each step costs is the engine's. The ops themselves
//! are in syscalls.rs (dispatch), waitwake.rs, requeue.rs and pi.rs, which
//! build on this file alone.

use super::futex_hash::{Bucket, FutexHash, TableSel};
use super::key::{get_futex_key, FutexKey, KeyKind, KeySource};
use super::script::{Cost, LockRef, Script, Step};
use super::table::{FieldName, RefcountMode};
use crate::coherence::AccessKind;
use crate::hash::word_hasher::WordMap;
use crate::memory::{Arena, Home, Mem, MemoryMap, RegionId};

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

/// A queued `futex_q`: it lives on the waiter's kernel stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Waiter {
    pub(super) task: u32,
    pub(super) key: FutexKey,
}

/// The op a task is in the middle of.
#[derive(Clone, Copy, Debug)]
pub(super) struct InFlight {
    pub(super) op: FutexOp,
    pub(super) key: FutexKey,
    /// The bucket the task is queued on, or works under.
    pub(super) bucket: Bucket,
}

/// A held PI futex (pi.rs): its owner, and the `futex_pi_state` the first
/// waiter attached. Its waiters are the futex_qs with its key on the bucket
/// chain, in hand-over order.
#[derive(Clone, Debug)]
pub(super) struct PiState {
    pub(super) owner: u32,
    pub(super) object: Option<Mem>,
}

pub struct FutexSystem {
    pub hash: FutexHash,
    tasks: Vec<TaskInfo>,
    mms: Vec<u64>,
    /// Dense lock id of each table's bucket 0: global instances, then private ones.
    lock_base: Vec<u32>,
    lock_count: u32,
    pub(super) chains: WordMap<Bucket, Vec<Waiter>>,
    /// User words that are not zero, by the futex key that names them.
    values: WordMap<FutexKey, u32>,
    pub(super) in_flight: Vec<Option<InFlight>>,
    /// Each task's futex_q, on its kernel stack.
    pub(super) futex_q: Vec<Mem>,
    /// Each CPU's per-CPU line: MCS nodes at 0, the private-hash reference at 128.
    percpu: Vec<(RegionId, u64)>,
    /// The PI state of each contended PI futex (pi.rs).
    pub(super) pi: WordMap<FutexKey, PiState>,
    /// Each task's cached `futex_pi_state` (`current->pi_state_cache`): the
    /// first waiter of a PI futex attaches it.
    pub(super) pi_state_cache: Vec<Mem>,
}

const PERCPU_STRIDE: u64 = 256;
const PERCPU_REF_OFFSET: u64 = 128;
const KERNEL_STACKS: u64 = 0xffff_c900_4000_0000;
const PERCPU_AREA: u64 = 0xffff_8882_0000_0000;
/// kmalloc-128 objects (a `futex_pi_state` is about 100 bytes), one slab
/// area per node because each task allocates its cache on its own node.
const PI_STATE_SLABS: u64 = 0xffff_8883_0000_0000;
const PI_STATE_BYTES: u64 = 128;
const PI_STATE_NODE_STRIDE: u64 = 1 << 30;

impl FutexSystem {
    /// Adds each task's kernel stack and each CPU's per-CPU area to `memory`.
    pub fn new(
        hash: FutexHash,
        tasks: Vec<TaskInfo>,
        mms: Vec<u64>,
        cpu_nodes: &[u32],
        memory: &mut MemoryMap,
    ) -> FutexSystem {
        let mut lock_base = Vec::new();
        let mut next = 0u32;
        for t in hash.global.iter().chain(hash.private.iter().flatten()) {
            lock_base.push(next);
            next += t.slots as u32;
        }
        let mut stacks = Arena::new(KERNEL_STACKS);
        let futex_q = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                // futex_wait's futex_q sits a little below the top of a 16 KiB stack.
                let top = stacks.alloc(16 * 1024, 16 * 1024, 0) + 16 * 1024;
                let addr = top - 0x200;
                let region = memory.add(
                    format!("task {i} kernel stack"),
                    addr,
                    64,
                    Home::Node(cpu_nodes[t.cpu as usize]),
                );
                Mem {
                    addr,
                    line: memory.line_in(region, addr),
                }
            })
            .collect();
        let mut percpu_arena = Arena::new(PERCPU_AREA);
        let percpu = cpu_nodes
            .iter()
            .enumerate()
            .map(|(cpu, &node)| {
                let base = percpu_arena.alloc(PERCPU_STRIDE, 64, 0);
                (
                    memory.add(
                        format!("cpu {cpu} per-cpu"),
                        base,
                        PERCPU_STRIDE,
                        Home::Node(node),
                    ),
                    base,
                )
            })
            .collect();
        let pi_state_cache = pi_state_objects(&tasks, cpu_nodes, memory);
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
            pi: WordMap::default(),
            pi_state_cache,
        }
    }

    /// Locks the tables hold; other locks of a workload get ids after these.
    pub fn lock_count(&self) -> u32 {
        self.lock_count
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

    pub(super) fn key(&self, task: u32, uaddr: u64, kind: KeyKind) -> FutexKey {
        let mm = self.mms[self.tasks[task as usize].process as usize];
        get_futex_key(
            uaddr,
            KeySource::of(kind, mm, uaddr),
            self.hash.design.word_size,
        )
        .expect("workloads use aligned futex words")
    }

    pub(super) fn field(
        &self,
        memory: &MemoryMap,
        bucket: Bucket,
        field: FieldName,
    ) -> Option<Mem> {
        let addr = self.hash.field_addr(bucket, field)?;
        Some(Mem {
            addr,
            line: memory.line_in(self.hash.instance(bucket.table).region, addr),
        })
    }

    pub(super) fn lock_of(&self, memory: &MemoryMap, bucket: Bucket) -> LockRef {
        let slot = match bucket.table {
            TableSel::Global(n) => n as usize,
            TableSel::Private(p) => {
                self.hash.global.len() + self.hash.private[..p as usize].iter().flatten().count()
            }
        };
        let word = self
            .field(memory, bucket, FieldName::Lock)
            .expect("validated designs have a lock");
        LockRef {
            id: self.lock_base[slot] + bucket.index,
            word,
        }
    }

    /// The private hash's reference, taken around every op that uses it.
    pub(super) fn refcount(&self, memory: &MemoryMap, task: u32, bucket: Bucket) -> Option<Mem> {
        let TableSel::Private(_) = bucket.table else {
            return None;
        };
        let ph = self.hash.design.private.as_ref()?;
        match ph.refcount {
            RefcountMode::None => None,
            RefcountMode::Shared => {
                let table = self.hash.instance(bucket.table);
                let addr = table
                    .header
                    .expect("validated: a shared refcount has a header");
                Some(Mem {
                    addr,
                    line: memory.line_in(table.region, addr),
                })
            }
            RefcountMode::PerCpu => {
                let (region, base) = self.percpu[self.tasks[task as usize].cpu as usize];
                let addr = base + PERCPU_REF_OFFSET;
                Some(Mem {
                    addr,
                    line: memory.line_in(region, addr),
                })
            }
        }
    }

    /// The way in, common to every op: the syscall, the key, the hash and
    /// the private hash's reference. Returns the key and its bucket.
    pub(super) fn enter(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        uaddr: u64,
        kind: KeyKind,
        s: &mut Script,
    ) -> (FutexKey, Bucket) {
        s.push(Step::Compute(Cost::SyscallHalf));
        let (key, bucket) = self.hash_key(memory, task, uaddr, kind, s);
        if let Some(r) = self.refcount(memory, task, bucket) {
            s.push(Step::Access(r, AccessKind::Rmw));
        }
        (key, bucket)
    }

    /// The key of a task's futex word and the bucket it hashes to.
    pub(super) fn locate(&self, task: u32, uaddr: u64, kind: KeyKind) -> (FutexKey, Bucket) {
        let key = self.key(task, uaddr, kind);
        // The real hash, every op: the key must land where the kernel would put it.
        let bucket = self
            .hash
            .futex_hash(&key, self.tasks[task as usize].process)
            .bucket;
        (key, bucket)
    }

    /// get_futex_key and futex_hash for one word, as script steps.
    pub(super) fn hash_key(
        &self,
        memory: &MemoryMap,
        task: u32,
        uaddr: u64,
        kind: KeyKind,
        s: &mut Script,
    ) -> (FutexKey, Bucket) {
        let (key, bucket) = self.locate(task, uaddr, kind);
        s.push(Step::Compute(if kind == KeyKind::Private {
            Cost::FutexKeyPrivate
        } else {
            Cost::FutexKeyShared
        }));
        s.push(Step::Compute(Cost::Jhash2));
        if let Some(p) = self.field(memory, bucket, FieldName::Priv) {
            s.push(Step::Access(p, AccessKind::Read));
        }
        (key, bucket)
    }

    /// futex_queue: link the task's futex_q at the tail of the bucket's chain.
    pub(super) fn queue(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        bucket: Bucket,
        key: FutexKey,
        s: &mut Script,
    ) {
        let chain = self.chains.entry(bucket).or_default();
        let tail = chain.last().map(|w| w.task);
        chain.push(Waiter { task, key });
        if let Some(c) = self.field(memory, bucket, FieldName::Chain) {
            s.push(Step::Access(c, AccessKind::Write));
        }
        if let Some(t) = tail {
            s.push(Step::Access(self.futex_q[t as usize], AccessKind::Write));
        }
        s.push(Step::Access(self.futex_q[task as usize], AccessKind::Write));
    }

    /// Walks a bucket's chain under its lock and unqueues up to `nr` waiters
    /// on `key` (__futex_unqueue: unlink from the plist, drop the waiter
    /// count). Returns them in chain order.
    pub(super) fn unqueue_matches(
        &mut self,
        memory: &MemoryMap,
        bucket: Bucket,
        key: &FutexKey,
        nr: u32,
        s: &mut Script,
    ) -> Vec<u32> {
        let chain_field = self.field(memory, bucket, FieldName::Chain);
        let waiters = self.field(memory, bucket, FieldName::Waiters);
        let mut woken = Vec::new();
        let Some(chain) = self.chains.get_mut(&bucket) else {
            return woken;
        };
        let mut i = 0;
        while i < chain.len() && (woken.len() as u32) < nr {
            let w = chain[i];
            s.push(Step::Access(
                self.futex_q[w.task as usize],
                AccessKind::Read,
            ));
            if w.key == *key {
                chain.remove(i);
                if let Some(c) = chain_field {
                    s.push(Step::Access(c, AccessKind::Write));
                }
                if let Some(w) = waiters {
                    s.push(Step::Access(w, AccessKind::Rmw));
                }
                woken.push(w.task);
            } else {
                i += 1;
            }
        }
        woken
    }

    /// The way out: drop the private hash reference, leave the syscall with `ret`.
    pub(super) fn end(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        bucket: Bucket,
        ret: i64,
        s: &mut Script,
    ) {
        if let Some(r) = self.refcount(memory, task, bucket) {
            s.push(Step::Access(r, AccessKind::Rmw));
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

/// Each task's cached `futex_pi_state`, a kmalloc object on its CPU's node.
fn pi_state_objects(tasks: &[TaskInfo], cpu_nodes: &[u32], memory: &mut MemoryMap) -> Vec<Mem> {
    let nodes = cpu_nodes.iter().max().map_or(1, |&n| n + 1);
    let mut per_node = vec![0u64; nodes as usize];
    let slots: Vec<(u32, u64)> = tasks
        .iter()
        .map(|t| {
            let node = cpu_nodes[t.cpu as usize];
            let slot = per_node[node as usize];
            per_node[node as usize] += 1;
            (node, slot)
        })
        .collect();
    let regions: Vec<Option<(RegionId, u64)>> = per_node
        .iter()
        .enumerate()
        .map(|(node, &count)| {
            (count > 0).then(|| {
                let base = PI_STATE_SLABS + node as u64 * PI_STATE_NODE_STRIDE;
                let region = memory.add(
                    format!("node {node} futex_pi_state cache"),
                    base,
                    count * PI_STATE_BYTES,
                    Home::Node(node as u32),
                );
                (region, base)
            })
        })
        .collect();
    slots
        .into_iter()
        .map(|(node, slot)| {
            let (region, base) = regions[node as usize].expect("a node with tasks has a region");
            let addr = base + slot * PI_STATE_BYTES;
            Mem {
                addr,
                line: memory.line_in(region, addr),
            }
        })
        .collect()
}
