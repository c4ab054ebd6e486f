//! A private hash growing while the run goes on (threads created one after
//! another): the kernel's steps of each resize, written as script steps the
//! engine prices, and the state they change. Function only, like the ops.
//!
//! What the kernel does (kernel/futex/core.c, 6.16-rc and 6.17; read there,
//! told here in futexsim's words):
//! - `futex_hash_allocate_default`, called from copy_process at each thread
//!   creation, sizes the table for the threads then existing and, where
//!   that is more slots than the table in use, calls `futex_hash_allocate`.
//! - `futex_hash_allocate` zeroes a new table (kvzalloc) and initialises
//!   each bucket (`futex_hash_bucket_init`: `priv`, `waiters`, the chain
//!   head, the lock). Under
//!   `mm->futex_hash_lock` it drops the initial reference of the table in
//!   use (6.16-rc: `rcuref_put` on the header's `users`; 6.17:
//!   `futex_ref_drop`, which starts the switch of the count from per-CPU
//!   to the atomic `mm->futex_atomic`) and tries `__futex_pivot_hash`.
//! - `__futex_pivot_hash` publishes the new table at once where the old
//!   one's count is dead; otherwise it leaves it in `mm->futex_phash_new`,
//!   and clone does not wait. The old table stays in use: each op takes and
//!   drops its reference on it as before, until the moment no op holds one.
//!   In 6.16-rc the rcuref is dead then; in 6.17 only after two RCU grace
//!   periods have moved the count to the atomic (`futex_ref_rcu`, the
//!   first grace period skipped where one has passed since the last
//!   publication), and between them every get and put is an atomic on
//!   `mm->futex_atomic`, a line all the process's CPUs share.
//! - The next op whose get fails calls `futex_pivot_hash`: under the
//!   mutex, `futex_rehash_private` visits every old bucket under its lock
//!   and moves each queued futex_q (plist removal, `waiters` down, hashed
//!   again, `waiters` up on the new bucket, its lock, plist insertion,
//!   `lock_ptr` set), then the new table is published. Ops that fail their
//!   get meanwhile wait for the mutex, find nothing to do, and retry on the
//!   new table.
//!
//! futexsim's simplifications: the creator is the process's main thread,
//! which it does not run, so a creation's steps run on the new thread's
//! CPU just before its first op; `mm->futex_hash_lock` is priced as a
//! spinlock of the era (a mutex spins on its running owner,
//! mutex_optimistic_spin); an RCU grace period is one scheduler tick of
//! the machine, the soonest every CPU busy in user space or in short
//! syscalls reports its quiescent state (rcu_sched_clock_irq), and the RCU
//! callbacks' own work runs on no simulated CPU. A reference counts from
//! the op's way in to the moment its way out is written: for a waiter,
//! before it sleeps, as the kernel drops it after queueing.

use super::core::{waiters_dec_step, waiters_inc_step, FutexSystem, HEADER_REF};
use super::futex_hash::{Bucket, ResizesInRun, TableSel};
use super::key::KeyKind;
use super::script::{Cost, Decision, LockRef, Script, Step};
use super::table::{FieldName, RefcountMode};
use crate::coherence::AccessKind;
use crate::machine::Ps;
use crate::memory::{Arena, Home, Mem, MemoryMap};
use crate::symbol::Symbol;

/// Offsets in the line futexsim gives the mm_struct's futex fields:
/// `futex_hash_lock`'s owner word, `futex_phash`, `futex_atomic`.
const MM_HASH_LOCK: u64 = 0;
const MM_PHASH: u64 = 32;
const MM_ATOMIC: u64 = 48;

/// How threads come to exist while the run goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InRunCreation {
    /// Each task's index among its process's threads, in creation order:
    /// the k-th creation finds k + 1 threads (the main thread and the k
    /// created before).
    pub index_in_process: Vec<u64>,
    /// An RCU grace period.
    pub grace_period: Ps,
}

/// A new table allocated and not yet published.
#[derive(Clone, Copy, Debug)]
struct Pending {
    generation: u32,
    /// From when (6.17) gets and puts go to `mm->futex_atomic`.
    atomic_from: Ps,
    /// From when the old table is dead once no op holds it.
    dead_from: Ps,
}

