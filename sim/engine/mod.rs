//! The event loop. Each simulated task runs its script step by step; a step
//! that takes time (a compute step, a cache miss, a lock it must wait for)
//! schedules the task's next event and yields. Hits in the task's own cache
//! need no event. A spinner is not simulated spin by spin: it waits for the
//! next write to the line it spins on, then pays one transfer to re-read it.

pub mod metrics;
mod queue;
pub mod spinlock;
pub mod user_word;

use crate::coherence::{AccessKind, Class, Directory};
use crate::kernel::script::{Cost, LockRef, Mem, Script, Step};
use crate::kernel::waitwake::{FutexOp, FutexSystem};
use crate::machine::{LockKind, Machine, Ps};
use crate::memory::{LineId, MemoryMap};
use crate::prefetch::prefetch;
use metrics::Metrics;
use queue::EventQueue;
use spinlock::{Arrival, Locks};
use user_word::{AtomicOp, Until, UserWord};

pub use queue::MAX_TASKS;

/// One operation of a task's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Futex(FutexOp),
    /// User-space work that touches no shared line.
    Compute(Ps),
    /// A user-space load, store or atomic.
    Access(Mem, AccessKind),
    /// An atomic on a word whose value matters (the kernel sees it too: a
    /// futex word, a pthread mutex); it returns the word's old value.
    Atomic(UserWord, AtomicOp),
    /// Spin reading a word (`while (...) cpu_relax();`) until its value satisfies the condition.
    SpinUntil(UserWord, Until),
    /// spin_lock of one of the workload's own kernel locks. Its id counts
    /// from 0 among the workload's locks; the engine places them after the
    /// futex tables' bucket locks, and prices them the same way.
    SpinLock(LockRef),
    SpinUnlock(LockRef),
    /// One pass of the benchmark's loop is complete: counted as one op when
    /// the program counts iterations, its latency the time since the last one.
    Iteration,
    /// The program reads the clock, as a benchmark brackets what it times
    /// with gettimeofday; the engine notes the time for the workload's figures.
    Clock,
    /// The task exits: it issues nothing more and the engine notes when.
    Exit,
}

/// What one counted operation of a program is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// Every op (perf bench futex: each futex call).
    EachOp,
    /// Each `Op::Iteration` (will-it-scale: one pass of the test loop).
    Iterations,
}

/// How an operation ended, as its program learns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// Simulated time at the end of the operation.
    pub now: Ps,
    /// A syscall's return value, a user atomic's old value, 0 otherwise.
    pub ret: i64,
    /// Whether the operation ended inside the counted window.
    pub counted: bool,
}

/// What a task does, one operation at a time.
pub trait Program: Send {
    fn next_op(&mut self) -> Op;

    /// The operation `next_op` gave last has ended. Programs that branch on
    /// results or measure time themselves look here. `Op::Iteration`,
    /// `Op::Clock` and `Op::Exit` take no time and report nothing.
    fn op_returned(&mut self, _done: Done) {}

    fn counting(&self) -> Counting {
        Counting::EachOp
    }
}

pub struct TaskSpec {
    pub cpu: u32,
    pub program: Box<dyn Program>,
}

/// How long to run and what to count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RunWindow {
    /// Simulated time before counting starts.
    pub warmup: Ps,
    /// Simulated time counted after the warm-up.
    pub duration: Ps,
}

/// Why a task is not running its script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Running,
    Blocked,
    /// Spinning on a line: the next write to it wakes the task to re-read it.
    Spin(Spin),
    /// The re-read is in flight; at its completion the task looks again.
    Check(Spin),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spin {
    Ticket {
        lock: LockRef,
        ticket: u32,
    },
    Head {
        lock: LockRef,
    },
    Mcs {
        lock: LockRef,
    },
    /// A user-space spin on a word's value.
    Word {
        word: UserWord,
        until: Until,
    },
}

struct Task {
    cpu: u32,
    program: Box<dyn Program>,
    script: Script,
    pc: usize,
    wait: Wait,
    op_start: Ps,
    lock_asked: Ps,
    lock_taken: Ps,
    woken_early: bool,
    /// What the operation in flight returns.
    ret: i64,
    counting: Counting,
    iteration_start: Ps,
}

