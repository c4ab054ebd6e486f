//! The scheduler: which task runs on each CPU, and what it costs to change
//! that. Tasks stay on the CPU their workload places them on (the
//! benchmarks pin them), unless the profile asks for placement: then a task
//! its benchmark does not pin is placed at fork and at each wake-up
//! (docs/scheduler.md). A CPU with more tasks than one time-shares them.
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
//! | the wake list | `ttwu_queue_wakelist` when `ttwu_queue_cond` holds (another LLC, or an idle target) | the waker stores `ttwu_pending` in the target's runqueue line and links the wakee onto the target's `call_single_queue` (llist_add: a read and a cmpxchg of that line); the target takes the list with an xchg (`flush_smp_call_function_queue`) and enqueues the task under its own runqueue lock (`sched_ttwu_pending`), as the wakee's first steps there |
//! | the need-resched flag | `set_nr_if_polling` (wake list) or `resched_curr`'s `fetch_or` (runqueue lock) on the target's current task, its idle task when idle | a read and, where the idle task polls or under the lock, a cmpxchg of that task's first line; a polling idle CPU clears its polling flag with a locked bit clear when it leaves the loop |
//! | the enqueue | `ttwu_do_activate` -> `activate_task` (`rq->nr_running`, the cfs_rq, beside the lock) | a store to the runqueue's line |
//! | preempting the current task | `wakeup_preempt` -> `resched_curr`, the tick's `task_tick_fair` | at the current task's next return to user space (op boundary); a task spinning in user space at the tick |
//! | the IPI | `resched_curr` -> `smp_send_reschedule`, or `send_call_function_single_ipi` for the wake list, to a remote CPU | the waker pays `ipi_send`, the target takes it `ipi` later and, when idle, runs its handler (`ipi_handler`) after leaving idle; none to an idle CPU that polls (`idle_polls`: TIF_POLLING_NRFLAG, `set_nr_if_polling`) |
//! | the target leaving idle | `do_idle` -> cpuidle's exit latency, then `schedule_idle` | C1's exit latency, or C6's once the CPU has been idle past C6's target residency (the ladder governor's promotion) |
//! | the switch | `__schedule` -> `context_switch` | the profile's `kernel.schedule` |
//!
//! Left out: load balancing (a task moves only when placed at a wake-up),
//! the time a busy target spends in the IPI's handler (its current task
//! goes on undelayed; the handler's enqueue runs as the wakee's first
//! steps), a second wake-up queued on a target whose list is not yet
//! taken (each finds it empty and sends its own notice), vruntime: runnable tasks take turns in FIFO
//! order, and a woken task preempts the current one (CFS's sleeper credit
//! of half sched_latency exceeds wakeup_granularity, so a task woken after
//! a sleep preempts) at its next op boundary or tick, not at once by the
//! IPI's return to user space. A user compute step is cut by the tick
//! (scheduler_tick -> task_tick_fair marks it, and the interrupt's return
//! to user space switches); its remainder runs at the task's next turn,
//! priced again as a compute of that length. A task in the kernel is never
//! preempted (PREEMPT_NONE, and every spinlock disables preemption anyway):
//! not inside a futex op's script, nor between the ops of a program that
//! says it is in the kernel.
//!
//! A run whose CPUs each hold one task pays one comparison per op and one
//! per event, and nothing else: no tick is armed and no task waits for a
//! turn.

use super::attribution::Attribute;
use super::event::Event;
use super::{Engine, Spin, Wait};
use crate::kernel::script::{Cost, LockRef, Step};
use crate::kernel::ttwu::{self, RunqueueAccess, WakeeLines};
use crate::machine::Machine;
use crate::machine::{Ps, SchedCosts, TaskPlacement};
use crate::memory::{Home, Mem, MemoryMap};
use crate::task::{Affinity, TaskSpec};
use std::collections::{HashMap, VecDeque};