#[derive(Clone, Debug)]
struct ProcessGrowth {
    /// The generation published; None before the first creation.
    in_use: Option<u32>,
    /// References ops in flight hold, per generation.
    refs: Vec<u32>,
    pending: Option<Pending>,
    /// A pivot's script is under way: ops that fail their get wait for the mutex.
    pivoting: bool,
    /// When the allocation the pending or pivoting table came from began.
    allocated_at: Ps,
    last_publish: Ps,
    mutex: LockRef,
    mm_line: Mem,
    stats: ResizesInRun,
}

/// Every process's growth in the run.
#[derive(Clone, Debug)]
pub(super) struct Growth {
    grace_period: Ps,
    /// Per task: the generation its creation allocates.
    allocates: Vec<Option<u32>>,
    processes: Vec<Option<ProcessGrowth>>,
    /// Dense lock id of each outgrown table's bucket 0, per process.
    outgrown_lock_base: Vec<Vec<u32>>,
}

impl FutexSystem {
    /// Threads are created while the run goes on, as `creation` says: each
    /// process that sizes its private hash by the kernel's default starts
    /// with none and grows it at its creations. Adds the mm lines and the
    /// locks the resizes use.
    pub fn create_threads_in_run(&mut self, creation: &InRunCreation, memory: &mut MemoryMap) {
        let mut arena = Arena::new(crate::address_map::MM_FUTEX_LINES.base);
        let mut next_lock = self.lock_count();
        let processes = self.hash.growth.len();
        let mut outgrown_lock_base = Vec::with_capacity(processes);
        for tables in &self.hash.outgrown {
            let bases = tables
                .iter()
                .map(|t| {
                    let base = next_lock;
                    next_lock += t.slots as u32;
                    base
                })
                .collect();
            outgrown_lock_base.push(bases);
        }
        let mut growths = Vec::with_capacity(processes);
        for p in 0..processes {
            let generations = self.hash.growth[p].len();
            if generations == 0 {
                growths.push(None);
                continue;
            }
            let node = self.process_node(p as u32);
            let addr = arena.alloc(64, 64, 0);
            let region = memory.add(
                format!("process {p} mm_struct (futex_hash_lock, futex_phash, futex_atomic)"),
                addr,
                64,
                Home::Node(node),
            );
            let line = memory.line_in(region, addr);
            let mutex = LockRef::new(
                next_lock,
                Mem {
                    addr: addr + MM_HASH_LOCK,
                    line,
                },
            );
            next_lock += 1;
            growths.push(Some(ProcessGrowth {
                in_use: None,
                refs: vec![0; generations],
                pending: None,
                pivoting: false,
                allocated_at: 0,
                last_publish: 0,
                mutex,
                mm_line: Mem { addr, line },
                stats: ResizesInRun::default(),
            }));
        }
        let allocates = creation
            .index_in_process
            .iter()
            .enumerate()
            .map(|(task, &index)| {
                let p = self.process_of(task as u32) as usize;
                self.hash.growth[p]
                    .iter()
                    .position(|g| g.created_by == index)
                    .map(|g| g as u32)
            })
            .collect();
        self.set_lock_count(next_lock);
        self.growth = Some(Growth {
            grace_period: creation.grace_period,
            allocates,
            processes: growths,
            outgrown_lock_base,
        });
    }

    /// What each process's resizes did in a run that ended at `end`: the
    /// slots in use and the resizes, None for a process that did not grow
    /// in it.
    pub fn resizes_in_run(&self, end: Ps) -> Vec<Option<(u64, ResizesInRun)>> {
        let Some(growth) = &self.growth else {
            return Vec::new();
        };
        growth
            .processes
            .iter()
            .enumerate()
            .map(|(p, g)| {
                let g = g.as_ref()?;
                let slots = g.in_use.map_or(0, |gen| {
                    self.hash
                        .instance(self.hash.generation(p as u32, gen))
                        .slots
                });
                let mut stats = g.stats;
                if g.pending.is_some() || g.pivoting {
                    stats.resize_ns += end.saturating_sub(g.allocated_at) / 1000;
                }
                Some((slots, stats))
            })
            .collect()
    }

    /// The table process `process` hashes its private keys into now: None
    /// for the global table. Without growth in the run, its last table.
    pub(super) fn private_in_use(&self, process: u32) -> Option<TableSel> {
        match self.growth_of(process) {
            Some(g) => g
                .in_use
                .map(|generation| self.hash.generation(process, generation)),
            None => self.hash.private[process as usize]
                .is_some()
                .then_some(TableSel::Private(process)),
        }
    }

