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

mod memory_order;
pub mod metrics;
mod queue;
mod sched;
mod spin;
mod step;

use crate::coherence::Directory;
use crate::kernel::core::FutexSystem;
use crate::kernel::futex_hash::ResizesInRun;
use crate::kernel::script::LockRef;
use crate::kernel::script::Script;
use crate::kernel::spinlock::{After, LockWait, Locks, Next};
use crate::machine::{LockKind, Machine, Ps};
use crate::memory::{LineId, MemoryMap};
use crate::prefetch::{prefetch, prefetch_whole};
use crate::task::{AtomicOp, Counting, Program, RunWindow, TaskSpec, Timeline, Until, UserWord};
use memory_order::{CpuOrder, ThreadCompute};
use metrics::Metrics;
use queue::EventQueue;
use sched::{OnCpu, Sched, TICK_EVENTS};

pub use queue::MAX_TASKS;
pub use sched::{place_at_fork, SchedLayout};

/// Why a task is not running its script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Running,
    Blocked,
    /// Spinning on a line: the next write to it wakes the task to re-read it.
    Spin(Spin),
    /// The re-read is in flight; at its completion the task acts on what
    /// the read returned when it was served: `turn` when that showed the
    /// lock free for it, or the word's awaited value.
    Check {
        spin: Spin,
        turn: bool,
    },
    /// An access of a lock's protocol is in flight; at its completion the
    /// task goes on as the protocol said.
    Lock {
        lock: LockRef,
        after: After,
    },
    /// A request waits at its line for the grant; then the task makes it
    /// again as its `Engine::redo` says (kept apart: a lock protocol's
    /// access is larger than every other state).
    AtLine,
    /// The task waits for its CPU's stores waiting at their lines to be
    /// served (a fence, or a full store buffer); then it makes its step
    /// again as its `Engine::redo` says.
    Drain,
}

/// How a task makes its waiting request again once it is granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Redo {
    /// The script's step (an access, a load) runs again.
    Step,
    /// The spinner's re-read: what it returns is the line as of its grant.
    Reread(Spin),
    /// The lock protocol's access, as the protocol asked for it.
    Follow { lock: LockRef, next: Next },
    /// The protocol's next move from this state, asked for at the grant.
    Move(LockWait),
}

/// A user-space atomic in flight: its word, its op, and whether nothing
/// waits for it (a relaxed RMW on a weakly ordered core).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct UserAtomic {
    word: UserWord,
    op: AtomicOp,
    posted: bool,
}

/// What a spinning task waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spin {
    /// A kernel spinlock, where its protocol has the task.
    Lock(LockWait),
    /// A user-space spin on a word's value.
    Word { word: UserWord, until: Until },
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
    /// The ticket unlock's read of its lock word is in: the unlock step,
    /// run again, goes straight to its store.
    release_read: bool,
    /// The watched line's write count when the spinner's last read was
    /// served: a write after it makes what the read returned stale.
    read_writes: u32,
    /// The line whose turn granted the task's waiting request: the task's
    /// next request, if on that line, is served at once.
    granted: Option<LineId>,
    /// What the operation in flight returns.
    ret: i64,
    counting: Counting,
    iteration_start: Ps,
    on_cpu: OnCpu,
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
    /// Each process's private hash as its growth in the run left it.
    pub resizes: Vec<Option<(u64, ResizesInRun)>>,
}

/// Events at one simulated instant past which a run counts as stalled
/// (to within the watchdog's look every `progress::EVERY_EVENTS`): far
/// more than any run's tasks make at once.
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
    /// Per task, how it makes its request again when it waits at a line.
    redo: Vec<Redo>,
    /// Per task, the user atomic of its op in flight (`Step::Atomic`).
    atomics: Vec<Option<UserAtomic>>,
    metrics: Metrics,
    window: RunWindow,
    events: u64,
    /// The longest an access in the task's own cache takes: an L1 hit plus
    /// a locked RMW's extra. A lock acquired within it did not wait for
    /// another holder; an access within it needs no event of its own.
    uncontended_ps: Ps,
    /// Per CPU: its stores and loads in flight.
    order: Vec<CpuOrder>,
    /// The compute each CPU runs, a core's threads side by side; per CPU,
    /// where its own and its SMT sibling's are.
    compute: Vec<ThreadCompute>,
    compute_slots: Vec<(u32, u32)>,
    /// The id of the workload's lock 0: its locks follow the tables'
    /// locks and the runqueues'.
    workload_lock_base: u32,
    timeline: Timeline,
    sched: Sched,
}

/// The event that marks the end of the warm-up: counting starts afresh.
const WARMUP_DONE: u32 = MAX_TASKS as u32 - 1;

/// Line turns are events LINE_EVENTS + the line's queue. A queue exists
/// only while a task (in one at most) or a store-buffer entry waits in it,
/// so tasks (below LINE_EVENTS) and queues both fit below the ticks.
const LINE_EVENTS: u32 = TICK_EVENTS / 2;