/// Per-CPU runqueues, in a range of the direct map no other kernel object
/// of the model reaches: one page apart, so no two share a line.
const RUNQUEUES: u64 = crate::address_map::RUNQUEUES.base;
/// In each CPU's page after its runqueue, a line each: its
/// `call_single_queue` (per-CPU data, the wake list's head) and the first
/// line of its idle task's task_struct (thread_info's flags, which a
/// polling idle loop watches); fork_idle allocates the idle task on the
/// CPU's node.
const CALL_SINGLE_QUEUE_OFFSET: u64 = 1024;
const IDLE_TASK_OFFSET: u64 = 2048;
/// task_structs, from the task_struct slab: 16 KiB apart (a task_struct is
/// 9-10 KiB on x86-64).
const TASK_STRUCTS: u64 = crate::address_map::TASK_STRUCTS.base;
const TASK_STRUCT_STRIDE: u64 = crate::address_map::TASK_STRUCT_STRIDE;
/// `__state` sits in the task_struct's first line (after thread_info);
/// `pi_lock` in a line of its own further in.
const STATE_OFFSET: u64 = 24;
const PI_LOCK_OFFSET: u64 = 2_304;
const FIRST_BYTES: u64 = 128;

/// Where the scheduler's kernel state lives in memory.
pub struct SchedLayout {
    /// Each CPU's `rq->__lock`, with `nr_running`, `ttwu_pending` and the
    /// cfs_rq on its line.
    runqueues: Vec<Mem>,
    /// Each CPU's `call_single_queue`.
    wake_lists: Vec<Mem>,
    /// Each CPU's idle task's `thread_info.flags`.
    idle_flags: Vec<Mem>,
    /// Each task's `__state` and `pi_lock`.
    states: Vec<Mem>,
    pi_locks: Vec<Mem>,
}

impl SchedLayout {
    /// Lays out a runqueue per CPU and a task_struct per task (homed on
    /// its CPU's node).
    pub fn new(machine: &Machine, memory: &mut MemoryMap, task_cpus: &[u32]) -> SchedLayout {
        // A line each, unless the machine's lines are so long that one
        // holds all three (a 4 KiB line): then one region per CPU spans them.
        let apart = memory.line_size() <= CALL_SINGLE_QUEUE_OFFSET;
        let pages: Vec<Option<_>> = (0..machine.cpus())
            .map(|cpu| {
                let home = Home::Node(machine.node_of(cpu));
                let page = RUNQUEUES + u64::from(cpu) * 4096;
                let name = format!("cpu {cpu} runqueue page");
                (!apart).then(|| memory.add(name, page, IDLE_TASK_OFFSET + 64, home))
            })
            .collect();
        let mut per_cpu_line = |what: &str, offset: u64| -> Vec<Mem> {
            (0..machine.cpus())
                .map(|cpu| {
                    let addr = RUNQUEUES + u64::from(cpu) * 4096 + offset;
                    let home = Home::Node(machine.node_of(cpu));
                    let region = pages[cpu as usize]
                        .unwrap_or_else(|| memory.add(format!("cpu {cpu} {what}"), addr, 64, home));
                    Mem {
                        addr,
                        line: memory.line_in(region, addr),
                    }
                })
                .collect()
        };
        let runqueues = per_cpu_line("runqueue", 0);
        let wake_lists = per_cpu_line("call_single_queue", CALL_SINGLE_QUEUE_OFFSET);
        let idle_flags = per_cpu_line("idle task", IDLE_TASK_OFFSET);
        let (mut states, mut pi_locks) = (Vec::new(), Vec::new());
        for (task, &cpu) in task_cpus.iter().enumerate() {
            let base = TASK_STRUCTS + task as u64 * TASK_STRUCT_STRIDE;
            let home = Home::Node(machine.node_of(cpu));
            let name = format!("task {task} task_struct");
            // Only the lines the model touches, each a directory entry: the
            // first 128 bytes (`__state`'s line and the one the adjacent-line
            // prefetcher pairs it with), and `pi_lock`'s, unless one line
            // of the machine's holds both.
            let line = memory.line_size();
            let apart = PI_LOCK_OFFSET / line > (FIRST_BYTES - 1) / line;
            let first_len = if apart {
                FIRST_BYTES
            } else {
                PI_LOCK_OFFSET + 8
            };
            let first = memory.add(name.clone(), base, first_len, home);
            let pi_lock = if apart {
                memory.add(name, base + PI_LOCK_OFFSET, 8, home)
            } else {
                first
            };
            let mem = |region, offset: u64| Mem {
                addr: base + offset,
                line: memory.line_in(region, base + offset),
            };
            states.push(mem(first, STATE_OFFSET));
            pi_locks.push(mem(pi_lock, PI_LOCK_OFFSET));
        }
        SchedLayout {
            runqueues,
            wake_lists,
            idle_flags,
            states,
            pi_locks,
        }
    }
}