    /// Whether the process grows in the run and has no table yet.
    pub(super) fn before_first_table(&self, process: u32) -> bool {
        self.growth_of(process).is_some_and(|g| g.in_use.is_none())
    }

    /// Dense lock id of bucket 0 of an outgrown table.
    pub(super) fn outgrown_lock_base(&self, process: u32, generation: u32) -> u32 {
        self.growth
            .as_ref()
            .expect("outgrown tables grow in the run")
            .outgrown_lock_base[process as usize][generation as usize]
    }

    fn growth_of(&self, process: u32) -> Option<&ProcessGrowth> {
        self.growth
            .as_ref()
            .and_then(|g| g.processes.get(process as usize))
            .and_then(Option::as_ref)
    }

    fn growth_mut(&mut self, process: u32) -> Option<&mut ProcessGrowth> {
        self.growth
            .as_mut()
            .and_then(|g| g.processes.get_mut(process as usize))
            .and_then(Option::as_mut)
    }

    /// 6.17's count is the atomic `mm->futex_atomic` now, not the CPU's
    /// counter: the line each get and put of the process's ops goes to.
    pub(super) fn atomic_reference(&self, process: u32) -> Option<Mem> {
        let g = self.growth_of(process)?;
        let pending = g.pending?;
        (self.now >= pending.atomic_from).then_some(Mem {
            addr: g.mm_line.addr + MM_ATOMIC,
            line: g.mm_line.line,
        })
    }

    /// The op took a reference on the private table `table`.
    pub(super) fn reference_taken(&mut self, table: TableSel) {
        if let Some((p, generation)) = self.private_generation(table) {
            if let Some(g) = self.growth_mut(p) {
                g.refs[generation as usize] += 1;
            }
        }
    }

    /// The op dropped its reference on the private table `table`.
    pub(super) fn reference_dropped(&mut self, table: TableSel) {
        if let Some((p, generation)) = self.private_generation(table) {
            if let Some(g) = self.growth_mut(p) {
                let refs = &mut g.refs[generation as usize];
                *refs = refs.saturating_sub(1);
            }
        }
    }

    /// The process and generation of a private table.
    fn private_generation(&self, table: TableSel) -> Option<(u32, u32)> {
        match table {
            TableSel::Global(_) => None,
            TableSel::Outgrown {
                process,
                generation,
            } => Some((process, generation)),
            TableSel::Private(process) => {
                Some((process, self.hash.outgrown[process as usize].len() as u32))
            }
        }
    }

    /// The script of a thread's creation, for its process's growth:
    /// futex_hash_allocate_default, where the new size is larger than the
    /// table in use. Writes nothing for a creation that grows nothing.
    pub fn thread_created(&mut self, memory: &MemoryMap, task: u32, now: Ps, s: &mut Script) {
        self.now = now;
        let Some(generation) = self
            .growth
            .as_ref()
            .and_then(|g| g.allocates.get(task as usize).copied().flatten())
        else {
            return;
        };
        let process = self.process_of(task);
        let new = self.hash.generation(process, generation);
        self.allocate_table(memory, new, s);
        let Some(g) = self.growth_of(process) else {
            return;
        };
        let mutex = g.mutex;
        let old = g.in_use;
        s.push(Step::Lock(mutex));
        let refcount = self.refcount_mode();
        let grace_period = self.growth.as_ref().map_or(0, |g| g.grace_period);
        let header_ref = old.and_then(|old| {
            self.header_in(
                memory,
                process,
                self.hash.generation(process, old),
                HEADER_REF,
            )
        });
        let Some(g) = self.growth_mut(process) else {
            return;
        };
        let pivot_now = match (old, g.pending) {
            // The first table: nothing to drain, published at once.
            (None, _) => {
                g.allocated_at = now;
                true
            }
            // A larger table supersedes the one still waiting for the
            // drain (futex_hash_less keeps the larger), and the pivot is
            // tried again.
            (Some(old), Some(pending)) => {
                g.stats.allocated += 1;
                let dead = g.refs[old as usize] == 0 && now >= pending.dead_from;
                g.pending = (!dead).then_some(Pending {
                    generation,
                    ..pending
                });
                dead
            }
            (Some(old), None) => {
                g.stats.allocated += 1;
                g.allocated_at = now;
                let pending =
                    match refcount {
                        // rcuref_put of the initial reference: dead at once
                        // where no op holds one.
                        RefcountMode::Shared => {
                            s.extend(header_ref.map(|m| {
                                Step::access(m, AccessKind::Rmw, Symbol::FutexHashAllocate)
                            }));
                            Pending {
                                generation,
                                atomic_from: now,
                                dead_from: now,
                            }
                        }
                        // futex_ref_drop: a grace period after the last
                        // publication, then the switch to the atomic, then one
                        // more before the count can be read as dead.
                        _ => {
                            let atomic_from = now.max(g.last_publish + grace_period);
                            Pending {
                                generation,
                                atomic_from,
                                dead_from: atomic_from + grace_period,
                            }
                        }
                    };
                let dead = g.refs[old as usize] == 0 && now >= pending.dead_from;
                g.pending = (!dead).then_some(pending);
                dead
            }
        };
        if pivot_now {
            self.pivot(memory, task, process, generation, s);
        }
        s.push(Step::Unlock(mutex));
    }

