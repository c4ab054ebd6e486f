//! The event loop: the event queue, the run loop, and the interpreter
//! (step.rs, spin.rs) that prices what the kernel and the workloads ask
//! for. Function stays with them: a task's program says what it does next
//! (crate::task), the kernel writes each futex op's script and runs the
//! spinlock protocols (crate::kernel); the engine times every step through
//! the coherence directory and the machine's costs, and orders the tasks.
//!
//! A step that takes time (a compute step, a cache miss, a lock it must
//! wait for) schedules the task's next event and yields. Hits in the task's
//! own cache need no event. A spinner is not simulated spin by spin: it
//! waits for the next write to the line it spins on, then pays one transfer
//! to re-read it, and acts on the value as of the moment the directory
//! served the read, not on the state when the read completes.
//!
//! A request that waits at a busy line (coherence::Request::Waits) parks its
//! task; the line's turn is an event of its own, so only lines with waiters
//! cost one, and the turn's grant makes the parked request again, served.
//! A plain store that waits at its line waits in the store buffer instead,
//! and its task goes on (memory_order.rs).
//!
//! Each piece of the engine's state has one file that owns it: event.rs
//! the events and their ids in the queue (queue.rs), task.rs a task's
//! state and its waits, memory_order.rs the CPUs' accesses in flight and
//! compute (`Cpus`), spin.rs the spinners of each watched line
//! (`Spinners`), sched.rs which task runs where (`Sched`), metrics.rs what
//! the run counts, attribution.rs where each counted op's time went (kept
//! only when the run asks: `Engine::explaining`). The lock protocols'
//! state is the kernel's (kernel::spinlock), and so are the scripts the
//! engine runs, a wake-up's (kernel::ttwu) among them.

pub mod attribution;
mod event;
mod memory_order;
pub mod metrics;
mod queue;
mod sched;
mod spin;
mod step;
mod task;

use crate::coherence::Directory;
use crate::kernel::core::FutexSystem;
use crate::kernel::futex_hash::ResizesInRun;
use crate::kernel::spinlock::{Locks, PendingWait};
use crate::machine::{LockKind, Machine, Ps};
use crate::memory::MemoryMap;
use crate::prefetch::{prefetch, prefetch_whole};
use crate::task::{RunWindow, TaskSpec, Timeline};
use attribution::{Attribute, Attribution, Breakdown, Unattributed};
use event::{Event, MAX_LINE_QUEUES};
use memory_order::Cpus;
use metrics::{Metrics, Recorder};
use queue::EventQueue;
use sched::Sched;
use spin::Spinners;
use task::{Redo, Spin, Task, UserAtomic, Wait};

pub use queue::MAX_TASKS;
pub use sched::{place_at_fork, SchedLayout};

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
    /// Each process's private hash as its growth in the run left it.
    pub resizes: Vec<Option<(u64, ResizesInRun)>>,
    /// Where the counted ops' time went, when the run asked.
    pub breakdown: Option<Breakdown>,
}

/// Events at one simulated instant past which a run counts as stalled
/// (to within the watchdog's look every `progress::EVERY_EVENTS`): far
/// more than any run's tasks make at once.
pub const STALL_EVENTS: u64 = 10_000_000;

/// The engine, generic over what it tells of each task's time
/// (attribution.rs): nothing, unless the run asks.
pub struct Engine<'a, A: Attribute = Unattributed> {
    m: &'a Machine,
    memory: &'a MemoryMap,
    futex: FutexSystem,
    dir: Directory,
    queue: EventQueue,
    tasks: Vec<Task>,
    locks: Locks,
    spinners: Spinners,
    record: Recorder,
    cpus: Cpus,
    sched: Sched,
    /// Where each counted op's time goes, when the run asks.
    attribution: A,
}