/// fork's balancing (sched_balance_find_dst_cpu, find_idlest_cpu before
/// 6.10): with `placement = "placed"`, each task that is not pinned starts
/// on the least-loaded CPU it may run on, counting the pinned tasks and
/// those placed before it; among equals the CPU its workload gave it (the
/// parent's), then one of the same LLC, then of the same node, then the
/// lowest-numbered. Without placement the tasks stay where they are.
pub fn place_at_fork(m: &Machine, tasks: &mut [TaskSpec]) {
    if m.sched.placement == TaskPlacement::Pinned {
        return;
    }
    let mut load = vec![0u32; m.cpus() as usize];
    let free: Vec<Option<u32>> = tasks
        .iter()
        .map(|t| allowed_from(m, t.program.affinity()))
        .collect();
    for (t, _) in tasks.iter().zip(&free).filter(|(_, f)| f.is_none()) {
        load[t.cpu as usize] += 1;
    }
    for (t, first) in tasks.iter_mut().zip(&free) {
        let Some(first) = *first else { continue };
        let parent = t.cpu;
        let closeness = |c: u32| {
            if c == parent {
                0
            } else if m.llc_of(c) == m.llc_of(parent) {
                1
            } else if m.node_of(c) == m.node_of(parent) {
                2
            } else {
                3
            }
        };
        if let Some(cpu) = (first..m.cpus()).min_by_key(|&c| (load[c as usize], closeness(c), c)) {
            t.cpu = cpu;
            load[cpu as usize] += 1;
        }
    }
}