    /// On a private key's way in, before futex_hash: where the table in
    /// use is dead and a new one waits, this op's failed get makes it
    /// pivot; where a pivot is under way, it waits for the mutex and
    /// retries. A shared or FUTEX2_NUMA key's bucket has no `priv`: its op
    /// takes no reference and never pivots.
    pub(super) fn pivot_if_due(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        kind: KeyKind,
        s: &mut Script,
    ) {
        if kind != KeyKind::Private {
            return;
        }
        let process = self.process_of(task);
        let now = self.now;
        let Some(g) = self.growth_mut(process) else {
            return;
        };
        let mutex = g.mutex;
        if g.pivoting {
            s.push(Step::Lock(mutex));
            s.push(Step::Unlock(mutex));
            return;
        }
        let (Some(old), Some(pending)) = (g.in_use, g.pending) else {
            return;
        };
        if g.refs[old as usize] > 0 || now < pending.dead_from {
            return;
        }
        g.pending = None;
        s.push(Step::Lock(mutex));
        self.pivot(memory, task, process, pending.generation, s);
        s.push(Step::Unlock(mutex));
    }

    /// kvzalloc of the new table and futex_hash_bucket_init of each bucket:
    /// a store to every line, then one to each field of each bucket. (6.17
    /// makes the per-CPU count and its first reference with the mm, at
    /// fork, futex_mm_init: before any thread is created.)
    fn allocate_table(&self, memory: &MemoryMap, table: TableSel, s: &mut Script) {
        let t = self.hash.instance(table);
        let line_size = memory.line_size();
        let start = t.header.unwrap_or(t.base);
        let end = t.base + t.slots * u64::from(self.hash.design.bucket.size);
        let mut addr = start - start % line_size;
        while addr < end {
            let at = addr.max(start);
            s.push(Step::access(
                Mem {
                    addr: at,
                    line: memory.line_in(t.region, at),
                },
                AccessKind::Write,
                Symbol::FutexHashAllocate,
            ));
            addr += line_size;
        }
        for index in 0..t.slots as u32 {
            let bucket = Bucket { table, index };
            for field in [
                FieldName::Priv,
                FieldName::Waiters,
                FieldName::Chain,
                FieldName::Lock,
            ] {
                if let Some(m) = self.field(memory, bucket, field) {
                    s.push(Step::access(
                        m,
                        AccessKind::Write,
                        Symbol::FutexHashAllocate,
                    ));
                }
            }
        }
    }

    /// __futex_pivot_hash with the old table dead (the mutex held by the
    /// caller), on `task`'s CPU: in 6.17 the per-CPU count's sum first,
    /// then futex_rehash_private moves every queued futex_q, then the new
    /// table is published. The queued futex_qs move in the kernel's state
    /// now; ops that begin before the publication is done wait for the
    /// mutex.
    fn pivot(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        process: u32,
        generation: u32,
        s: &mut Script,
    ) {
        let new = self.hash.generation(process, generation);
        let old = self
            .growth_of(process)
            .and_then(|g| g.in_use)
            .map(|old| self.hash.generation(process, old));
        let mut moved = 0;
        if let Some(old) = old {
            if self.refcount_mode() == RefcountMode::PerCpu {
                self.sum_per_cpu_count(memory, task, process, s);
            }
            moved = self.rehash(memory, old, new, s);
        }
        let Some(g) = self.growth_mut(process) else {
            return;
        };
        let mm_phash = Mem {
            addr: g.mm_line.addr + MM_PHASH,
            line: g.mm_line.line,
        };
        g.in_use = Some(generation);
        g.pivoting = true;
        g.stats.moved += moved;
        // rcu_assign_pointer(mm->futex_phash, new); 6.17 sets the new
        // table's state to per-CPU first.
        if self.refcount_mode() == RefcountMode::PerCpu {
            s.extend(
                self.header_in(memory, process, new, HEADER_REF)
                    .map(|m| Step::access(m, AccessKind::Write, Symbol::FutexPivotHash)),
            );
        }
        s.push(Step::access(
            mm_phash,
            AccessKind::Write,
            Symbol::FutexPivotHash,
        ));
        s.push(Step::Decide(Decision::HashPublished(process)));
    }

