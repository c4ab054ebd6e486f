//! What one core has in flight, and how its SMT sibling slows it: the
//! store buffer, the outstanding loads, the shared execution. A plain
//! store retires at once and drains in order in the background; a locked
//! RMW waits for the drain. Independent loads overlap up to the core's
//! outstanding-miss limit, and a step that depends on them waits. Without
//! these an op that adds a line to its path pays the line's whole miss in
//! sequence, which real cores do not.
//!
//! A store is asked of the directory when it is issued (its ownership
//! request goes out at once, as a core's RFO for a store in its buffer
//! does) and becomes visible in order: spinners on its line wake when it
//! commits, after every older store and every older load (TSO keeps a
//! store behind earlier loads). Where its line's server is busy the store
//! waits at the line as an entry of the buffer and the task goes on; the
//! stores after it still ask for their lines (a core's RFOs run ahead of
//! its commits) but commit only after it, in order. What a store carries
//! (a lock's release, a hand-on, a user word's new value) is published
//! when it commits, so a read served before then never shows it: causality
//! holds. The storing task's own reads of a user word find its value in
//! the buffer before then (store-to-load forwarding).

use super::attribution::Attribute;
use super::event::{Event, Waiter};
use super::{Engine, Redo, Wait};
use crate::coherence::{AccessKind, Class, Request};
use crate::kernel::spinlock::Publishes;
use crate::machine::{Machine, Ps};
use crate::memory::{LineId, Mem};
use crate::symbol::Symbol;
use crate::task::{AtomicOp, UserWord};
use std::collections::VecDeque;

/// A slot of the store buffer whose store has not committed: when it
/// does is known only once every store before it has its line.
const HELD: Ps = Ps::MAX;

/// What a store makes visible besides its line's write, once it commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Carries {
    /// A store of a lock's protocol, and what it publishes (maybe nothing).
    Lock(Publishes),
    /// A user-space store of `value` to `task`'s word `word`.
    Word {
        task: u32,
        word: UserWord,
        value: u32,
    },
    /// A relaxed user-space RMW nothing waits for (`Op::RelaxedAtomic`):
    /// performed on `task`'s word when it commits.
    Atomic {
        task: u32,
        word: UserWord,
        op: AtomicOp,
    },
}

impl Carries {
    /// How the entry asks for its line: an RMW pays the atomic's cost.
    fn kind(self) -> AccessKind {
        match self {
            Carries::Atomic { .. } => AccessKind::Rmw,
            _ => AccessKind::Write,
        }
    }
}

/// A store retired into the buffer that has not committed: it, or a store
/// before it, waits at its line.
struct HeldStore {
    mem: Mem,
    /// The function that made the store.
    by: Symbol,
    carries: Carries,
    /// When the loads older than the store complete: it commits after them.
    after_loads: Ps,
    /// Its slot in the buffer's ring.
    slot: usize,
    /// When its line's data is in, once its line has served it; None
    /// while it waits there.
    done: Option<Ps>,
    /// Whether it has a place of its own in its line's queue: a store or
    /// relaxed RMW to a line that an older entry already waits for rides
    /// with that one (one ownership request brings the line for every
    /// entry to it).
    queued: bool,
}

/// The CPUs' memory-order state and the compute each runs.
pub(super) struct Cpus {
    /// Per CPU: its stores and loads in flight.
    order: Vec<CpuOrder>,
    /// The compute each CPU runs, a core's threads side by side; per CPU,
    /// where its own and its SMT sibling's are (`compute_slots`).
    compute: Vec<ThreadCompute>,
    compute_slots: Vec<(u32, u32)>,
}

impl Cpus {
    pub(super) fn new(m: &Machine) -> Cpus {
        let (compute_slots, slot_count) = compute_slots(m);
        Cpus {
            order: (0..m.cpus()).map(|_| CpuOrder::new(m)).collect(),
            compute: vec![ThreadCompute::default(); slot_count],
            compute_slots,
        }
    }
}

