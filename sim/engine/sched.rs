//! The scheduler: which task runs on each CPU, and what it costs to change
//! that. Tasks stay on the CPU their workload places them on (the
//! benchmarks pin them); a CPU with more tasks than one time-shares them.
//! A task that blocks leaves its CPU to the next runnable one, or the CPU
//! goes idle; a wake-up runs try_to_wake_up's accesses on the waker, the
//! IPI to a remote idle CPU and that CPU's exit from idle.
//!
//! What the kernel does and where (v6.6 names; kernel/sched/core.c unless
//! said):
//!
//! | step | kernel | here |
//! |---|---|---|
//! | the wakee's `pi_lock` and `__state` | `try_to_wake_up` | an atomic on its task_struct line, a read, the store of TASK_RUNNING |
//! | the target runqueue's lock | `ttwu_queue` -> `rq_lock` | the machine's spinlock on `rq->__lock`, a line of its own per CPU homed on the CPU's node |
//! | the enqueue | `ttwu_do_activate` -> `activate_task` (`rq->nr_running`, the cfs_rq, beside the lock) | a store to the runqueue's line |
//! | preempting the current task | `wakeup_preempt` -> `resched_curr`, the tick's `task_tick_fair` | at the current task's next return to user space (op boundary); a task spinning in user space at the tick |
//! | the IPI | `resched_curr` -> `smp_send_reschedule` to a remote CPU | the waker pays `ipi_send`, the target takes it `ipi` later |
//! | the target leaving idle | `do_idle` -> cpuidle's exit latency, then `schedule_idle` | C1's exit latency, or C6's once the CPU has been idle past C6's target residency (the ladder governor's promotion) |
//! | the switch | `__schedule` -> `context_switch` | the profile's `kernel.schedule` |
//!
//! Left out: migration and load balancing (a task never leaves its CPU),
//! the wake-list queueing of `ttwu_queue_wakelist` (the waker always takes
//! the remote lock), idle polling (TIF_POLLING_NRFLAG, which saves the IPI
//! to an mwait-idle CPU), vruntime: runnable tasks take turns in FIFO
//! order, and a woken task preempts the current one (CFS's sleeper credit
//! of half sched_latency exceeds wakeup_granularity, so a task woken after
//! a sleep preempts). A user compute step is not cut by the tick; it ends
//! first. A task in the kernel is never preempted (PREEMPT_NONE, and every
//! spinlock disables preemption anyway): not inside a futex op's script,
//! nor between the ops of a program that says it is in the kernel.
//!
//! A run whose CPUs each hold one task pays one comparison per op and one
//! per event, and nothing else: no tick is armed and no task waits for a
//! turn.

use super::{Engine, Spin, Wait, MAX_TASKS};
use crate::coherence::AccessKind;
use crate::kernel::script::{LockRef, Step};
use crate::machine::{Machine, MAX_CPUS};
use crate::machine::{Ps, SchedCosts};
use crate::memory::{Home, Mem, MemoryMap};
use std::collections::{HashMap, VecDeque};

/// Per-CPU runqueues, in a range of the direct map no other kernel object
/// of the model reaches (the PI-state slabs take 1 GiB per node): one page
/// apart, so no two share a line.
const RUNQUEUES: u64 = 0xffff_8a00_0000_0000;
/// task_structs, from the task_struct slab: 16 KiB apart (a task_struct is
/// 9-10 KiB on x86-64).
const TASK_STRUCTS: u64 = 0xffff_8b00_0000_0000;
const TASK_STRUCT_STRIDE: u64 = 16 << 10;
/// `__state` sits in the task_struct's first line (after thread_info);
/// `pi_lock` in a line of its own further in.
const STATE_OFFSET: u64 = 24;
const PI_LOCK_OFFSET: u64 = 2_304;

/// The first event id of the CPUs' ticks: CPU c's tick is this plus c,
/// above every task's id and below the warm-up's.
pub(super) const TICK_EVENTS: u32 = (MAX_TASKS - 1 - MAX_CPUS as usize) as u32;

/// Where the scheduler's kernel state lives in memory.
pub struct SchedLayout {
    /// Each CPU's `rq->__lock`, with `nr_running` and the cfs_rq on its line.
    runqueues: Vec<Mem>,
    /// Each task's `__state` and `pi_lock`.
    states: Vec<Mem>,
    pi_locks: Vec<Mem>,
}