    /// 6.17's __futex_ref_atomic_end, which makes the old table's count
    /// one number where futex_ref_is_dead can find it zero: every possible
    /// CPU's counter read and zeroed, this CPU's counter set to the next
    /// table's first reference, and the sum added to `mm->futex_atomic`.
    /// The reads are independent (each CPU's address is its per-CPU
    /// offset's, not a value read before), so they overlap up to the core's
    /// outstanding misses; the add needs them all. In the kernel the second
    /// RCU callback (futex_ref_rcu) runs it in softirq a grace period after
    /// the switch to the atomic; futexsim runs no work outside a task's
    /// script, so the op that pivots runs it, on its CPU, just before the
    /// rehash: the same lines, read by one CPU, once a resize.
    fn sum_per_cpu_count(&self, memory: &MemoryMap, task: u32, process: u32, s: &mut Script) {
        let Some(g) = self.growth_of(process) else {
            return;
        };
        let atomic = Mem {
            addr: g.mm_line.addr + MM_ATOMIC,
            line: g.mm_line.line,
        };
        let counters = (0..self.possible_cpus()).map(|cpu| self.percpu_ref_of_cpu(memory, cpu));
        let by = Symbol::FutexRefAtomicEnd;
        s.extend(counters.clone().map(|c| Step::load(c, by)));
        s.push(Step::Join);
        s.extend(counters.map(|c| Step::access(c, AccessKind::Write, by)));
        // this_cpu_inc(*mm->futex_ref): the count's initial reference for the next cycle.
        self.this_cpu_ref_step(memory, task, by, s);
        // atomic_long_add_return, fully ordered.
        s.push(Step::access(atomic, AccessKind::Rmw, by));
    }

    /// futex_rehash_private from `old` to `new`: each old bucket under its
    /// lock, each of its queued futex_qs moved under the new bucket's lock.
    /// Returns how many moved.
    fn rehash(&mut self, memory: &MemoryMap, old: TableSel, new: TableSel, s: &mut Script) -> u64 {
        let mut moved = 0;
        for index in 0..self.hash.instance(old).slots as u32 {
            let from = Bucket { table: old, index };
            let from_lock = self.lock_of(memory, from);
            s.push(Step::Lock(from_lock));
            let waiters = self.chains.remove(&from).unwrap_or_default();
            let from_head = self.plist_head(memory, from);
            let from_waiters = self.field(memory, from, FieldName::Waiters);
            for (i, &w) in waiters.iter().enumerate() {
                // plist_del of the chain's first futex_q and
                // futex_hb_waiters_dec on the old bucket.
                s.extend(Self::unlink_steps(
                    &self.futex_q,
                    from_head,
                    &waiters[i..],
                    0,
                ));
                s.extend(from_waiters.map(waiters_dec_step));
                // __futex_hash of the key in the new table.
                s.push(Step::Compute(Cost::Jhash2));
                let to = self.hash.futex_hash_in(&w.key, None, Some(new)).bucket;
                let to_waiters = self.field(memory, to, FieldName::Waiters);
                s.extend(to_waiters.map(waiters_inc_step));
                let to_lock = self.lock_of(memory, to);
                s.push(Step::Lock(to_lock));
                // plist_add at the tail, then `lock_ptr`, both in the futex_q.
                let to_head = self.plist_head(memory, to);
                let chain = self.chains.entry(to).or_default();
                let ends = chain.first().zip(chain.last()).map(|(first, last)| {
                    (
                        self.futex_q[first.task as usize],
                        self.futex_q[last.task as usize],
                    )
                });
                chain.push(w);
                let node = self.futex_q[w.task as usize];
                s.extend(to_head.into_iter().flat_map(|h| h.add(ends, node)));
                s.push(Step::access(
                    node,
                    AccessKind::Write,
                    Symbol::FutexRehashPrivate,
                ));
                s.push(Step::Unlock(to_lock));
                if let Some(f) = self.in_flight[w.task as usize].as_mut() {
                    f.bucket = to;
                    f.lock = to_lock;
                    f.set_waiters(to_waiters);
                }
                moved += 1;
            }
            s.push(Step::Unlock(from_lock));
        }
        moved
    }