/// One CPU's accesses in flight.
pub(super) struct CpuOrder {
    /// When each of the last `store_buffer` stores commits, as a ring: a
    /// store that finds its slot not yet drained waits for it.
    commits: Box<[Ps]>,
    next_store: usize,
    /// When the youngest store commits: every later one commits after it.
    committed_by: Ps,
    /// Stores not yet committed, oldest first: the first waits at its line.
    held: VecDeque<HeldStore>,
    /// A task that waits for the held stores to drain (a fence, a locked
    /// RMW, a full buffer), if any: it goes on once they have.
    drain_waiter: Option<u32>,
    /// When each outstanding miss completes (free once past).
    misses: Box<[Ps]>,
    /// The slot of `misses` that frees first (the first such) and when:
    /// the one the next load takes, kept so that a load that hits need
    /// not look at the others.
    first_free: (usize, Ps),
    /// When the last issued load completes: a dependent step waits for it.
    loads_done: Ps,
}

/// The compute one CPU runs. A core's threads are kept side by side
/// (`compute_slots`): each one's compute step reads its
/// sibling's, which is then in the same host line.
#[derive(Clone, Copy, Default)]
pub(super) struct ThreadCompute {
    /// When the CPU's compute ends: its sibling's compute stretches while
    /// the two overlap.
    until: Ps,
    /// Compute time owed: a step that ran while the sibling started
    /// computing was slowed after it was timed.
    owed: Ps,
}

/// Per CPU, where its compute is kept and where its sibling's is (the
/// next thread of its core, `Machine::sibling_of`; u32::MAX for none):
/// CPU c is thread c / cores of core c % cores, as Linux numbers them on
/// x86, so a core's threads are neighbours. Also the slots' count.
fn compute_slots(m: &Machine) -> (Vec<(u32, u32)>, usize) {
    let t = &m.spec.topology;
    let cores = t.sockets * t.cores_per_socket;
    let slot = |c: u32| (c % cores) * t.threads_per_core + c / cores;
    let slots = (0..m.cpus())
        .map(|c| (slot(c), m.sibling_of(c).map_or(u32::MAX, slot)))
        .collect();
    (slots, (cores * t.threads_per_core) as usize)
}

impl CpuOrder {
    fn new(m: &Machine) -> CpuOrder {
        CpuOrder {
            commits: vec![0; m.store_buffer as usize].into_boxed_slice(),
            next_store: 0,
            committed_by: 0,
            held: VecDeque::new(),
            drain_waiter: None,
            misses: vec![0; m.outstanding_misses as usize].into_boxed_slice(),
            first_free: (0, 0),
            loads_done: 0,
        }
    }

    /// A load took miss slot `slot` until `done`.
    fn miss_until(&mut self, slot: usize, done: Ps) {
        self.misses[slot] = done;
        self.first_free = self
            .misses
            .iter()
            .enumerate()
            .min_by_key(|&(_, &done)| done)
            .map_or((0, 0), |(i, &done)| (i, done));
    }

    /// The value `task`'s own read of `word` returns, `committed` being the
    /// word's value as every CPU sees it: its stores and relaxed RMWs to the
    /// word still in the buffer apply over it, in order (store-to-load
    /// forwarding), though no other CPU sees them yet.
    fn forwarded(&self, task: u32, word: UserWord, committed: u32) -> u32 {
        self.held
            .iter()
            .fold(committed, |value, h| match h.carries {
                Carries::Word {
                    task: t,
                    word: w,
                    value: stored,
                } if t == task && w == word => stored,
                Carries::Atomic {
                    task: t,
                    word: w,
                    op,
                } if t == task && w == word => op.apply(value),
                _ => value,
            })
    }
}

/// When a fence (a locked RMW, a lock's first atomic) may start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fence {
    Now,
    At(Ps),
    /// Once stores waiting at their lines are served (known only then).
    Drain,
}

/// How a plain store went.
pub(super) struct Stored {
    /// When the task goes on.
    pub at: Ps,
    /// Whether it goes on in this event (no wait worth one).
    pub at_once: bool,
}