impl SchedLayout {
    /// Lays out a runqueue per CPU and a task_struct per task (homed on
    /// its CPU's node).
    pub fn new(machine: &Machine, memory: &mut MemoryMap, task_cpus: &[u32]) -> SchedLayout {
        let runqueues = (0..machine.cpus())
            .map(|cpu| {
                let addr = RUNQUEUES + u64::from(cpu) * 4096;
                let home = Home::Node(machine.node_of(cpu));
                let region = memory.add(format!("cpu {cpu} runqueue"), addr, 64, home);
                Mem {
                    addr,
                    line: memory.line_in(region, addr),
                }
            })
            .collect();
        let (mut states, mut pi_locks) = (Vec::new(), Vec::new());
        for (task, &cpu) in task_cpus.iter().enumerate() {
            let base = TASK_STRUCTS + task as u64 * TASK_STRUCT_STRIDE;
            let home = Home::Node(machine.node_of(cpu));
            let region = memory.add(
                format!("task {task} task_struct"),
                base,
                PI_LOCK_OFFSET + 8,
                home,
            );
            let mem = |offset: u64| Mem {
                addr: base + offset,
                line: memory.line_in(region, base + offset),
            };
            states.push(mem(STATE_OFFSET));
            pi_locks.push(mem(PI_LOCK_OFFSET));
        }
        SchedLayout {
            runqueues,
            states,
            pi_locks,
        }
    }
}

/// One CPU's runqueue as the engine keeps it.
struct Cpu {
    /// The task on the CPU (switching in counts); None when idle.
    current: Option<u32>,
    /// Runnable tasks waiting for their turn, first first.
    waiting: VecDeque<u32>,
    idle_since: Ps,
    /// From when the current task is preempted at its next chance: the end
    /// of its slice at the tick, or a wake-up's preemption; never while
    /// nobody waits.
    resched_at: Ps,
    /// Whether the CPU's tick is armed: only while tasks wait.
    ticking: bool,
}

pub(super) struct Sched {
    cpus: Vec<Cpu>,
    layout: SchedLayout,
    /// The lock id of CPU 0's runqueue; the others follow.
    lock_base: u32,
    costs: SchedCosts,
    schedule: Ps,
    /// Tasks asleep in wait_event(), by the address of the word their wait
    /// queue stands for.
    wait_queues: HashMap<u64, Vec<u32>>,
}

/// Where a task stands with its CPU, kept in its Task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct OnCpu {
    /// Runnable or asleep, but not the CPU's current task.
    pub off: bool,
    /// An event that came while the task was off its CPU: when it was due.
    pub deferred: Option<Ps>,
}

impl Sched {
    /// Each CPU runs the first of its tasks; the rest wait their turn.
    pub(super) fn new(
        m: &Machine,
        layout: SchedLayout,
        lock_base: u32,
        task_cpus: &[u32],
    ) -> (Sched, Vec<OnCpu>) {
        let mut cpus: Vec<Cpu> = (0..m.cpus())
            .map(|_| Cpu {
                current: None,
                waiting: VecDeque::new(),
                idle_since: 0,
                resched_at: Ps::MAX,
                ticking: false,
            })
            .collect();
        let mut on_cpu = Vec::with_capacity(task_cpus.len());
        for (task, &cpu) in task_cpus.iter().enumerate() {
            let c = &mut cpus[cpu as usize];
            if c.current.is_none() {
                c.current = Some(task as u32);
                on_cpu.push(OnCpu::default());
            } else {
                c.waiting.push_back(task as u32);
                c.resched_at = slice_end(&m.sched, 0);
                on_cpu.push(OnCpu {
                    off: true,
                    deferred: Some(0),
                });
            }
        }
        let sched = Sched {
            cpus,
            layout,
            lock_base,
            costs: m.sched,
            schedule: m.costs.schedule,
            wait_queues: HashMap::new(),
        };
        (sched, on_cpu)
    }