impl<'a> Engine<'a> {
    pub fn new(
        m: &'a Machine,
        memory: &'a MemoryMap,
        futex: FutexSystem,
        tasks: Vec<TaskSpec>,
        lock: LockKind,
        window: RunWindow,
        layout: SchedLayout,
    ) -> Engine<'a> {
        let buffered = u64::from(m.cpus()) * u64::from(m.store_buffer);
        let queues = tasks.len() as u64 + buffered.min(u64::from(memory.lines()));
        assert!(
            queues < u64::from(MAX_LINE_QUEUES),
            "more tasks than the event queue can name"
        );
        let mapped = m
            .translation
            .as_ref()
            .map_or_else(Vec::new, |t| futex.hash.mapped_spans(memory, t));
        let dir = Directory::new(memory, m, &mapped);
        let task_cpus: Vec<u32> = tasks.iter().map(|t| t.cpu).collect();
        let affinities: Vec<_> = tasks.iter().map(|t| t.program.affinity()).collect();
        let (sched, on_cpu) = Sched::new(m, layout, futex.lock_count(), &task_cpus, &affinities);
        // The workload's locks follow the tables' locks and the runqueues'.
        let kernel_locks = futex.lock_count() + m.cpus();
        let mcs_nodes = tasks
            .iter()
            .map(|t| futex.mcs_node(memory, t.cpu))
            .collect();
        let pending_wait = PendingWait::of(m.memory_model);
        let locks = Locks::new(
            lock,
            m.compare_exchange,
            pending_wait,
            kernel_locks,
            mcs_nodes,
        );
        let record = Recorder::new(window, tasks.len());
        let tasks = tasks
            .into_iter()
            .zip(on_cpu)
            .map(|(spec, on_cpu)| Task::new(spec, on_cpu))
            .collect();
        Engine {
            m,
            memory,
            futex,
            dir,
            queue: EventQueue::default(),
            tasks,
            locks,
            spinners: Spinners::default(),
            record,
            cpus: Cpus::new(m),
            sched,
            attribution: Unattributed,
        }
    }

    /// The run charges each counted op's time to what its task waited on
    /// (attribution.rs); every other result stays as without it.
    pub fn explaining(self) -> Engine<'a, Attribution> {
        Engine {
            attribution: Attribution::new(self.tasks.len()),
            m: self.m,
            memory: self.memory,
            futex: self.futex,
            dir: self.dir,
            queue: self.queue,
            tasks: self.tasks,
            locks: self.locks,
            spinners: self.spinners,
            record: self.record,
            cpus: self.cpus,
            sched: self.sched,
        }
    }
}

impl<'a, A: Attribute> Engine<'a, A> {
    /// Runs every task from time zero until the window closes and every
    /// operation in flight has finished. Never inlined into its caller: a
    /// profile of the event loop counts what runs under this symbol.
    #[inline(never)]
    pub fn run(mut self) -> Outcome {
        self.queue.push(self.record.warmup_end(), Event::WarmupDone);
        if let Some(at) = self.record.first_unit_end() {
            self.queue.push(at, Event::UnitEnd);
        }
        for t in 0..self.tasks.len() as u32 {
            let task = &self.tasks[t as usize];
            if !task.on_cpu.off {
                self.queue.push(task.program.created_at(), Event::Task(t));
            }
        }
        let oversubscribed: Vec<u32> = self.sched.oversubscribed().collect();
        for cpu in oversubscribed {
            self.arm_tick(cpu, 0);
        }
        let mut progress = crate::progress::RunProgress::default();
        let (mut events, mut checked_at, mut unmoved, mut stalled_at) = (0u64, None, 0u64, None);
        while let Some((now, event)) = self.queue.pop() {
            events += 1;
            // The watchdog looks when the progress does, not at every event:
            // simulated time only grows, so an instant unchanged since the
            // last look has held every event between.
            if events.is_multiple_of(crate::progress::EVERY_EVENTS) {
                progress.reached(now, self.record.end());
                unmoved = if checked_at == Some(now) {
                    unmoved + crate::progress::EVERY_EVENTS
                } else {
                    0
                };
                checked_at = Some(now);
                if unmoved >= STALL_EVENTS {
                    stalled_at = Some(now);
                    break;
                }
            }
            self.prefetch_next_task();
            match event {
                Event::Task(task) => {
                    let on_cpu = &self.tasks[task as usize].on_cpu;
                    if now < on_cpu.compute_end {
                        // The end of a compute step the tick cut: its remainder runs later.
                    } else if on_cpu.off {
                        self.off_cpu_event(task, now);
                    } else {
                        self.resume(task, now);
                    }
                }
                Event::LineTurn(queue) => self.line_turn(queue, now),
                Event::Tick(cpu) => self.tick(cpu, now),
                Event::WarmupDone => self.start_counting(),
                Event::UnitEnd => {
                    if let Some(next) = self.record.unit_ended(now) {
                        self.queue.push(next, Event::UnitEnd);
                    }
                }
            }
        }
        progress.finish();
        let ended = self.record.all_exited().unwrap_or(self.record.end());
        let resizes = self.futex.resizes_in_run(ended);
        let (metrics, window, timeline) = self.record.finish();
        Outcome {
            metrics,
            directory: self.dir,
            events,
            window,
            asleep_at_end: self.futex.sleeping(),
            timeline,
            stalled_at,
            resizes,
            breakdown: self.attribution.finish(),
        }
    }

    /// The next event's task state loads while this one runs.
    #[inline]
    fn prefetch_next_task(&self) {
        if let Some(Event::Task(t)) = self.queue.peek() {
            let next = &self.tasks[t as usize];
            prefetch_whole(next);
            if let Some(step) = next.script.get(next.pc as usize) {
                prefetch(step);
            }
        }
    }

    /// The warm-up is over: what was measured so far is dropped.
    fn start_counting(&mut self) {
        self.dir.reset_stats();
        self.record.start_counting();
    }
}