/// Steps a task's script has room for from the start: more than most ops'
/// scripts take, so the first ops need not grow it.
const SCRIPT_CAPACITY: usize = 32;

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
            queues < u64::from(LINE_EVENTS),
            "more tasks than the event queue can name"
        );
        let dir = Directory::new(memory, m);
        let task_cpus: Vec<u32> = tasks.iter().map(|t| t.cpu).collect();
        let affinities: Vec<_> = tasks.iter().map(|t| t.program.affinity()).collect();
        let (sched, on_cpu) = Sched::new(m, layout, futex.lock_count(), &task_cpus, &affinities);
        let workload_lock_base = futex.lock_count() + m.cpus();
        let mcs_nodes = tasks
            .iter()
            .map(|t| futex.mcs_node(memory, t.cpu))
            .collect();
        let locks = Locks::new(lock, workload_lock_base, mcs_nodes);
        let metrics = Metrics::new(tasks.len());
        let timeline = Timeline {
            clock_reads: vec![Vec::new(); tasks.len()],
            exits: vec![None; tasks.len()],
        };
        let task_count = tasks.len();
        let (compute_slots, compute_slot_count) = memory_order::compute_slots(m);
        let tasks = tasks
            .into_iter()
            .zip(on_cpu)
            .map(|(t, on_cpu)| Task {
                cpu: t.cpu,
                counting: t.program.counting(),
                iteration_start: 0,
                program: t.program,
                script: Vec::with_capacity(SCRIPT_CAPACITY),
                pc: 0,
                wait: Wait::Running,
                op_start: 0,
                lock_asked: 0,
                lock_taken: 0,
                woken_early: false,
                release_read: false,
                read_writes: 0,
                granted: None,
                ret: 0,
                on_cpu,
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
            redo: vec![Redo::Step; task_count],
            atomics: vec![None; task_count],
            metrics,
            window,
            events: 0,
            uncontended_ps: m.l1_ps + m.rmw_ps,
            order: (0..m.cpus()).map(|_| CpuOrder::new(m)).collect(),
            compute: vec![ThreadCompute::default(); compute_slot_count],
            compute_slots,
            workload_lock_base,
            timeline,
            sched,
        }
    }

    /// Runs every task from time zero until the window closes and every
    /// operation in flight has finished.
    pub fn run(mut self) -> Outcome {
        self.queue.push(self.window.warmup, WARMUP_DONE);
        for t in 0..self.tasks.len() as u32 {
            let task = &self.tasks[t as usize];
            if !task.on_cpu.off {
                self.queue.push(task.program.created_at(), t);
            }
        }
        let oversubscribed: Vec<u32> = self.sched.oversubscribed().collect();
        for cpu in oversubscribed {
            self.arm_tick(cpu, 0);
        }
        let mut progress = crate::progress::RunProgress::default();
        let (mut checked_at, mut unmoved, mut stalled_at) = (None, 0u64, None);
        while let Some((now, task)) = self.queue.pop() {
            self.events += 1;
            // The watchdog looks when the progress does, not at every event:
            // simulated time only grows, so an instant unchanged since the
            // last look has held every event between.
            if self.events.is_multiple_of(crate::progress::EVERY_EVENTS) {
                progress.reached(now, self.window.end());
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
            // Ids in increasing order: tasks, line turns, ticks, the warm-up's end.
            if task < LINE_EVENTS {
                let on_cpu = &self.tasks[task as usize].on_cpu;
                if now < on_cpu.compute_end {
                    // The end of a compute step the tick cut: its remainder runs later.
                } else if on_cpu.off {
                    self.off_cpu_event(task, now);
                } else {
                    self.resume(task, now);
                }
            } else if task < TICK_EVENTS {
                self.line_turn(task - LINE_EVENTS, now);
            } else if task != WARMUP_DONE {
                self.tick(task - TICK_EVENTS, now);
            } else {
                self.start_counting();
            }
        }
        progress.finish();
        let ended = self.timeline.all_exited().unwrap_or(self.window.end());
        let resizes = self.futex.resizes_in_run(ended);
        Outcome {
            metrics: self.metrics,
            directory: self.dir,
            events: self.events,
            window: self.window,
            asleep_at_end: self.futex.sleeping(),
            timeline: self.timeline,
            stalled_at,
            resizes,
        }
    }

    /// The next event's task state loads while this one runs.
    #[inline]
    fn prefetch_next_task(&self) {
        if let Some(next) = self
            .queue
            .peek_task()
            .and_then(|t| self.tasks.get(t as usize))
        {
            prefetch_whole(next);
            if let Some(step) = next.script.get(next.pc) {
                prefetch(step);
            }
        }
    }

    /// The warm-up is over: what was measured so far is dropped.
    fn start_counting(&mut self) {
        self.dir.reset_stats();
        self.metrics = Metrics::new(self.tasks.len());
    }
}