/// When each task read the clock and exited: what workloads that time
/// something (time_exit, a solver run to completion) compute their figures from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    pub clock_reads: Vec<Vec<Ps>>,
    pub exits: Vec<Option<Ps>>,
}

impl Timeline {
    /// When the last task exited, if every task did.
    pub fn all_exited(&self) -> Option<Ps> {
        self.exits
            .iter()
            .try_fold(0, |last: Ps, e| e.map(|t| last.max(t)))
    }
}

/// Everything a finished run hands to its record.
pub struct Outcome {
    pub metrics: Metrics,
    pub directory: Directory,
    pub events: u64,
    pub window: RunWindow,
    pub asleep_at_end: usize,
    pub timeline: Timeline,
    /// Where the watchdog ended a run whose events stopped advancing
    /// simulated time (it would never have reached the window's end).
    pub stalled_at: Option<Ps>,
}

/// Events at one simulated instant past which a run counts as stalled:
/// far more than any run's tasks make at once.
pub const STALL_EVENTS: u64 = 10_000_000;

pub struct Engine<'a> {
    m: &'a Machine,
    memory: &'a MemoryMap,
    futex: FutexSystem,
    dir: Directory,
    queue: EventQueue,
    tasks: Vec<Task>,
    locks: Locks,
    /// Lists of tasks spinning on a line; a line's `watch` is 1 + an index here.
    watchers: Vec<Vec<u32>>,
    free_watchers: Vec<u32>,
    metrics: Metrics,
    window: RunWindow,
    events: u64,
    /// The id of the workload's lock 0: its locks follow the tables' locks.
    workload_lock_base: u32,
    timeline: Timeline,
}

/// The event that marks the end of the warm-up: counting starts afresh.
const WARMUP_DONE: u32 = MAX_TASKS as u32 - 1;