    /// CPUs that start with tasks waiting: their ticks are armed at once.
    pub(super) fn oversubscribed(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.cpus.len() as u32).filter(|&c| !self.cpus[c as usize].waiting.is_empty())
    }

    /// Takes every task asleep on the word's wait queue, first asleep first.
    pub(super) fn wake_up(&mut self, word: Mem) -> impl Iterator<Item = u32> {
        self.wait_queues
            .remove(&word.addr)
            .unwrap_or_default()
            .into_iter()
    }

    fn rq_lock(&self, cpu: u32) -> LockRef {
        LockRef {
            id: self.lock_base + cpu,
            word: self.layout.runqueues[cpu as usize],
        }
    }

    /// What leaving idle costs a CPU idle since `since`, at `now`.
    fn idle_exit(&self, since: Ps, now: Ps) -> Ps {
        if now.saturating_sub(since) >= self.costs.deep_idle_after {
            self.costs.deep_idle_exit
        } else {
            self.costs.idle_exit
        }
    }
}

/// The first tick at or after the end of a slice begun at `from`.
fn slice_end(k: &SchedCosts, from: Ps) -> Ps {
    (from + k.slice).div_ceil(k.tick) * k.tick
}

impl Engine<'_> {
    /// An event for a task off its CPU: a sleep's timer makes it runnable;
    /// anything else waits for the task's turn.
    pub(super) fn off_cpu_event(&mut self, task: u32, now: Ps) {
        let t = &mut self.tasks[task as usize];
        if t.wait == Wait::Blocked {
            t.wait = Wait::Running;
            self.make_runnable(task, now, None);
        } else {
            t.on_cpu.deferred = Some(now);
        }
    }

    /// try_to_wake_up's accesses, written into the waker's script after
    /// the Wake step: they end in the wakee's activation.
    pub(super) fn try_to_wake_up(&mut self, waker: u32, wakee: u32) {
        let s = &self.sched;
        let (state, pi_lock) = (
            s.layout.states[wakee as usize],
            s.layout.pi_locks[wakee as usize],
        );
        let rq_lock = s.rq_lock(self.tasks[wakee as usize].cpu);
        let t = &mut self.tasks[waker as usize];
        let at = t.pc;
        t.script.splice(
            at..at,
            [
                Step::Access(pi_lock, AccessKind::Rmw),
                Step::Access(state, AccessKind::Read),
                Step::Lock(rq_lock),
                Step::Access(rq_lock.word, AccessKind::Write),
                Step::Access(state, AccessKind::Write),
                Step::Activate(wakee),
                Step::Unlock(rq_lock),
                Step::Access(pi_lock, AccessKind::Write),
            ],
        );
    }

    /// ttwu_do_activate, with the target's runqueue lock held: the time
    /// the waker goes on (after sending an IPI, if one is due). A task
    /// still on its way to sleep just will not sleep.
    pub(super) fn activate(&mut self, waker: u32, wakee: u32, now: Ps) -> Ps {
        let o = &mut self.tasks[wakee as usize];
        if o.wait != Wait::Blocked {
            o.woken_early = true;
            return now;
        }
        o.wait = Wait::Running;
        let from = self.tasks[waker as usize].cpu;
        let ipi = self.make_runnable(wakee, now, Some(from));
        now + if ipi { self.sched.costs.ipi_send } else { 0 }
    }

    /// A task that slept is runnable at `now`, woken from CPU `from` (None:
    /// by a timer on its own CPU). It runs at once on its idle CPU, after
    /// the IPI if `from` is another CPU and the CPU's exit from idle; on a
    /// busy CPU it waits, and preempts the current task at its next chance.
    /// Whether an IPI was sent.
    fn make_runnable(&mut self, task: u32, now: Ps, from: Option<u32>) -> bool {
        let cpu = self.tasks[task as usize].cpu;
        let remote = from.is_some_and(|f| f != cpu);
        let s = &mut self.sched;
        let c = &mut s.cpus[cpu as usize];
        self.tasks[task as usize].on_cpu.deferred = Some(now);
        if c.current.is_none() {
            let ipi = if remote { s.costs.ipi } else { 0 };
            let at = now + ipi;
            let since = c.idle_since;
            let at = at + s.idle_exit(since, at) + s.schedule;
            self.sched.cpus[cpu as usize].current = Some(task);
            self.switch_in(task, at);
            return remote;
        }
        c.waiting.push_back(task);
        c.resched_at = c.resched_at.min(now);
        self.arm_tick(cpu, now);
        remote
    }

    /// The task is the CPU's current one from `at`: an event it was due
    /// while off the CPU is taken now.
    fn switch_in(&mut self, task: u32, at: Ps) {
        let t = &mut self.tasks[task as usize];
        t.on_cpu.off = false;
        if let Some(due) = t.on_cpu.deferred.take() {
            self.queue.push(at.max(due), task);
        }
        let cpu = t.cpu as usize;
        let c = &mut self.sched.cpus[cpu];
        c.resched_at = if c.waiting.is_empty() {
            Ps::MAX
        } else {
            slice_end(&self.sched.costs, at)
        };
    }

    /// The CPU's current task leaves it at `now` (it blocked, slept,
    /// exited or was preempted): the next waiting task switches in at
    /// `next_at`, or the CPU goes idle.
    fn leave_cpu(&mut self, task: u32, now: Ps, next_at: Ps) {
        let t = &mut self.tasks[task as usize];
        t.on_cpu.off = true;
        let c = &mut self.sched.cpus[t.cpu as usize];
        match c.waiting.pop_front() {
            Some(next) => {
                c.current = Some(next);
                self.switch_in(next, next_at);
            }
            None => {
                c.current = None;
                c.idle_since = now;
                c.resched_at = Ps::MAX;
            }
        }
    }

    /// The task blocked in schedule() (its script paid the switch).
    pub(super) fn block(&mut self, task: u32, now: Ps) {
        self.leave_cpu(task, now, now);
    }

    /// The task exited: do_exit's last schedule() is its program's.
    pub(super) fn exited(&mut self, task: u32, now: Ps) {
        self.leave_cpu(task, now, now);
    }

    /// wait_event() found its condition false: the task joins the word's
    /// wait queue and schedules out.
    pub(super) fn wait_event(&mut self, task: u32, now: Ps, word: Mem) {
        self.tasks[task as usize].wait = Wait::Blocked;
        self.sched
            .wait_queues
            .entry(word.addr)
            .or_default()
            .push(task);
        let off = now + self.sched.schedule;
        self.leave_cpu(task, off, off);
    }

    /// A timed sleep: schedule() out, and the timer's event at its expiry.
    pub(super) fn sleep(&mut self, task: u32, now: Ps, ps: Ps) {
        self.tasks[task as usize].wait = Wait::Blocked;
        let off = now + self.sched.schedule;
        self.queue.push(off + ps, task);
        self.leave_cpu(task, off, off);
    }

    /// At an op boundary, where the kernel returns to user space: whether
    /// the task must give its CPU up now. Its next event waits its turn.
    #[inline]
    pub(super) fn preempted_at_op(&mut self, task: u32, now: Ps) -> bool {
        let t = &self.tasks[task as usize];
        if now < self.sched.cpus[t.cpu as usize].resched_at || t.program.in_kernel() {
            return false;
        }
        self.tasks[task as usize].on_cpu.deferred = Some(now);
        self.preempt(task, now);
        true
    }

    /// The task goes to the back of its CPU's queue; the next one switches in.
    fn preempt(&mut self, task: u32, now: Ps) {
        let cpu = self.tasks[task as usize].cpu;
        self.sched.cpus[cpu as usize].waiting.push_back(task);
        self.leave_cpu(task, now, now + self.sched.schedule);
    }

    /// Arms the CPU's tick from `now` while tasks wait on it.
    pub(super) fn arm_tick(&mut self, cpu: u32, now: Ps) {
        let c = &mut self.sched.cpus[cpu as usize];
        let tick = self.sched.costs.tick;
        let at = (now / tick + 1) * tick;
        if c.ticking || c.waiting.is_empty() || at >= self.window.end() {
            return;
        }
        c.ticking = true;
        self.queue.push(at, TICK_EVENTS + cpu);
    }

    /// The CPU's tick: a task spinning in user space past its slice gives
    /// the CPU up (one in the kernel or in a compute step does so at its
    /// next op boundary); the tick stays armed while tasks wait.
    pub(super) fn tick(&mut self, cpu: u32, now: Ps) {
        let c = &mut self.sched.cpus[cpu as usize];
        c.ticking = false;
        if let Some(current) = c.current {
            let t = &self.tasks[current as usize];
            let user_spin = !t.program.in_kernel()
                && matches!(
                    t.wait,
                    Wait::Spin(Spin::Word { .. })
                        | Wait::Check {
                            spin: Spin::Word { .. },
                            ..
                        }
                );
            if user_spin && now >= c.resched_at && !c.waiting.is_empty() {
                self.preempt(current, now);
            }
        }
        self.arm_tick(cpu, now);
    }
}
