//! futex_wait and futex_wake (kernel/futex/waitwake.c): the script of each,
//! per era, and the state they change. This is function only: the chains,
//! the user words' values, who sleeps. What each step costs is the engine's.

use super::futex_hash::{Bucket, FutexHash, TableSel};
use super::key::{get_futex_key, FutexKey, KeyKind, KeySource};
use super::script::{Cost, Decision, LockRef, Mem, Script, Step};
use super::table::{FieldName, RefcountMode};
use crate::coherence::AccessKind;
use crate::hash::word_hasher::WordMap;
use crate::memory::{Arena, Home, MemoryMap, RegionId};

/// A futex syscall as a workload issues it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FutexOp {
    /// FUTEX_WAIT: sleep if `*uaddr == val`, else return EAGAIN at once.
    Wait { uaddr: Mem, val: u32, kind: KeyKind },
    /// FUTEX_WAKE: wake up to `nr` tasks waiting on `uaddr`.
    Wake { uaddr: Mem, nr: u32, kind: KeyKind },
}

/// Who runs a task, as the kernel sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskInfo {
    pub process: u32,
    pub cpu: u32,
}

/// A queued `futex_q`: it lives on the waiter's kernel stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Waiter {
    task: u32,
    key: FutexKey,
}

/// The op a task is in the middle of.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    op: FutexOp,
    key: FutexKey,
    bucket: Bucket,
}

pub struct FutexSystem {
    pub hash: FutexHash,
    tasks: Vec<TaskInfo>,
    mms: Vec<u64>,
    /// Dense lock id of each table's bucket 0: global instances, then private ones.
    lock_base: Vec<u32>,
    lock_count: u32,
    chains: WordMap<Bucket, Vec<Waiter>>,
    /// User words that are not zero, by the futex key that names them.
    values: WordMap<FutexKey, u32>,
    in_flight: Vec<Option<InFlight>>,
    /// Each task's futex_q, on its kernel stack.
    futex_q: Vec<Mem>,
    /// Each CPU's per-CPU line: MCS nodes at 0, the private-hash reference at 128.
    percpu: Vec<(RegionId, u64)>,
}

