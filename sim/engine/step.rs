//! The step interpreter: a task's program gives its next op, which becomes
//! a script (the kernel writes a futex op's; the others are one access, one
//! compute, one lock); the script runs step by step, each priced through
//! the coherence directory or the machine's costs, until one must wait.

use super::attribution::Attribute;
use super::attribution::{Part, Served};
use super::event::{Event, Waiter};
use super::memory_order::{Carries, Fence};
use super::{Engine, Redo, Spin, UserAtomic, Wait};
use crate::coherence::{self, AccessKind, Class, Directory, LineTurn, Request};
use crate::kernel::script::{Cost, Decision, LockRef, Step};
use crate::kernel::spinlock::{Locks, Order, Publishes};
use crate::machine::{MemoryModel, Ps, ResolvedCosts};
use crate::memory::{LineId, Mem};
use crate::symbol::Symbol;
use crate::task::{AtomicOp, Counting, Done, Op};

impl<A: Attribute> Engine<'_, A> {
    /// Runs a task's script from `now` until it must wait: the entry for
    /// the rarer events (a grant at a line, a protocol's access, a wake).
    #[inline(never)]
    pub(super) fn step(&mut self, task: u32, now: Ps) {
        self.run_script(task, now)
    }

    /// The step loop. Always inlined into the event loop, where a running
    /// task's event calls it, besides `step`: as a call of its own, what
    /// the compiler hoists out of the loop (some twenty field and constant
    /// addresses, spilled to the stack) was computed once an event, not
    /// once a run (2.4% of the 64-CPU benchmark's instructions).
    #[inline(always)]
    pub(super) fn run_script(&mut self, task: u32, mut now: Ps) {
        loop {
            let t = &mut self.tasks[task as usize];
            let Some(&step) = t.script.get(t.pc as usize) else {
                if now >= self.record.end() || !self.begin_op(task, now) {
                    return;
                }
                continue;
            };
            t.pc += 1;
            let atomic = t.op.atomic.map(|atomic| atomic.word.mem.addr);
            self.attribution.step_starts(task, now, &step, atomic);
            match self.run_step(task, now, step) {
                Some(next) => now = next,
                None => return,
            }
        }
    }

    /// Writes the script of the task's next op; false when the task does
    /// not run it on at once (it spins, or it exited).
    fn begin_op(&mut self, task: u32, now: Ps) -> bool {
        let counted = self.record.counts(now);
        let t = &mut self.tasks[task as usize];
        t.script.clear();
        t.pc = 0;
        t.measured.op_start = now;
        t.op.ret = 0;
        let next = t.program.next_op();
        let afresh = t.measured.counting == Counting::EachOp;
        self.attribution
            .op_begins(task, now, afresh, Part::before_steps(&next));
        match next {
            Op::Futex(op) => {
                self.futex.begin(self.memory, task, now, op, &mut t.script);
                prefetch_lines(&self.dir, &self.locks, &t.script);
            }
            Op::Compute(ps) => t.script.extend([Step::Compute(Cost::Ps(ps)), Step::OpDone]),
            Op::WaitEvent(word, until) => {
                t.script.push(Step::OpDone);
                if !until.holds(self.user_value(task, word)) {
                    self.wait_event(task, now, word.mem);
                    return false;
                }
            }
            Op::WakeUp(word) | Op::WakeUpOne(word) => {
                let one = matches!(next, Op::WakeUpOne(_));
                let sleepers = self.sched.wake_up(word, one);
                let t = &mut self.tasks[task as usize];
                t.script.extend(sleepers.map(Step::Wake));
                t.script.push(Step::OpDone);
            }
            Op::Sleep(ps) => {
                t.script.push(Step::OpDone);
                self.sleep(task, now, ps);
                return false;
            }
            Op::Access(mem, kind) => {
                let access = Step::access(mem, kind, Symbol::Workload);
                t.script.extend([access, Step::OpDone]);
            }
            Op::Atomic(word, op) | Op::RelaxedAtomic(word, op) => {
                t.script.extend([Step::Atomic, Step::OpDone]);
                let relaxed = matches!(next, Op::RelaxedAtomic(..));
                t.op.atomic = Some(UserAtomic {
                    word,
                    op,
                    posted: relaxed && self.m.memory_model == MemoryModel::Weak,
                });
            }
            Op::SpinUntil(word, until) => {
                // The first read; each write to the line afterwards costs one re-read.
                t.script.push(Step::OpDone);
                self.reread(task, now, word.mem, Spin::Word { word, until });
                return false;
            }
            Op::SpinLock(lock) => {
                let lock = self.locks.workload_lock(lock);
                self.locks.grow_to(lock.id + 1);
                let t = &mut self.tasks[task as usize];
                t.script.extend([Step::Lock(lock), Step::OpDone]);
            }
            Op::SpinUnlock(lock) => {
                let lock = self.locks.workload_lock(lock);
                let t = &mut self.tasks[task as usize];
                t.script.extend([Step::Unlock(lock), Step::OpDone]);
            }
            Op::Iteration => {
                let iterations = t.measured.counting == Counting::Iterations;
                if iterations && counted {
                    self.record.op_done(task, now - t.measured.iteration_start);
                }
                if iterations {
                    let start = t.measured.iteration_start;
                    self.attribution.measured(task, now, start, counted);
                }
                self.tasks[task as usize].measured.iteration_start = now;
            }
            Op::Clock => self.record.clock_read(task, now),
            Op::ThreadCreated => {
                self.futex
                    .thread_created(self.memory, task, now, &mut t.script);
            }
            Op::Exit => {
                self.record.exited(task, now);
                self.exited(task, now);
                return false;
            }
        }
        true
    }

    /// Runs one step at `now`: the time the task goes on at in this event,
    /// or None when its next event is scheduled (or it waits). Always
    /// inlined into its one caller, the step loop: as a call, its prologue
    /// and epilogue ran once a step, not once an event (3.5% of the 64-CPU
    /// benchmark's instructions). So are the handlers of the steps every
    /// futex op runs (compute, in_program_order, unlock, issue_load,
    /// op_done): as calls, they cost 2.4% more instructions. `lock` stays
    /// a call: inlined too, it tips the compiler into making calls of the
    /// event loop's own parts, 4.9% more instructions than without it.
    #[inline(always)]
    fn run_step(&mut self, task: u32, now: Ps, step: Step) -> Option<Ps> {
        match step {
            Step::Compute(c) => {
                self.compute(task, now, c);
                None
            }
            Step::Access(a) if a.kind == AccessKind::Write => {
                let plain = Carries::Lock(Publishes::Nothing);
                let stored = self.store(task, now, a.mem(), a.by, plain, || Redo::Step)?;
                self.go_on(task, stored.at, stored.at_once)
            }
            Step::Access(a) => self.in_program_order(task, now, a.mem(), a.kind, a.by, Order::Full),
            Step::WaitersInc(w) => self.served_then(
                task,
                |e| {
                    let by = Symbol::FutexHbWaitersInc;
                    e.in_program_order(task, now, w.mem(), AccessKind::Rmw, by, Order::Full)
                },
                |e| e.futex.waiter_counted(w.lock),
            ),
            Step::WaitersRead(w) => self.served_then(
                task,
                |e| {
                    let by = Symbol::FutexHbWaitersPending;
                    e.in_program_order(task, now, w.mem(), AccessKind::Read, by, Order::Full)
                },
                |e| {
                    let script = &mut e.tasks[task as usize].script;
                    e.futex
                        .decide(e.memory, task, now, Decision::WakeCheckWaiters, script);
                },
            ),
            // Ordered as the lock protocols' acquire and relaxed atomics are.
            Step::RelaxedRmw(t) | Step::AcquireRmw(t) => {
                self.in_program_order(task, now, t.mem(), AccessKind::Rmw, t.by, Order::Acquire)
            }
            Step::Atomic => match self.tasks[task as usize].op.atomic {
                Some(atomic) => self.user_atomic(task, now, atomic),
                None => unreachable!("an atomic step belongs to an Op::Atomic"),
            },
            Step::Load(t) => match self.issue_load(task, now, t.mem(), t.by) {
                Ok(true) => Some(now),
                Ok(false) => None,
                Err(at) => self.again_at(task, at),
            },
            Step::Join => match self.loads_pending(task, now) {
                Some(at) => self.go_on(task, at, false),
                None => Some(now),
            },
            Step::Lock(lock) if !self.orders_earlier_stores(self.locks.first_atomic_order()) => {
                self.lock(task, now, lock)
            }
            Step::Lock(lock) => match self.fence_pending(task, now) {
                Fence::At(at) => self.again_at(task, at),
                Fence::Drain => self.await_drain(task, Redo::Step),
                Fence::Now => self.lock(task, now, lock),
            },
            Step::Unlock(lock) => self.unlock(task, now, lock),
            Step::Decide(d) => {
                let script = &mut self.tasks[task as usize].script;
                self.futex.decide(self.memory, task, now, d, script);
                Some(now)
            }
            Step::Block => {
                let t = &mut self.tasks[task as usize];
                // A wake that came while the task was still on its way to sleep.
                if std::mem::take(&mut t.op.woken_early) {
                    return Some(now);
                }
                t.wait = Wait::Blocked;
                self.block(task, now);
                None
            }
            Step::Wake(other) => {
                self.try_to_wake_up(task, other);
                Some(now)
            }
            Step::Activate(other) => Some(self.activate(task, other, now)),
            Step::Returns(ret) => {
                self.tasks[task as usize].op.ret = ret;
                Some(now)
            }
            Step::OpDone => {
                if let Some(at) = self.loads_pending(task, now) {
                    return self.again_at(task, at);
                }
                self.op_done(task, now);
                None
            }
        }
    }

    /// A load or RMW of the script, made by `by`: it waits for the loads
    /// in flight, and an RMW whose `order` asks it for the store buffer to
    /// drain; then the task waits for it. An RMW that orders nothing on
    /// this core waits for neither.
    // Inlined into `run_step`, which says why.
    #[inline(always)]
    fn in_program_order(
        &mut self,
        task: u32,
        now: Ps,
        mem: Mem,
        kind: AccessKind,
        by: Symbol,
        order: Order,
    ) -> Option<Ps> {
        let ready = match kind {
            AccessKind::Rmw if self.orders_earlier_stores(order) => {
                match self.fence_pending(task, now) {
                    Fence::Now => None,
                    Fence::At(at) => Some(at),
                    Fence::Drain => return self.await_drain(task, Redo::Step),
                }
            }
            AccessKind::Rmw => None,
            _ => self.loads_pending(task, now),
        };
        if let Some(at) = ready {
            return self.again_at(task, at);
        }
        let Some(out) = self.request(task, now, mem, kind, by) else {
            return self.park(task, Redo::Step);
        };
        self.go_on(task, out.done, self.in_own_cache(now, out))
    }

    /// Makes a step's access (`access`), and if its line served it now
    /// (the step is not to run again: at its grant, after its drain or
    /// its loads) does what the kernel does at that moment (`served`).
    #[inline(always)]
    fn served_then(
        &mut self,
        task: u32,
        access: impl FnOnce(&mut Self) -> Option<Ps>,
        served: impl FnOnce(&mut Self),
    ) -> Option<Ps> {
        let pc = self.tasks[task as usize].pc;
        let went_on = access(self);
        if self.tasks[task as usize].pc == pc {
            served(self);
        }
        went_on
    }

    /// The step must wait for the task's accesses in flight: it runs again
    /// at `at`.
    #[inline]
    fn again_at(&mut self, task: u32, at: Ps) -> Option<Ps> {
        self.tasks[task as usize].pc -= 1;
        self.queue.push(at, Event::Task(task));
        None
    }

    /// The task goes on at `done` in this event when `at_once`, else its
    /// next event is then.
    #[inline]
    pub(super) fn go_on(&mut self, task: u32, done: Ps, at_once: bool) -> Option<Ps> {
        if at_once {
            return Some(done);
        }
        self.queue.push(done, Event::Task(task));
        None
    }

    /// A compute step, and the compute steps right after it, as one event.
    // Inlined into `run_step`, which says why.
    #[inline(always)]
    fn compute(&mut self, task: u32, now: Ps, c: Cost) {
        let m = self.m;
        let costs = &m.costs;
        let mut work = price(costs, c);
        let t = &mut self.tasks[task as usize];
        let first = t.pc as usize - 1;
        while let Some(&Step::Compute(c)) = t.script.get(t.pc as usize) {
            t.pc += 1;
            work += price(costs, c);
        }
        let costs_run = &t.script[first..t.pc as usize];
        self.attribution
            .computed(task, costs_run, |c| price(costs, c));
        let end = self.compute_end(task, now, work);
        self.note_compute(task, c, end);
        self.queue.push(end, Event::Task(task));
    }

    /// Whether a lock protocol's atomic ordered as `order` waits for the
    /// CPU's earlier stores and loads: every one under x86's total store
    /// order; on a weakly ordered core only a fully ordered one.
    #[inline]
    pub(super) fn orders_earlier_stores(&self, order: Order) -> bool {
        self.m.memory_model == MemoryModel::Tso || order == Order::Full
    }

    /// spin_lock: the lock's protocol says what its first atomic does.
    fn lock(&mut self, task: u32, now: Ps, lock: LockRef) -> Option<Ps> {
        let t = &mut self.tasks[task as usize];
        if t.granted != Some(lock.word().line) {
            t.measured.lock_asked = now;
            // The atomic acts on the word as its line serves it: one that
            // waits for its grant asks the protocol then, not now.
            if self.atomic_waits(task, now, lock.word().line) {
                return self.park(task, Redo::Step);
            }
        }
        let next = self.locks.arrive(lock, task);
        self.follow(task, now, lock, next)
    }

    /// spin_unlock: the protocol says what the release reads and stores.
    /// A call of its own: `follow` inlined into `run_step` made the step
    /// loop larger for every step.
    #[inline(never)]
    fn unlock(&mut self, task: u32, now: Ps, lock: LockRef) -> Option<Ps> {
        let next = self.locks.unlock(lock, task);
        self.follow(task, now, lock, next)
    }

    /// A user-space atomic, acting on its word when the word's line serves
    /// it: a load returns the value then; a locked RMW waits for the store
    /// buffer to drain and for its line, and changes the value then; a
    /// plain store retires into the buffer, its value the word's once it
    /// commits, and so does a relaxed RMW nothing waits for, performed on
    /// the word as it commits. The op returns the value the task saw
    /// before it (nothing, for the posted RMW).
    fn user_atomic(&mut self, task: u32, now: Ps, atomic: UserAtomic) -> Option<Ps> {
        let UserAtomic { word, op, posted } = atomic;
        let by = Symbol::Workload;
        let (old, done, own_cache) = match op {
            _ if posted => {
                let carries = Carries::Atomic { task, word, op };
                let stored = self.store(task, now, word.mem, by, carries, || Redo::Step)?;
                (0, stored.at, stored.at_once)
            }
            AtomicOp::Store(value) => {
                let old = self.user_value(task, word);
                let carries = Carries::Word { task, word, value };
                let stored = self.store(task, now, word.mem, by, carries, || Redo::Step)?;
                (old, stored.at, stored.at_once)
            }
            AtomicOp::Load => {
                if let Some(at) = self.loads_pending(task, now) {
                    return self.again_at(task, at);
                }
                let Some(out) = self.request(task, now, word.mem, AccessKind::Read, by) else {
                    return self.park(task, Redo::Step);
                };
                let old = self.user_value(task, word);
                (old, out.done, self.in_own_cache(now, out))
            }
            _ => {
                match self.fence_pending(task, now) {
                    Fence::Now => {}
                    Fence::At(at) => return self.again_at(task, at),
                    Fence::Drain => return self.await_drain(task, Redo::Step),
                }
                let line = word.mem.line;
                if self.tasks[task as usize].granted != Some(line)
                    && self.atomic_waits(task, now, line)
                {
                    return self.park(task, Redo::Step);
                }
                // Drained: no store of the task's own is left to forward.
                let old = op.perform(&mut self.futex, task, word);
                let kind = op.access_as_performed(old, self.m.compare_exchange);
                let Some(out) = self.request(task, now, word.mem, kind, by) else {
                    unreachable!("an access whose line is free or granted is served")
                };
                (old, out.done, self.in_own_cache(now, out))
            }
        };
        self.tasks[task as usize].op.ret = old.into();
        self.go_on(task, done, own_cache)
    }

    /// Whether an access was served in the task's own cache, with no wait
    /// worth an event of its own.
    #[inline]
    pub(super) fn in_own_cache(&self, now: Ps, out: coherence::Outcome) -> bool {
        out.class == Class::L1Hit && out.done <= now + self.m.own_cache_ps()
    }

    /// The task now holds the lock: counts its wait.
    // Inlined into `lock`'s path, as the step handlers are into `run_step`
    // (which says why).
    #[inline(always)]
    pub(super) fn acquired(&mut self, task: u32, at: Ps, lock: u32) {
        let t = &mut self.tasks[task as usize];
        t.measured.lock_taken = at;
        let waited = at.saturating_sub(t.measured.lock_asked);
        self.attribution
            .acquired(task, at, waited > self.m.own_cache_ps());
        if self.record.counts(at) {
            let waited = at - t.measured.lock_asked;
            let contended = waited > self.m.own_cache_ps();
            self.record
                .acquired(self.locks.workload_index(lock), waited, contended);
        }
    }

    /// The task's release's store committed at `at`: counts its hold.
    pub(super) fn released(&mut self, task: u32, at: Ps, lock: u32) {
        if self.record.counts(at) {
            let held = at.saturating_sub(self.tasks[task as usize].measured.lock_taken);
            self.record.held(self.locks.workload_index(lock), held);
        }
    }

    /// The op is complete: counted, reported to its program, and the task
    /// yields, so no task runs ahead of the others on hits alone; at this
    /// return to user space the scheduler may preempt it.
    // Inlined into `run_step`, which says why.
    #[inline(always)]
    fn op_done(&mut self, task: u32, now: Ps) {
        let counted = self.record.counts(now);
        let t = &mut self.tasks[task as usize];
        let each_op = t.measured.counting == Counting::EachOp;
        if each_op && counted {
            self.record.op_done(task, now - t.measured.op_start);
        }
        match each_op {
            true => self
                .attribution
                .measured(task, now, t.measured.op_start, counted),
            false => self.attribution.op_returned(task, now),
        }
        t.program.op_returned(Done {
            now,
            ret: t.op.ret,
            counted,
        });
        if !self.preempted_at_op(task, now) {
            self.queue.push(now, Event::Task(task));
        }
    }

    /// One request through the directory, made by the function `by`; a
    /// write wakes the line's spinners at the moment it completes. None
    /// when the request waits at its line: the caller parks the task
    /// (`park`) until the line's turn grants it.
    // Forced, as `ask` is: every access of a step goes through both.
    #[inline(always)]
    pub(super) fn request(
        &mut self,
        task: u32,
        now: Ps,
        mem: Mem,
        kind: AccessKind,
        by: Symbol,
    ) -> Option<coherence::Outcome> {
        let out = self.ask(task, now, mem, kind, by)?;
        if kind != AccessKind::Read {
            self.wake_spinners(mem.line, out.done);
        }
        Some(out)
    }

    /// The directory's answer to the task's request: served, or None when
    /// it waits at its line (the first waiter asks for the line's turn).
    // Forced: the request path stays inline in the step handlers; the ten forced save 8%.
    #[inline(always)]
    pub(super) fn ask(
        &mut self,
        task: u32,
        now: Ps,
        mem: Mem,
        kind: AccessKind,
        by: Symbol,
    ) -> Option<coherence::Outcome> {
        let waiter = Waiter::Task(task).id();
        let t = &mut self.tasks[task as usize];
        let granted = t.takes_grant(mem.line);
        let asked = self.dir.request(
            self.m, t.cpu, now, mem.line, mem.addr, kind, by, waiter, granted,
        );
        let served = match asked {
            Request::Served(out) => Served::By(out.class),
            Request::Waits(_) => Served::Queued,
        };
        self.attribution.served(task, served);
        match asked {
            Request::Served(out) => Some(out),
            Request::Waits(turn) => {
                self.schedule_turn(turn);
                None
            }
        }
    }

    /// Whether a lock-word atomic the protocol has not yet decided must
    /// wait for its busy line; it then waits there, its turn scheduled.
    // Inlined into `lock`'s path, as the step handlers are into `run_step`
    // (which says why).
    #[inline(always)]
    pub(super) fn atomic_waits(&mut self, task: u32, now: Ps, line: LineId) -> bool {
        let cpu = self.tasks[task as usize].cpu;
        match self.dir.wait_if_busy(
            self.m,
            cpu,
            now,
            line,
            AccessKind::Rmw,
            Waiter::Task(task).id(),
        ) {
            Some(turn) => {
                self.schedule_turn(turn);
                self.attribution.served(task, Served::Queued);
                true
            }
            None => false,
        }
    }

    /// A request became its line's first waiter: the line's turn is an
    /// event at the time its server frees.
    #[inline]
    pub(super) fn schedule_turn(&mut self, turn: Option<LineTurn>) {
        if let Some(turn) = turn {
            self.queue.push(turn.at, Event::LineTurn(turn.queue));
        }
    }

    /// The task's request waits at its line: it makes it again as `redo`
    /// says once granted (a step runs again). None: the task goes on in no
    /// event of its own.
    pub(super) fn park(&mut self, task: u32, redo: Redo) -> Option<Ps> {
        self.tasks[task as usize].park(redo);
        None
    }

    /// A write to the line is visible at `at`: its spinners look again then.
    // Forced: its check inline, the list walk out of line; the ten forced save 8%.
    #[inline(always)]
    pub(super) fn wake_spinners(&mut self, line: LineId, at: Ps) {
        let slot = self.dir.watch(line);
        if *slot != 0 {
            let index = *slot as usize - 1;
            *slot = 0;
            self.wake_watchers(index, at);
        }
    }

    /// The spinners of list `index` look again at `at`; the list is free.
    /// Out of line: most writes find no spinner.
    #[inline(never)]
    fn wake_watchers(&mut self, index: usize, at: Ps) {
        for w in self.spinners.take(index) {
            self.queue.push(at, Event::Task(w));
        }
    }
}

/// Loads the host's cache with the state a script's accesses and locks
/// will need: the op's first steps are compute, whole events away. Of the
/// engine it takes only what it loads, so that the script can stay in its
/// task while it runs.
fn prefetch_lines(dir: &Directory, locks: &Locks, script: &[Step]) {
    for step in script {
        match *step {
            Step::Access(a) => dir.prefetch(a.mem().line),
            Step::RelaxedRmw(t) | Step::AcquireRmw(t) | Step::Load(t) => dir.prefetch(t.mem().line),
            Step::WaitersInc(w) | Step::WaitersRead(w) => dir.prefetch(w.mem().line),
            Step::Lock(lock) => {
                dir.prefetch(lock.word().line);
                locks.prefetch(lock.id);
            }
            _ => {}
        }
    }
}

/// What work that touches no shared memory costs on the machine.
fn price(k: &ResolvedCosts, c: Cost) -> Ps {
    match c {
        Cost::SyscallHalf => k.syscall / 2,
        Cost::FutexKeyPrivate => k.futex_key_private,
        Cost::FutexKeyShared => k.futex_key_shared,
        Cost::Jhash2 => k.jhash2,
        Cost::Schedule => k.schedule,
        Cost::Ps(ps) => ps,
    }
}