impl<A: Attribute> Engine<'_, A> {
    /// The value of a user word as `task` reads it now: its own store
    /// still in the buffer, or else the value the word's last committed
    /// store left.
    pub(super) fn user_value(&self, task: u32, word: UserWord) -> u32 {
        let cpu = self.tasks[task as usize].cpu as usize;
        let committed = self.futex.value(task, word.mem.addr, word.kind);
        self.cpus.order[cpu].forwarded(task, word, committed)
    }

    #[inline]
    fn order_of(&mut self, task: u32) -> &mut CpuOrder {
        let cpu = self.tasks[task as usize].cpu as usize;
        &mut self.cpus.order[cpu]
    }

    /// When the loads the task issued and has not awaited complete, if
    /// after `now`: a step that depends on them waits until then.
    #[inline]
    pub(super) fn loads_pending(&mut self, task: u32, now: Ps) -> Option<Ps> {
        let done = self.order_of(task).loads_done;
        (done > now).then_some(done)
    }

    /// When a locked RMW (or a fence) may start: once the store buffer
    /// has drained and the outstanding loads are in.
    #[inline]
    pub(super) fn fence_pending(&mut self, task: u32, now: Ps) -> Fence {
        let o = self.order_of(task);
        if !o.held.is_empty() {
            return Fence::Drain;
        }
        let ready = o.committed_by.max(o.loads_done);
        if ready > now {
            Fence::At(ready)
        } else {
            Fence::Now
        }
    }

    /// The task waits for its CPU's held stores to commit; then it
    /// makes its step again as `redo` says. None: no event of its own.
    pub(super) fn await_drain(&mut self, task: u32, redo: Redo) -> Option<Ps> {
        let cpu = self.tasks[task as usize].cpu as usize;
        debug_assert!(self.cpus.order[cpu].drain_waiter.is_none());
        self.cpus.order[cpu].drain_waiter = Some(task);
        self.park(task, redo);
        self.tasks[task as usize].wait = Wait::Drain;
        None
    }

    /// A plain store, made by `by`: it retires into the store buffer and the task goes
    /// on; the line is asked for now and the value is visible, spinners
    /// woken, when it commits in order. Where the line's server is busy the
    /// store waits there in the buffer, and the stores after it commit
    /// after it: the task still goes on. None when the task waits:
    /// without a store buffer, for the line's grant (`park`); with a full
    /// buffer whose oldest store is waiting, for the drain (`await_drain`),
    /// after which it makes the store again as `redo` says (built only
    /// then: a protocol's redo carries its whole move).
    #[inline]
    pub(super) fn store(
        &mut self,
        task: u32,
        now: Ps,
        mem: Mem,
        by: Symbol,
        carries: Carries,
        redo: impl FnOnce() -> Redo,
    ) -> Option<Stored> {
        let cpu = self.tasks[task as usize].cpu;
        let l1 = self.m.l1_ps;
        if self.cpus.order[cpu as usize].commits.is_empty() {
            let Some(out) = self.ask(task, now, mem, AccessKind::Write, by) else {
                self.park(task, redo());
                return None;
            };
            self.publish(mem, carries);
            self.wake_spinners(mem.line, out.done);
            return Some(Stored {
                at: out.done,
                at_once: out.class == Class::L1Hit,
            });
        }
        let o = &mut self.cpus.order[cpu as usize];
        let slot = o.next_store;
        // With every earlier store committed, the slot is free; else a full
        // buffer holds the store until its oldest entry drains.
        let drained = o.held.is_empty() && o.committed_by <= now;
        let slot_free = if drained { now } else { o.commits[slot] };
        if slot_free == HELD {
            self.await_drain(task, redo());
            return None;
        }
        let retire = now.max(slot_free) + l1;
        let retired = Stored {
            at: retire,
            at_once: retire <= now + l1,
        };
        // A compare, not a modulo: a division would cost more than the rest of the store.
        o.next_store += 1;
        if o.next_store == o.commits.len() {
            o.next_store = 0;
        }
        let after_loads = o.loads_done;
        o.commits[slot] = HELD;
        let mut store = HeldStore {
            mem,
            by,
            carries,
            after_loads,
            slot,
            done: None,
            queued: false,
        };
        // A store or relaxed RMW rides with an older entry waiting for its
        // line: the one ownership request brings the line for both, and
        // the younger commits from it at the grant (store_granted).
        let rides = o
            .held
            .iter()
            .any(|h| h.done.is_none() && h.mem.line == mem.line);
        if rides {
            o.held.push_back(store);
            return Some(retired);
        }
        // A relaxed RMW, performed on the line as it commits, does not pass
        // the requests waiting at a line its core holds: their snoops took it.
        if let Carries::Atomic { .. } = carries {
            if self.dir.wait_behind_waiters(
                self.m,
                cpu,
                mem.line,
                AccessKind::Rmw,
                Waiter::StoreBuffer(cpu).id(),
            ) {
                store.queued = true;
                self.cpus.order[cpu as usize].held.push_back(store);
                return Some(retired);
            }
        }
        let asked = self.ask_for_store(cpu, now, mem, carries.kind(), by, false);
        match asked {
            Request::Served(out) if self.cpus.order[cpu as usize].held.is_empty() => {
                self.committed(cpu, &store, out.done);
            }
            Request::Served(out) => {
                store.done = Some(out.done);
                self.cpus.order[cpu as usize].held.push_back(store);
            }
            Request::Waits(turn) => {
                self.schedule_turn(turn);
                store.queued = true;
                self.cpus.order[cpu as usize].held.push_back(store);
            }
        }
        Some(retired)
    }

    /// A store-buffer entry's request for its line, made in the CPU's name
    /// (the directory queues it apart from every task's); `granted` when its
    /// line's turn has just granted it.
    #[inline]
    fn ask_for_store(
        &mut self,
        cpu: u32,
        now: Ps,
        mem: Mem,
        kind: AccessKind,
        by: Symbol,
        granted: bool,
    ) -> Request {
        let waiter = Waiter::StoreBuffer(cpu).id();
        self.dir.request(
            self.m, cpu, now, mem.line, mem.addr, kind, by, waiter, granted,
        )
    }

    /// `line` granted one of the CPU's stores waiting at it (the oldest
    /// there) at `now`: it is served, then the stores riding with it, hits
    /// in the line the grant brought; and the stores they held back commit.
    pub(super) fn store_granted(&mut self, cpu: u32, line: LineId, now: Ps) {
        let o = &self.cpus.order[cpu as usize];
        let Some(first) = o
            .held
            .iter()
            .position(|h| h.queued && h.done.is_none() && h.mem.line == line)
        else {
            unreachable!("a store is granted only while it waits")
        };
        for index in first..o.held.len() {
            let h = &self.cpus.order[cpu as usize].held[index];
            // An entry with a place of its own in the queue waits for its own grant.
            let rider = !h.queued && h.done.is_none() && h.mem.line == line;
            if index != first && !rider {
                continue;
            }
            let (mem, kind, by) = (h.mem, h.carries.kind(), h.by);
            let Request::Served(out) = self.ask_for_store(cpu, now, mem, kind, by, true) else {
                unreachable!("a granted request is served")
            };
            self.cpus.order[cpu as usize].held[index].done = Some(out.done);
        }
        self.commit_in_order(cpu, now);
    }

    /// Commits the CPU's oldest stores whose lines have served them, in
    /// order, up to the first still waiting at its line; a task waiting
    /// for the drain goes on once none is left. A store whose line another
    /// CPU took after serving it, while it waited behind the older ones,
    /// asks for the line again: it commits when that second request is
    /// served, and waits at the line where the line is busy.
    fn commit_in_order(&mut self, cpu: u32, now: Ps) {
        while let Some(&HeldStore {
            done: Some(done),
            mem,
            by,
            carries,
            ..
        }) = self.cpus.order[cpu as usize].held.front()
        {
            let mut done = done;
            if !self.dir.owned_by(self.m, cpu, mem.line) {
                match self.ask_for_store(cpu, now, mem, carries.kind(), by, false) {
                    Request::Served(out) => done = out.done,
                    Request::Waits(turn) => {
                        self.schedule_turn(turn);
                        let front = &mut self.cpus.order[cpu as usize].held[0];
                        (front.done, front.queued) = (None, true);
                        return;
                    }
                }
            }
            let Some(store) = self.cpus.order[cpu as usize].held.pop_front() else {
                unreachable!("the front was just seen")
            };
            self.dir.visible(store.mem.line);
            self.committed(cpu, &store, done);
        }
        let o = &mut self.cpus.order[cpu as usize];
        if o.held.is_empty() {
            if let Some(task) = o.drain_waiter.take() {
                self.queue.push(now, Event::Task(task));
            }
        }
    }

    /// A store the directory served, done at `done`: it commits in order,
    /// what it carries is published, and its line's spinners wake then.
    /// A relaxed RMW is performed after the one before it, each taking the
    /// profile's atomic cost, and its line stays in the core until it is.
    /// Always inlined into the store and the grant that serve a store.
    #[inline(always)]
    fn committed(&mut self, cpu: u32, store: &HeldStore, done: Ps) {
        let performs = matches!(store.carries, Carries::Atomic { .. });
        let o = &mut self.cpus.order[cpu as usize];
        let mut commit = done.max(o.committed_by).max(store.after_loads);
        if performs {
            commit = commit.max(o.committed_by + self.m.rmw_ps);
        }
        o.commits[store.slot] = commit;
        o.committed_by = commit;
        if performs {
            self.dir.hold_until(store.mem.line, commit);
        }
        self.publish(store.mem, store.carries);
        self.wake_spinners(store.mem.line, commit);
        // A lock is held until its release is the line's value: a release
        // that retired behind a load still in flight (futex_wait's read of
        // the word on the path that fails) holds the lock until it commits.
        if let Carries::Lock(Publishes::Release { id, task }) = store.carries {
            self.released(task, commit, id);
        }
    }

    /// What a store carries is there for every CPU once it commits.
    // Forced: one copy, in the commit; the ten forced (`coherence::access`...) save 8%.
    #[inline(always)]
    fn publish(&mut self, mem: Mem, carries: Carries) {
        match carries {
            Carries::Lock(Publishes::Nothing) => {}
            Carries::Lock(publishes) => {
                let writes = self.dir.writes(mem.line);
                self.locks.publish(publishes, writes);
            }
            Carries::Word { task, word, value } => {
                self.futex.set_value(task, word.mem.addr, word.kind, value)
            }
            Carries::Atomic { task, word, op } => {
                op.perform(&mut self.futex, task, word);
            }
        }
    }

    /// Issues a load the next steps do not depend on: it takes a free
    /// miss slot (or waits for the first to free: the time it may issue,
    /// as Err) and completes in the background; false when it waits at its
    /// line for a grant (the task waits with it).
    // Inlined into `run_step`, which says why.
    #[inline(always)]
    pub(super) fn issue_load(
        &mut self,
        task: u32,
        now: Ps,
        mem: Mem,
        by: Symbol,
    ) -> Result<bool, Ps> {
        let cpu = self.tasks[task as usize].cpu;
        let (slot, free_at) = self.cpus.order[cpu as usize].first_free;
        if free_at > now {
            return Err(free_at);
        }
        let Some(out) = self.request(task, now, mem, AccessKind::Read, by) else {
            // It waits at its line; the step runs again once granted.
            self.park(task, Redo::Step);
            return Ok(false);
        };
        let o = &mut self.cpus.order[cpu as usize];
        if out.class != Class::L1Hit {
            o.miss_until(slot, out.done);
        }
        o.loads_done = o.loads_done.max(out.done);
        Ok(true)
    }

    /// When a compute step of `work` that starts at `now` ends. While the
    /// CPU's SMT sibling computes, the two share the core's execution and
    /// the step runs at the profile's share; past the sibling's step, at
    /// full speed. The sibling's step, timed when it started alone, was
    /// slowed over the overlap as well: it owes that time, and its next
    /// compute step pays it. A sibling that sleeps, idles or spins (pause
    /// hands the core's execution to the other thread; a spinner waiting
    /// on its line's miss is stalled) does not count as busy.
    // Inlined into `compute`, its one caller, and so into `run_step`,
    // which says why.
    #[inline(always)]
    pub(super) fn compute_end(&mut self, task: u32, now: Ps, work: Ps) -> Ps {
        let cpu = self.tasks[task as usize].cpu as usize;
        let stretch = self.m.smt_stretch_permille;
        let (me, sibling) = self.cpus.compute_slots[cpu];
        let work = work + std::mem::take(&mut self.cpus.compute[me as usize].owed);
        let end = match self.cpus.compute.get_mut(sibling as usize) {
            Some(sib) if sib.until > now && stretch > 1000 => {
                let shared = sib.until - now;
                let stretched = work * stretch / 1000;
                let (end, overlap) = if stretched <= shared {
                    (now + stretched, stretched)
                } else {
                    // The work done while shared, then the rest alone.
                    (sib.until + work - shared * 1000 / stretch, shared)
                };
                let owed = overlap - overlap * 1000 / stretch;
                sib.owed += owed;
                sib.until += owed;
                end
            }
            _ => now + work,
        };
        self.cpus.compute[me as usize].until = end;
        end
    }

    /// The CPU's compute step was cut at `now` (the tick preempted it).
    pub(super) fn compute_cut(&mut self, cpu: u32, now: Ps) {
        let (me, _) = self.cpus.compute_slots[cpu as usize];
        let c = &mut self.cpus.compute[me as usize];
        c.until = c.until.min(now);
    }
}