    /// The publication's steps are done: the pivot is over.
    pub(super) fn hash_published(&mut self, process: u32) {
        let now = self.now;
        if let Some(g) = self.growth_mut(process) {
            g.pivoting = false;
            g.last_publish = now;
            // The first table replaces none: it is no resize.
            if g.stats.allocated > g.stats.published {
                g.stats.published += 1;
                g.stats.resize_ns += now.saturating_sub(g.allocated_at) / 1000;
            }
        }
    }

    fn refcount_mode(&self) -> RefcountMode {
        self.hash
            .design
            .private
            .as_ref()
            .map_or(RefcountMode::None, |p| p.refcount)
    }
}

#[cfg(test)]
mod tests {
    use super::super::core::FutexOp;
    use super::super::testing::{blocks, Kernel};
    use super::*;

    fn slots_in_use(k: &Kernel) -> u64 {
        k.sys.resizes_in_run(k.now)[0].map_or(0, |(slots, _)| slots)
    }

    fn stats(k: &Kernel) -> ResizesInRun {
        k.sys.resizes_in_run(k.now)[0].expect("the process grows").1
    }

    fn failing_wait(k: &mut Kernel, task: u32, offset: u64) -> Script {
        let uaddr = k.word(offset);
        k.run(
            task,
            FutexOp::Wait {
                uaddr,
                val: 1,
                kind: KeyKind::Private,
            },
        )
    }

    fn mutex_steps(s: &Script) -> usize {
        s.iter()
            .filter(|step| matches!(step, Step::Lock(l) | Step::Unlock(l) if l.word().addr % 64 == MM_HASH_LOCK))
            .count()
    }

    /// 32 threads created one by one on 64 CPUs with nothing in flight:
    /// futex_hash_allocate_default's 16, then 32 at the 5th creation (5
    /// threads, 20 rounded up), 64 at the 9th and 128 at the 17th, each
    /// published at once where no op holds the old table.
    #[test]
    fn created_one_by_one_the_table_ends_as_the_rule_sizes_it() {
        let mut k = Kernel::growing("v6.16-rc1", 32, 1000);
        let mut sizes = Vec::new();
        for task in 0..32 {
            k.create(task);
            sizes.push(slots_in_use(&k));
        }
        assert_eq!(sizes[0], 16);
        assert_eq!(&sizes[3..5], [16, 32]);
        assert_eq!(&sizes[7..9], [32, 64]);
        assert_eq!(&sizes[15..17], [64, 128]);
        assert_eq!(sizes[31], 128);
        let s = stats(&k);
        assert_eq!((s.allocated, s.published, s.moved), (3, 3, 0));
    }

    /// The resize at the 5th creation with four futex_qs queued moves each
    /// to the bucket its key hashes to in the new table, where a wake finds
    /// it, and takes a lock, an unlock and the plist's stores for each more
    /// than the same resize with nobody queued.
    #[test]
    fn a_resize_moves_every_queued_waiter_and_costs_more_for_each() {
        let grow = |waiters: u32| {
            let mut k = Kernel::growing("v6.16-rc1", 5, 1000);
            for task in 0..4 {
                k.create(task);
            }
            for task in 0..waiters {
                let uaddr = k.word(64 * u64::from(task));
                let s = k.wait(task, uaddr);
                assert!(blocks(&s));
            }
            let s = k.create(4);
            (k, s)
        };
        let (empty, without) = grow(0);
        let (k, with) = grow(4);
        assert_eq!((slots_in_use(&empty), slots_in_use(&k)), (32, 32));
        assert_eq!(stats(&k).moved, 4);
        for task in 0..4 {
            let uaddr = k.word(64 * u64::from(task));
            assert_eq!(k.waiters_on(task, uaddr), [task], "waiter {task}");
        }
        let locks = |s: &Script| s.iter().filter(|st| matches!(st, Step::Lock(_))).count();
        // Each old bucket's lock, the mutex, and one new bucket lock per waiter.
        assert_eq!(locks(&without), 16 + 1);
        assert_eq!(locks(&with), 16 + 1 + 4);
        assert!(
            with.len() > without.len() + 4 * 6,
            "{} {}",
            with.len(),
            without.len()
        );
    }