impl<'a> Engine<'a> {
    pub fn new(
        m: &'a Machine,
        memory: &'a MemoryMap,
        futex: FutexSystem,
        tasks: Vec<TaskSpec>,
        lock: LockKind,
        window: RunWindow,
    ) -> Engine<'a> {
        assert!(
            tasks.len() < MAX_TASKS,
            "more tasks than the event queue can name"
        );
        let dir = Directory::new(memory, m);
        let workload_lock_base = futex.lock_count();
        let locks = Locks::new(lock, workload_lock_base);
        let metrics = Metrics::new(tasks.len());
        let timeline = Timeline {
            clock_reads: vec![Vec::new(); tasks.len()],
            exits: vec![None; tasks.len()],
        };
        let tasks = tasks
            .into_iter()
            .map(|t| Task {
                cpu: t.cpu,
                counting: t.program.counting(),
                iteration_start: 0,
                program: t.program,
                script: Vec::with_capacity(32),
                pc: 0,
                wait: Wait::Running,
                op_start: 0,
                lock_asked: 0,
                lock_taken: 0,
                woken_early: false,
                ret: 0,
            })
            .collect();
        Engine {
            m,
            memory,
            futex,
            dir,
            queue: EventQueue::default(),
            tasks,
            locks,
            watchers: Vec::new(),
            free_watchers: Vec::new(),
            metrics,
            window,
            events: 0,
            workload_lock_base,
            timeline,
        }
    }

    /// Runs every task from time zero until the window closes and every
    /// operation in flight has finished.
    pub fn run(mut self) -> Outcome {
        self.queue.push(self.window.warmup, WARMUP_DONE);
        for t in 0..self.tasks.len() as u32 {
            self.queue.push(0, t);
        }
        let (mut instant, mut at_instant, mut stalled_at) = (0, 0u64, None);
        while let Some((now, task)) = self.queue.pop() {
            self.events += 1;
            (at_instant, instant) = if now == instant {
                (at_instant + 1, now)
            } else {
                (0, now)
            };
            if at_instant > STALL_EVENTS {
                stalled_at = Some(now);
                break;
            }
            // The next event's task state loads while this one runs.
            if let Some(next) = self
                .queue
                .peek_task()
                .and_then(|t| self.tasks.get(t as usize))
            {
                prefetch(next);
            }
            if task == WARMUP_DONE {
                self.dir.reset_stats();
                self.metrics = Metrics::new(self.tasks.len());
            } else {
                self.resume(task, now);
            }
        }
        Outcome {
            metrics: self.metrics,
            directory: self.dir,
            events: self.events,
            window: self.window,
            asleep_at_end: self.futex.sleeping(),
            timeline: self.timeline,
            stalled_at,
        }
    }

    fn end(&self) -> Ps {
        self.window.warmup + self.window.duration
    }

    /// Whether something that happens at `t` is counted.
    fn counts(&self, t: Ps) -> bool {
        t >= self.window.warmup && t < self.end()
    }

    fn resume(&mut self, task: u32, now: Ps) {
        match self.tasks[task as usize].wait {
            Wait::Running => self.step(task, now),
            Wait::Blocked => unreachable!("a blocked task has no event until it is woken"),
            Wait::Spin(spin) => {
                // The line changed under the spinner: one transfer to see how.
                let line = match spin {
                    Spin::Ticket { lock, .. } | Spin::Head { lock } => lock.word,
                    Spin::Mcs { .. } => self
                        .futex
                        .mcs_node(self.memory, self.tasks[task as usize].cpu),
                    Spin::Word { word, .. } => word.mem,
                };
                let done = self.access(task, now, line, AccessKind::Read).done;
                self.tasks[task as usize].wait = Wait::Check(spin);
                self.queue.push(done, task);
            }
            Wait::Check(spin) => self.check(task, now, spin),
        }
    }

    /// A spinner's re-read completed: take the lock, move up, or spin again.
    fn check(&mut self, task: u32, now: Ps, spin: Spin) {
        match spin {
            Spin::Ticket { lock, ticket } => {
                if self.locks.ticket_turn(lock.id, task, ticket) {
                    self.acquired(task, now, lock.id);
                    self.tasks[task as usize].wait = Wait::Running;
                    self.step(task, now);
                } else {
                    self.spin(task, spin);
                }
            }
            Spin::Head { lock } => {
                if self.locks.head_free(lock.id) {
                    let mut t = self.access(task, now, lock.word, AccessKind::Rmw).done;
                    if let Some(next) = self.locks.head_take(lock.id, task) {
                        // Pass the MCS lock: the successor sees its node change.
                        let node = self
                            .futex
                            .mcs_node(self.memory, self.tasks[next as usize].cpu);
                        t = self.access(task, t, node, AccessKind::Write).done;
                    }
                    self.acquired(task, t, lock.id);
                    self.tasks[task as usize].wait = Wait::Running;
                    self.queue.push(t, task);
                } else {
                    self.spin(task, spin);
                }
            }
            Spin::Mcs { lock } => {
                if self.locks.is_head(lock.id, task) {
                    let done = self.access(task, now, lock.word, AccessKind::Read).done;
                    self.tasks[task as usize].wait = Wait::Check(Spin::Head { lock });
                    self.queue.push(done, task);
                } else {
                    self.spin(task, spin);
                }
            }
            Spin::Word { word, until } => {
                if until.holds(self.futex.value(task, word.mem.addr, word.kind)) {
                    self.tasks[task as usize].wait = Wait::Running;
                    self.step(task, now);
                } else {
                    self.spin(task, spin);
                }
            }
        }
    }

    fn spin(&mut self, task: u32, spin: Spin) {
        let line = match spin {
            Spin::Ticket { lock, .. } | Spin::Head { lock } => lock.word.line,
            Spin::Mcs { .. } => {
                self.futex
                    .mcs_node(self.memory, self.tasks[task as usize].cpu)
                    .line
            }
            Spin::Word { word, .. } => word.mem.line,
        };
        self.tasks[task as usize].wait = Wait::Spin(spin);
        self.watch(line, task);
    }

    fn watch(&mut self, line: LineId, task: u32) {
        let slot = self.dir.watch(line);
        if *slot == 0 {
            let index = self.free_watchers.pop().unwrap_or_else(|| {
                self.watchers.push(Vec::new());
                self.watchers.len() as u32 - 1
            });
            *slot = index + 1;
        }
        self.watchers[*slot as usize - 1].push(task);
    }

    /// One access through the directory; a write wakes the line's spinners
    /// at the moment it completes.
    #[inline]
    fn access(
        &mut self,
        task: u32,
        now: Ps,
        mem: Mem,
        kind: AccessKind,
    ) -> crate::coherence::Outcome {
        let cpu = self.tasks[task as usize].cpu;
        let out = self.dir.access(self.m, cpu, now, mem.line, mem.addr, kind);
        if kind != AccessKind::Read {
            let slot = self.dir.watch(mem.line);
            if *slot != 0 {
                let index = *slot as usize - 1;
                *slot = 0;
                for &w in &self.watchers[index] {
                    self.queue.push(out.done, w);
                }
                self.watchers[index].clear();
                self.free_watchers.push(index as u32);
            }
        }
        out
    }

    fn acquired(&mut self, task: u32, at: Ps, lock: u32) {
        let t = &mut self.tasks[task as usize];
        t.lock_taken = at;
        if at >= self.window.warmup && at < self.window.warmup + self.window.duration {
            let waited = at - t.lock_asked;
            let contended = waited > self.m.l1_ps + self.m.rmw_ps;
            self.metrics.locks.acquired(waited, contended);
            if let Some(l) = lock.checked_sub(self.workload_lock_base) {
                self.metrics.workload_lock(l).acquired(waited, contended);
            }
        }
    }

    /// Loads the host's cache with the state a script's accesses and locks
    /// will need: the op's first steps are compute, whole events away.
    fn prefetch(&self, script: &[Step]) {
        for step in script {
            match *step {
                Step::Access(mem, _) => self.dir.prefetch(mem.line),
                Step::Lock(lock) => {
                    self.dir.prefetch(lock.word.line);
                    self.locks.prefetch(lock.id);
                }
                _ => {}
            }
        }
    }

    /// A workload's lock, numbered among the tables' locks.
    fn workload_lock(&self, lock: LockRef) -> LockRef {
        LockRef {
            id: self.workload_lock_base + lock.id,
            word: lock.word,
        }
    }

    fn cost(&self, c: Cost) -> Ps {
        let k = &self.m.costs;
        match c {
            Cost::SyscallHalf => k.syscall / 2,
            Cost::FutexKeyPrivate => k.futex_key_private,
            Cost::FutexKeyShared => k.futex_key_shared,
            Cost::Jhash2 => k.jhash2,
            Cost::Schedule => k.schedule,
            Cost::Ps(ps) => ps,
        }
    }

    /// Runs a task's script from `now` until it must wait.
    fn step(&mut self, task: u32, mut now: Ps) {
        let end = self.end();
        loop {
            let t = &mut self.tasks[task as usize];
            if t.pc == t.script.len() {
                if now >= end {
                    return;
                }
                t.script.clear();
                t.pc = 0;
                t.op_start = now;
                t.ret = 0;
                let op = t.program.next_op();
                let counts = self.counts(now);
                let t = &mut self.tasks[task as usize];
                match op {
                    Op::Futex(op) => {
                        let mut script = std::mem::take(&mut t.script);
                        self.futex.begin(self.memory, task, op, &mut script);
                        self.prefetch(&script);
                        self.tasks[task as usize].script = script;
                    }
                    Op::Compute(ps) => t.script.extend([Step::Compute(Cost::Ps(ps)), Step::OpDone]),
                    Op::Access(mem, kind) => {
                        t.script.extend([Step::Access(mem, kind), Step::OpDone])
                    }
                    Op::Atomic(word, op) => {
                        // The atomic takes effect as it is issued: programs run in event order.
                        let old = self.futex.value(task, word.mem.addr, word.kind);
                        let new = op.apply(old);
                        if new != old {
                            self.futex.set_value(task, word.mem.addr, word.kind, new);
                        }
                        self.tasks[task as usize].script.extend([
                            Step::Access(word.mem, op.access()),
                            Step::Returns(old.into()),
                            Step::OpDone,
                        ]);
                    }
                    Op::SpinUntil(word, until) => {
                        // The first read; each write to the line afterwards costs one re-read.
                        t.script.push(Step::OpDone);
                        let done = self.access(task, now, word.mem, AccessKind::Read).done;
                        self.tasks[task as usize].wait = Wait::Check(Spin::Word { word, until });
                        self.queue.push(done, task);
                        return;
                    }
                    Op::SpinLock(lock) => {
                        let lock = self.workload_lock(lock);
                        self.locks.grow_to(lock.id + 1);
                        let t = &mut self.tasks[task as usize];
                        t.script.extend([Step::Lock(lock), Step::OpDone]);
                    }
                    Op::SpinUnlock(lock) => {
                        let lock = self.workload_lock(lock);
                        let t = &mut self.tasks[task as usize];
                        t.script.extend([Step::Unlock(lock), Step::OpDone]);
                    }
                    Op::Iteration => {
                        if t.counting == Counting::Iterations && counts {
                            self.metrics.op_done(task, now - t.iteration_start);
                        }
                        self.tasks[task as usize].iteration_start = now;
                    }
                    Op::Clock => self.timeline.clock_reads[task as usize].push(now),
                    Op::Exit => {
                        self.timeline.exits[task as usize] = Some(now);
                        return;
                    }
                }
                continue;
            }
            let step = t.script[t.pc];
            t.pc += 1;
            match step {
                Step::Compute(c) => {
                    now += self.cost(c);
                    // Merge consecutive compute steps into one event.
                    while let Some(&Step::Compute(c)) = self.tasks[task as usize]
                        .script
                        .get(self.tasks[task as usize].pc)
                    {
                        self.tasks[task as usize].pc += 1;
                        now += self.cost(c);
                    }
                    self.queue.push(now, task);
                    return;
                }
                Step::Access(mem, kind) => {
                    let out = self.access(task, now, mem, kind);
                    if out.class != Class::L1Hit || out.done > now + self.m.l1_ps + self.m.rmw_ps {
                        self.queue.push(out.done, task);
                        return;
                    }
                    now = out.done;
                }
                Step::Lock(lock) => {
                    self.tasks[task as usize].lock_asked = now;
                    let out = self.access(task, now, lock.word, AccessKind::Rmw);
                    match self.locks.arrive(lock.id, task) {
                        Arrival::Acquired => {
                            self.acquired(task, out.done, lock.id);
                            if out.class != Class::L1Hit {
                                self.queue.push(out.done, task);
                                return;
                            }
                            now = out.done;
                        }
                        Arrival::Ticket(ticket) => {
                            return self.spin(task, Spin::Ticket { lock, ticket })
                        }
                        Arrival::Head => return self.spin(task, Spin::Head { lock }),
                        Arrival::Queued => return self.spin(task, Spin::Mcs { lock }),
                    }
                }
                Step::Unlock(lock) => {
                    if self.counts(now) {
                        let held = now.saturating_sub(self.tasks[task as usize].lock_taken);
                        self.metrics.locks.hold_ps += held;
                        if let Some(l) = lock.id.checked_sub(self.workload_lock_base) {
                            self.metrics.workload_lock(l).hold_ps += held;
                        }
                    }
                    self.locks.release(lock.id, task);
                    let out = self.access(task, now, lock.word, AccessKind::Write);
                    if out.class != Class::L1Hit {
                        self.queue.push(out.done, task);
                        return;
                    }
                    now = out.done;
                }
                Step::Decide(d) => {
                    let mut script = std::mem::take(&mut self.tasks[task as usize].script);
                    self.futex.decide(self.memory, task, d, &mut script);
                    self.tasks[task as usize].script = script;
                }
                Step::Block => {
                    let t = &mut self.tasks[task as usize];
                    // A wake that came while the task was still on its way to sleep.
                    if !std::mem::take(&mut t.woken_early) {
                        t.wait = Wait::Blocked;
                        return;
                    }
                }
                Step::Wake(other) => {
                    let o = &mut self.tasks[other as usize];
                    if o.wait == Wait::Blocked {
                        o.wait = Wait::Running;
                        self.queue.push(now + self.m.costs.wakeup, other);
                    } else {
                        o.woken_early = true;
                    }
                }
                Step::Returns(ret) => self.tasks[task as usize].ret = ret,
                Step::OpDone => {
                    let t = &self.tasks[task as usize];
                    let counted = self.counts(now);
                    if t.counting == Counting::EachOp && counted {
                        self.metrics.op_done(task, now - t.op_start);
                    }
                    let t = &mut self.tasks[task as usize];
                    t.program.op_returned(Done {
                        now,
                        ret: t.ret,
                        counted,
                    });
                    // Yield between ops, so no task runs ahead of the others on hits alone.
                    self.queue.push(now, task);
                    return;
                }
            }
        }
    }
}