const PERCPU_STRIDE: u64 = 256;
const PERCPU_REF_OFFSET: u64 = 128;
const KERNEL_STACKS: u64 = 0xffff_c900_4000_0000;
const PERCPU_AREA: u64 = 0xffff_8882_0000_0000;

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
        let key = self.key(task, uaddr, kind);
        self.values.get(&key).copied().unwrap_or(0)
    }

    fn key(&self, task: u32, uaddr: u64, kind: KeyKind) -> FutexKey {
        let mm = self.mms[self.tasks[task as usize].process as usize];
        let source = match kind {
            KeyKind::Private => KeySource::Private { mm },
            KeyKind::SharedAnon => KeySource::SharedAnon { mm },
            // A shared file mapping: the page's inode and index stand in for the mapping.
            KeyKind::SharedFile => KeySource::SharedFile {
                inode: 0xffff_8881_4000_0000,
                pgoff: uaddr >> 12,
            },
        };
        get_futex_key(uaddr, source, self.hash.design.word_size)
            .expect("workloads use aligned futex words")
    }

    fn field(&self, memory: &MemoryMap, bucket: Bucket, field: FieldName) -> Option<Mem> {
        let addr = self.hash.field_addr(bucket, field)?;
        Some(Mem {
            addr,
            line: memory.line_in(self.hash.instance(bucket.table).region, addr),
        })
    }

    fn lock_of(&self, memory: &MemoryMap, bucket: Bucket) -> LockRef {
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
    fn refcount(&self, memory: &MemoryMap, task: u32, bucket: Bucket) -> Option<Mem> {
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

    /// Writes the script of `op` for `task` into `s`, up to its first decision.
    pub fn begin(&mut self, memory: &MemoryMap, task: u32, op: FutexOp, s: &mut Script) {
        let (uaddr, kind) = match op {
            FutexOp::Wait { uaddr, kind, .. } | FutexOp::Wake { uaddr, kind, .. } => (uaddr, kind),
        };
        let key = self.key(task, uaddr.addr, kind);
        // The real hash, every op: the key must land where the kernel would put it.
        let bucket = self
            .hash
            .futex_hash(&key, self.tasks[task as usize].process)
            .bucket;
        self.in_flight[task as usize] = Some(InFlight { op, key, bucket });
        s.push(Step::Compute(Cost::SyscallHalf));
        s.push(Step::Compute(if kind == KeyKind::Private {
            Cost::FutexKeyPrivate
        } else {
            Cost::FutexKeyShared
        }));
        s.push(Step::Compute(Cost::Jhash2));
        if let Some(p) = self.field(memory, bucket, FieldName::Priv) {
            s.push(Step::Access(p, AccessKind::Read));
        }
        if let Some(r) = self.refcount(memory, task, bucket) {
            s.push(Step::Access(r, AccessKind::Rmw));
        }
        let waiters = self.field(memory, bucket, FieldName::Waiters);
        let lock = self.lock_of(memory, bucket);
        match op {
            FutexOp::Wait { uaddr, .. } => {
                // hb_waiters_inc: an atomic with a full barrier, before the lock.
                if let Some(w) = waiters {
                    s.push(Step::Access(w, AccessKind::Rmw));
                }
                s.push(Step::Lock(lock));
                s.push(Step::Access(uaddr, AccessKind::Read));
                s.push(Step::Decide(Decision::WaitCompare));
            }
            FutexOp::Wake { .. } => match waiters {
                // 3.14+: a barrier and a read of `waiters`; no lock if nobody waits.
                Some(w) => {
                    s.push(Step::Access(w, AccessKind::Read));
                    s.push(Step::Decide(Decision::WakeCheckWaiters));
                }
                None => {
                    s.push(Step::Lock(lock));
                    s.push(Step::Decide(Decision::WakeWalk));
                }
            },
        }
    }

    /// Continues a task's script at a decision, from the state right now.
    pub fn decide(&mut self, memory: &MemoryMap, task: u32, decision: Decision, s: &mut Script) {
        let f = self.in_flight[task as usize].expect("a decision belongs to an op in flight");
        let waiters = self.field(memory, f.bucket, FieldName::Waiters);
        let lock = self.lock_of(memory, f.bucket);
        match (decision, f.op) {
            (Decision::WaitCompare, FutexOp::Wait { val, .. }) => {
                let current = self.values.get(&f.key).copied().unwrap_or(0);
                if current != val {
                    s.push(Step::Unlock(lock));
                    if let Some(w) = waiters {
                        s.push(Step::Access(w, AccessKind::Rmw));
                    }
                } else {
                    // futex_queue: link our futex_q at the chain's tail.
                    let chain = self.chains.entry(f.bucket).or_default();
                    let tail = chain.last().map(|w| w.task);
                    chain.push(Waiter { task, key: f.key });
                    if let Some(c) = self.field(memory, f.bucket, FieldName::Chain) {
                        s.push(Step::Access(c, AccessKind::Write));
                    }
                    if let Some(t) = tail {
                        s.push(Step::Access(self.futex_q[t as usize], AccessKind::Write));
                    }
                    s.push(Step::Access(self.futex_q[task as usize], AccessKind::Write));
                    s.push(Step::Unlock(lock));
                    s.push(Step::Compute(Cost::Schedule));
                    s.push(Step::Block);
                }
            }
            (Decision::WakeCheckWaiters, FutexOp::Wake { .. }) => {
                if self.chains.get(&f.bucket).is_some_and(|c| !c.is_empty()) {
                    s.push(Step::Lock(lock));
                    s.push(Step::Decide(Decision::WakeWalk));
                    return;
                }
            }
            (Decision::WakeWalk, FutexOp::Wake { nr, .. }) => {
                let chain_field = self.field(memory, f.bucket, FieldName::Chain);
                let mut woken = Vec::new();
                if let Some(chain) = self.chains.get_mut(&f.bucket) {
                    let mut i = 0;
                    while i < chain.len() {
                        let w = chain[i];
                        s.push(Step::Access(
                            self.futex_q[w.task as usize],
                            AccessKind::Read,
                        ));
                        if w.key == f.key && (woken.len() as u32) < nr {
                            chain.remove(i);
                            // __futex_unqueue: unlink from the plist, drop the waiter count.
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
                }
                s.push(Step::Unlock(lock));
                s.extend(woken.into_iter().map(Step::Wake));
            }
            (d, op) => unreachable!("decision {d:?} does not belong to {op:?}"),
        }
        self.end(memory, task, f.bucket, s);
    }

    /// The way out: drop the private hash reference, leave the syscall.
    fn end(&mut self, memory: &MemoryMap, task: u32, bucket: Bucket, s: &mut Script) {
        if let Some(r) = self.refcount(memory, task, bucket) {
            s.push(Step::Access(r, AccessKind::Rmw));
        }
        s.push(Step::Compute(Cost::SyscallHalf));
        s.push(Step::OpDone);
    }

    /// Tasks asleep on a futex right now.
    pub fn sleeping(&self) -> usize {
        self.chains.values().map(Vec::len).sum()
    }
}