    /// An op in flight holds the old table: the creation leaves the new one
    /// waiting, later ops keep the old one, and the first op to begin once
    /// the last reference is gone pivots; one that begins while the pivot's
    /// steps run waits for the mutex first.
    #[test]
    fn ops_in_flight_hold_the_resize_until_they_drain() {
        let mut k = Kernel::growing("v6.16-rc1", 5, 1000);
        for task in 0..4 {
            k.create(task);
        }
        let uaddr = k.word(0);
        let mut in_flight = Script::new();
        let wait = FutexOp::Wait {
            uaddr,
            val: 1,
            kind: KeyKind::Private,
        };
        k.sys.begin(&k.memory, 0, k.now, wait, &mut in_flight);
        let creation = k.create(4);
        assert_eq!(mutex_steps(&creation), 2);
        assert_eq!(slots_in_use(&k), 16, "the old table is held");
        let during = failing_wait(&mut k, 1, 8);
        assert_eq!(mutex_steps(&during), 0);
        assert_eq!(slots_in_use(&k), 16, "a new op took the old table too");
        // Task 0's op decides and drops its reference: the old table is dead.
        let Some(&Step::Decide(d)) = in_flight.last() else {
            panic!("the wait decides under the lock");
        };
        k.sys.decide(&k.memory, 0, k.now, d, &mut in_flight);
        let mut pivoting = Script::new();
        k.sys.begin(&k.memory, 2, k.now, wait, &mut pivoting);
        assert_eq!(slots_in_use(&k), 32, "the first op after the drain pivots");
        assert_eq!(mutex_steps(&pivoting), 2);
        assert_eq!(
            pivoting
                .iter()
                .filter(|s| matches!(s, Step::Lock(_)))
                .count(),
            1 + 16 + 1,
            "the mutex, the old buckets, its own bucket"
        );
        let waiting = failing_wait(&mut k, 3, 16);
        assert_eq!(mutex_steps(&waiting), 2, "it waits for the pivot's mutex");
        assert_eq!(
            stats(&k).published,
            0,
            "the publication's steps have not run"
        );
        let published = pivoting
            .iter()
            .find_map(|s| match s {
                Step::Decide(d @ Decision::HashPublished(_)) => Some(*d),
                _ => None,
            })
            .expect("the pivot publishes");
        k.sys.decide(&k.memory, 2, k.now, published, &mut pivoting);
        assert_eq!(stats(&k).published, 1);
        assert_eq!(mutex_steps(&failing_wait(&mut k, 3, 16)), 0);
    }

    /// A growth that finds an earlier one still waiting replaces it with
    /// the larger table (futex_hash_less), and the pivot is tried again:
    /// at once by the creation where the old table has drained, else by
    /// the first op after the drain; either way one rehash, to the larger.
    #[test]
    fn a_larger_growth_supersedes_the_one_waiting() {
        for drained_before in [true, false] {
            let mut k = Kernel::growing("v6.16-rc1", 9, 1000);
            for task in 0..4 {
                k.create(task);
            }
            let wait = FutexOp::Wait {
                uaddr: k.word(0),
                val: 1,
                kind: KeyKind::Private,
            };
            let mut held = Script::new();
            k.sys.begin(&k.memory, 0, k.now, wait, &mut held);
            k.create(4);
            let release = |k: &mut Kernel, held: &mut Script| {
                let Some(&Step::Decide(d)) = held.last() else {
                    panic!("the wait decides under the lock");
                };
                k.sys.decide(&k.memory, 0, k.now, d, held);
            };
            if drained_before {
                release(&mut k, &mut held);
            }
            for task in 5..9 {
                k.create(task);
            }
            if drained_before {
                assert_eq!(slots_in_use(&k), 64, "the 9th creation pivots");
            } else {
                assert_eq!(slots_in_use(&k), 16, "still held");
                release(&mut k, &mut held);
                failing_wait(&mut k, 1, 8);
                assert_eq!(slots_in_use(&k), 64, "the next op pivots");
            }
            let s = stats(&k);
            assert_eq!((s.allocated, s.published), (2, 1), "{drained_before}");
        }
    }