/// The first CPU a task may be placed on, or None when it stays put: it is
/// pinned, placement is off, or its mask holds none of the machine's CPUs.
fn allowed_from(m: &Machine, affinity: Affinity) -> Option<u32> {
    match (m.sched.placement, affinity) {
        (TaskPlacement::Placed, Affinity::CpusFrom(first)) if first < m.cpus() => Some(first),
        _ => None,
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
    /// Each LLC's CPUs in order: select_idle_sibling's scan.
    llc_cpus: Vec<Vec<u32>>,
}

/// Where a task stands with its CPU, kept in its Task; what every event
/// reads (`compute_end`, `off`) first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(super) struct OnCpu {
    /// When the user compute step in flight ends (its event's time); an
    /// event before it is the end of a step the tick cut, and is dropped.
    /// Ps::MAX while the cut step's remainder waits for the CPU.
    pub compute_end: Ps,
    /// Runnable or asleep, but not the CPU's current task.
    pub off: bool,
    /// The wake-up in flight went through the target's wake list: the
    /// target enqueues the task (ttwu::target_side).
    pub queued: bool,
    /// The CPU the wake-up in flight chose for it.
    pub wake_cpu: u32,
    /// The first CPU the scheduler may place it on; None: it stays on its CPU.
    pub free_from: Option<u32>,
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
        affinities: &[Affinity],
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
        for ((task, &cpu), &affinity) in task_cpus.iter().enumerate().zip(affinities) {
            let c = &mut cpus[cpu as usize];
            let placed = OnCpu {
                free_from: allowed_from(m, affinity),
                wake_cpu: cpu,
                ..OnCpu::default()
            };
            if c.current.is_none() {
                c.current = Some(task as u32);
                on_cpu.push(placed);
            } else {
                c.waiting.push_back(task as u32);
                c.resched_at = slice_end(&m.sched, 0);
                on_cpu.push(OnCpu {
                    off: true,
                    deferred: Some(0),
                    ..placed
                });
            }
        }
        let mut llc_cpus: Vec<Vec<u32>> = Vec::new();
        for cpu in 0..m.cpus() {
            let llc = m.llc_of(cpu) as usize;
            if llc_cpus.len() <= llc {
                llc_cpus.resize(llc + 1, Vec::new());
            }
            llc_cpus[llc].push(cpu);
        }
        let sched = Sched {
            cpus,
            layout,
            lock_base,
            costs: m.sched,
            schedule: m.costs.schedule,
            wait_queues: HashMap::new(),
            llc_cpus,
        };
        (sched, on_cpu)
    }

    /// CPUs that start with tasks waiting: their ticks are armed at once.
    pub(super) fn oversubscribed(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.cpus.len() as u32).filter(|&c| !self.cpus[c as usize].waiting.is_empty())
    }

    /// Takes every task asleep on the word's wait queue, first asleep
    /// first, or only the first when `one`.
    pub(super) fn wake_up(&mut self, word: Mem, one: bool) -> impl Iterator<Item = u32> {
        let mut sleepers = self.wait_queues.remove(&word.addr).unwrap_or_default();
        if one && sleepers.len() > 1 {
            let rest = sleepers.split_off(1);
            self.wait_queues.insert(word.addr, rest);
        }
        sleepers.into_iter()
    }

    fn rq_lock(&self, cpu: u32) -> LockRef {
        LockRef::new(self.lock_base + cpu, self.layout.runqueues[cpu as usize])
    }

    /// Whether a CPU runs nothing (available_idle_cpu: its rq->curr is the
    /// idle task and nothing is queued), as the placement reads it.
    fn idle(&self, cpu: u32, read: &mut Vec<u32>) -> bool {
        note_read(read, cpu);
        self.cpus[cpu as usize].current.is_none()
    }

    /// The runqueue's tasks, its current one counted (rq->nr_running).
    fn nr_running(&self, cpu: u32, read: &mut Vec<u32>) -> usize {
        note_read(read, cpu);
        let c = &self.cpus[cpu as usize];
        usize::from(c.current.is_some()) + c.waiting.len()
    }

    /// select_task_rq_fair for a wake-up (docs/scheduler.md): the CPU for a
    /// wakee whose last CPU is `prev`, woken from `this`, and the
    /// runqueues the decision read, in order, with how many of them
    /// wake_affine read (the rest select_idle_sibling read from the target
    /// those chose). `first` is the first CPU its affinity allows.
    fn select_wake_cpu(
        &self,
        m: &Machine,
        this: u32,
        prev: u32,
        first: u32,
    ) -> (u32, Vec<u32>, usize) {
        let mut read = Vec::new();
        let mut target = prev;
        // wake_affine: the previous CPU if idle, else the waker's if its
        // runqueue is lighter by wake_affine_weight's margin.
        if this != prev && this >= first && !self.idle(prev, &mut read) {
            let this_load = (self.nr_running(this, &mut read) + 1) * 100;
            let prev_load = self.nr_running(prev, &mut read) * WAKE_AFFINE_PCT;
            if this_load < prev_load {
                target = this;
            }
        }
        let affine = read.len();
        // select_idle_sibling: the target if idle, the previous CPU if it
        // shares the target's LLC and is idle, else the first idle CPU of
        // the target's LLC after it, else the target.
        if self.idle(target, &mut read) {
            return (target, read, affine);
        }
        if prev != target && m.llc_of(prev) == m.llc_of(target) && self.idle(prev, &mut read) {
            return (prev, read, affine);
        }
        let llc = &self.llc_cpus[m.llc_of(target) as usize];
        let at = llc.iter().position(|&c| c == target).unwrap_or(0);
        let scan = llc[at + 1..].iter().chain(&llc[..at]);
        for &c in scan.filter(|&&c| c >= first) {
            if self.idle(c, &mut read) {
                return (c, read, affine);
            }
        }
        (target, read, affine)
    }

    /// ttwu_queue_cond (v6.6): with TTWU_QUEUE, a wake-up onto another CPU
    /// goes to its wake list when that CPU shares no LLC with the waker's,
    /// or is idle (no task running or queued).
    fn queues_on_wake_list(&self, m: &Machine, waker_cpu: u32, target: u32) -> bool {
        self.costs.ttwu_queue
            && target != waker_cpu
            && (m.llc_of(target) != m.llc_of(waker_cpu)
                || self.cpus[target as usize].current.is_none())
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

/// wake_affine_weight's margin for the previous CPU, in percent: 100 +
/// (imbalance_pct - 100) / 2 with the MC and NUMA domains' imbalance_pct
/// of 117 (kernel/sched/topology.c sd_init).
const WAKE_AFFINE_PCT: usize = 108;

/// A runqueue the placement read, once: a second read of a line the CPU
/// holds would be a hit.
fn note_read(read: &mut Vec<u32>, cpu: u32) {
    if !read.contains(&cpu) {
        read.push(cpu);
    }
}

/// The first tick at or after the end of a slice begun at `from`.
fn slice_end(k: &SchedCosts, from: Ps) -> Ps {
    (from + k.slice).div_ceil(k.tick) * k.tick
}

impl<A: Attribute> Engine<'_, A> {
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

    /// try_to_wake_up's accesses (kernel::ttwu), written into the waker's
    /// script after the Wake step: they end in the wakee's activation. A
    /// wakee the scheduler places gets its CPU now, on the runqueues' state
    /// as the wake-up begins, and the waker reads each runqueue the choice
    /// looked at.
    pub(super) fn try_to_wake_up(&mut self, waker: u32, wakee: u32) {
        let s = &self.sched;
        let lines = WakeeLines {
            state: s.layout.states[wakee as usize],
            pi_lock: s.layout.pi_locks[wakee as usize],
        };
        let o = &self.tasks[wakee as usize];
        let prev = o.cpu;
        let (target, read, affine) = match o.on_cpu.free_from {
            Some(first) if o.wait == Wait::Blocked => {
                s.select_wake_cpu(self.m, self.tasks[waker as usize].cpu, prev, first)
            }
            _ => (prev, Vec::new(), 0),
        };
        let waker_cpu = self.tasks[waker as usize].cpu;
        let queued = s.queues_on_wake_list(self.m, waker_cpu, target);
        let on_target = s.cpus[target as usize].current;
        let queue = if queued {
            RunqueueAccess::WakeList {
                runqueue: s.layout.runqueues[target as usize],
                wake_list: s.layout.wake_lists[target as usize],
                idle_flags: s.layout.idle_flags[target as usize],
                polling: on_target.is_none() && s.costs.idle_polls,
            }
        } else {
            // resched_curr on another CPU sets the need-resched flag of
            // the task it runs, its idle task when idle; on its own CPU
            // the flag is in the waker's own line.
            let resched = (target != waker_cpu).then(|| match on_target {
                Some(current) => s.layout.states[current as usize],
                None => s.layout.idle_flags[target as usize],
            });
            RunqueueAccess::Lock {
                rq_lock: s.rq_lock(target),
                resched,
            }
        };
        let (affine_reads, scan_reads) = read.split_at(affine);
        let groups = [affine_reads, scan_reads]
            .map(|group| group.iter().map(|&c| s.layout.runqueues[c as usize]));
        let steps = ttwu::try_to_wake_up(wakee, lines, groups, queue);
        let t = &mut self.tasks[waker as usize];
        let at = t.pc as usize;
        t.script.splice(at..at, steps);
        let on_cpu = &mut self.tasks[wakee as usize].on_cpu;
        on_cpu.wake_cpu = target;
        on_cpu.queued = queued;
    }

    /// ttwu_do_activate, with the target's runqueue lock held: the time
    /// the waker goes on (after sending an IPI, if one is due). A task
    /// still on its way to sleep just will not sleep.
    pub(super) fn activate(&mut self, waker: u32, wakee: u32, now: Ps) -> Ps {
        let o = &mut self.tasks[wakee as usize];
        let queued = std::mem::take(&mut o.on_cpu.queued);
        if o.wait != Wait::Blocked {
            o.op.woken_early = true;
            return now;
        }
        o.wait = Wait::Running;
        // set_task_cpu: the wakee moves to the CPU its wake-up chose.
        let target = o.on_cpu.wake_cpu;
        o.cpu = target;
        let s = &self.sched;
        let polled = s.cpus[target as usize].current.is_none() && s.costs.idle_polls;
        let steps = ttwu::target_side(
            s.layout.states[wakee as usize],
            polled.then(|| s.layout.idle_flags[target as usize]),
            queued.then(|| (s.layout.wake_lists[target as usize], s.rq_lock(target))),
        );
        let w = &mut self.tasks[wakee as usize];
        let at = w.pc as usize;
        w.script.splice(at..at, steps);
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
            // An idle CPU that polls its flags is woken by the store of
            // TIF_NEED_RESCHED (set_nr_if_polling), without an IPI.
            let ipi = remote && !s.costs.idle_polls;
            let at = now + if ipi { s.costs.ipi } else { 0 };
            let since = c.idle_since;
            // The CPU leaves idle, then runs the IPI's handler.
            let at = at + s.idle_exit(since, at);
            let at = at + if ipi { s.costs.ipi_handler } else { 0 } + s.schedule;
            self.sched.cpus[cpu as usize].current = Some(task);
            self.switch_in(task, at);
            return ipi;
        }
        c.waiting.push_back(task);
        c.resched_at = c.resched_at.min(now);
        self.arm_tick(cpu, now);
        remote
    }

    /// The task is the CPU's current one from `at`: an event it was due
    /// while off the CPU is taken now (a cut compute step's remainder starts).
    fn switch_in(&mut self, task: u32, at: Ps) {
        let t = &mut self.tasks[task as usize];
        t.on_cpu.off = false;
        t.on_cpu.compute_end = 0;
        if let Some(due) = t.on_cpu.deferred.take() {
            self.queue.push(at.max(due), Event::Task(task));
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
        self.queue.push(off + ps, Event::Task(task));
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
        if c.ticking || c.waiting.is_empty() || at >= self.record.end() {
            return;
        }
        c.ticking = true;
        self.queue.push(at, Event::Tick(cpu));
    }

    /// A compute step that ends at `end` began: a user one (a workload's
    /// work, outside the kernel) is one the tick may cut.
    pub(super) fn note_compute(&mut self, task: u32, first: Cost, end: Ps) {
        let t = &mut self.tasks[task as usize];
        if matches!(first, Cost::Ps(_)) && !t.program.in_kernel() {
            t.on_cpu.compute_end = end;
        }
    }

    /// The CPU's tick: a task in user space past its slice gives the CPU
    /// up, whether it spins or computes (a compute step's remainder runs
    /// when the task's turn comes again); one in the kernel does so at its
    /// next op boundary. The tick stays armed while tasks wait.
    pub(super) fn tick(&mut self, cpu: u32, now: Ps) {
        let c = &mut self.sched.cpus[cpu as usize];
        c.ticking = false;
        if let Some(current) = c.current {
            let due = now >= c.resched_at && !c.waiting.is_empty();
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
            let computing = t.wait == Wait::Running && now < t.on_cpu.compute_end;
            if due && user_spin {
                self.preempt(current, now);
            } else if due && computing {
                self.cut_compute(current, cpu, now);
            }
        }
        self.arm_tick(cpu, now);
    }

    /// The tick preempts a task in a user compute step: the step becomes
    /// its remainder, run again when the task is switched back in; the
    /// step's end, already queued, is dropped when it comes.
    fn cut_compute(&mut self, task: u32, cpu: u32, now: Ps) {
        let t = &mut self.tasks[task as usize];
        let remainder = t.on_cpu.compute_end - now;
        t.pc -= 1;
        t.script[t.pc as usize] = Step::Compute(Cost::Ps(remainder));
        t.on_cpu.compute_end = Ps::MAX;
        t.on_cpu.deferred = Some(now);
        self.compute_cut(cpu, now);
        self.preempt(task, now);
    }
}