    /// 6.17's resize sums the old table's per-CPU count before the rehash
    /// (__futex_ref_atomic_end): a load of each of the 64 CPUs' counter
    /// lines, independent of one another, then a join, a store of 0 to
    /// each, this CPU's counter set for the next table (a load and a store
    /// on x86) and the add to `mm->futex_atomic`. 6.16-rc's shared count
    /// has nothing to sum, and its pivot reads no counter.
    #[test]
    fn a_6_17_resize_reads_and_zeroes_every_cpu_s_counter_before_the_rehash() {
        let pivoting = |era: &str| {
            let mut k = Kernel::growing(era, 5, 1_000_000);
            for task in 0..4 {
                k.create(task);
            }
            k.now = 10_000;
            k.create(4);
            k.now = 3_000_000;
            let s = failing_wait(&mut k, 1, 0);
            assert_eq!(slots_in_use(&k), 32, "{era}: this op pivots");
            (k, s)
        };
        let (k, s) = pivoting("v6.17");
        let counters: Vec<Mem> = (0..64)
            .map(|cpu| k.sys.percpu_ref_of_cpu(&k.memory, cpu))
            .collect();
        let start = s
            .iter()
            .position(|st| matches!(st, Step::Load(_)))
            .expect("the sum's loads");
        let mm_line = k.sys.growth_of(0).unwrap().mm_line;
        let atomic = Mem {
            addr: mm_line.addr + MM_ATOMIC,
            line: mm_line.line,
        };
        let own = k.sys.percpu_ref(&k.memory, 1);
        let by = Symbol::FutexRefAtomicEnd;
        let mut expected: Vec<Step> = counters.iter().map(|&c| Step::load(c, by)).collect();
        expected.push(Step::Join);
        expected.extend(
            counters
                .iter()
                .map(|&c| Step::access(c, AccessKind::Write, by)),
        );
        expected.extend([
            Step::access(own, AccessKind::Read, by),
            Step::access(own, AccessKind::Write, by),
            Step::access(atomic, AccessKind::Rmw, by),
        ]);
        assert_eq!(s[start..start + expected.len()], expected[..]);
        assert!(
            matches!(s[start + expected.len()], Step::Lock(_)),
            "the rehash's first bucket lock follows"
        );
        let (k, s) = pivoting("v6.16-rc1");
        let counter_lines: Vec<_> = (0..64)
            .map(|cpu| k.sys.percpu_ref_of_cpu(&k.memory, cpu).line)
            .collect();
        let touches_a_counter = |st: &Step| match st {
            Step::Load(m) => counter_lines.contains(&m.mem().line),
            Step::Access(a) => counter_lines.contains(&a.mem().line),
            _ => false,
        };
        assert!(!s.iter().any(touches_a_counter));
    }

    /// 6.17: futex_ref_drop waits a grace period after the last publication
    /// before the count goes atomic, and one more before it can be dead;
    /// meanwhile ops keep the old table, their references on the mm's
    /// atomic in the second period.
    #[test]
    fn per_cpu_references_drain_after_two_grace_periods() {
        let mut k = Kernel::growing("v6.17", 5, 1_000_000);
        for task in 0..4 {
            k.create(task);
        }
        k.now = 10_000;
        k.create(4);
        let atomic = |k: &Kernel, s: &Script| {
            s.iter().any(|st| matches!(st, Step::Access(a) if a.kind == AccessKind::Rmw && a.mem().addr % 64 == MM_ATOMIC && a.mem().line == k.sys.growth_of(0).unwrap().mm_line.line))
        };
        k.now = 500_000;
        let s = failing_wait(&mut k, 1, 0);
        assert!(!atomic(&k, &s));
        assert_eq!(slots_in_use(&k), 16);
        k.now = 1_500_000;
        let s = failing_wait(&mut k, 1, 0);
        assert!(
            atomic(&k, &s),
            "the count is atomic in the second grace period"
        );
        assert_eq!(slots_in_use(&k), 16);
        k.now = 2_000_000;
        failing_wait(&mut k, 1, 0);
        assert_eq!(slots_in_use(&k), 32);
        assert_eq!(stats(&k).resize_ns, (2_000_000 - 10_000) / 1000);
    }
}
